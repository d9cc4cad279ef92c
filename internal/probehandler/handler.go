package probehandler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/telemetry"
	"github.com/llmprobe/llmprobe/internal/urlprefix"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Configured is a configured target as the daemon runs it: a probe of it
// goes through the target's own client (its URL, API, model, key,
// headers, TLS, timeouts and connections) and its budget.
type Configured struct {
	Target config.Target
	// Exec returns the executor of requests built by params, through the
	// target's client (in-flight tracking included). Required.
	Exec func(params func(*ledger.Record) protocol.Params) dispatch.Exec
	// Admit is the target's budget; nil = none.
	Admit dispatch.Admit
}

// Hook is a client's tracing hook (protocol.Target.Hook).
type Hook = func(ctx context.Context, req *http.Request) (context.Context, func(ledger.Outcome, ledger.Reason))

// Options configure a Handler.
type Options struct {
	// Config returns the configuration in force (a reload changes it).
	// Required.
	Config func() *config.Config
	// Group sends every probe request: the daemon's, so that its records
	// reach the daemon's ledger and sinks and its drain covers them.
	// Required.
	Group *dispatch.Group
	// Collector must be a sink of Group's ledger. Required.
	Collector *Collector
	// Targets finds a configured target by name; nil: none.
	Targets func(name string) (Configured, bool)
	// Buffers is the process-wide bound on buffered event bytes, shared by
	// the clients built for URLs; nil: none.
	Buffers *sse.Budget
	// Hook returns the tracing hook of a client built for a URL, by its
	// target label and API; nil: no tracing.
	Hook func(target, api string) Hook
	// Logger receives one debug line per probe; nil discards.
	Logger *slog.Logger
	// Registerer receives llmprobe_probe_refused_total{reason}, the scrapes
	// refused before anything was sent (the daemon's /metrics registry);
	// nil: counted, not exported.
	Registerer prometheus.Registerer
}

// Handler serves /probe. Safe for concurrent use.
type Handler struct {
	o      Options
	active atomic.Int64  // probes being served
	seq    atomic.Uint64 // probes started: each draws its own prompts

	refused *prometheus.CounterVec // llmprobe_probe_refused_total{reason}

	mu    sync.Mutex
	built *config.Config // what allow and classes were built from
	allow urlprefix.List
	class map[string]workload.Class // by module
}

// New returns a Handler.
func New(o Options) (*Handler, error) {
	if o.Config == nil || o.Group == nil || o.Collector == nil {
		return nil, errors.New("probehandler: a configuration, a group and a collector are required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	h := &Handler{o: o, refused: telemetry.NewProbeRefused()}
	if o.Registerer != nil {
		if err := o.Registerer.Register(h.refused); err != nil {
			return nil, fmt.Errorf("probehandler: register llmprobe_probe_refused_total: %w", err)
		}
	}
	return h, nil
}

// Refused is how many scrapes were refused for reason (a
// telemetry.ProbeRefused* constant).
func (h *Handler) Refused(reason string) float64 {
	var m dto.Metric
	if err := h.refused.WithLabelValues(reason).Write(&m); err != nil {
		return 0
	}
	return m.GetCounter().GetValue()
}

// ServeHTTP serves one scrape: 405 for any method but GET (a HEAD from a
// link checker or a load balancer must not spend a request on a target),
// 400 for a bad request, 403 for a target that may not be probed, 503
// beyond probe.max_concurrent, and otherwise the probe's metrics (or, with
// debug=true, its logs, metrics, ledger records and module as text). Every
// refusal is counted in llmprobe_probe_refused_total{reason}: Prometheus
// sees only up == 0 for it, and no probe_success to alert on.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		h.refused.WithLabelValues(telemetry.ProbeRefusedMethod).Inc()
		w.Header().Set("Allow", http.MethodGet)
		http.Error(w, fmt.Sprintf("%s /probe: only GET sends a probe (nothing was sent)", r.Method), http.StatusMethodNotAllowed)
		return
	}
	cfg := h.o.Config()
	p, err := h.prepare(r, cfg)
	if err != nil {
		var re *requestError
		code, reason := http.StatusInternalServerError, telemetry.ProbeRefusedError
		if errors.As(err, &re) {
			code, reason = re.code, re.reason
		}
		h.refused.WithLabelValues(reason).Inc()
		h.o.Logger.Debug("probe refused", "status", code, "reason", reason, "err", err)
		http.Error(w, err.Error(), code)
		return
	}
	defer p.close()
	limit := int64(cfg.Probe.MaxConcurrent)
	if h.active.Add(1) > limit {
		h.active.Add(-1)
		h.refused.WithLabelValues(telemetry.ProbeRefusedConcurrency).Inc()
		h.refuse(p)
		h.o.Logger.Debug("probe refused", "target", p.shown, "module", p.module, "status", http.StatusServiceUnavailable)
		http.Error(w, fmt.Sprintf("too many probes at once (probe.max_concurrent is %d): this probe was not sent; its %d request(s) are recorded unsent/client_cap",
			limit, p.burst.Requests), http.StatusServiceUnavailable)
		return
	}
	defer h.active.Add(-1)
	res := h.run(r.Context(), p)
	reg := res.registry()
	h.o.Logger.Debug("probe", "target", p.shown, "module", p.module, "success", res.success(),
		"requests", res.planned, "duration", res.duration)
	if r.URL.Query().Get("debug") == "true" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = w.Write(debugText(p, res, reg))
		return
	}
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(w, r)
}

// requestError is a scrape refused before anything was planned, with its
// HTTP status and the reason it is counted under.
type requestError struct {
	code   int
	reason string // a telemetry.ProbeRefused* constant
	msg    string
}

func (e *requestError) Error() string { return e.msg }

// refused is a refusal of the scrape itself, with the status its reason
// answers: 403 for a target that may not be probed, 400 for the rest.
func refused(reason, format string, args ...any) error {
	code := http.StatusBadRequest
	if reason == telemetry.ProbeRefusedTargetNotAllowed {
		code = http.StatusForbidden
	}
	return &requestError{code: code, reason: reason, msg: fmt.Sprintf(format, args...)}
}
