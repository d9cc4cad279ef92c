package chaos

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// The hostile server speaks HTTP/1.1 by hand, on raw connections, so that a
// behaviour can break the protocol anywhere: the status line, the headers,
// the chunked framing, the connection itself. Every behaviour is chosen per
// request (after the request was read), so that a keep-alive connection
// opened under one behaviour serves the next request with the behaviour
// current then.

// behaviour serves one request on h and reports whether the connection may
// serve another one (keep-alive).
type behaviour func(h *hconn) bool

// hostile is one hostile server on 127.0.0.1.
type hostile struct {
	name string
	*testutil.RawServer
	addr    string
	current atomic.Pointer[behaviour]
}

// newHostile starts a hostile server serving b (which may be changed later
// with set) on a free 127.0.0.1 port until the test ends.
func newHostile(t testing.TB, name string, b behaviour) *hostile {
	t.Helper()
	s := &hostile{name: name}
	s.set(b)
	s.RawServer = testutil.NewRawServer(t, s.serveConn)
	s.addr = s.Addr()
	return s
}

// url is the server's API base URL.
func (s *hostile) url() string { return s.URL() + "/v1" }

func (s *hostile) set(b behaviour) { s.current.Store(&b) }

func (s *hostile) serveConn(c *testutil.RawConn) {
	h := &hconn{c: c.Conn, br: bufio.NewReader(c), bw: bufio.NewWriterSize(c, 32<<10), stop: c.Stop}
	for {
		req, err := http.ReadRequest(h.br)
		if err != nil {
			return
		}
		h.body, _ = io.ReadAll(io.LimitReader(req.Body, 1<<20))
		_ = req.Body.Close()
		h.req, h.n = req, h.n+1
		h.key = req.Header.Get("Authorization")
		if h.key == "" {
			h.key = req.Header.Get("X-Api-Key")
		}
		b := *s.current.Load()
		if !b(h) || h.err != nil {
			return
		}
		if err := h.bw.Flush(); err != nil {
			return
		}
	}
}

// hconn is one connection and the request being served on it.
type hconn struct {
	c    net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	stop <-chan struct{}
	req  *http.Request
	body []byte
	key  string // what the request carried as its key: "Bearer …" or the x-api-key value
	n    int    // requests read on this connection, this one included
	err  error  // first write error: the client has gone
}

// models reports whether the request is the identity poll (GET …/models).
func (h *hconn) models() bool {
	return h.req.Method == http.MethodGet && strings.HasSuffix(h.req.URL.Path, "/models")
}

// api is the API the request speaks, from its path.
func (h *hconn) api() string {
	switch p := h.req.URL.Path; {
	case strings.HasSuffix(p, "/messages"):
		return "anthropic-messages"
	case strings.HasSuffix(p, "/responses"):
		return "openai-responses"
	case strings.HasSuffix(p, "/completions") && !strings.HasSuffix(p, "/chat/completions"):
		return "openai-completions"
	}
	return "openai-chat"
}

// raw writes bytes as they are and flushes.
func (h *hconn) raw(s string) bool {
	if h.err != nil {
		return false
	}
	if _, err := h.bw.WriteString(s); err != nil {
		h.err = err
		return false
	}
	if err := h.bw.Flush(); err != nil {
		h.err = err
		return false
	}
	return true
}

// head writes a status line and headers (each "Name: value").
func (h *hconn) head(status int, text string, hdr ...string) bool {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\n", status, text)
	for _, l := range hdr {
		b.WriteString(l)
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	return h.raw(b.String())
}

// sse writes the head of a chunked event stream.
func (h *hconn) sse(hdr ...string) bool {
	return h.head(200, "OK", append([]string{"Content-Type: text/event-stream", "Transfer-Encoding: chunked", "Cache-Control: no-cache"}, hdr...)...)
}

// chunk writes one chunk of a chunked body.
func (h *hconn) chunk(p string) bool {
	if p == "" {
		return h.err == nil
	}
	return h.raw(fmt.Sprintf("%x\r\n%s\r\n", len(p), p))
}

// event writes one server-sent event (data only) as one chunk.
func (h *hconn) event(data string) bool { return h.chunk("data: " + data + "\n\n") }

// named writes one server-sent event with an event name as one chunk.
func (h *hconn) named(name, data string) bool {
	return h.chunk("event: " + name + "\ndata: " + data + "\n\n")
}

// end ends a chunked body.
func (h *hconn) end() bool { return h.raw("0\r\n\r\n") }

// full writes a complete response with a Content-Length body.
func (h *hconn) full(status int, text, ctype, body string, hdr ...string) bool {
	hdr = append([]string{"Content-Type: " + ctype, fmt.Sprintf("Content-Length: %d", len(body))}, hdr...)
	return h.head(status, text, hdr...) && h.raw(body)
}

// sleep waits d; false when the server is stopping.
func (h *hconn) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-h.stop:
		return false
	}
}

// hold keeps the connection open, answering nothing, until the client or
// the server closes it.
func (h *hconn) hold() bool {
	_, _ = io.Copy(io.Discard, h.br)
	return false
}

// reset closes the connection with a TCP RST instead of a FIN.
func (h *hconn) reset() bool {
	_ = h.bw.Flush()
	if tc, ok := h.c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = h.c.Close()
	return false
}

// ----- well-formed streams, per API -----

// stream says what a well-formed stream carries; zero fields take the
// defaults of a healthy answer.
type stream struct {
	model    string        // default "chaos-model"
	words    int           // content events; default 4
	finish   string        // default the API's stop reason
	usage    string        // raw JSON of the usage object (chat); default a healthy one
	gap      time.Duration // between content events; default 2ms
	noDone   bool          // leave out the terminal marker (and for anthropic, message_stop)
	id       string        // chat: the chunk id; default "chatcmpl-chaos"
	contents []string      // content of each event; default "word "
}

func (st stream) withDefaults(api string) stream {
	if st.model == "" {
		st.model = "chaos-model"
	}
	if st.words == 0 {
		st.words = 4
	}
	if st.finish == "" {
		switch api {
		case "anthropic-messages":
			st.finish = "end_turn"
		default:
			st.finish = "stop"
		}
	}
	if st.usage == "" {
		st.usage = `{"prompt_tokens":12,"completion_tokens":4,"total_tokens":16}`
	}
	if st.gap == 0 {
		st.gap = 2 * time.Millisecond
	}
	if st.id == "" {
		st.id = "chatcmpl-chaos"
	}
	return st
}

func (st stream) content(i int) string {
	if i < len(st.contents) {
		return st.contents[i]
	}
	return "word "
}

// q quotes s as a JSON string the way a careless server would: '"', '\'
// and control characters escaped, every other byte (invalid UTF-8
// included) as it is.
func q(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20:
			fmt.Fprintf(&b, `\u%04x`, c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// serveStream writes st as a complete, well-formed stream of the request's
// API (and answers the identity poll with a healthy models list).
func serveStream(h *hconn, st stream) bool {
	if h.models() {
		return healthyModels(h)
	}
	api := h.api()
	st = st.withDefaults(api)
	if !h.sse() {
		return false
	}
	switch api {
	case "anthropic-messages":
		h.named("message_start", `{"type":"message_start","message":{"id":"msg_chaos","type":"message","role":"assistant","model":`+q(st.model)+`,"usage":{"input_tokens":12,"output_tokens":1}}}`)
		h.named("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		for i := range st.words {
			h.named("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+q(st.content(i))+`}}`)
			h.sleep(st.gap)
		}
		h.named("content_block_stop", `{"type":"content_block_stop","index":0}`)
		h.named("message_delta", `{"type":"message_delta","delta":{"stop_reason":`+q(st.finish)+`},"usage":{"output_tokens":4}}`)
		if !st.noDone {
			h.named("message_stop", `{"type":"message_stop"}`)
		}
	case "openai-responses":
		h.named("response.created", `{"type":"response.created","response":{"id":"resp_chaos","model":`+q(st.model)+`}}`)
		h.named("response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"msg_1"}}`)
		for i := range st.words {
			h.named("response.output_text.delta", `{"type":"response.output_text.delta","output_index":0,"delta":`+q(st.content(i))+`}`)
			h.sleep(st.gap)
		}
		h.named("response.output_item.done", `{"type":"response.output_item.done","output_index":0,"item":{"type":"message","id":"msg_1"}}`)
		if !st.noDone {
			h.named("response.completed", `{"type":"response.completed","response":{"id":"resp_chaos","model":`+q(st.model)+`,"usage":{"input_tokens":12,"output_tokens":4}}}`)
		}
	case "openai-completions":
		for i := range st.words {
			h.event(`{"id":"cmpl-chaos","object":"text_completion","model":` + q(st.model) + `,"choices":[{"index":0,"text":` + q(st.content(i)) + `,"finish_reason":null}]}`)
			h.sleep(st.gap)
		}
		h.event(`{"id":"cmpl-chaos","object":"text_completion","model":` + q(st.model) + `,"choices":[{"index":0,"text":"","finish_reason":` + q(st.finish) + `}]}`)
		h.event(`{"id":"cmpl-chaos","object":"text_completion","model":` + q(st.model) + `,"choices":[],"usage":` + st.usage + `}`)
		if !st.noDone {
			h.event("[DONE]")
		}
	default:
		h.event(chatChunk(st.id, st.model, `{"role":"assistant","content":""}`, "null"))
		for i := range st.words {
			h.event(chatChunk(st.id, st.model, `{"content":`+q(st.content(i))+`}`, "null"))
			h.sleep(st.gap)
		}
		h.event(chatChunk(st.id, st.model, `{}`, q(st.finish)))
		h.event(`{"id":` + q(st.id) + `,"object":"chat.completion.chunk","model":` + q(st.model) + `,"choices":[],"usage":` + st.usage + `}`)
		if !st.noDone {
			h.event("[DONE]")
		}
	}
	return h.end()
}

func chatChunk(id, model, delta, finish string) string {
	return `{"id":` + q(id) + `,"object":"chat.completion.chunk","created":1,"model":` + q(model) +
		`,"choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + finish + `}]}`
}

// healthyModels answers GET /models with one model, a root field and an
// identity header.
func healthyModels(h *hconn) bool {
	return h.full(200, "OK", "application/json",
		`{"object":"list","data":[{"id":"chaos-model","object":"model","root":"/models/chaos-model"}]}`,
		"X-Build: build-1")
}

// healthy is a well-formed, quick stream.
func healthy(h *hconn) bool { return serveStream(h, stream{}) }

// streamHead answers the identity poll with a healthy models list, and
// otherwise writes the head of an event stream and runs f.
func streamHead(f func(h *hconn) bool) behaviour {
	return func(h *hconn) bool {
		if h.models() {
			return healthyModels(h)
		}
		if !h.sse() {
			return false
		}
		return f(h)
	}
}

// forever writes ev every gap until the client goes away or the server stops.
func forever(h *hconn, gap time.Duration, ev func(i int) string) bool {
	for i := 0; ; i++ {
		if !h.chunk(ev(i)) || !h.sleep(gap) {
			return false
		}
	}
}

// bigBody writes a body of n bytes of filler with Content-Length, in
// pieces, until done or the client goes away.
func bigBody(h *hconn, status int, text, ctype string, n int) bool {
	if !h.head(status, text, "Content-Type: "+ctype, fmt.Sprintf("Content-Length: %d", n)) {
		return false
	}
	piece := strings.Repeat("x", 64<<10)
	for n > 0 {
		m := min(n, len(piece))
		if !h.raw(piece[:m]) {
			return false
		}
		n -= m
	}
	return true
}

// counter is a plain HTTP server that counts the requests it gets (the
// origin a redirect points to: it must never be asked).
type counter struct {
	hits atomic.Int64
	keys atomic.Int64 // requests that carried a key
	srv  *http.Server
	addr string
}

func newCounter(t testing.TB) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &counter{addr: ln.Addr().String()}
	c.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		if r.Header.Get("Authorization") != "" || r.Header.Get("X-Api-Key") != "" {
			c.keys.Add(1)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.Copy(w, bytes.NewReader([]byte("data: [DONE]\n\n")))
	}), ReadHeaderTimeout: time.Second}
	go func() { _ = c.srv.Serve(ln) }()
	t.Cleanup(func() { _ = c.srv.Close() })
	return c
}
