package sim

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a running simulator. Its Handler can be served by any
// http.Server; Start does that on a local listener.
type Server struct {
	cfg    Config
	now    func() time.Time
	start  time.Time
	tl     timeline
	models map[string]bool
	live   live // version, slots, admission limit, error fraction, TTFT: changed by Update
	mux    *http.ServeMux
	bufs   sync.Pool
	met    *simMetrics  // GET /metrics (metrics.go)
	pc     *prefixCache // the prefix cache (prefix.go)

	done      chan struct{}
	closeOnce sync.Once

	seq       atomic.Uint64
	inflight  atomic.Int64 // queued + in service
	inService atomic.Int64
	admitted  atomic.Int64
	rejected  atomic.Int64
	completed atomic.Int64
	aborted   atomic.Int64
	failed    atomic.Int64
}

// Stats is a snapshot of the server's counters.
type Stats struct {
	Admitted  int64 // requests admitted since start
	Rejected  int64 // requests rejected by the admission limit since start
	Completed int64 // generations that ran to their end
	Aborted   int64 // admitted requests that ended early (client gone or server closed)
	Failed    int64 // admitted requests answered 500 on purpose (ErrorFraction)
	Queued    int64 // admitted requests waiting for a slot now
	InService int64 // requests holding a slot now
}

// New validates cfg and returns a server whose clock (for window offsets)
// starts now.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	s := &Server{
		cfg:   cfg,
		now:   now,
		start: now(),
		done:  make(chan struct{}),
	}
	s.live.cfg, s.live.slots = cfg, newSlotPool(cfg.Slots)
	s.tl = newTimeline(cfg.Windows, s.start)
	if len(cfg.Models) > 0 {
		s.models = make(map[string]bool, len(cfg.Models))
		for _, m := range cfg.Models {
			s.models[m] = true
		}
	}
	s.pc = newPrefixCache(cfg.PrefixCache.Blocks)
	s.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	s.met = newSimMetrics(s)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.generateHandler(apiChat, chatEmitter{}))
	mux.HandleFunc("POST /v1/completions", s.generateHandler(apiCompletions, completionsEmitter{}))
	mux.HandleFunc("POST /v1/responses", s.generateHandler(apiResponses, responsesEmitter{}))
	mux.HandleFunc("POST /v1/messages", s.generateHandler(apiMessages, messagesEmitter{}))
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("GET /healthz", s.handleHealth)
	mux.HandleFunc("GET /metrics", s.handleMetrics)
	mux.HandleFunc("GET /admin/state", s.handleState)
	mux.HandleFunc("POST /admin/state", s.handleState)
	s.mux = mux
	return s, nil
}

// Handler serves the simulator's API.
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serveHTTP) }

// serveHTTP stamps the version header on every response.
func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if v := s.live.get().Version; v != "" {
		w.Header().Set(VersionHeader, v)
	}
	s.mux.ServeHTTP(w, r)
}

// Stats returns a snapshot of the counters.
func (s *Server) Stats() Stats {
	inflight, in := s.inflight.Load(), s.inService.Load()
	return Stats{
		Admitted:  s.admitted.Load(),
		Rejected:  s.rejected.Load(),
		Completed: s.completed.Load(),
		Aborted:   s.aborted.Load(),
		Failed:    s.failed.Load(),
		Queued:    max(0, inflight-in),
		InService: in,
	}
}

// Stalled reports whether service is stalled right now.
func (s *Server) Stalled() bool { return s.tl.rateAt(s.offset()) == 0 }

// Close ends every stream in progress (they stop without their final events)
// and makes new requests fail with 503. It does not close listeners.
func (s *Server) Close() { s.closeOnce.Do(func() { close(s.done) }) }

// Start serves the simulator on addr ("" means 127.0.0.1 on a free port; a
// missing host means 127.0.0.1). It returns the API base URL, ending in /v1
// (the value llmprobe's --url takes), and a function that closes the
// listener, ends streams in progress and waits for handlers to return.
func (s *Server) Start(addr string) (string, func() error, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	if strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1" + addr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", nil, fmt.Errorf("sim: listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln) // returns ErrServerClosed after Shutdown
	}()
	closeFn := func() error {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := hs.Shutdown(ctx)
		if err != nil {
			err = errors.Join(fmt.Errorf("sim: shutdown: %w", err), hs.Close())
		}
		<-served
		return err
	}
	return "http://" + ln.Addr().String() + "/v1", closeFn, nil
}

// offset is the time since the server started.
func (s *Server) offset() time.Duration { return s.now().Sub(s.start) }

func (s *Server) authorized(r *http.Request) bool {
	if s.cfg.APIKey == "" {
		return true
	}
	key := r.Header.Get("x-api-key")
	if key == "" {
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			key = auth[7:]
		}
	}
	return subtle.ConstantTimeCompare([]byte(key), []byte(s.cfg.APIKey)) == 1
}

func (s *Server) modelOK(m string) bool { return s.models == nil || s.models[m] }

func (s *Server) closed() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
	}
}

func (s *Server) handleHealth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if s.closed() {
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"status":"closing"}`+"\n")
		return
	}
	_, _ = io.WriteString(w, `{"status":"ok"}`+"\n")
}

func (s *Server) handleModels(w http.ResponseWriter, r *http.Request) {
	if !s.authorized(r) {
		writeError(w, apiChat, http.StatusUnauthorized, 0)
		return
	}
	names := s.cfg.Models
	if len(names) == 0 {
		names = []string{DefaultModel}
	}
	type model struct {
		ID      string `json:"id"`
		Object  string `json:"object"`
		Created int64  `json:"created"`
		OwnedBy string `json:"owned_by"`
		Root    string `json:"root,omitempty"` // the version, as vLLM names what it serves
	}
	version := s.live.get().Version
	list := struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{Object: "list"}
	for _, n := range names {
		list.Data = append(list.Data, model{ID: n, Object: "model", Created: s.start.Unix(), OwnedBy: "llmprobe-sim", Root: version})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(list)
}

// writeError writes an API-shaped JSON error. Messages never echo request
// content.
func writeError(w http.ResponseWriter, a api, status int, retryAfter time.Duration) {
	var typ, code, msg string
	switch status {
	case http.StatusUnauthorized:
		typ, code, msg = "authentication_error", "invalid_api_key", "missing or invalid API key"
	case http.StatusNotFound:
		typ, code, msg = "not_found_error", "model_not_found", "the requested model does not exist"
	case http.StatusTooManyRequests:
		typ, code, msg = "rate_limit_error", "rate_limit_exceeded", "simulator admission limit reached"
	case http.StatusServiceUnavailable:
		typ, code, msg = "overloaded_error", "server_overloaded", "simulator overloaded or closing"
	case http.StatusRequestEntityTooLarge:
		typ, code, msg = "request_too_large", "request_too_large", "request body too large"
	case http.StatusInternalServerError:
		typ, code, msg = "api_error", "internal_error", "simulated server error"
	default:
		typ, code, msg = "invalid_request_error", "invalid_request", "malformed request body"
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if retryAfter > 0 {
		h.Set("Retry-After", strconv.FormatInt(int64((retryAfter+time.Second-1)/time.Second), 10))
	}
	w.WriteHeader(status)
	var body any
	if a == apiMessages {
		body = map[string]any{"type": "error", "error": map[string]string{"type": typ, "message": msg}}
	} else {
		if typ == "authentication_error" || typ == "not_found_error" {
			typ = "invalid_request_error"
		}
		body = map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": code}}
	}
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) generateHandler(a api, em emitter) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			writeError(w, a, http.StatusUnauthorized, 0)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes))
		if err != nil {
			status := http.StatusBadRequest
			if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
				status = http.StatusRequestEntityTooLarge
			}
			writeError(w, a, status, 0)
			return
		}
		req, err := decodeRequest(a, body)
		if err != nil {
			writeError(w, a, http.StatusBadRequest, 0)
			return
		}
		if !s.modelOK(req.Model) {
			writeError(w, a, http.StatusNotFound, 0)
			return
		}
		if s.closed() {
			writeError(w, a, http.StatusServiceUnavailable, 0)
			return
		}
		lc := s.live.get()
		if s.inflight.Add(1) > int64(lc.AdmissionLimit) {
			s.inflight.Add(-1)
			s.rejected.Add(1)
			writeError(w, a, s.cfg.RejectStatus, s.cfg.RetryAfter)
			return
		}
		defer s.inflight.Add(-1)
		s.admitted.Add(1)
		n := s.seq.Add(1)
		if failDraw(s.cfg.Seed, n, lc.ErrorFraction) {
			s.failed.Add(1)
			writeError(w, a, http.StatusInternalServerError, 0)
			return
		}
		if s.serve(w, r.Context(), a, em, req, n) {
			s.completed.Add(1)
		} else {
			s.aborted.Add(1)
		}
	}
}

// serve runs one admitted generation; it reports whether it ran to its end.
func (s *Server) serve(w http.ResponseWriter, ctx context.Context, a api, em emitter, req request, n uint64) bool {
	rng := rand.New(rand.NewPCG(s.cfg.Seed, n))
	reasoning := 0
	if a != apiCompletions { // the completions API has no reasoning channel
		reasoning = s.cfg.ReasoningTokens.sampleCount(rng, 0)
	}
	content := s.cfg.OutputTokens.sampleCount(rng, 1)
	lc := s.live.get()
	ttft := lc.TTFT.sampleDuration(rng) // live: a slow deploy (Update)
	// The prefix cache is looked up at admission (the usage sent before
	// service counts what it reuses); its blocks go in when prefill ends.
	prefix := s.lookupPrefix(lc, req)

	model, _ := json.Marshal(req.Model)
	g := &gen{
		id:           strconv.FormatUint(n, 10),
		model:        model,
		created:      s.now().Unix(),
		promptTokens: req.promptTokens(),
		cachedTokens: prefix.cached,
		includeUsage: req.IncludeUsage,
		continuous:   req.Continuous,
		reasoning:    reasoning,
		content:      content,
	}
	plan(g, a, &req, &lc)

	tr := s.met.trace(s.now())
	bp := s.bufs.Get().(*[]byte)
	defer func() { *bp = (*bp)[:0]; s.bufs.Put(bp) }()
	buf := (*bp)[:0]

	flusher, _ := w.(http.Flusher)
	var writeErr error
	emit := func() {
		if writeErr == nil && len(buf) > 0 {
			_, writeErr = w.Write(buf)
			if writeErr == nil && flusher != nil {
				flusher.Flush()
			}
		}
		buf = buf[:0]
	}
	if req.Stream {
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		buf = em.head(buf, g)
	}

	// Wait FIFO for a slot. Buffered events are flushed before any wait,
	// and only then: chunks already due go out in one write.
	slots := s.live.slots
	if !slots.tryAcquire() {
		emit()
		wt := slots.enqueue()
		select {
		case <-wt.ch:
		case <-ctx.Done():
			slots.leave(wt)
			return false
		case <-s.done:
			slots.leave(wt)
			return false
		}
	}
	defer slots.release()
	s.inService.Add(1)
	defer s.inService.Add(-1)
	tr.inService(s.now())

	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	t := s.offset() // planned time of the next chunk, as a server offset
	work := ttft + prefix.prefill
	total := g.reasoning + g.content
	per := s.cfg.TokensPerChunk
	for total > g.doneR+g.doneC {
		t = s.tl.advance(t, work)
		if d := t - s.offset(); d > 0 {
			emit()
			if writeErr != nil {
				return false
			}
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return false
			case <-s.done:
				return false
			}
		}
		k := min(per, total-g.doneR-g.doneC)
		nr := min(k, g.reasoning-g.doneR)
		nc := k - nr
		if req.Stream {
			buf = em.chunk(buf, g, nr, nc)
		}
		if g.doneR+g.doneC == 0 {
			s.prefillDone(prefix)
		}
		g.doneR += nr
		g.doneC += nc
		tr.chunk(s.now(), k)
		work = 0
		for range min(per, total-g.doneR-g.doneC) {
			work += s.cfg.TokenTime.sampleDuration(rng)
		}
	}
	if req.Stream {
		buf = em.finish(buf, g)
	} else {
		w.Header().Set("Content-Type", "application/json")
		buf = em.body(buf, g)
	}
	emit()
	*bp = buf
	if writeErr == nil {
		tr.finished(s.now())
	}
	return writeErr == nil
}
