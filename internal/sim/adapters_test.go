package sim_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/sim"
)

// TestLLMProbeAdaptersReadTheSimulator runs llmprobe's own protocol adapters
// against the simulator: every API must decode without error, with the
// expected content, reasoning, usage and finish reason, ending on its
// terminal marker.
func TestLLMProbeAdaptersReadTheSimulator(t *testing.T) {
	cfg := sim.DefaultConfig()
	cfg.TTFT = sim.FixedDist(0.001)
	cfg.TokenTime = sim.FixedDist(0.0005)
	cfg.OutputTokens = sim.FixedDist(6)
	cfg.ReasoningTokens = sim.FixedDist(2)
	cfg.TokensPerChunk = 2
	cfg.APIKey = "k"
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, closeFn, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := closeFn(); err != nil {
			t.Error(err)
		}
	}()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr}

	for _, name := range []string{"openai-chat", "openai-completions", "openai-responses", "anthropic-messages"} {
		for _, maxTokens := range []int{0, 5} {
			t.Run(fmt.Sprintf("%s/max=%d", name, maxTokens), func(t *testing.T) {
				ad, err := protocol.Lookup(name)
				if err != nil {
					t.Fatal(err)
				}
				p := protocol.Params{Model: "m", Messages: []protocol.Message{{Role: "user", Content: "0123456789abcdef"}},
					MaxTokens: maxTokens, UsageDeltas: name == "openai-chat"}
				req, err := ad.NewRequest(context.Background(), base, p)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", "Bearer k")
				req.Header.Set("x-api-key", "k")
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				if resp.StatusCode != 200 {
					b, _ := io.ReadAll(resp.Body)
					t.Fatalf("status %d: %s", resp.StatusCode, b)
				}
				dec := ad.NewDecoder()
				rd := sse.NewReader(resp.Body, sse.Options{})
				var content, reasoning, tokens int
				var usage *protocol.Event
				var finish string
				done := false
				for {
					ev, err := rd.Next()
					if errors.Is(err, io.EOF) {
						break
					}
					if err != nil {
						t.Fatalf("sse: %v", err)
					}
					e, err := dec.Decode(ev.Name, ev.Data)
					if err != nil {
						t.Fatalf("decode %q %s: %v", ev.Name, ev.Data, err)
					}
					if done {
						t.Fatalf("event after the terminal marker: %s", ev.Data)
					}
					if e.Err != nil {
						t.Fatalf("in-band error %+v", e.Err)
					}
					if e.Content {
						content++
					}
					if e.Reasoning {
						reasoning++
					}
					tokens += e.Tokens
					if e.Usage != nil {
						usage = &e
					}
					if e.FinishReason != "" {
						finish = e.FinishReason
					}
					done = done || e.Done
				}
				wantR, wantC := 2, 6
				if name == "openai-completions" {
					wantR = 0
				}
				if maxTokens > 0 {
					wantR, wantC = min(wantR, maxTokens), min(wantC, maxTokens-min(wantR, maxTokens))
				}
				if !done {
					t.Fatal("no terminal marker")
				}
				if content != (wantC+1)/2 && content != wantC/2+1 {
					t.Errorf("%d content events for %d tokens at 2 per chunk", content, wantC)
				}
				if (reasoning == 0) != (wantR == 0) {
					t.Errorf("%d reasoning events for %d reasoning tokens", reasoning, wantR)
				}
				if usage == nil || !usage.Usage.Known || usage.Usage.Completion != wantC+wantR || usage.Usage.Prompt != 4 {
					t.Errorf("usage %+v, want prompt 4, completion %d", usage, wantC+wantR)
				}
				if p.UsageDeltas && tokens != wantC { // the adapter attributes deltas to content chunks only
					t.Errorf("per-chunk usage deltas on content chunks sum to %d, want %d", tokens, wantC)
				}
				cut := maxTokens > 0 && maxTokens < 8 && !(name == "openai-completions" && maxTokens >= 6)
				if cut == (finish == "stop" || finish == "end_turn" || finish == "completed") {
					t.Errorf("finish %q with cut=%v", finish, cut)
				}
			})
		}
	}
}
