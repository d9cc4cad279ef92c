package sim

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testConfig is a fast deterministic configuration.
func testConfig() Config {
	c := DefaultConfig()
	c.Slots = 8
	c.AdmissionLimit = 32
	c.TTFT = FixedDist(0.001)
	c.TokenTime = FixedDist(0.001)
	c.OutputTokens = FixedDist(5)
	return c
}

// startServer starts a simulator and registers its shutdown.
func startServer(t testing.TB, cfg Config) (*Server, string) {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	base, closeFn, err := s.Start("")
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() {
		if err := closeFn(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s, base
}

// testClient has its own transport so its idle connections can be closed.
func testClient(t testing.TB) *http.Client {
	tr := &http.Transport{MaxIdleConnsPerHost: 256}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

func post(t testing.TB, c *http.Client, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	return postCtx(t, context.Background(), c, url, body, hdr)
}

func postCtx(t testing.TB, ctx context.Context, c *http.Client, url, body string, hdr map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatalf("request: %v", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	return resp
}

// sseEvent is one parsed server-sent event with its arrival time.
type sseEvent struct {
	name string
	data []byte
	at   time.Time
}

// readSSE parses a whole SSE stream (LF line ends, as the simulator writes).
func readSSE(t testing.TB, r io.Reader) []sseEvent {
	t.Helper()
	var evs []sseEvent
	var cur sseEvent
	var data [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		switch {
		case len(line) == 0:
			if data != nil {
				cur.data = bytes.Join(data, []byte("\n"))
				cur.at = time.Now()
				evs = append(evs, cur)
			}
			cur, data = sseEvent{}, nil
		case bytes.HasPrefix(line, []byte("event: ")):
			cur.name = string(line[len("event: "):])
		case bytes.HasPrefix(line, []byte("data: ")):
			data = append(data, append([]byte(nil), line[len("data: "):]...))
		case line[0] == ':':
		default:
			t.Fatalf("unexpected SSE line %q", line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read SSE: %v", err)
	}
	if data != nil {
		t.Fatalf("stream ended inside an event")
	}
	return evs
}

// countTokens counts simulated tokens in text (each starts with a space).
func countTokens(s string) int { return strings.Count(s, " ") }

// summary is what any API's stream or body says, extracted by a parser that
// also checks the API's shapes and order.
type summary struct {
	contentEvents, contentTokens     int
	reasoningEvents, reasoningTokens int
	finish                           string // normalised: "stop" or "length"
	promptTokens, completionTokens   int
	reasoningUsage                   int
	done                             bool
	first                            string // the first content token's text
	contentAt                        []time.Time
}

// addContent counts one content event with text, seen at at.
func (s *summary) addContent(text string, at time.Time) {
	if s.first == "" {
		s.first = text
	}
	s.contentEvents++
	s.contentTokens += countTokens(text)
	s.contentAt = append(s.contentAt, at)
}

func mustJSON(t testing.TB, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("event data is not JSON: %v: %s", err, b)
	}
}
