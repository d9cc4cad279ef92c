package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/protocol/sse"
	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/sim"
)

// targetFlags are the flags that name and reach one target, shared by
// `probe` and `ladder`.
type targetFlags struct {
	url, model, api        string
	keyEnv, keyFile        string
	headers                []string
	caFile, certFile       string
	keyFileTLS             string
	insecure, http1        bool
	maxEventBytes          int
	maxBuffered            int64
	connect, headersT      time.Duration
	firstContent, idle     time.Duration
	total                  time.Duration
	usageDeltas            bool
	simStall, simSlowdown  []string
	simSlots, simAdmission int
}

func (t *targetFlags) register(fs *pflag.FlagSet) {
	def := config.OneShot()
	to := def.Timeouts
	fs.StringVar(&t.url, "url", "", "target base URL, e.g. http://127.0.0.1:8000/v1 (default: the built-in simulator, started in-process)")
	fs.StringVar(&t.model, "model", def.Model, "model name sent in requests")
	fs.StringVar(&t.api, "api", def.API, "streaming API: "+strings.Join(protocol.Names(), "|"))
	fs.StringVar(&t.keyEnv, "api-key-env", "", "name of the environment variable holding the API key (the key itself is never a flag)")
	fs.StringVar(&t.keyFile, "api-key-file", "", "file holding the API key")
	fs.StringArrayVar(&t.headers, "header", nil, "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&t.caFile, "tls-ca-file", "", "CA bundle to verify the target")
	fs.StringVar(&t.certFile, "tls-cert-file", "", "client certificate (with --tls-key-file)")
	fs.StringVar(&t.keyFileTLS, "tls-key-file", "", "client certificate key")
	fs.BoolVar(&t.insecure, "tls-insecure-skip-verify", false, "do not verify the target's certificate (loudly warned)")
	fs.BoolVar(&t.http1, "http1", false, "speak HTTP/1.1 only (HTTP/2 is negotiated over TLS by default)")
	fs.IntVar(&t.maxEventBytes, "max-event-bytes", 0, "largest server-sent event accepted (0: default 1 MiB)")
	fs.Int64Var(&t.maxBuffered, "max-buffered-bytes", config.Defaults().Limits.MaxBufferedBytes, "bound on event bytes buffered across all streams; a stream that would pass it ends stream_error/buffer_limit")
	fs.DurationVar(&t.connect, "timeout-connect", to.Connect.D(), "connect timeout")
	fs.DurationVar(&t.headersT, "timeout-headers", to.Headers.D(), "timeout from dispatch to response headers")
	fs.DurationVar(&t.firstContent, "timeout-first-content", to.FirstContent.D(), "timeout from dispatch to first visible content")
	fs.DurationVar(&t.idle, "timeout-idle", to.Idle.D(), "longest gap between stream bytes")
	fs.DurationVar(&t.total, "timeout-total", to.Total.D(), "timeout from dispatch to stream end")
	fs.BoolVar(&t.usageDeltas, "usage-deltas", def.UsageDeltas, "ask for per-chunk usage (vendor extension; strict proxies reject it)")
	fs.StringArrayVar(&t.simStall, "sim-stall", nil, "built-in simulator only: a stall window START+DURATION, e.g. 10s+5s (repeatable)")
	fs.StringArrayVar(&t.simSlowdown, "sim-slowdown", nil, "built-in simulator only: a slowdown START+DURATION*FACTOR, e.g. 20s+10s*4 (repeatable)")
	fs.IntVar(&t.simSlots, "sim-slots", 0, "built-in simulator only: service slots (0: simulator default)")
	fs.IntVar(&t.simAdmission, "sim-admission", 0, "built-in simulator only: admission limit (0: simulator default)")
}

func (t *targetFlags) validate() error {
	if t.url != "" {
		// The URL is echoed only through the one redaction rule: a URL that
		// does not parse may still carry a password.
		u, err := url.Parse(t.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return badFlag("--url %q: want an http(s) base URL such as http://127.0.0.1:8000/v1", sanitize.URL(t.url))
		}
		if u.User != nil {
			return badFlag("--url: credentials in the URL are refused (they would end up in logs); use --api-key-env")
		}
		if q := sanitize.SecretParam(u.RawQuery); q != "" {
			return badFlag("--url: query parameter %q looks secret: credentials in the URL are refused; use --api-key-env or --header", q)
		}
		if len(t.simStall)+len(t.simSlowdown) > 0 || t.simSlots != 0 || t.simAdmission != 0 {
			return badFlag("--sim-* flags apply only to the built-in simulator (no --url)")
		}
	}
	if _, err := protocol.Lookup(t.api); err != nil {
		return badFlag("--api: %v", err)
	}
	if t.keyEnv != "" && t.keyFile != "" {
		return badFlag("--api-key-env and --api-key-file: give one")
	}
	for _, h := range t.headers {
		if name, _, ok := strings.Cut(h, ":"); !ok || strings.TrimSpace(name) == "" {
			// Not echoed: a header given without its ':' may be a secret's value.
			return badFlag("--header: want 'Name: value', got a value with no name before ':' (not shown: it may hold a secret)")
		}
	}
	for name, d := range map[string]time.Duration{"--timeout-connect": t.connect, "--timeout-headers": t.headersT,
		"--timeout-first-content": t.firstContent, "--timeout-idle": t.idle, "--timeout-total": t.total} {
		if d < 0 {
			return badFlag("%s: must be ≥ 0, got %v", name, d)
		}
	}
	ev := t.maxEventBytes
	if ev == 0 {
		ev = sse.DefaultMaxEventBytes
	}
	if t.maxEventBytes < 0 || t.maxBuffered < int64(ev) {
		return badFlag("--max-buffered-bytes %d: must hold at least one maximum-size event (%d bytes, --max-event-bytes)", t.maxBuffered, ev)
	}
	if t.simSlots < 0 || t.simAdmission < 0 {
		return badFlag("--sim-slots and --sim-admission must be ≥ 0")
	}
	return nil
}

// simConfig is the built-in simulator's configuration from the --sim-* flags.
func (t *targetFlags) simConfig() (sim.Config, error) {
	cfg := sim.DefaultConfig()
	if t.simSlots > 0 {
		cfg.Slots = t.simSlots
		if cfg.AdmissionLimit < cfg.Slots {
			cfg.AdmissionLimit = 4 * cfg.Slots
		}
	}
	if t.simAdmission > 0 {
		cfg.AdmissionLimit = t.simAdmission
	}
	w, err := simWindows("--sim-", t.simStall, t.simSlowdown)
	if err != nil {
		return cfg, err
	}
	cfg.Windows = append(cfg.Windows, w...)
	if err := cfg.Validate(); err != nil {
		return cfg, badFlag("simulator: %v", err)
	}
	return cfg, nil
}

// startTarget resolves the target: the given URL, or the built-in simulator
// started in-process on 127.0.0.1. The returned stop func shuts it down.
func (t *targetFlags) startTarget(e env) (base string, stop func(), err error) {
	if t.url != "" {
		return strings.TrimRight(t.url, "/"), func() {}, nil
	}
	cfg, err := t.simConfig()
	if err != nil {
		return "", nil, err
	}
	s, err := sim.New(cfg)
	if err != nil {
		return "", nil, fmt.Errorf("built-in simulator: %w", err)
	}
	u, closeFn, err := s.Start("127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("built-in simulator: %w", err)
	}
	fmt.Fprintf(e.stderr, "no --url given: probing the built-in simulator at %s (%d slots, admission %d)\n", u, cfg.Slots, cfg.AdmissionLimit)
	return strings.TrimRight(u, "/"), func() { s.Close(); _ = closeFn() }, nil
}

// displayName names the target in reports: the URL's scheme, host and path
// (never its user info, query or fragment), or the built-in simulator.
func (t *targetFlags) displayName(base string) string {
	if t.url == "" {
		u, err := url.Parse(base)
		if err != nil {
			return "built-in simulator"
		}
		return "built-in simulator (" + u.Host + ")"
	}
	u, err := url.Parse(t.url)
	if err != nil {
		return "target"
	}
	return u.Scheme + "://" + u.Host + strings.TrimRight(u.Path, "/")
}

// client builds the protocol client and the target for base.
func (t *targetFlags) client(base string, log *slog.Logger) (*protocol.Client, protocol.Target, error) {
	ad, err := protocol.Lookup(t.api)
	if err != nil {
		return nil, protocol.Target{}, badFlag("--api: %v", err)
	}
	h := http.Header{}
	for _, kv := range t.headers {
		name, val, _ := strings.Cut(kv, ":")
		h.Add(strings.TrimSpace(name), strings.TrimSpace(val))
	}
	c, err := protocol.NewClient(protocol.ClientOptions{
		Timeouts: protocol.Timeouts{Connect: t.connect, Headers: t.headersT, FirstContent: t.firstContent,
			Idle: t.idle, Total: t.total},
		MaxEventBytes: t.maxEventBytes,
		Buffers:       sse.NewBudget(t.maxBuffered),
		TLS: protocol.TLSOptions{CAFile: t.caFile, CertFile: t.certFile, KeyFile: t.keyFileTLS,
			InsecureSkipVerify: t.insecure},
		DisableHTTP2: t.http1,
		Headers:      h,
		Auth:         protocol.AuthOptions{KeyEnv: t.keyEnv, KeyFile: t.keyFile},
		Logger:       log,
	})
	if err != nil {
		return nil, protocol.Target{}, err
	}
	return c, protocol.Target{Base: base, Adapter: ad}, nil
}

// simWindows parses the simulator's stall and slowdown flags (named
// prefix+"stall" and prefix+"slowdown") into windows, stalls first.
func simWindows(prefix string, stalls, slowdowns []string) ([]sim.Window, error) {
	var out []sim.Window
	for _, f := range []struct {
		name  string
		vals  []string
		parse func(string) (sim.Window, error)
	}{{prefix + "stall", stalls, sim.ParseStall}, {prefix + "slowdown", slowdowns, sim.ParseSlowdown}} {
		for _, s := range f.vals {
			w, err := f.parse(s)
			if err != nil {
				return nil, badFlag("%s %q: %v", f.name, s, err)
			}
			out = append(out, w)
		}
	}
	return out, nil
}
