package protocol

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// q quotes s as a JSON string.
func q(s string) string { return string(appendJSONString(nil, s)) }

// toolStream is a stream of api answering text (in one piece) and then a
// call of tool with its arguments sent in the pieces given, in the API's
// own shape (recorded from OpenAI, Anthropic and llama.cpp streams),
// ending with finish and usage.
func toolStream(api, text, tool string, args []string, finish string, outTokens int) string {
	var b strings.Builder
	ev := func(name, data string) {
		if name != "" {
			fmt.Fprintf(&b, "event: %s\n", name)
		}
		fmt.Fprintf(&b, "data: %s\n\n", data)
	}
	switch api {
	case APIOpenAIChat, APIOpenAICompletions:
		ev("", `{"id":"c1","model":"gpt-x","system_fingerprint":"fp_1","choices":[{"index":0,"delta":{"role":"assistant","content":null},"finish_reason":null}]}`)
		if text != "" {
			if api == APIOpenAICompletions {
				ev("", `{"choices":[{"index":0,"text":`+q(text)+`,"finish_reason":null}]}`)
			} else {
				ev("", `{"choices":[{"index":0,"delta":{"content":`+q(text)+`},"finish_reason":null}]}`)
			}
		}
		if tool != "" {
			ev("", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":`+q(tool)+`,"arguments":""}}]},"finish_reason":null}]}`)
			for _, p := range args {
				ev("", `{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+q(p)+`}}]},"finish_reason":null}]}`)
			}
		}
		ev("", `{"choices":[{"index":0,"delta":{},"finish_reason":`+q(finish)+`}]}`)
		ev("", `{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":`+strconv.Itoa(outTokens)+`,"total_tokens":99}}`)
		ev("", `[DONE]`)
	case APIOpenAIResponses:
		ev("response.created", `{"type":"response.created","response":{"id":"r1","model":"gpt-x","status":"in_progress"}}`)
		if text != "" {
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1"}}`)
			ev("response.output_text.delta", `{"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"delta":`+q(text)+`}`)
		}
		if tool != "" {
			ev("response.output_item.added", `{"type":"response.output_item.added","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":`+q(tool)+`,"arguments":""}}`)
			for _, p := range args {
				ev("response.function_call_arguments.delta", `{"type":"response.function_call_arguments.delta","item_id":"fc_1","output_index":1,"delta":`+q(p)+`}`)
			}
			all := strings.Join(args, "")
			ev("response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","item_id":"fc_1","output_index":1,"arguments":`+q(all)+`}`)
			ev("response.output_item.done", `{"type":"response.output_item.done","output_index":1,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":`+q(tool)+`,"arguments":`+q(all)+`}}`)
		}
		if finish == "completed" {
			ev("response.completed", `{"type":"response.completed","response":{"id":"r1","model":"gpt-x","status":"completed","usage":{"input_tokens":10,"output_tokens":`+strconv.Itoa(outTokens)+`}}}`)
		} else {
			ev("response.incomplete", `{"type":"response.incomplete","response":{"id":"r1","model":"gpt-x","status":"incomplete","incomplete_details":{"reason":`+q(finish)+`},"usage":{"input_tokens":10,"output_tokens":`+strconv.Itoa(outTokens)+`}}}`)
		}
	case APIAnthropicMessages:
		ev("message_start", `{"type":"message_start","message":{"id":"m1","type":"message","role":"assistant","content":[],"model":"claude-x","usage":{"input_tokens":10,"output_tokens":1}}}`)
		i := 0
		if text != "" {
			ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
			ev("ping", `{"type":"ping"}`)
			ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+q(text)+`}}`)
			ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
			i++
		}
		if tool != "" {
			ev("content_block_start", `{"type":"content_block_start","index":`+strconv.Itoa(i)+`,"content_block":{"type":"tool_use","id":"toolu_1","name":`+q(tool)+`,"input":{}}}`)
			for _, p := range args {
				ev("content_block_delta", `{"type":"content_block_delta","index":`+strconv.Itoa(i)+`,"delta":{"type":"input_json_delta","partial_json":`+q(p)+`}}`)
			}
			ev("content_block_stop", `{"type":"content_block_stop","index":`+strconv.Itoa(i)+`}`)
		}
		ev("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+q(finish)+`,"stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(outTokens)+`}}`)
		ev("message_stop", `{"type":"message_stop"}`)
	}
	return b.String()
}

// probeCheck serves body to one check request of api and returns the
// result and record; the request's body is handed to seen.
func probeCheck(t *testing.T, api, body string, p Params) (ledger.Result, *ledger.Record) {
	t.Helper()
	a, err := Lookup(api)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, body)
	}))
	defer srv.Close()
	c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 10 * time.Second}})
	return probeTarget(t, c, context.Background(), Target{Base: srv.URL, Adapter: a}, p, time.Now())
}

// TestCheckCaptureStreams: for each API, a streamed answer (text, tool
// calls with their arguments in pieces, finish reason, usage, model,
// fingerprint) is assembled and judged, each reason from its own stream;
// the hash is the answer's.
func TestCheckCaptureStreams(t *testing.T) {
	tool := toolCheck(t)
	length := validCheck(t, answercheck.Check{MaxTokens: 5, Length: &answercheck.Length{}})
	stop := validCheck(t, answercheck.Check{Stop: &answercheck.StopCheck{Sequences: []string{" 6"}}})
	text := validCheck(t, answercheck.Check{Expect: &answercheck.Expect{Text: "1 2 3 4 5"}})
	model := func(name, fp string) *answercheck.Check {
		return validCheck(t, answercheck.Check{Model: &answercheck.Model{Name: name, SystemFingerprint: fp}})
	}
	lengthFinish := map[string]string{APIOpenAIChat: "length", APIOpenAICompletions: "length", APIOpenAIResponses: "max_output_tokens", APIAnthropicMessages: "max_tokens"}
	endFinish := map[string]string{APIOpenAIChat: "stop", APIOpenAICompletions: "stop", APIOpenAIResponses: "completed", APIAnthropicMessages: "end_turn"}
	modelOf := map[string]string{APIOpenAIChat: "gpt-x", APIOpenAICompletions: "gpt-x", APIOpenAIResponses: "gpt-x", APIAnthropicMessages: "claude-x"}
	pieces := []string{`{"ci`, `ty": "Pa`, `ris"}`}
	for _, api := range Names() {
		type row struct {
			name  string
			c     *answercheck.Check
			body  string
			want  answercheck.Verdict
			calls []answercheck.ToolCall
			text  string
		}
		rows := []row{
			{"text", text, toolStream(api, "1 2 3 4 5", "", nil, endFinish[api], 9), answercheck.Verdict{Result: answercheck.Pass}, nil, "1 2 3 4 5"},
			{"text mismatch", text, toolStream(api, "1 2 3 5", "", nil, endFinish[api], 9), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.Mismatch}, nil, "1 2 3 5"},
			{"stop", stop, toolStream(api, "1 2 3 4 5", "", nil, endFinish[api], 9), answercheck.Verdict{Result: answercheck.Pass}, nil, "1 2 3 4 5"},
			{"stop ignored", stop, toolStream(api, "1 2 3 4 5 6 7", "", nil, endFinish[api], 13), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.StopIgnored}, nil, "1 2 3 4 5 6 7"},
			{"length", length, toolStream(api, "1 2 3", "", nil, lengthFinish[api], 5), answercheck.Verdict{Result: answercheck.Pass}, nil, "1 2 3"},
			{"length ignored", length, toolStream(api, "1 2 3 4 5 6", "", nil, endFinish[api], 11), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.LengthIgnored}, nil, "1 2 3 4 5 6"},
			{"length past", length, toolStream(api, "1 2 3 4 5 6", "", nil, lengthFinish[api], 6), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.LengthIgnored}, nil, "1 2 3 4 5 6"},
			{"model", model(modelOf[api], ""), toolStream(api, "x", "", nil, endFinish[api], 1), answercheck.Verdict{Result: answercheck.Pass}, nil, "x"},
			{"wrong model", model(modelOf[api]+"-other", ""), toolStream(api, "x", "", nil, endFinish[api], 1), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.WrongModel}, nil, "x"},
		}
		if api == APIOpenAIChat || api == APIOpenAICompletions {
			rows = append(rows,
				row{"fingerprint", model("gpt-x", "fp_1"), toolStream(api, "x", "", nil, "stop", 1), answercheck.Verdict{Result: answercheck.Pass}, nil, "x"},
				row{"wrong fingerprint", model("gpt-x", "fp_2"), toolStream(api, "x", "", nil, "stop", 1), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.WrongModel}, nil, "x"})
		}
		if api != APIOpenAICompletions {
			call := []answercheck.ToolCall{{Name: "get_weather", Arguments: `{"city": "Paris"}`}}
			fin := map[string]string{APIOpenAIChat: "tool_calls", APIOpenAIResponses: "completed", APIAnthropicMessages: "tool_use"}[api]
			rows = append(rows,
				row{"tool call", tool, toolStream(api, "", "get_weather", pieces, fin, 7), answercheck.Verdict{Result: answercheck.Pass}, call, ""},
				row{"tool call after text", tool, toolStream(api, "Let me look.", "get_weather", pieces, fin, 9), answercheck.Verdict{Result: answercheck.Pass}, call, "Let me look."},
				row{"no tool call", tool, toolStream(api, "It is sunny.", "", nil, endFinish[api], 4), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.NoToolCall}, nil, "It is sunny."},
				row{"wrong tool", tool, toolStream(api, "", "get_time", []string{"{}"}, fin, 3), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.WrongTool},
					[]answercheck.ToolCall{{Name: "get_time", Arguments: "{}"}}, ""},
				row{"bad arguments", tool, toolStream(api, "", "get_weather", []string{`{"city":`, `"Rome"}`}, fin, 5), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.BadArguments},
					[]answercheck.ToolCall{{Name: "get_weather", Arguments: `{"city":"Rome"}`}}, ""},
				row{"cut arguments", tool, toolStream(api, "", "get_weather", []string{`{"city":`}, fin, 5), answercheck.Verdict{Result: answercheck.Fail, Reason: answercheck.BadArguments},
					[]answercheck.ToolCall{{Name: "get_weather", Arguments: `{"city":`}}, ""})
		}
		for _, r := range rows {
			if CheckSupported(api, r.c) != nil {
				continue // stop on openai-responses: refused (TestCheckSupported)
			}
			t.Run(api+"/"+r.name, func(t *testing.T) {
				res, rec := probeCheck(t, api, r.body, Params{Model: "m", Check: r.c})
				if res.Outcome != ledger.OK {
					t.Fatalf("outcome %+v", res)
				}
				cr := rec.Check
				if cr == nil || cr.Result != r.want.Result || cr.Reason != r.want.Reason {
					t.Fatalf("check %+v, want %+v", cr, r.want)
				}
				if want := answercheck.AnswerSHA256(answercheck.Answer{Text: r.text, ToolCalls: r.calls}); cr.AnswerSHA256 != want {
					t.Errorf("hash %s, want the answer's %s (text %q, calls %+v)", cr.AnswerSHA256, want, r.text, r.calls)
				}
				if cr.Excerpt != "" {
					t.Errorf("excerpt %q without record_answers: excerpt", cr.Excerpt)
				}
			})
		}
	}
}

// TestCheckRecord: not judged unless the request ended ok; the excerpt
// only when asked, cleaned and bounded; ordinary requests carry no check;
// the answer never reaches the error text.
func TestCheckRecord(t *testing.T) {
	c := validCheck(t, answercheck.Check{Expect: &answercheck.Expect{Text: "42"}})
	long := strings.Repeat("é\x1b[31m", 200)
	res, rec := probeCheck(t, APIOpenAIChat, toolStream(APIOpenAIChat, long, "", nil, "stop", 9), Params{Check: c, RecordExcerpt: true})
	cr := rec.Check
	if res.Outcome != ledger.OK || cr == nil || cr.Result != answercheck.Fail || cr.Reason != answercheck.Mismatch {
		t.Fatalf("%+v %+v", res, cr)
	}
	if len(cr.Excerpt) == 0 || len(cr.Excerpt) > answercheck.MaxExcerptBytes || strings.ContainsRune(cr.Excerpt, '\x1b') || !strings.HasPrefix(cr.Excerpt, "é") {
		t.Errorf("excerpt %q: want the answer's start, cleaned, ≤ %d bytes", cr.Excerpt, answercheck.MaxExcerptBytes)
	}
	_, rec = probeCheck(t, APIOpenAIChat, toolStream(APIOpenAIChat, "", "get_weather", []string{`{"city":"Paris"}`}, "tool_calls", 9), Params{Check: toolCheck(t), RecordExcerpt: true})
	if got := rec.Check.Excerpt; got != `get_weather({"city":"Paris"})` {
		t.Errorf("tool call excerpt %q", got)
	}

	// An in-band error after some text: stream_error, not judged, no hash.
	body := `data: {"choices":[{"index":0,"delta":{"content":"SECRET-ANSWER"}}]}` + "\n\n" + `data: {"error":{"code":500,"message":"boom","type":"server_error"}}` + "\n\n"
	res, rec = probeCheck(t, APIOpenAIChat, body, Params{Check: c, RecordExcerpt: true})
	if res.Outcome != ledger.StreamError || rec.Check == nil || *rec.Check != (ledger.CheckRecord{Name: c.Name, Kind: answercheck.KindExpect, Result: answercheck.NotJudged}) {
		t.Errorf("in-band error: %+v, check %+v", res, rec.Check)
	}
	if strings.Contains(res.Err, "SECRET-ANSWER") {
		t.Errorf("the answer reached the error text: %q", res.Err)
	}
	// A refused request (no server at all): not judged.
	l := ledger.New(time.Now())
	rec = l.Plan(ledger.Meta{Target: "t"}, l.Now())
	cl := newClient(t, ClientOptions{})
	res = cl.Do(context.Background(), Target{Base: "http://127.0.0.1:1/v1", Adapter: OpenAIChat{}}, Params{Check: c}, rec, l.Now, func() { l.MarkDispatched(rec) })
	if res.Outcome == ledger.OK || rec.Check == nil || rec.Check.Result != answercheck.NotJudged {
		t.Errorf("refused: %+v, check %+v", res, rec.Check)
	}
	// An ordinary request has no check.
	_, rec = probeCheck(t, APIOpenAIChat, toolStream(APIOpenAIChat, "hi", "", nil, "stop", 1), Params{})
	if rec.Check != nil {
		t.Errorf("ordinary request has a check record %+v", rec.Check)
	}
}

// TestCheckCaptureBounds: a hostile server cannot grow the answer past its
// bounds (text, number of calls, arguments).
func TestCheckCaptureBounds(t *testing.T) {
	var b strings.Builder
	piece := strings.Repeat("x", 8<<10)
	for range 2 * answercheck.MaxAnswerBytes / len(piece) {
		b.WriteString(`data: {"choices":[{"index":0,"delta":{"content":"` + piece + `"}}]}` + "\n\n")
	}
	for i := range 40 {
		b.WriteString(`data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":` + strconv.Itoa(i) + `,"function":{"name":"t` + strconv.Itoa(i) + `","arguments":"` + piece + piece + piece + `"}}]}}]}` + "\n\n")
	}
	b.WriteString(`data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n")
	d := &checkDecoder{Decoder: OpenAIChat{}.NewDecoder(), api: APIOpenAIChat}
	for _, ev := range strings.Split(b.String(), "\n\n") {
		data, ok := strings.CutPrefix(ev, "data: ")
		if !ok {
			continue
		}
		if _, err := d.Decode("", []byte(data)); err != nil {
			t.Fatal(err)
		}
	}
	a := d.answer(&ledger.Record{})
	if len(a.Text) != answercheck.MaxAnswerBytes || !a.Truncated {
		t.Errorf("text %d bytes, truncated %v", len(a.Text), a.Truncated)
	}
	if len(a.ToolCalls) != maxToolCalls || len(a.ToolCalls[0].Arguments) != maxToolArgs {
		t.Errorf("%d calls, first with %d bytes of arguments", len(a.ToolCalls), len(a.ToolCalls[0].Arguments))
	}
}

// FuzzCheckCapture: whatever events a server sends, the capture beside a
// decoder neither panics nor passes its bounds, and never turns an event
// the adapter refused into part of the answer.
func FuzzCheckCapture(f *testing.F) {
	for i, api := range Names() {
		for _, ev := range strings.Split(toolStream(api, "Let me look.", "get_weather", []string{`{"ci`, `ty":"Paris"}`}, "stop", 3), "\n\n") {
			name, data := "", ev
			if n, rest, ok := strings.Cut(ev, "\n"); ok && strings.HasPrefix(n, "event: ") {
				name, data = strings.TrimPrefix(n, "event: "), rest
			}
			f.Add(uint8(i), name, strings.TrimPrefix(data, "data: "))
		}
	}
	f.Add(uint8(0), "", `{"choices":[{"delta":{"tool_calls":[{"index":-1,"function":{"name":"x"}},{"index":99999999999}]}}]}`)
	f.Add(uint8(2), "response.function_call_arguments.done", `{"type":"response.function_call_arguments.done","arguments":null}`)
	f.Add(uint8(3), "content_block_delta", `{"type":"content_block_delta","index":7,"delta":"x"}`)
	names := Names()
	f.Fuzz(func(t *testing.T, which uint8, name, data string) {
		api := names[int(which)%len(names)]
		a, _ := Lookup(api)
		d := &checkDecoder{Decoder: a.NewDecoder(), api: api}
		for range 3 { // the same event again: pieces add up, within bounds
			if _, err := d.Decode(name, []byte(data)); err != nil {
				break
			}
		}
		ans := d.answer(&ledger.Record{})
		if len(ans.Text) > answercheck.MaxAnswerBytes || len(ans.ToolCalls) > maxToolCalls || len(ans.SystemFingerprint) > maxFingerprint {
			t.Fatalf("bounds passed: text %d, calls %d", len(ans.Text), len(ans.ToolCalls))
		}
		for _, c := range ans.ToolCalls {
			if len(c.Name) > maxToolName || len(c.Arguments) > maxToolArgs {
				t.Fatalf("call bounds passed: %d, %d", len(c.Name), len(c.Arguments))
			}
		}
	})
}
