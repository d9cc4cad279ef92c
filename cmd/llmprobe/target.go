package main

import (
	"encoding"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"net/url"
	"reflect"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/sim"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// targetFlags are the flags that describe one target, shared by `probe`
// and `ladder`. Each sets a key of a config.Target (or of the one-target
// config.Config around it), so a one-shot target is described, checked
// (config's rules and wiring's checks) and built (wiring) exactly as a
// daemon's target is. Flags that describe a run rather than a target
// (--rate, --duration, --steps, report outputs, --sim-*) stay apart.
type targetFlags struct {
	cfg config.Config // one target, Targets[0]; flags write into it
	// url is --url: "" = the built-in simulator, started in-process.
	url string
	// headers ('Name: value') and headerEnv ('Name=VAR') fill headers and
	// header_env.
	headers, headerEnv []string
	seed               uint64 // --seed: baseline.seed and ladder.seed
	// drawSeed draws the seed for each run when --seed is not given
	// (probe: a repeated run's prompts are new to the server's prompt
	// cache); seedDrawn reports that it was.
	drawSeed, seedDrawn bool
	retries             int               // --retries: retries.max_attempts - 1
	keys                map[string]string // configuration key → the flag that sets it

	simStall, simSlowdown  []string
	simSlots, simAdmission int

	fs *pflag.FlagSet // where the key flags were bound (changed)
}

// changed reports whether the flag of a target key was given.
func (t *targetFlags) changed(key string) bool {
	name, ok := t.keys[key]
	if !ok || t.fs == nil {
		return false
	}
	f := t.fs.Lookup(strings.TrimPrefix(name, "--"))
	return f != nil && f.Changed
}

// keyFlag is a flag that sets one configuration key: of the target
// ("timeouts.total") or, starting with "limits.", of the configuration.
type keyFlag struct{ flag, key, help string }

// placeholderURL stands for the built-in simulator while flags are
// checked, before it is started (a bad flag exits 2 before anything runs).
const placeholderURL = "http://127.0.0.1/v1"

func (t *targetFlags) target() *config.Target { return &t.cfg.Targets[0] }

// init starts from the one-shot profile (config.OneShot or OneShotLadder).
func (t *targetFlags) init(profile config.Target) {
	t.cfg = config.Defaults()
	t.cfg.Targets = []config.Target{profile}
	t.keys = map[string]string{
		"headers": "--header", "header_env": "--header-env", "baseline.seed": "--seed", "ladder.seed": "--seed",
		"retries.max_attempts": "--retries", "url": "--url",
	}
	t.seed = uint64(profile.Baseline.Seed)
}

// bind defines each flag, bound to its key's field, with the field's
// current value (the profile's) as its default.
func (t *targetFlags) bind(fs *pflag.FlagSet, flags ...keyFlag) {
	t.fs = fs
	for _, f := range flags {
		var v reflect.Value
		var ok bool
		if strings.HasPrefix(f.key, "limits.") {
			v, ok = config.FieldAt(&t.cfg, f.key)
		} else {
			v, ok = config.FieldAt(t.target(), f.key)
		}
		if !ok {
			panic("llmprobe: flag --" + f.flag + " names no configuration key: " + f.key) // caught by every test
		}
		switch p := v.Addr().Interface().(type) {
		case *config.Duration:
			fs.Var((*durationValue)(p), f.flag, f.help)
		case *string:
			fs.StringVar(p, f.flag, *p, f.help)
		case *bool:
			fs.BoolVar(p, f.flag, *p, f.help)
		case *int:
			fs.IntVar(p, f.flag, *p, f.help)
		case *int64:
			fs.Int64Var(p, f.flag, *p, f.help)
		case *float64:
			fs.Float64Var(p, f.flag, *p, f.help)
		case *[]string:
			fs.StringArrayVar(p, f.flag, *p, f.help)
		case encoding.TextUnmarshaler: // a value that parses itself (an arrival process, a stop rule)
			fs.Var(textValue{p}, f.flag, f.help)
		default:
			panic(fmt.Sprintf("llmprobe: flag --%s: unsupported type %T", f.flag, p))
		}
		if _, dup := t.keys[f.key]; !dup {
			t.keys[f.key] = "--" + f.flag
		}
	}
}

// textValue is a flag of a configuration value that parses itself: its
// own UnmarshalText reads and checks it.
type textValue struct{ p encoding.TextUnmarshaler }

func (t textValue) String() string {
	if t.p == nil {
		return ""
	}
	return fmt.Sprint(reflect.ValueOf(t.p).Elem().Interface())
}
func (t textValue) Set(s string) error { return t.p.UnmarshalText([]byte(s)) }
func (t textValue) Type() string       { return "string" }

// durationValue is a config.Duration flag: parsed by config's own rule
// (a Go duration, never negative).
type durationValue config.Duration

// String is the value as --help shows its default: "0" for none (pflag
// shows no default then, as for its own duration flags).
func (d *durationValue) String() string {
	if *d == 0 {
		return "0"
	}
	return config.Duration(*d).String()
}
func (d *durationValue) Set(s string) error { return (*config.Duration)(d).UnmarshalText([]byte(s)) }
func (d *durationValue) Type() string       { return "duration" }

func (t *targetFlags) register(fs *pflag.FlagSet, profile config.Target) {
	t.init(profile)
	fs.StringVar(&t.url, "url", "", "target base URL, e.g. http://127.0.0.1:8000/v1 (default: the built-in simulator, started in-process)")
	t.bind(fs,
		keyFlag{"model", "model", "model name sent in requests"},
		keyFlag{"api", "api", "streaming API: " + strings.Join(protocol.Names(), "|")},
		keyFlag{"api-key-env", "api_key_env", "name of the environment variable holding the API key (the key itself is never a flag)"},
		keyFlag{"api-key-file", "api_key_file", "file holding the API key"},
	)
	fs.StringArrayVar(&t.headers, "header", nil, "extra request header 'Name: value' (repeatable); a secret-looking name (Authorization, *key*, *token*, …) is refused: use --header-env")
	fs.StringArrayVar(&t.headerEnv, "header-env", nil, "extra request header 'Name=VAR' whose value is read from the environment variable VAR (repeatable; for secrets)")
	t.bind(fs,
		keyFlag{"tls-ca-file", "tls.ca_file", "CA bundle to verify the target"},
		keyFlag{"tls-cert-file", "tls.cert_file", "client certificate (with --tls-key-file)"},
		keyFlag{"tls-key-file", "tls.key_file", "client certificate key"},
		keyFlag{"tls-insecure-skip-verify", "tls.insecure_skip_verify", "do not verify the target's certificate (loudly warned)"},
		keyFlag{"http1", "http1", "speak HTTP/1.1 only (HTTP/2 is negotiated over TLS by default)"},
		keyFlag{"idle-conn-timeout", "idle_conn_timeout", "how long an idle keep-alive connection is kept for reuse: below the server's own (5s for llama.cpp and vLLM); a server's Keep-Alive: timeout=N shortens it"},
		keyFlag{"max-event-bytes", "max_event_bytes", "largest server-sent event accepted, in bytes (at most --max-buffered-bytes)"},
		keyFlag{"max-buffered-bytes", "limits.max_buffered_bytes", "bound on event bytes buffered across all streams; a stream that would pass it ends stream_error/buffer_limit"},
		keyFlag{"timeout-connect", "timeouts.connect", "connect timeout"},
		keyFlag{"timeout-headers", "timeouts.headers", "timeout from dispatch to response headers"},
		keyFlag{"timeout-first-content", "timeouts.first_content", "timeout from dispatch to first visible content (at least --timeout-headers)"},
		keyFlag{"timeout-idle", "timeouts.idle", "longest gap between stream bytes"},
		keyFlag{"timeout-total", "timeouts.total", "timeout from dispatch to stream end (above 0; every other timeout given at most this, those not given cut to it)"},
		keyFlag{"usage-deltas", "usage_deltas", "ask for per-chunk usage (vendor extension; strict proxies reject it)"},
		keyFlag{"ttft-boundary", "ttft_boundary", "what TTFT measures to: content (first visible content) | any_token (reasoning counts)"},
		keyFlag{"server-metrics", "server_metrics.url", "the target's own Prometheus endpoint (e.g. vLLM's http://host:8000/metrics), read beside the run to say what the server saw; no credentials are sent (default: off, or the built-in simulator's /metrics without --url)"},
		keyFlag{"server-metrics-flavour", "server_metrics.flavour", "which server's metric names --server-metrics reads: " + servermetrics.FlavourChoices + " (auto: told by the names it exposes)"},
		keyFlag{"server-metric", "server_metrics.metrics", "a further metric of --server-metrics to report, by name, read by the type the server declares (repeatable)"},
	)
	fs.StringArrayVar(&t.simStall, "sim-stall", nil, "built-in simulator only: a stall window START+DURATION, e.g. 10s+5s (repeatable)")
	fs.StringArrayVar(&t.simSlowdown, "sim-slowdown", nil, "built-in simulator only: a slowdown START+DURATION*FACTOR, e.g. 20s+10s*4 (repeatable)")
	fs.IntVar(&t.simSlots, "sim-slots", 0, "built-in simulator only: service slots (0: simulator default)")
	fs.IntVar(&t.simAdmission, "sim-admission", 0, "built-in simulator only: admission limit (0: simulator default)")
}

// registerSeed defines --seed (baseline.seed and ladder.seed).
func (t *targetFlags) registerSeed(fs *pflag.FlagSet, help string) {
	fs.Uint64Var(&t.seed, "seed", t.seed, help)
}

// registerRetries defines --retries and the backoff flags (retries.*).
func (t *targetFlags) registerRetries(fs *pflag.FlagSet) {
	fs.IntVar(&t.retries, "retries", max(t.target().Retries.MaxAttempts-1, 0), "retry attempts after a rejection or transport error (0: off, at most 9); each attempt is its own ledger record")
	t.bind(fs,
		keyFlag{"backoff", "retries.backoff", "failure backoff: wait after a failed request before a closed-loop user's next one, and before a retry; doubles per consecutive failure"},
		keyFlag{"max-backoff", "retries.max_backoff", "failure backoff cap"},
		keyFlag{"backoff-jitter", "retries.jitter", "fraction of each backoff drawn at random from --seed (reproducible), 0..1"},
	)
}

// validate completes the target from the flags that are not one key each
// and checks it by the configuration's rules and wiring's checks, as the
// daemon checks its file; a problem is a usage error naming the flag.
func (t *targetFlags) validate() error {
	tg := t.target()
	tg.URL = t.url
	if t.url == "" {
		tg.URL = placeholderURL
	} else if len(t.simStall)+len(t.simSlowdown) > 0 || t.simSlots != 0 || t.simAdmission != 0 {
		return badFlag("--sim-* flags apply only to the built-in simulator (no --url)")
	}
	if t.simSlots < 0 || t.simAdmission < 0 {
		return badFlag("--sim-slots and --sim-admission must be ≥ 0")
	}
	if f := t.fs.Lookup("seed"); t.drawSeed && f != nil && !f.Changed {
		t.seed, t.seedDrawn = rand.Uint64N(math.MaxInt64)+1, true // 0 would mean "derived from the name"
	}
	if t.seed > math.MaxInt64 {
		return badFlag("--seed %d: want at most %d", t.seed, int64(math.MaxInt64))
	}
	tg.Baseline.Seed, tg.Ladder.Seed = int64(t.seed), int64(t.seed)
	if t.retries < 0 || t.retries > 9 {
		return badFlag("--retries %d: want 0..9 (attempts after the first)", t.retries)
	}
	if tg.Retries.MaxAttempts = 0; t.retries > 0 {
		tg.Retries.MaxAttempts = t.retries + 1
	}
	var err error
	if tg.Headers, err = headerFlags("--header", t.headers, ":", "'Name: value'"); err != nil {
		return err
	}
	if tg.HeaderEnv, err = headerFlags("--header-env", t.headerEnv, "=", "'Name=VAR'"); err != nil {
		return err
	}
	tg.Timeouts.FitUnset(func(key string) bool { return t.changed("timeouts." + key) })
	if err := t.cfg.Validate(wiring.Checks()...); err != nil {
		return t.flagErrors(err)
	}
	return nil
}

// headerFlags reads repeated 'Name<sep>value' flags. A value without its
// separator is not echoed: it may be a secret's value.
func headerFlags(flag string, vals []string, sep, want string) (map[string]string, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(vals))
	for _, h := range vals {
		name, val, ok := strings.Cut(h, sep)
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, badFlag("%s: want %s, got a value with no name before '%s' (not shown: it may hold a secret)", flag, want, sep)
		}
		if _, dup := out[name]; dup {
			return nil, badFlag("%s %s: given twice", flag, name)
		}
		out[name] = strings.TrimSpace(val)
	}
	return out, nil
}

// flagErrors turns the configuration's errors into one usage error, each
// line naming the flag that set the key (and flags for the keys its
// message names).
func (t *targetFlags) flagErrors(err error) error {
	var es config.Errors
	if !errors.As(err, &es) {
		return badFlag("%v", err)
	}
	keys := make([]string, 0, len(t.keys))
	for k := range t.keys {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return len(keys[i]) > len(keys[j]) }) // longest first
	lines := make([]string, 0, len(es))
	for _, e := range es {
		key := strings.TrimPrefix(e.Key, "targets[0].")
		name := key
		for _, k := range keys {
			if rest, ok := strings.CutPrefix(key, k); ok && (rest == "" || rest[0] == '.' || rest[0] == '[') {
				name = limitFlag(k, t.keys[k])
				if h, ok := strings.CutPrefix(rest, "."); ok && (k == "headers" || k == "header_env") {
					name += " " + h
				}
				break
			}
		}
		msg := e.Msg
		for _, k := range keys {
			if strings.Contains(k, "_") || strings.Contains(k, ".") {
				msg = strings.ReplaceAll(msg, k, limitFlag(k, t.keys[k]))
			}
		}
		lines = append(lines, name+": "+msg)
	}
	return badFlag("%s", strings.Join(lines, "\n"))
}

// limitFlag is how a message names key's flag: a process-wide limit
// (limits.*) also by its key, as the daemon's configuration writes it.
func limitFlag(key, flag string) string {
	if strings.HasPrefix(key, "limits.") {
		return flag + " (" + key + ")"
	}
	return flag
}

// plan sets the target's URL to base (the one given, or the built-in
// simulator's) and assembles its run through wiring, as the daemon does;
// withLadder plans its ladder too (the ladder command).
func (t *targetFlags) plan(base string, log *slog.Logger, withLadder bool) (*wiring.Plan, error) {
	tg := t.target()
	tg.URL = base
	p, err := wiring.NewPlan(*tg, wiring.PlanOptions{Client: wiring.ClientOptions{Buffers: wiring.Buffers(t.cfg.Limits), Logger: log},
		Limits: t.cfg.Limits, Ladder: withLadder})
	if err != nil {
		return nil, badFlag("%v", err)
	}
	return p, nil
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
	if sm := &t.target().ServerMetrics; sm.URL == "" {
		sm.URL = simMetricsURL(u)
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

// simMetricsURL is the built-in simulator's metrics endpoint, given its API
// base URL (ending in /v1).
func simMetricsURL(base string) string {
	return strings.TrimSuffix(strings.TrimRight(base, "/"), "/v1") + "/metrics"
}
