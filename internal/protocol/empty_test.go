package protocol

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// TestNoEmptySuccess (issue 17.4): a stream that carries an error object in
// any form, or nothing at all, is a stream_error with a named reason, never
// ok; a stream whose only fault is a missing [DONE] after a finish reason
// stays ok. Each case was ok (or truncated) before the fix, as noted.
func TestNoEmptySuccess(t *testing.T) {
	role := step{raw: chunk(`{"role":"assistant","content":null}`)}
	finish := step{raw: `data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n"}
	usage := step{raw: `data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}` + "\n\n"}
	tests := []struct {
		name    string
		steps   []step
		outcome ledger.Outcome
		reason  ledger.Reason
		errHas  string
	}{
		// before: ok/other
		{name: "error field then [DONE] (llama.cpp early 2025)", steps: []step{role, {raw: `error: {"code":500,"message":"Failed to parse input at pos 3","type":"server_error"}` + "\n\n"}, done},
			outcome: ledger.StreamError, reason: ledger.ReasonInBandError, errHas: "in-band error (server_error/500): Failed to parse input at pos 3"},
		// before: ok/other
		{name: "error field that is not JSON", steps: []step{role, {raw: "error: upstream died\n\n"}, done},
			outcome: ledger.StreamError, reason: ledger.ReasonInBandError, errHas: "in-band error (error): upstream died"},
		// before: data_after_done
		{name: "error field after [DONE]", steps: []step{content("a"), finish, done, {raw: "error: late\n\n"}},
			outcome: ledger.StreamError, reason: ledger.ReasonInBandError, errHas: "late"},
		{name: "event: error, bare object", steps: []step{content("a"), {raw: "event: error\n" + `data: {"message":"m","type":"t","code":7}` + "\n\n"}},
			outcome: ledger.StreamError, reason: ledger.ReasonInBandError, errHas: "in-band error (t/7): m"},
		{name: "error payload", steps: []step{content("a"), {raw: `data: {"error":{"message":"m2","type":"server_error"}}` + "\n\n"}},
			outcome: ledger.StreamError, reason: ledger.ReasonInBandError, errHas: "in-band error (server_error): m2"},
		// before: ok/other
		{name: "role chunk and [DONE]", steps: []step{role, done}, outcome: ledger.StreamError, reason: ledger.ReasonNoContent, errHas: noContentText},
		// before: ok/other
		{name: "only [DONE]", steps: []step{done}, outcome: ledger.StreamError, reason: ledger.ReasonNoContent},
		// before: truncated
		{name: "empty body", steps: nil, outcome: ledger.StreamError, reason: ledger.ReasonNoContent},
		{name: "role chunk, then the body ends", steps: []step{role}, outcome: ledger.StreamError, reason: ledger.ReasonNoContent},
		{name: "cut inside an event is truncation", steps: []step{role, {raw: `data: {"choices":[`}}, outcome: ledger.StreamError, reason: ledger.ReasonTruncated},
		// before: truncated
		{name: "finish and usage, no [DONE]", steps: []step{content("a"), finish, usage}, outcome: ledger.OK, reason: ledger.ReasonStop},
		{name: "finish only, no content, no [DONE]", steps: []step{role, finish}, outcome: ledger.OK, reason: ledger.ReasonStop},
		{name: "content without finish, no [DONE]", steps: []step{content("a")}, outcome: ledger.StreamError, reason: ledger.ReasonTruncated},
		{name: "usage only and [DONE] is not empty", steps: []step{role, usage, done}, outcome: ledger.OK, reason: ledger.ReasonOther},
		{name: "finish without content and [DONE] is not empty", steps: []step{role, finish, done}, outcome: ledger.OK, reason: ledger.ReasonStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(streamHandler(tt.steps...))
			defer srv.Close()
			c := newClient(t, ClientOptions{Timeouts: Timeouts{Total: 10 * time.Second}})
			res, rec := probe(t, c, context.Background(), srv.URL+"/v1", Params{Model: "m", Prompt: "p"})
			if res.Outcome != tt.outcome || res.Reason != tt.reason {
				t.Fatalf("result %+v, want %s/%s", res, tt.outcome, tt.reason)
			}
			if !strings.Contains(res.Err, tt.errHas) {
				t.Errorf("error %q does not contain %q", res.Err, tt.errHas)
			}
			if rec.End == 0 {
				t.Error("end not stamped")
			}
		})
	}
}

// TestInBandMessageSanitised: the server's message of an in-band error is
// kept on the record, cleaned by the one sanitiser (secrets redacted,
// control characters replaced, valid UTF-8) and within the record's bound.
func TestInBandMessageSanitised(t *testing.T) {
	const key = "sk-live-0123456789abcdef"
	hostile := "echo " + key + " \u001b[31mred\u0007 " + "\xff" + strings.Repeat("long ", 100)
	inJSON := `"echo ` + key + ` \u001b[31mred\u0007 ` + "\xff" + strings.Repeat("long ", 100) + `"`
	forms := map[string]string{
		"error field":      `error: {"message":` + inJSON + `,"type":"server_error"}` + "\n\n",
		"event error":      "event: error\ndata: {\"message\":" + inJSON + "}\n\n",
		"event error text": "event: error\ndata: " + hostile + "\n\n",
		"payload":          `data: {"error":{"message":` + inJSON + `}}` + "\n\n",
		"text field":       "error: " + hostile + "\n\n",
	}
	for name, raw := range forms {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(streamHandler(content("a"), step{raw: raw}))
			defer srv.Close()
			c := newClient(t, ClientOptions{Redactor: sanitize.NewRedactor(key)})
			res, _ := probe(t, c, context.Background(), srv.URL+"/v1", Params{Model: "m", Prompt: "p"})
			if res.Reason != ledger.ReasonInBandError {
				t.Fatalf("result %+v, want in_band_error", res)
			}
			if strings.Contains(res.Err, key) || !strings.Contains(res.Err, sanitize.Marker) {
				t.Errorf("key not redacted: %q", res.Err)
			}
			if strings.ContainsAny(res.Err, "\u001b\u0007") || !utf8.ValidString(res.Err) {
				t.Errorf("not cleaned: %q", res.Err)
			}
			if !strings.Contains(res.Err, "echo ") || len(res.Err) > ledger.MaxErrorBytes {
				t.Errorf("error %q (%d bytes): want the message, within %d bytes", res.Err, len(res.Err), ledger.MaxErrorBytes)
			}
		})
	}
}
