package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// apiCase is one served API: its path, a request body and stream/body parsers
// that check the API's shapes.
type apiCase struct {
	name   string
	path   string
	body   func(model string, maxTokens int, stream bool) string
	stream func(t *testing.T, evs []sseEvent) summary
	plain  func(t *testing.T, b []byte) summary
}

const testPrompt = "abcdefghijklmnopqrstuvwxyz0123456789" // 36 chars → 9 prompt tokens

func maxField(name string, n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(`,%q:%d`, name, n)
}

var apiCases = []apiCase{
	{
		name: "openai-chat", path: "/chat/completions",
		body: func(m string, n int, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":%q}]%s}`,
				m, stream, testPrompt, maxField("max_tokens", n))
		},
		stream: parseChatStream,
		plain:  parseChatBody,
	},
	{
		name: "openai-completions", path: "/completions",
		body: func(m string, n int, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"stream_options":{"include_usage":true},"prompt":%q%s}`,
				m, stream, testPrompt, maxField("max_tokens", n))
		},
		stream: parseCompletionsStream,
		plain:  parseCompletionsBody,
	},
	{
		name: "openai-responses", path: "/responses",
		body: func(m string, n int, stream bool) string {
			return fmt.Sprintf(`{"model":%q,"stream":%t,"input":[{"role":"user","content":[{"type":"input_text","text":%q}]}]%s}`,
				m, stream, testPrompt, maxField("max_output_tokens", n))
		},
		stream: parseResponsesStream,
		plain:  parseResponsesBody,
	},
	{
		name: "anthropic-messages", path: "/messages",
		body: func(m string, n int, stream bool) string {
			if n == 0 {
				n = 4096
			}
			return fmt.Sprintf(`{"model":%q,"stream":%t,"max_tokens":%d,"messages":[{"role":"user","content":%q}]}`,
				m, stream, n, testPrompt)
		},
		stream: parseMessagesStream,
		plain:  parseMessagesBody,
	},
}

type oaUsage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	Details          *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

func (u *oaUsage) fill(t *testing.T, s *summary) {
	t.Helper()
	if u.TotalTokens != u.PromptTokens+u.CompletionTokens {
		t.Errorf("usage total %d != prompt %d + completion %d", u.TotalTokens, u.PromptTokens, u.CompletionTokens)
	}
	s.promptTokens, s.completionTokens = u.PromptTokens, u.CompletionTokens
	if u.Details != nil {
		s.reasoningUsage = u.Details.ReasoningTokens
	}
}

func parseChatStream(t *testing.T, evs []sseEvent) summary {
	var s summary
	for i, ev := range evs {
		if ev.name != "" {
			t.Fatalf("chat event %d has an event name %q", i, ev.name)
		}
		if string(ev.data) == "[DONE]" {
			if i != len(evs)-1 {
				t.Fatalf("data after [DONE]")
			}
			s.done = true
			continue
		}
		var c struct {
			ID      string `json:"id"`
			Object  string `json:"object"`
			Model   string `json:"model"`
			Choices []struct {
				Index int `json:"index"`
				Delta struct {
					Role      *string `json:"role"`
					Content   *string `json:"content"`
					Reasoning *string `json:"reasoning_content"`
				} `json:"delta"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *oaUsage `json:"usage"`
		}
		mustJSON(t, ev.data, &c)
		if c.Object != "chat.completion.chunk" || !strings.HasPrefix(c.ID, "chatcmpl-") {
			t.Fatalf("chunk %d: object %q id %q", i, c.Object, c.ID)
		}
		if i == 0 {
			if len(c.Choices) != 1 || c.Choices[0].Delta.Role == nil || *c.Choices[0].Delta.Role != "assistant" ||
				c.Choices[0].Delta.Content == nil || *c.Choices[0].Delta.Content != "" {
				t.Fatalf("first chunk is not role-only: %s", ev.data)
			}
			continue
		}
		if c.Usage != nil {
			if len(c.Choices) != 0 || s.finish == "" {
				t.Fatalf("usage chunk must have no choices and follow the finish: %s", ev.data)
			}
			c.Usage.fill(t, &s)
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk %d: %d choices", i, len(c.Choices))
		}
		ch := c.Choices[0]
		if ch.FinishReason != nil {
			s.finish = *ch.FinishReason
			continue
		}
		if s.finish != "" {
			t.Fatalf("content after finish_reason")
		}
		if r := ch.Delta.Reasoning; r != nil && *r != "" {
			if s.contentEvents > 0 {
				t.Fatalf("reasoning after content")
			}
			s.reasoningEvents++
			s.reasoningTokens += countTokens(*r)
		}
		if ct := ch.Delta.Content; ct != nil && *ct != "" {
			s.addContent(*ct, ev.at)
		}
	}
	return s
}

func parseChatBody(t *testing.T, b []byte) summary {
	var v struct {
		Object  string `json:"object"`
		Choices []struct {
			Message struct {
				Role      string `json:"role"`
				Content   string `json:"content"`
				Reasoning string `json:"reasoning_content"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage oaUsage `json:"usage"`
	}
	mustJSON(t, b, &v)
	if v.Object != "chat.completion" || len(v.Choices) != 1 || v.Choices[0].Message.Role != "assistant" {
		t.Fatalf("bad chat body: %s", b)
	}
	s := summary{finish: v.Choices[0].FinishReason, done: true}
	s.contentTokens = countTokens(v.Choices[0].Message.Content)
	s.reasoningTokens = countTokens(v.Choices[0].Message.Reasoning)
	v.Usage.fill(t, &s)
	return s
}

func parseCompletionsStream(t *testing.T, evs []sseEvent) summary {
	var s summary
	for i, ev := range evs {
		if string(ev.data) == "[DONE]" {
			if i != len(evs)-1 {
				t.Fatalf("data after [DONE]")
			}
			s.done = true
			continue
		}
		var c struct {
			Object  string `json:"object"`
			Choices []struct {
				Text         string  `json:"text"`
				FinishReason *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *oaUsage `json:"usage"`
		}
		mustJSON(t, ev.data, &c)
		if c.Object != "text_completion" {
			t.Fatalf("chunk %d: object %q", i, c.Object)
		}
		if c.Usage != nil {
			if len(c.Choices) != 0 || s.finish == "" {
				t.Fatalf("usage chunk must have no choices and follow the finish")
			}
			c.Usage.fill(t, &s)
			continue
		}
		if len(c.Choices) != 1 {
			t.Fatalf("chunk %d: %d choices", i, len(c.Choices))
		}
		if f := c.Choices[0].FinishReason; f != nil {
			s.finish = *f
			continue
		}
		if c.Choices[0].Text != "" {
			s.addContent(c.Choices[0].Text, ev.at)
		}
	}
	return s
}

func parseCompletionsBody(t *testing.T, b []byte) summary {
	var v struct {
		Object  string `json:"object"`
		Choices []struct {
			Text         string `json:"text"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Usage oaUsage `json:"usage"`
	}
	mustJSON(t, b, &v)
	if v.Object != "text_completion" || len(v.Choices) != 1 {
		t.Fatalf("bad completions body: %s", b)
	}
	s := summary{finish: v.Choices[0].FinishReason, done: true, contentTokens: countTokens(v.Choices[0].Text)}
	v.Usage.fill(t, &s)
	return s
}

type respUsage struct {
	InputTokens  int `json:"input_tokens"`
	OutputTokens int `json:"output_tokens"`
	TotalTokens  int `json:"total_tokens"`
	Details      struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

type respObject struct {
	ID                string `json:"id"`
	Object            string `json:"object"`
	Status            string `json:"status"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Output []struct {
		Type    string `json:"type"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"output"`
	Usage *respUsage `json:"usage"`
}

func (r *respObject) fill(t *testing.T, s *summary) {
	t.Helper()
	switch {
	case r.Status == "completed" && r.IncompleteDetails == nil:
		s.finish = "stop"
	case r.Status == "incomplete" && r.IncompleteDetails != nil && r.IncompleteDetails.Reason == "max_output_tokens":
		s.finish = "length"
	default:
		t.Fatalf("bad final response status %q", r.Status)
	}
	if r.Usage == nil || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Fatalf("bad final usage %+v", r.Usage)
	}
	s.promptTokens, s.completionTokens, s.reasoningUsage = r.Usage.InputTokens, r.Usage.OutputTokens, r.Usage.Details.ReasoningTokens
}

func parseResponsesStream(t *testing.T, evs []sseEvent) summary {
	var s summary
	var order []string
	for i, ev := range evs {
		var e struct {
			Type     string      `json:"type"`
			Seq      *int        `json:"sequence_number"`
			Delta    string      `json:"delta"`
			Response *respObject `json:"response"`
		}
		mustJSON(t, ev.data, &e)
		if e.Type != ev.name {
			t.Fatalf("event %d: name %q but type %q", i, ev.name, e.Type)
		}
		if e.Seq == nil || *e.Seq != i {
			t.Fatalf("event %d: sequence_number %v", i, e.Seq)
		}
		if len(order) == 0 || order[len(order)-1] != e.Type {
			order = append(order, e.Type)
		}
		switch e.Type {
		case "response.output_text.delta":
			s.addContent(e.Delta, ev.at)
		case "response.reasoning_text.delta":
			if s.contentEvents > 0 {
				t.Fatalf("reasoning after content")
			}
			s.reasoningEvents++
			s.reasoningTokens += countTokens(e.Delta)
		case "response.completed", "response.incomplete":
			if i != len(evs)-1 {
				t.Fatalf("events after %s", e.Type)
			}
			e.Response.fill(t, &s)
			s.done = true
		}
	}
	got := strings.Join(order, " ")
	want := "response.created response.in_progress "
	if s.reasoningEvents > 0 {
		want += "response.output_item.added response.reasoning_text.delta response.reasoning_text.done response.output_item.done "
	}
	if s.contentEvents > 0 {
		want += "response.output_item.added response.content_part.added response.output_text.delta response.output_text.done response.content_part.done response.output_item.done "
	}
	if s.finish == "length" {
		want += "response.incomplete"
	} else {
		want += "response.completed"
	}
	if got != want {
		t.Fatalf("responses event order\n got %s\nwant %s", got, want)
	}
	return s
}

func parseResponsesBody(t *testing.T, b []byte) summary {
	var r respObject
	mustJSON(t, b, &r)
	if r.Object != "response" {
		t.Fatalf("bad responses body: %s", b)
	}
	s := summary{done: true}
	for _, o := range r.Output {
		for _, c := range o.Content {
			switch c.Type {
			case "output_text":
				s.contentTokens += countTokens(c.Text)
			case "reasoning_text":
				s.reasoningTokens += countTokens(c.Text)
			}
		}
	}
	r.fill(t, &s)
	return s
}

func parseMessagesStream(t *testing.T, evs []sseEvent) summary {
	var s summary
	var order []string
	for i, ev := range evs {
		var e struct {
			Type    string `json:"type"`
			Index   *int   `json:"index"`
			Message *struct {
				Role  string `json:"role"`
				Usage struct {
					InputTokens int `json:"input_tokens"`
				} `json:"usage"`
			} `json:"message"`
			ContentBlock *struct {
				Type string `json:"type"`
			} `json:"content_block"`
			Delta struct {
				Type       string  `json:"type"`
				Text       string  `json:"text"`
				Thinking   string  `json:"thinking"`
				StopReason *string `json:"stop_reason"`
			} `json:"delta"`
			Usage *struct {
				OutputTokens int `json:"output_tokens"`
			} `json:"usage"`
		}
		mustJSON(t, ev.data, &e)
		if e.Type != ev.name {
			t.Fatalf("event %d: name %q but type %q", i, ev.name, e.Type)
		}
		key := e.Type
		if e.ContentBlock != nil {
			key += ":" + e.ContentBlock.Type
		}
		if e.Type == "content_block_delta" {
			key += ":" + e.Delta.Type
		}
		if len(order) == 0 || order[len(order)-1] != key {
			order = append(order, key)
		}
		switch key {
		case "message_start":
			if e.Message == nil || e.Message.Role != "assistant" {
				t.Fatalf("bad message_start: %s", ev.data)
			}
			s.promptTokens = e.Message.Usage.InputTokens
		case "content_block_delta:text_delta":
			s.addContent(e.Delta.Text, ev.at)
		case "content_block_delta:thinking_delta":
			s.reasoningEvents++
			s.reasoningTokens += countTokens(e.Delta.Thinking)
		case "message_delta":
			if e.Delta.StopReason == nil || e.Usage == nil {
				t.Fatalf("bad message_delta: %s", ev.data)
			}
			s.finish = map[string]string{"end_turn": "stop", "max_tokens": "length"}[*e.Delta.StopReason]
			s.completionTokens = e.Usage.OutputTokens
		case "message_stop":
			if i != len(evs)-1 {
				t.Fatalf("events after message_stop")
			}
			s.done = true
		}
	}
	got := strings.Join(order, " ")
	want := "message_start ping "
	if s.reasoningEvents > 0 {
		want += "content_block_start:thinking content_block_delta:thinking_delta content_block_delta:signature_delta content_block_stop "
	}
	if s.contentEvents > 0 {
		want += "content_block_start:text content_block_delta:text_delta content_block_stop "
	}
	want += "message_delta message_stop"
	if got != want {
		t.Fatalf("messages event order\n got %s\nwant %s", got, want)
	}
	return s
}

func parseMessagesBody(t *testing.T, b []byte) summary {
	var v struct {
		Type    string `json:"type"`
		Role    string `json:"role"`
		Content []struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Usage      struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
	mustJSON(t, b, &v)
	if v.Type != "message" || v.Role != "assistant" {
		t.Fatalf("bad messages body: %s", b)
	}
	s := summary{done: true, promptTokens: v.Usage.InputTokens, completionTokens: v.Usage.OutputTokens}
	s.finish = map[string]string{"end_turn": "stop", "max_tokens": "length"}[v.StopReason]
	for _, c := range v.Content {
		s.contentTokens += countTokens(c.Text)
		s.reasoningTokens += countTokens(c.Thinking)
	}
	return s
}

// TestAPIs runs every API, streaming and not, through output lengths, caps,
// reasoning and bundled tokens, and checks shapes, counts and usage.
func TestAPIs(t *testing.T) {
	type variant struct {
		name                      string
		output, reasoning, perChk int
		maxTokens                 int
		wantContent, wantReason   int
		wantFinish                string
	}
	variants := []variant{
		{name: "plain", output: 7, perChk: 1, wantContent: 7, wantFinish: "stop"},
		{name: "capped", output: 10, perChk: 1, maxTokens: 4, wantContent: 4, wantFinish: "length"},
		{name: "cap-above-length", output: 3, perChk: 1, maxTokens: 50, wantContent: 3, wantFinish: "stop"},
		{name: "bundled", output: 7, perChk: 3, wantContent: 7, wantFinish: "stop"},
		{name: "reasoning", output: 4, reasoning: 3, perChk: 1, wantContent: 4, wantReason: 3, wantFinish: "stop"},
		{name: "reasoning-bundled-capped", output: 6, reasoning: 3, perChk: 2, maxTokens: 5, wantContent: 2, wantReason: 3, wantFinish: "length"},
	}
	for _, v := range variants {
		cfg := testConfig()
		cfg.OutputTokens = FixedDist(float64(v.output))
		cfg.ReasoningTokens = FixedDist(float64(v.reasoning))
		cfg.TokensPerChunk = v.perChk
		cfg.Models = []string{"m1", "m2"}
		_, base := startServer(t, cfg)
		c := testClient(t)
		for _, ac := range apiCases {
			for _, stream := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/%s/stream=%t", v.name, ac.name, stream), func(t *testing.T) {
					resp := post(t, c, base+ac.path, ac.body("m2", v.maxTokens, stream), nil)
					defer resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("status %d", resp.StatusCode)
					}
					var s summary
					if stream {
						if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
							t.Fatalf("content type %q", ct)
						}
						s = ac.stream(t, readSSE(t, resp.Body))
					} else {
						b, err := io.ReadAll(resp.Body)
						if err != nil {
							t.Fatal(err)
						}
						s = ac.plain(t, b)
					}
					wantR := v.wantReason
					if ac.name == "openai-completions" { // no reasoning channel
						wantR = 0
					}
					wantC := v.wantContent
					if ac.name == "openai-completions" {
						wantC = min(v.output, v.maxTokens)
						if v.maxTokens == 0 {
							wantC = v.output
						}
					}
					if !s.done {
						t.Errorf("no terminal marker")
					}
					if s.contentTokens != wantC || s.reasoningTokens != wantR {
						t.Errorf("content %d reasoning %d tokens, want %d and %d", s.contentTokens, s.reasoningTokens, wantC, wantR)
					}
					if s.completionTokens != wantC+wantR {
						t.Errorf("usage completion tokens %d, want %d", s.completionTokens, wantC+wantR)
					}
					if s.promptTokens != 9 {
						t.Errorf("usage prompt tokens %d, want 9", s.promptTokens)
					}
					wantF := v.wantFinish
					if ac.name == "openai-completions" && v.output <= v.maxTokens {
						wantF = "stop"
					}
					if s.finish != wantF {
						t.Errorf("finish %q, want %q", s.finish, wantF)
					}
					if stream {
						wantEvents := (wantC + wantR + v.perChk - 1) / v.perChk
						if got := s.contentEvents + s.reasoningEvents; got < wantEvents || got > wantEvents+1 {
							t.Errorf("%d token events for %d tokens at %d per chunk", got, wantC+wantR, v.perChk)
						}
					}
					if ac.name == "openai-chat" && s.reasoningUsage != wantR {
						t.Errorf("usage reasoning tokens %d, want %d", s.reasoningUsage, wantR)
					}
				})
			}
		}
	}
}

func TestChatUsageOnlyWhenAsked(t *testing.T) {
	_, base := startServer(t, testConfig())
	c := testClient(t)
	resp := post(t, c, base+"/chat/completions", `{"model":"x","stream":true,"messages":[{"role":"user","content":"hi"}]}`, nil)
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	for _, ev := range evs {
		if strings.Contains(string(ev.data), `"usage"`) {
			t.Fatalf("usage sent without stream_options.include_usage: %s", ev.data)
		}
	}
	if s := parseChatStream(t, evs); s.contentTokens != 5 || !s.done {
		t.Fatalf("summary %+v", s)
	}
}

func TestErrors(t *testing.T) {
	cfg := testConfig()
	cfg.Models = []string{"good"}
	cfg.APIKey = "sekret"
	_, base := startServer(t, cfg)
	c := testClient(t)
	good := map[string]string{"Authorization": "Bearer sekret"}
	tests := []struct {
		name     string
		ac       apiCase
		model    string
		hdr      map[string]string
		body     string
		want     int
		wantType string
	}{
		{"no key", apiCases[0], "good", nil, "", 401, "invalid_request_error"},
		{"wrong key", apiCases[0], "good", map[string]string{"Authorization": "Bearer nope"}, "", 401, "invalid_request_error"},
		{"anthropic header ok, wrong model", apiCases[3], "bad", map[string]string{"x-api-key": "sekret"}, "", 404, "not_found_error"},
		{"anthropic no key", apiCases[3], "good", nil, "", 401, "authentication_error"},
		{"wrong model", apiCases[0], "bad", good, "", 404, "invalid_request_error"},
		{"wrong model responses", apiCases[2], "bad", good, "", 404, "invalid_request_error"},
		{"malformed body", apiCases[1], "good", good, "{not json", 400, "invalid_request_error"},
		{"good", apiCases[1], "good", good, "", 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.body
			if body == "" {
				body = tc.ac.body(tc.model, 0, true)
			}
			resp := post(t, c, base+tc.ac.path, body, tc.hdr)
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, b)
			}
			if tc.want == 200 {
				return
			}
			var e struct {
				Type  string `json:"type"`
				Error struct {
					Type string `json:"type"`
				} `json:"error"`
			}
			mustJSON(t, b, &e)
			if e.Error.Type != tc.wantType {
				t.Fatalf("error type %q, want %q: %s", e.Error.Type, tc.wantType, b)
			}
			if strings.Contains(string(b), testPrompt) || strings.Contains(string(b), "sekret") {
				t.Fatalf("error echoes request material: %s", b)
			}
		})
	}
}

func TestModelsAndHealth(t *testing.T) {
	for _, models := range [][]string{nil, {"a", "b"}} {
		cfg := testConfig()
		cfg.Models = models
		_, base := startServer(t, cfg)
		c := testClient(t)
		resp, err := c.Get(base + "/models")
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Object string `json:"object"`
			Data   []struct {
				ID     string `json:"id"`
				Object string `json:"object"`
			} `json:"data"`
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := models
		if len(want) == 0 {
			want = []string{DefaultModel}
		}
		if list.Object != "list" || len(list.Data) != len(want) || list.Data[0].ID != want[0] {
			t.Fatalf("models %+v, want %v", list, want)
		}
		resp, err = c.Get(strings.TrimSuffix(base, "/v1") + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("healthz %d", resp.StatusCode)
		}
	}
}

func TestContinuousUsage(t *testing.T) {
	cfg := testConfig()
	cfg.OutputTokens = FixedDist(7)
	cfg.TokensPerChunk = 3
	_, base := startServer(t, cfg)
	c := testClient(t)
	for _, path := range []string{"/chat/completions", "/completions"} {
		t.Run(path, func(t *testing.T) {
			body := `{"model":"m","stream":true,"stream_options":{"include_usage":true,"continuous_usage_stats":true},"prompt":"abcd","messages":[{"role":"user","content":"abcd"}]}`
			resp := post(t, c, base+path, body, nil)
			defer resp.Body.Close()
			var deltas []int
			prev := 0
			for _, ev := range readSSE(t, resp.Body) {
				if string(ev.data) == "[DONE]" {
					continue
				}
				var ch struct {
					Usage *oaUsage `json:"usage"`
				}
				mustJSON(t, ev.data, &ch)
				if ch.Usage == nil {
					t.Fatalf("chunk without usage: %s", ev.data)
				}
				if ch.Usage.PromptTokens != 1 || ch.Usage.TotalTokens != 1+ch.Usage.CompletionTokens {
					t.Fatalf("bad usage %+v", ch.Usage)
				}
				if d := ch.Usage.CompletionTokens - prev; d != 0 {
					deltas = append(deltas, d)
				}
				prev = ch.Usage.CompletionTokens
			}
			if fmt.Sprint(deltas) != "[3 3 1]" || prev != 7 {
				t.Fatalf("usage deltas %v (final %d), want [3 3 1] and 7", deltas, prev)
			}
		})
	}
}

func TestBodyTooLarge(t *testing.T) {
	cfg := testConfig()
	cfg.MaxBodyBytes = 64
	s, base := startServer(t, cfg)
	c := testClient(t)
	resp := post(t, c, base+"/chat/completions", apiCases[0].body("m", 0, true), nil) // > 64 bytes
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("status %d, want 413", resp.StatusCode)
	}
	if st := s.Stats(); st.Admitted != 0 || st.Rejected != 0 {
		t.Fatalf("a bad request touched admission: %+v", st)
	}
}
