package workload

import (
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/stats"
)

func twoClasses(bust float64) []Class {
	return []Class{
		{Name: "chat", Weight: 3, Prompt: Synthetic{}, InputLen: Uniform{5, 15}, OutputLen: Fixed{64},
			Gates: stats.Gates{TTFT: time.Second}, CacheBustFraction: bust},
		{Name: "long", Weight: 1, Prompt: Synthetic{}, InputLen: Fixed{200}, OutputLen: Uniform{200, 400}, CacheBustFraction: bust},
	}
}

func TestMixWeights(t *testing.T) {
	m, err := NewMix(42, twoClasses(0))
	if err != nil {
		t.Fatal(err)
	}
	const n = 20000
	counts := map[string]int{}
	for range n {
		req := m.Next()
		counts[req.Class]++
		switch req.Class {
		case "chat":
			if req.Params.MaxTokens != 64 || req.InputTokens < 5 || req.InputTokens > 15 || req.Gates.TTFT != time.Second {
				t.Fatalf("chat request off its class: %+v", req)
			}
		case "long":
			if req.Params.MaxTokens < 200 || req.Params.MaxTokens > 400 || req.InputTokens != 200 {
				t.Fatalf("long request off its class: max_tokens %d input %d", req.Params.MaxTokens, req.InputTokens)
			}
		}
		if len(req.Params.Messages) != 1 || len(req.Params.Messages[0].Content) < req.InputTokens*CharsPerToken {
			t.Fatalf("prompt shorter than its target length")
		}
	}
	p := float64(counts["chat"]) / n
	if sd := math.Sqrt(0.75 * 0.25 / n); math.Abs(p-0.75) > 5*sd {
		t.Errorf("chat share %.4f, want 0.75 ± %.4f", p, 5*sd)
	}
}

func TestMixDeterministicBySeed(t *testing.T) {
	draw := func(seed uint64) []Request {
		m, err := NewMix(seed, twoClasses(0.5), WithRunNonce(99))
		if err != nil {
			t.Fatal(err)
		}
		out := make([]Request, 50)
		for i := range out {
			out[i] = m.Next()
		}
		return out
	}
	a, b, c := draw(1), draw(1), draw(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed and nonce must give the same requests")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds gave the same requests")
	}
}

func TestMixCacheBust(t *testing.T) {
	for _, frac := range []float64{0, 0.3, 1} {
		m, err := NewMix(5, twoClasses(frac))
		if err != nil {
			t.Fatal(err)
		}
		const n = 10000
		busted := 0
		prefixes := map[string]bool{}
		for range n {
			req := m.Next()
			content := req.Params.Messages[0].Content
			hasPrefix := strings.HasPrefix(content, "[")
			if hasPrefix != req.CacheBusted {
				t.Fatalf("CacheBusted=%v but prefix present=%v", req.CacheBusted, hasPrefix)
			}
			if req.CacheBusted {
				busted++
				p := content[:strings.Index(content, "] ")+2]
				if prefixes[p] {
					t.Fatalf("cache-bust prefix %q repeated", p)
				}
				prefixes[p] = true
			}
		}
		got := float64(busted) / n
		sd := math.Sqrt(frac*(1-frac)/n) + 1e-12
		if math.Abs(got-frac) > 5*sd {
			t.Errorf("fraction %v: busted %.4f", frac, got)
		}
	}
	// Two mixes with the same seed but their own random nonces do not share prefixes.
	m1, _ := NewMix(5, twoClasses(1))
	m2, _ := NewMix(5, twoClasses(1))
	if m1.Next().Params.Messages[0].Content == m2.Next().Params.Messages[0].Content {
		t.Error("two runs with the same seed share a cache-bust prefix")
	}
}

func TestMixFixedPromptSources(t *testing.T) {
	pf, err := ParsePromptFile(strings.NewReader("alpha\nbeta\n"), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ParseDataset(strings.NewReader(`{"messages":[{"role":"system","content":"sys"},{"role":"user","content":"q"}]}`), "d.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewMix(1, []Class{
		{Name: "file", Weight: 1, Prompt: pf, CacheBustFraction: 1},
		{Name: "data", Weight: 1, Prompt: ds},
	})
	if err != nil {
		t.Fatal(err)
	}
	for range 200 {
		req := m.Next()
		if req.Params.MaxTokens != 0 || req.InputTokens != 0 {
			t.Fatalf("no output/input distribution: want 0s, got %+v", req)
		}
		switch req.Class {
		case "file":
			c := req.Params.Messages[0].Content
			if !strings.HasSuffix(c, "] alpha") && !strings.HasSuffix(c, "] beta") {
				t.Fatalf("file prompt not busted or altered")
			}
		case "data":
			if len(req.Params.Messages) != 2 || req.Params.Messages[0].Content != "sys" {
				t.Fatalf("dataset conversation altered")
			}
		}
	}
}

func TestNewMixErrors(t *testing.T) {
	ok := Class{Name: "a", Weight: 1, Prompt: Synthetic{}, InputLen: Fixed{10}}
	with := func(f func(*Class)) []Class { c := ok; f(&c); return []Class{c} }
	tests := []struct {
		name    string
		classes []Class
		want    string
	}{
		{"none", nil, "at least one class"},
		{"no name", with(func(c *Class) { c.Name = "" }), "classes[0]: name is required"},
		{"dup", []Class{ok, ok}, `classes[1]: duplicate class name "a"`},
		{"zero weight", with(func(c *Class) { c.Weight = 0 }), "weight 0 must be a positive number"},
		{"nan weight", with(func(c *Class) { c.Weight = math.NaN() }), "weight NaN"},
		{"no prompt", with(func(c *Class) { c.Prompt = nil }), "prompt source is required"},
		{"synthetic needs input", with(func(c *Class) { c.InputLen = nil }), "synthetic prompt needs an input length"},
		{"bust > 1", with(func(c *Class) { c.CacheBustFraction = 1.5 }), "cache_bust_fraction 1.5 must be in [0, 1]"},
	}
	for _, tt := range tests {
		if _, err := NewMix(1, tt.classes); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestMixConcurrentAndGates(t *testing.T) {
	defer goleak.VerifyNone(t)
	m, err := NewMix(3, twoClasses(0.5))
	if err != nil {
		t.Fatal(err)
	}
	// Each request carries its class's gates.
	g := map[string]stats.Gates{}
	for i := 0; i < 1000 && len(g) < 2; i++ {
		r := m.Next()
		g[r.Class] = r.Gates
	}
	if g["chat"].TTFT != time.Second || !g["long"].IsZero() || len(g) != 2 {
		t.Fatalf("gates %+v", g)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				_ = m.Next()
			}
		}()
	}
	wg.Wait()
}

func TestPromptTextNeverPrinted(t *testing.T) {
	const secret = "TOP-SECRET-PROMPT"
	pf, err := ParsePromptFile(strings.NewReader(secret+"\n"), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ParseDataset(strings.NewReader(`{"messages":[{"role":"user","content":"`+secret+`"}]}`), "d.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	classes := []Class{{Name: "f", Weight: 1, Prompt: pf}, {Name: "d", Weight: 1, Prompt: ds}}
	m, err := NewMix(1, classes)
	if err != nil {
		t.Fatal(err)
	}
	var logged strings.Builder
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	log.Info("x", "mix", m, "source", pf, "dataset", ds, "class", classes[0])
	for _, out := range []string{
		fmt.Sprintf("%v %+v %#v %s", m, m, m, m),
		fmt.Sprintf("%v %+v %#v", classes, classes, classes),
		fmt.Sprintf("%v %+v %#v", m.classes, pf, ds),
		logged.String(),
	} {
		if strings.Contains(out, secret) {
			t.Fatalf("prompt text printed: %s", out)
		}
	}
}
