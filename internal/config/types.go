package config

import (
	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Config is the whole llmprobe configuration.
type Config struct {
	Admin  Admin  `koanf:"admin" json:"admin"`
	Log    Log    `koanf:"log" json:"log"`
	Ledger Ledger `koanf:"ledger" json:"ledger"`
	OTel   OTel   `koanf:"otel" json:"otel"`
	Drain  Drain  `koanf:"drain" json:"drain"`
	Limits Limits `koanf:"limits" json:"limits"`
	// Region is a constant `region` label on every llmprobe_* series and the
	// OTel resource's cloud.region ("" = none), so probers in several
	// regions stay apart. Read at start; a reload does not change it.
	Region  string   `koanf:"region" json:"region,omitempty"`
	Fleet   Fleet    `koanf:"fleet" json:"fleet"` // several probers as one (fleet.go)
	Targets []Target `koanf:"targets" json:"targets"`
	// TargetTemplates are named target blocks without name and url: each
	// target of a target_files entry is a copy of one, with its own url,
	// name, model and labels. Its keys are a target's (checked as such).
	TargetTemplates map[string]map[string]any `koanf:"target_templates" json:"target_templates,omitempty"`
	// TargetFiles are Prometheus file_sd files listing targets (their
	// targets are appended to Targets when the configuration loads).
	TargetFiles []TargetFiles `koanf:"target_files" json:"target_files,omitempty"`
	// Probe is the /probe endpoint (blackbox_exporter style).
	Probe Probe `koanf:"probe" json:"probe"`

	// Telemetry shapes the /metrics exposition (read at start).
	Telemetry Telemetry `koanf:"telemetry" json:"telemetry"`

	// Path is the file the configuration was read from ("" when none).
	Path string `koanf:"-" json:"path,omitempty"`
	// sources maps a koanf key to the layer that last set it.
	sources map[string]string
	// filesRead is the fingerprint of the target files this load read.
	filesRead string
}

// Admin is the admin HTTP server.
type Admin struct {
	Listen        string `koanf:"listen" json:"listen"`                   // host:port of /metrics, health, /config, status page
	WebConfigFile string `koanf:"web_config_file" json:"web_config_file"` // exporter-toolkit web config (TLS, basic auth); "" = plain HTTP
	// HealthWithoutAuth serves /-/healthy and /-/ready without basic auth
	// when the web config sets basic_auth_users (every other path keeps it).
	HealthWithoutAuth bool `koanf:"health_without_auth" json:"health_without_auth"`
	// EnableLifecycle turns on POST /-/reload (off: 403), as Prometheus'
	// --web.enable-lifecycle does.
	EnableLifecycle bool `koanf:"enable_lifecycle" json:"enable_lifecycle"`
}

// Log is logging.
type Log struct {
	Level  string `koanf:"level" json:"level"`   // debug | info | warn | error
	Format string `koanf:"format" json:"format"` // auto (tint on a terminal, JSON otherwise) | logfmt | json | text
}

// Ledger is the daemon's rotating JSONL ledger sink.
type Ledger struct {
	Dir       string   `koanf:"dir" json:"dir"`                 // "" = no files (in-memory ring only)
	MaxSizeMB int      `koanf:"max_size_mb" json:"max_size_mb"` // rotate a file at this size
	MaxAge    Duration `koanf:"max_age" json:"max_age"`         // delete rotated files older than this
	Keep      int      `koanf:"keep" json:"keep"`               // keep at most this many rotated files
	DebugKeep int      `koanf:"debug_keep" json:"debug_keep"`   // records per target kept for /debug/requests
}

// OTel switches OpenTelemetry on; exporters read the standard OTEL_* variables.
type OTel struct {
	Enabled bool `koanf:"enabled" json:"enabled"`
	Tracing bool `koanf:"tracing" json:"tracing"` // a span per probe request and a traceparent header
}

// Telemetry shapes the /metrics exposition. Read at start; a reload does
// not change it.
type Telemetry struct {
	// ClassicHistograms exposes the classic buckets beside the native ones
	// on every latency histogram (docs/metrics.md#classic-buckets).
	ClassicHistograms bool `koanf:"classic_histograms" json:"classic_histograms"`
	// Exemplars is how many exemplars each latency histogram keeps for a
	// scrape (0: none; docs/metrics.md#exemplars).
	Exemplars int `koanf:"exemplars" json:"exemplars"`
}

// Drain is graceful shutdown.
type Drain struct {
	Timeout Duration `koanf:"timeout" json:"timeout"` // in-flight requests still running after this are censored
}

// Limits are global hard limits.
type Limits struct {
	MaxRate float64 `koanf:"max_rate" json:"max_rate"` // hard maximum arrival rate (req/s) of any stream or ladder step
	// MaxBufferedBytes bounds the bytes buffered for server-sent events
	// across every stream of the process; a stream that would pass it ends
	// stream_error/buffer_limit.
	MaxBufferedBytes int64 `koanf:"max_buffered_bytes" json:"max_buffered_bytes"`
	// MaxConcurrentLadders is how many ladders may run at once on this
	// prober; the others wait their turn in the order they fell due.
	MaxConcurrentLadders int `koanf:"max_concurrent_ladders" json:"max_concurrent_ladders"`
}

// DefaultMaxBufferedBytes is limits.max_buffered_bytes when not set: 64 MiB,
// room for 64 streams each holding a maximum-size (1 MiB) event at once,
// well within the deployment's memory limit.
const DefaultMaxBufferedBytes = 64 << 20

// DefaultExemplars is telemetry.exemplars when not set: each latency
// histogram keeps its 4 latest exemplars (client_golang keeps 10), spread
// over its values. A baseline of 0.2 req/s makes about 1.5 observations a
// class between two 15 s scrapes, so each exemplar is still offered for a
// few scrapes, and a 1,000-target scrape carries 40,000 exemplars, not
// 100,000 (docs/metrics.md#exemplars).
const DefaultExemplars = 4

// MaxExemplars is the largest telemetry.exemplars accepted.
const MaxExemplars = 32

// DefaultMaxConcurrentLadders is limits.max_concurrent_ladders when not
// set: one ladder at a time, so a prober with many targets never spends
// its CPU and connections on several ladders at the top of the hour.
const DefaultMaxConcurrentLadders = 1

// MaxMaxConcurrentLadders is the largest limits.max_concurrent_ladders
// accepted.
const MaxMaxConcurrentLadders = 1000

// DefaultMaxEventBytes is targets[].max_event_bytes when not set: 1 MiB,
// the SSE reader's own default (sse.DefaultMaxEventBytes; a wiring test
// holds the two equal).
const DefaultMaxEventBytes = 1 << 20

// Target is one inference endpoint.
type Target struct {
	Name string `koanf:"name" json:"name"`
	URL  string `koanf:"url" json:"url"`
	// Client is how the endpoint is spoken to (api, model, key, headers,
	// TLS, timeouts): the keys a target and a /probe module share.
	Client `koanf:",squash"`
	// Labels are constant labels of the target (a file_sd entry's labels
	// but name and model), on its llmprobe_target_labels series.
	Labels map[string]string `koanf:"labels" json:"labels,omitempty"`
	// FromFile is the target_files file the target was read from ("" for
	// a target block).
	FromFile string `koanf:"-" json:"from_file,omitempty"`
	// IdleConnTimeout is how long an idle keep-alive connection to the
	// target is kept for reuse: below the server's own idle timeout (5 s for
	// llama.cpp and uvicorn/vLLM), so that the server never closes a
	// connection the client is about to send on. A server's `Keep-Alive:
	// timeout=N` shortens it further (protocol).
	IdleConnTimeout Duration `koanf:"idle_conn_timeout" json:"idle_conn_timeout"`
	// MaxInFlight caps the target's requests in flight per stream; an
	// arrival that finds it full is recorded unsent/client_cap. 0 = no cap.
	MaxInFlight  int          `koanf:"max_in_flight" json:"max_in_flight"`
	Retries      Retries      `koanf:"retries" json:"retries"`
	Cancellation Cancellation `koanf:"cancellation" json:"cancellation"`
	Identity     Identity     `koanf:"identity" json:"identity"`
	Budget       Budget       `koanf:"budget" json:"budget"`
	Baseline     Baseline     `koanf:"baseline" json:"baseline"`
	Classes      []Class      `koanf:"classes" json:"classes"`
	Ladder       Ladder       `koanf:"ladder" json:"ladder"`
	// ServerMetrics is the target's own Prometheus endpoint, read beside
	// each ladder step (off while url is empty).
	ServerMetrics ServerMetrics `koanf:"server_metrics" json:"server_metrics"`
}

// Client is how an endpoint is spoken to: the keys a target and a /probe
// module share (one struct, embedded in both, so a key added here is a
// key of both and reaches wiring.Client by one path).
type Client struct {
	API        string            `koanf:"api" json:"api"`
	Model      string            `koanf:"model" json:"model"`
	APIKeyEnv  string            `koanf:"api_key_env" json:"api_key_env,omitempty"`
	APIKeyFile string            `koanf:"api_key_file" json:"api_key_file,omitempty"`
	Headers    map[string]string `koanf:"headers" json:"headers,omitempty"`
	HeaderEnv  map[string]string `koanf:"header_env" json:"header_env,omitempty"` // header name → environment variable holding its value
	TLS        TLS               `koanf:"tls" json:"tls"`
	// Timeouts bound one request. In a /probe module, timeouts.total also
	// bounds every probe of the module (the scrape timeout minus
	// probe.timeout_offset, when shorter, bounds it first).
	Timeouts Timeouts `koanf:"timeouts" json:"timeouts"`
	// HTTP1 speaks HTTP/1.1 only (HTTP/2 is negotiated over TLS otherwise).
	HTTP1 bool `koanf:"http1" json:"http1"`
	// MaxEventBytes is the largest server-sent event accepted; a larger one
	// ends the stream stream_error. At most limits.max_buffered_bytes; 0 =
	// the SSE reader's default (DefaultMaxEventBytes).
	MaxEventBytes int `koanf:"max_event_bytes" json:"max_event_bytes"`
	// TTFTBoundary is what TTFT measures to: "content" (first visible
	// content, the default) or "any_token" (a reasoning token counts); read
	// and checked by ledger.TTFTBoundary.
	TTFTBoundary ledger.TTFTBoundary `koanf:"ttft_boundary" json:"ttft_boundary"`
	// UsageDeltas asks for per-chunk usage (a vendor extension, e.g. vLLM's
	// continuous_usage_stats; strict OpenAI-compatible proxies reject it).
	UsageDeltas bool `koanf:"usage_deltas" json:"usage_deltas"`
}

// Retries re-send rejected and transport-failed requests; off by default.
// Every attempt is its own ledger record, counted as an attempt, never as
// new demand.
type Retries struct {
	MaxAttempts int      `koanf:"max_attempts" json:"max_attempts"` // attempts per arrival, the first included; 0 or 1 = off
	Backoff     Duration `koanf:"backoff" json:"backoff"`           // wait before the second attempt (doubles), never sooner than Retry-After
	MaxBackoff  Duration `koanf:"max_backoff" json:"max_backoff"`
	// Jitter is the fraction of each wait drawn at random from the arrival
	// seed (reproducible): the wait is in (d·(1−jitter), d].
	Jitter float64 `koanf:"jitter" json:"jitter"`
}

// Cancellation injects client cancellations: a fraction of requests is
// cancelled after a delay and recorded cancelled/injected, outside the
// latency figures.
type Cancellation struct {
	Fraction float64  `koanf:"fraction" json:"fraction"`
	Delay    Duration `koanf:"delay" json:"delay"`         // from dispatch
	MaxDelay Duration `koanf:"max_delay" json:"max_delay"` // when above delay, the delay is uniform in [delay, max_delay]
}

// TLS is client TLS towards the target.
type TLS struct {
	CAFile             string `koanf:"ca_file" json:"ca_file,omitempty"`
	CertFile           string `koanf:"cert_file" json:"cert_file,omitempty"`
	KeyFile            string `koanf:"key_file" json:"key_file,omitempty"`
	InsecureSkipVerify bool   `koanf:"insecure_skip_verify" json:"insecure_skip_verify"`
}

// Timeouts bound one request (see protocol.Timeouts); 0 disables a bound.
type Timeouts struct {
	Connect      Duration `koanf:"connect" json:"connect"`
	Headers      Duration `koanf:"headers" json:"headers"`
	FirstContent Duration `koanf:"first_content" json:"first_content"`
	Idle         Duration `koanf:"idle" json:"idle"`
	Total        Duration `koanf:"total" json:"total"`
}

// Identity configures how a deploy is recognised beyond the response's model.
type Identity struct {
	ResponseHeader string `koanf:"response_header" json:"response_header,omitempty"` // e.g. x-build-id
	ModelsField    string `koanf:"models_field" json:"models_field,omitempty"`       // a field of GET /v1/models' entry, e.g. "root"
	// PollEvery is how often GET {url}/models is polled for the version
	// (with response_header or models_field set).
	PollEvery Duration `koanf:"poll_every" json:"poll_every"`
}

// Budget caps a target's traffic per day; 0 = unlimited.
type Budget struct {
	TokensPerDay   int64  `koanf:"tokens_per_day" json:"tokens_per_day"`
	RequestsPerDay int64  `koanf:"requests_per_day" json:"requests_per_day"`
	Zone           string `koanf:"zone" json:"zone"` // IANA zone whose midnight resets the budget
}

// Baseline is the continuous low-rate open-loop stream.
type Baseline struct {
	Enabled bool          `koanf:"enabled" json:"enabled"`
	Rate    float64       `koanf:"rate" json:"rate"`       // req/s per class, split by class weight
	Arrival schedule.Kind `koanf:"arrival" json:"arrival"` // poisson | constant | gamma (read by schedule.Kind)
	// Burstiness is the gamma process's shape k (the gaps' coefficient of
	// variation is 1/√k): 1 = Poisson, below 1 burstier, above 1 more
	// regular. Used with arrival gamma.
	Burstiness float64 `koanf:"burstiness" json:"burstiness"`
	Seed       int64   `koanf:"seed" json:"seed"` // 0 = derived from the target name
}

// Class is one request class (wiring.Classes makes it a workload.Class).
type Class struct {
	Name              string              `koanf:"name" json:"name"`
	Weight            float64             `koanf:"weight" json:"weight"`
	Prompt            workload.PromptSpec `koanf:"prompt" json:"prompt"`
	Input             workload.DistSpec   `koanf:"input" json:"input"`   // input length in tokens
	Output            workload.DistSpec   `koanf:"output" json:"output"` // max output tokens (max_tokens)
	Gates             stats.Gates         `koanf:"gates" json:"gates"`
	CacheBustFraction float64             `koanf:"cache_bust_fraction" json:"cache_bust_fraction"`
	// Prefix makes the class a shared-prefix class (prefix.tokens > 0):
	// each request is a system message, one of prefix.groups shared
	// prefixes, then a user message, its unique suffix, of input tokens.
	// Such a class gets a cold twin, the class "<name>-cold"
	// (ColdTwinName), of identical lengths with a prefix shared with
	// nothing (docs/workloads.md#shared-prefix-classes).
	Prefix   Prefix   `koanf:"prefix" json:"prefix"`
	ColdTwin ColdTwin `koanf:"cold_twin" json:"cold_twin"`
	// Session makes the class a multi-turn conversation (turns ≥ 2); the
	// zero value sends independent requests.
	Session Session `koanf:"session" json:"session,omitzero"`
	// Checks make the class an answer canary (docs/checks.md): its
	// arrivals send these checks in rotation instead of prompts.
	Checks []answercheck.Check `koanf:"checks" json:"checks,omitempty"`
	// RecordAnswers is what a check's ledger record keeps of the answer
	// beside its hash: none, or excerpt (its first 256 bytes, sanitised).
	RecordAnswers string `koanf:"record_answers" json:"record_answers"`
}

// Prefix is a class's shared prefix; off while Tokens is 0. Groups 0 is
// 1, Choice "" is round_robin, ZipfS 0 is DefaultZipfS (workload.PrefixSpec
// reads and checks them).
type Prefix struct {
	Tokens int     `koanf:"tokens" json:"tokens"` // the prefix's length in tokens (8..1000000)
	Groups int     `koanf:"groups" json:"groups"` // distinct prefixes (1..10000)
	Choice string  `koanf:"choice" json:"choice"` // round_robin | uniform | zipf
	ZipfS  float64 `koanf:"zipf_s" json:"zipf_s"` // zipf exponent (> 1), choice zipf only
}

// ColdTwin is the generated cold twin of a shared-prefix class.
type ColdTwin struct {
	// Weight is the twin's weight in the mix; 0 = the class's own weight.
	Weight float64 `koanf:"weight" json:"weight"`
}

// DefaultZipfS is prefix.zipf_s when unset.
const DefaultZipfS = 1.2

// ColdTwinSuffix ends the name of every cold twin: the twin of class X is
// X-cold. The name is a contract (series and alerts pair X with X-cold).
const ColdTwinSuffix = "-cold"

// ColdTwinName is the name of the cold twin of the class named class.
func ColdTwinName(class string) string { return class + ColdTwinSuffix }

// HasPrefix reports whether the class is a shared-prefix class.
func (c Class) HasPrefix() bool { return c.Prefix.Tokens != 0 }

// MaxSessionTurns bounds classes[].session.turns (and so the `turn` values
// a session's records carry).
const MaxSessionTurns = 32

// Session is a class's multi-turn conversation (docs/workloads.md#sessions):
// each open-loop arrival starts a session of Turns turns; each later turn
// is sent Think after the previous one ended and re-sends the history plus
// a new user message of the class's input length.
type Session struct {
	Turns int `koanf:"turns" json:"turns,omitempty"`
	// Think is the think time before each later turn, in the syntax of the
	// probe's --think-time: D | constant:D | exponential:MEAN |
	// lognormal:MEAN:SIGMA (checked by wiring with schedule.ParseThink).
	Think string `koanf:"think" json:"think,omitempty"`
}

// Enabled reports whether the class is a session.
func (s Session) Enabled() bool { return s.Turns != 0 }

// Ladder is a target's scheduled rate ladder.
type Ladder struct {
	Enabled            bool          `koanf:"enabled" json:"enabled"`
	Schedule           Schedule      `koanf:"schedule" json:"schedule"`
	Steps              []float64     `koanf:"steps" json:"steps"` // offered rates, req/s, increasing
	StepDuration       Duration      `koanf:"step_duration" json:"step_duration"`
	Gap                Duration      `koanf:"gap" json:"gap"`
	MaxRate            float64       `koanf:"max_rate" json:"max_rate"`     // steps above it are refused
	Arrival            schedule.Kind `koanf:"arrival" json:"arrival"`       // poisson | constant | gamma (read by schedule.Kind)
	Burstiness         float64       `koanf:"burstiness" json:"burstiness"` // gamma shape k, as baseline.burstiness
	Seed               int64         `koanf:"seed" json:"seed"`
	Abort              Abort         `koanf:"abort" json:"abort"`
	GoodFractionTarget float64       `koanf:"good_fraction_target" json:"good_fraction_target"`
	KneeFactor         float64       `koanf:"knee_factor" json:"knee_factor"`
	// MaxLagP99 is the largest dispatch-lag p99 at which the target's
	// generator is still valid: for each ladder step (a step judged invalid
	// never counts toward capacity or knee) and for the daemon's live
	// llmprobe_generator_valid window.
	MaxLagP99 Duration `koanf:"max_lag_p99" json:"max_lag_p99"`
	// RateTolerance is the accepted relative deviation of a step's achieved
	// arrival rate from its offered rate (beyond the Poisson noise of its
	// sample) before the step is judged generator-invalid.
	RateTolerance float64 `koanf:"rate_tolerance" json:"rate_tolerance"`
	// LagConfidence is the confidence of the dispatch-lag test: the
	// generator is late when its dispatches later than MaxLagP99 are
	// significantly more than 1 % of them (a one-sided binomial test at
	// this confidence). LagHardFactor: one dispatch later than this many
	// times MaxLagP99 makes it late on its own.
	LagConfidence       float64 `koanf:"lag_confidence" json:"lag_confidence"`
	LagHardFactor       float64 `koanf:"lag_hard_factor" json:"lag_hard_factor"`
	RunOnIdentityChange bool    `koanf:"run_on_identity_change" json:"run_on_identity_change"`
	RunOnStart          bool    `koanf:"run_on_start" json:"run_on_start"` // also run once when the daemon starts
	HistoryFile         string  `koanf:"history_file" json:"history_file,omitempty"`
	// StopAt is where a ladder stops climbing: "knee" (after the knee
	// step), "capacity" (after the first step that fails its gates) or
	// "top" (the top step, but never more than one step past the first
	// failing one).
	StopAt ladder.StopAt `koanf:"stop_at" json:"stop_at"` // read by ladder.StopAt
	// BaselineSettle is how long after a ladder ended the target's baseline
	// requests are still labelled during="ladder" (kept out of the SLO):
	// the queue the ladder built takes a while to drain. 0 = drain.timeout.
	BaselineSettle Duration `koanf:"baseline_settle" json:"baseline_settle"`
	// SettleMax is the longest the daemon waits, before a ladder, for the
	// target to settle (the previous ladder's requests ended, the baseline
	// TTFT back in its normal range); past it the ladder starts with a
	// note. 0 = do not wait.
	SettleMax Duration `koanf:"settle_max" json:"settle_max"`
}

// Schedule says when a ladder runs: every Every (shifted by Offset from the
// Unix epoch), or daily at Daily ("HH:MM") in Zone. Exactly one of Every and
// Daily is set.
type Schedule struct {
	Every  Duration `koanf:"every" json:"every"`
	Offset Duration `koanf:"offset" json:"offset"`
	Daily  string   `koanf:"daily" json:"daily,omitempty"`
	Zone   string   `koanf:"zone" json:"zone,omitempty"`
}

// Abort are the rules that stop a ladder early; a zero field is off.
type Abort struct {
	ErrorFraction      float64 `koanf:"error_fraction" json:"error_fraction"`         // failed (not ok, not rejected, not unsent) / sent
	RejectionFraction  float64 `koanf:"rejection_fraction" json:"rejection_fraction"` // rejected / sent
	TTFTGateMultiple   float64 `koanf:"ttft_gate_multiple" json:"ttft_gate_multiple"` // TTFT p95 above this × the class TTFT gate
	UnsentFraction     float64 `koanf:"unsent_fraction" json:"unsent_fraction"`       // unsent / planned (0 = any unsent aborts when on_unsent)
	OnUnsent           bool    `koanf:"on_unsent" json:"on_unsent"`
	OnGeneratorInvalid bool    `koanf:"on_generator_invalid" json:"on_generator_invalid"`
}
