package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strconv"
	"time"

	"github.com/klauspost/compress/gzhttp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Options configure the admin server. Gatherer is required; every provider
// may be nil (its endpoint then reports that nothing is available).
type Options struct {
	Gatherer prometheus.Gatherer
	// Registerer, if set, receives promhttp's own scrape metrics.
	Registerer prometheus.Registerer
	// Ready reports readiness for /-/ready (nil: ready once serving).
	Ready func() bool
	// Ring backs /debug/requests.
	Ring *ledger.Ring
	// Config returns the effective configuration for /config. Its JSON form
	// is redacted again here by the one redaction rule (sanitize.JSON): a
	// string held by a member whose name looks secret (never a boolean, a
	// number or a duration), URL userinfo and secret-looking query
	// parameters are replaced.
	Config func() any
	// Status serves the status page at / and each target's card at
	// /targets/NAME (statuspage.Handler, which the daemon builds); nil: no
	// page.
	Status http.Handler
	// Probe serves GET /probe (the blackbox-style endpoint); nil: no route.
	Probe http.Handler
	// Logger receives server errors.
	Logger *slog.Logger
	// Reload reloads the configuration (POST /-/reload); nil: the
	// lifecycle API is off and /-/reload answers 403.
	Reload func() error
}

// Handler returns the admin routes.
func Handler(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{
		EnableOpenMetrics:  true,
		ErrorLog:           slogErrorLog{o.Logger},
		ErrorHandling:      promhttp.ContinueOnError,
		DisableCompression: true, // compressed by metricsGzip
		// No Timeout: promhttp would wrap the handler in an
		// http.TimeoutHandler, which holds the whole uncompressed body in a
		// growing buffer before the first byte leaves (at 1,000 targets
		// about 26 MB of garbage a scrape, 40 % of it; docs/scale.md), and
		// would not stop a gather that hangs anyway. The scraper's own
		// timeout bounds a scrape.
	})
	if o.Registerer != nil {
		metrics = promhttp.InstrumentMetricHandler(o.Registerer, metrics)
	}
	mux.Handle("GET /metrics", metricsGzip(metrics))
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = fmt.Fprintln(w, "Healthy.")
	})
	mux.HandleFunc("GET /-/ready", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if o.Ready != nil && !o.Ready() {
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = fmt.Fprintln(w, "Not ready.")
			return
		}
		_, _ = fmt.Fprintln(w, "Ready.")
	})
	lifecycle(mux, o)
	mux.HandleFunc("GET /debug/requests", func(w http.ResponseWriter, r *http.Request) { debugRequests(w, r, o.Ring) })
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) { configHandler(w, o.Config, o.Logger) })
	if o.Probe != nil {
		mux.Handle("GET /probe", o.Probe)
	}
	if os.Getenv(PprofEnv) == "1" {
		profiles(mux)
	}
	if o.Status != nil {
		mux.Handle("GET /{$}", o.Status)
		mux.Handle("GET /targets/{name}", o.Status) // each target's card
	}
	return mux
}

// PprofEnv, set to "1" in the daemon's environment, serves Go's profiles
// (net/http/pprof) under /debug/pprof/ on the admin server, behind the same
// TLS and basic auth as every other path. Off by default: a profile names
// no secret, but a goroutine dump and a CPU profile are for the operator
// measuring the process (docs/scale.md), not for every scraper.
const PprofEnv = "LLMPROBE_PPROF"

// profiles serves net/http/pprof's handlers under /debug/pprof/.
func profiles(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}

type slogErrorLog struct{ l *slog.Logger }

func (s slogErrorLog) Println(v ...any) { s.l.Error("metrics endpoint", "err", fmt.Sprint(v...)) }

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// debugRequests serves the ring: every target, or ?target=NAME; ?n=K keeps
// the last K of each list.
func debugRequests(w http.ResponseWriter, r *http.Request, ring *ledger.Ring) {
	if ring == nil {
		http.Error(w, "no request history is kept", http.StatusNotFound)
		return
	}
	n := -1
	if s := r.URL.Query().Get("n"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			http.Error(w, "n must be a non-negative integer", http.StatusBadRequest)
			return
		}
		n = v
	}
	var out []ledger.TargetRecords
	if t := r.URL.Query().Get("target"); t != "" {
		out = []ledger.TargetRecords{ring.Target(t)}
	} else {
		out = ring.Snapshot()
	}
	if n >= 0 {
		for i := range out {
			out[i].Last = tail(out[i].Last, n)
			out[i].Failures = tail(out[i].Failures, n)
		}
	}
	writeJSON(w, map[string]any{"targets": out})
}

func tail(rs []ledger.Record, n int) []ledger.Record {
	if len(rs) > n {
		return rs[len(rs)-n:]
	}
	return rs
}

func configHandler(w http.ResponseWriter, cfg func() any, log *slog.Logger) {
	if cfg == nil {
		http.Error(w, "no configuration available", http.StatusNotFound)
		return
	}
	b, err := json.Marshal(cfg())
	if err != nil {
		log.Error("render /config", "err", err)
		http.Error(w, "cannot render the configuration", http.StatusInternalServerError)
		return
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		http.Error(w, "cannot render the configuration", http.StatusInternalServerError)
		return
	}
	writeJSON(w, sanitize.JSON(v))
}

// Server is the admin HTTP server.
type Server struct {
	srv   *http.Server
	flags *web.FlagConfig
	log   *slog.Logger
	// healthWithoutAuth: see ServerOptions.
	healthWithoutAuth bool
}

// ValidateWebConfig checks a web configuration file (TLS, basic auth users).
func ValidateWebConfig(path string) error {
	if path == "" {
		return nil
	}
	if err := web.Validate(path); err != nil {
		return fmt.Errorf("admin: web config %s: %w", path, err)
	}
	return nil
}

// Run serves until ctx is done, then shuts down gracefully (within 5s).
// It returns nil after a shutdown caused by ctx.
func (s *Server) Run(ctx context.Context) error {
	return s.run(ctx, func() error { return web.ListenAndServe(s.srv, s.flags, s.log) })
}

// Serve is Run on an existing listener (tests, socket activation).
func (s *Server) Serve(ctx context.Context, l net.Listener) error {
	return s.run(ctx, func() error { return web.Serve(l, s.srv, s.flags, s.log) })
}

func (s *Server) run(ctx context.Context, serve func() error) error {
	cleanup, err := s.exemptHealth()
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	defer cleanup()
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = s.srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("admin: shutdown: %w", err)
	}
	return nil
}

// metricsGzip compresses /metrics with gzip when the scraper asks for it
// (a Prometheus does by default), and leaves it plain otherwise. It is
// klauspost/compress's gzhttp at the default level, not promhttp's own
// compression (the standard library's): the same bytes on the wire for a
// 10 MB exposition of 1,000 targets, in 74 ms of CPU instead of 260
// (docs/scale.md#scrapes-and-their-encoding). zstd is not offered: a
// Prometheus that asks "zstd,gzip" gets gzip (TestMetricsEncoding).
func metricsGzip(h http.Handler) http.Handler {
	wrap, err := gzhttp.NewWrapper(gzhttp.EnableZstd(false), gzhttp.MinSize(0))
	if err != nil { // only for invalid options, which these are not
		panic(fmt.Sprintf("admin: gzip wrapper: %v", err))
	}
	return wrap(h)
}
