package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// hostileValues are server text of every hostile kind: control
// characters, ANSI escapes, a bidi override, invalid UTF-8, HTML, and a
// value of 1 MB.
var hostileValues = map[string]string{
	"ansi":         "\x1b[2J\x1b[31mred\x1b[0m\x07",
	"control":      "a\x00b\x08c\rd\ne\tf\x7f",
	"bidi":         "abc\u202edcba\u2066x",
	"invalid utf8": "ok\xff\xfe\xc3(",
	"html":         `<script>alert(1)</script><img src=x onerror=alert(2)>`,
	"1 MB":         strings.Repeat("A", 1<<20),
}

// jsonString is s as a JSON string literal whose bytes outside ASCII
// printables are written as they are (invalid UTF-8 stays invalid) and
// control characters as \u escapes.
func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// checkClean fails when text that reaches a ledger string, a log line or a
// page still holds a hostile byte or is unbounded.
func checkClean(t *testing.T, what, s string, max int) {
	t.Helper()
	switch {
	case len(s) > max:
		t.Errorf("%s: %d bytes, over %d", what, len(s), max)
	case !utf8.ValidString(s):
		t.Errorf("%s: not UTF-8: %.120q", what, s)
	case strings.ContainsAny(s, "\x00\x07\x08\x1b\r\n\x7f\u202e\u2066"):
		t.Errorf("%s: a control or bidi character kept: %.120q", what, s)
	}
}

// TestServerTextAudit (sanitisation audit): every server-supplied string
// the client turns into a ledger string (the record's error text, model,
// finish reason) is cleaned and bounded, whatever the path: an in-band
// error's message, type and code (an `error:` field, `event: error`, a
// {"error":…} payload), an error body's type and code, a Content-Type, a
// Content-Encoding, a model, a finish reason. The record is then finished
// by the ledger, as in production.
func TestServerTextAudit(t *testing.T) {
	type path struct {
		name  string
		serve func(v string) http.HandlerFunc
	}
	sse := func(body string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = w.Write([]byte(body))
		}
	}
	paths := []path{
		{"in-band error field", func(v string) http.HandlerFunc {
			return sse(content("a").raw + `error: {"message":` + jsonString(v) + `,"type":` + jsonString(v) + `,"code":` + jsonString(v) + "}\n\ndata: [DONE]\n\n")
		}},
		{"event error text", func(v string) http.HandlerFunc {
			return sse("event: error\ndata: " + strings.ReplaceAll(v, "\n", " ") + "\n\n")
		}},
		{"error payload", func(v string) http.HandlerFunc {
			return sse(`data: {"error":{"message":` + jsonString(v) + `,"type":` + jsonString(v) + `,"code":` + jsonString(v) + "}}\n\n")
		}},
		{"error body", func(v string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusBadRequest)
				_, _ = w.Write([]byte(`{"error":{"message":` + jsonString(v) + `,"type":` + jsonString(v) + `,"code":` + jsonString(v) + `}}`))
			}
		}},
		{"content type", func(v string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header()["Content-Type"] = []string{headerSafe(v)}
				_, _ = w.Write([]byte("<html>hi</html>"))
			}
		}},
		{"content encoding", func(v string) http.HandlerFunc {
			return func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header()["Content-Encoding"] = []string{headerSafe(v)}
				_, _ = w.Write([]byte(content("a").raw))
			}
		}},
		{"model and finish reason", func(v string) http.HandlerFunc {
			return sse(`data: {"model":` + jsonString(v) + `,"choices":[{"delta":{"content":"hi"},"finish_reason":` + jsonString(v) + "}]}\n\ndata: [DONE]\n\n")
		}},
	}
	c := newClient(t, ClientOptions{})
	for _, p := range paths {
		for kind, v := range hostileValues {
			t.Run(p.name+"/"+kind, func(t *testing.T) {
				srv := httptest.NewServer(p.serve(v))
				defer srv.Close()
				res, rec := probe(t, c, context.Background(), srv.URL, Params{})
				checkClean(t, "result error", res.Err, ledger.MaxErrorBytes)
				checkClean(t, "record error", rec.Error, ledger.MaxErrorBytes)
				checkClean(t, "model", rec.Model, ledger.MaxModelBytes)
				checkClean(t, "finish reason", rec.FinishReason, ledger.MaxFinishReasonBytes)
			})
		}
	}
}

// headerSafe is v as a header value Go's server will send: without CR, LF
// or NUL (net/http refuses those), and bounded below the client's header
// limit.
func headerSafe(v string) string {
	v = strings.Map(func(r rune) rune {
		if r == '\r' || r == '\n' || r == 0 {
			return ' '
		}
		return r
	}, v)
	return v[:min(len(v), 64<<10)]
}
