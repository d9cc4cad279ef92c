package admin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// TargetStatus is one row of the status page.
type TargetStatus struct {
	Name        string
	State       string // e.g. "probing", "ladder step 3/8", "budget spent"
	API         string
	Model       string
	InFlight    int
	Capacity    string // human form, e.g. "4.0 req/s" or "unknown"
	Knee        string
	LastLadder  time.Time
	LastOutcome string
	// DuringLadder says how many baseline requests were planned during a
	// ladder (labelled during="ladder", kept out of the SLO figures), e.g.
	// "12 of 340; labelled during a ladder now".
	DuringLadder string
	// Budget is today's spend split by use, when a budget is set.
	Budget string
	Notes  string
	// Generator is the live generator-validity verdict ("valid", or
	// "INVALID: " and its causes); GeneratorAdvice is what to do about it.
	// Valid judges the prober, not the target.
	Generator       string
	GeneratorAdvice string
}

// Status is what the status page shows.
type Status struct {
	Version string
	Started time.Time
	Targets []TargetStatus
	// LadderSVG is the last ladder's curve as an inline SVG document, made by
	// the report package from numbers (never from target-supplied text).
	LadderSVG string
	// Fleet is this prober's place in its fleet ("" when alone).
	Fleet string
}

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
	// member whose name looks secret, URL userinfo and secret-looking query
	// parameters are replaced.
	Config func() any
	// Status feeds the status page.
	Status func() Status
	// Logger receives server errors.
	Logger *slog.Logger
}

// Handler returns the admin routes.
func Handler(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	mux := http.NewServeMux()
	metrics := promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorLog:          slogErrorLog{o.Logger},
		ErrorHandling:     promhttp.ContinueOnError,
		Timeout:           30 * time.Second,
	})
	if o.Registerer != nil {
		metrics = promhttp.InstrumentMetricHandler(o.Registerer, metrics)
	}
	mux.Handle("GET /metrics", metrics)
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
	mux.HandleFunc("GET /debug/requests", func(w http.ResponseWriter, r *http.Request) { debugRequests(w, r, o.Ring) })
	mux.HandleFunc("GET /config", func(w http.ResponseWriter, _ *http.Request) { configHandler(w, o.Config, o.Logger) })
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) { statusPage(w, o.Status, o.Logger) })
	return mux
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

var statusTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"since": func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		return time.Since(t).Round(time.Second).String() + " ago"
	},
}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>llmprobe</title>
<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.3em .6em;text-align:left}</style>
</head><body>
<h1>llmprobe</h1>
<p>Version {{.Version}}{{if not .Started.IsZero}}, started {{since .Started}}{{end}}.
<a href="metrics">metrics</a> · <a href="debug/requests">recent requests</a> · <a href="config">config</a> · <a href="-/ready">ready</a></p>
{{if .Fleet}}<p>Fleet: {{.Fleet}}. <a href="fleet/v1/ladders">fleet ladders</a></p>{{end}}
<h2>Targets</h2>
{{if .Targets}}<table><tr><th>target</th><th>state</th><th>generator (the prober, not the target)</th><th>API</th><th>model</th><th>in flight</th><th>capacity</th><th>knee</th><th>last ladder</th><th>last outcome</th><th>baseline during ladders (not in the SLO)</th><th>budget today</th><th>notes</th></tr>
{{range .Targets}}<tr><td>{{.Name}}</td><td>{{.State}}</td><td>{{.Generator}}{{if .GeneratorAdvice}}<br><small>what to do: {{.GeneratorAdvice}}</small>{{end}}</td><td>{{.API}}</td><td>{{.Model}}</td><td>{{.InFlight}}</td><td>{{.Capacity}}</td><td>{{.Knee}}</td><td>{{since .LastLadder}}</td><td>{{.LastOutcome}}</td><td>{{.DuringLadder}}</td><td>{{.Budget}}</td><td>{{.Notes}}</td></tr>
{{end}}</table>
<p><small>generator: whether the prober kept its schedule over the last minute, so that its figures measure the target; "valid" says nothing about the target's health. Capacity "≥ X" is a lower bound: no valid step above X failed its gates.</small></p>{{else}}<p>No targets.</p>{{end}}
<h2>Last ladder</h2>
{{if .SVG}}<div class="ladder">{{.SVG}}</div>{{else}}<p>No ladder has run yet.</p>{{end}}
</body></html>
`))

func statusPage(w http.ResponseWriter, st func() Status, log *slog.Logger) {
	var s Status
	if st != nil {
		s = st()
	}
	data := struct {
		Status
		SVG template.HTML
	}{Status: s}
	if svg := strings.TrimSpace(s.LadderSVG); strings.HasPrefix(svg, "<svg") || strings.HasPrefix(svg, "<?xml") {
		data.SVG = template.HTML(svg) // trusted: drawn by the report package from numbers
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := statusTmpl.Execute(w, data); err != nil {
		log.Error("render status page", "err", err)
	}
}

// Server is the admin HTTP server.
type Server struct {
	srv   *http.Server
	flags *web.FlagConfig
	log   *slog.Logger
}

// NewServer returns a server for h listening on addrs (e.g. ":9464"), with
// TLS and basic auth from webConfigFile when it is not empty.
func NewServer(h http.Handler, addrs []string, webConfigFile string, log *slog.Logger) *Server {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	systemd := false
	return &Server{
		srv:   &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second},
		flags: &web.FlagConfig{WebListenAddresses: &addrs, WebSystemdSocket: &systemd, WebConfigFile: &webConfigFile},
		log:   log,
	}
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
	errc := make(chan error, 1)
	go func() { errc <- serve() }()
	select {
	case err := <-errc:
		return fmt.Errorf("admin: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(sctx)
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	if err != nil {
		return fmt.Errorf("admin: shutdown: %w", err)
	}
	return nil
}
