package sim

import (
	"errors"
	"fmt"
	"net/http"
	"time"
)

// DefaultModel is the model name /v1/models lists when Config.Models is empty.
const DefaultModel = "llmprobe-sim"

// Config is the simulator's configuration. Start from DefaultConfig.
type Config struct {
	// Slots is the number of concurrent generations (service slots).
	Slots int `koanf:"slots" json:"slots" yaml:"slots"`
	// AdmissionLimit is the most requests queued plus running; beyond it
	// requests are rejected with RejectStatus. It must be >= Slots.
	AdmissionLimit int `koanf:"admission_limit" json:"admission_limit" yaml:"admission_limit"`
	// RejectStatus is the HTTP status of a rejection: 429 or 503.
	RejectStatus int `koanf:"reject_status" json:"reject_status" yaml:"reject_status"`
	// RetryAfter is sent as Retry-After (whole seconds, rounded up) on
	// rejections; 0 omits the header.
	RetryAfter time.Duration `koanf:"retry_after" json:"retry_after" yaml:"retry_after"`

	// TTFT is the prefill time in seconds: from the start of slot service
	// to the first output chunk, before the prompt's own cost
	// (PrefillPerToken).
	TTFT Dist `koanf:"ttft" json:"ttft" yaml:"ttft"`
	// PrefillPerToken is the prefill time of each prompt token not served
	// from the prefix cache, added to the TTFT draw; 0 (the default) makes
	// the prompt's length and the cache cost nothing in time (the cache
	// still counts). See PrefixCache.
	PrefillPerToken time.Duration `koanf:"prefill_per_token" json:"prefill_per_token" yaml:"prefill_per_token"`
	// PrefixCache is the simulated prefix cache (prefix.go): on by default,
	// 16-token blocks, 8192 blocks.
	PrefixCache PrefixCacheConfig `koanf:"prefix_cache" json:"prefix_cache" yaml:"prefix_cache"`
	// TokenTime is the time per output token in seconds, drawn per token.
	TokenTime Dist `koanf:"token_time" json:"token_time" yaml:"token_time"`
	// OutputTokens is the natural output length (at least 1), capped by
	// the request's max_tokens / max_output_tokens.
	OutputTokens Dist `koanf:"output_tokens" json:"output_tokens" yaml:"output_tokens"`
	// ReasoningTokens is the number of reasoning tokens streamed before the
	// content (zero distribution: none). They count against the cap.
	ReasoningTokens Dist `koanf:"reasoning_tokens" json:"reasoning_tokens" yaml:"reasoning_tokens"`
	// TokensPerChunk is how many tokens each stream chunk carries (>= 1).
	TokensPerChunk int `koanf:"tokens_per_chunk" json:"tokens_per_chunk" yaml:"tokens_per_chunk"`
	// Seed makes all draws reproducible: request n (in arrival order)
	// draws from a generator seeded by (Seed, n).
	Seed uint64 `koanf:"seed" json:"seed" yaml:"seed"`

	// Windows are scheduled slowdowns and stalls.
	Windows []Window `koanf:"windows" json:"windows,omitempty" yaml:"windows,omitempty"`

	// Models is the list of model names served; empty accepts any name.
	Models []string `koanf:"models" json:"models,omitempty" yaml:"models,omitempty"`
	// APIKey, when set, is required as "Authorization: Bearer KEY" or
	// "x-api-key: KEY"; requests without it get 401. Never logged.
	APIKey string `koanf:"api_key" json:"-" yaml:"-"`

	// Version identifies the simulated deploy: sent as the X-Model-Version
	// response header and as the "root" field of each /v1/models entry
	// (as vLLM does) when set. Printable ASCII, at most 128 bytes.
	Version string `koanf:"version" json:"version,omitempty" yaml:"version,omitempty"`
	// ErrorFraction is the fraction of admitted generation requests answered
	// with HTTP 500 at once (a broken deploy); 0 = none.
	ErrorFraction float64 `koanf:"error_fraction" json:"error_fraction,omitempty" yaml:"error_fraction,omitempty"`

	// WrongAnswers lists the kinds of library answers (answer.go) the
	// simulator gets wrong on purpose (WrongAnswerKinds: text, json,
	// tool_call, stop, length, model); empty: all right.
	WrongAnswers []string `koanf:"wrong_answers" json:"wrong_answers,omitempty" yaml:"wrong_answers,omitempty"`

	// MaxBodyBytes bounds a request body (default 4 MiB).
	MaxBodyBytes int64 `koanf:"max_body_bytes" json:"max_body_bytes" yaml:"max_body_bytes"`

	// Now is the clock used to place windows and to time chunks against
	// them; nil means time.Now. It must advance with real time (a shifted
	// clock is fine, e.g. to place absolute windows): stream pacing waits on
	// real timers for the differences it computes.
	Now func() time.Time `koanf:"-" json:"-" yaml:"-"`
}

// DefaultConfig returns the defaults: 64 slots, admission 256, 429 with
// Retry-After 1 s, TTFT lognormal (median 50 ms, sigma 0.5), no prefill cost
// per prompt token, 10 ms per token, output uniform 32..96 tokens (mean 64),
// one token per chunk, no reasoning, the prefix cache on (16-token blocks,
// at most 8192).
func DefaultConfig() Config {
	return Config{
		Slots:          64,
		AdmissionLimit: 256,
		RejectStatus:   http.StatusTooManyRequests,
		RetryAfter:     time.Second,
		TTFT:           LognormalDist(0.050, 0.5),
		TokenTime:      FixedDist(0.010),
		OutputTokens:   UniformDist(32, 96),
		TokensPerChunk: 1,
		Seed:           1,
		MaxBodyBytes:   4 << 20,
		PrefixCache:    PrefixCacheConfig{Enabled: true, BlockTokens: 16, Blocks: 8192},
	}
}

// Validate reports every invalid field, named by its config key.
func (c Config) Validate() error {
	var errs []error
	add := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("sim config %s: %w", key, err))
		}
	}
	if c.Slots < 1 {
		add("slots", fmt.Errorf("%d must be >= 1", c.Slots))
	}
	if c.AdmissionLimit < c.Slots {
		add("admission_limit", fmt.Errorf("%d must be >= slots (%d)", c.AdmissionLimit, c.Slots))
	}
	if c.RejectStatus != http.StatusTooManyRequests && c.RejectStatus != http.StatusServiceUnavailable {
		add("reject_status", fmt.Errorf("%d must be 429 or 503", c.RejectStatus))
	}
	if c.RetryAfter < 0 {
		add("retry_after", fmt.Errorf("%s must be >= 0", c.RetryAfter))
	}
	add("ttft", c.TTFT.Validate())
	add("prefill_per_token", validPrefillPerToken(c.PrefillPerToken))
	add("prefix_cache", c.PrefixCache.Validate())
	add("token_time", c.TokenTime.Validate())
	add("output_tokens", c.OutputTokens.Validate())
	add("reasoning_tokens", c.ReasoningTokens.Validate())
	if c.TokensPerChunk < 1 {
		add("tokens_per_chunk", fmt.Errorf("%d must be >= 1", c.TokensPerChunk))
	}
	for i, w := range c.Windows {
		add(fmt.Sprintf("windows[%d]", i), w.Validate())
	}
	for i, m := range c.Models {
		if m == "" {
			add(fmt.Sprintf("models[%d]", i), errors.New("empty model name"))
		}
	}
	if err := ValidVersion(c.Version); err != nil {
		add("version", err)
	}
	if !(c.ErrorFraction >= 0 && c.ErrorFraction <= 1) {
		add("error_fraction", fmt.Errorf("%g must be in [0, 1]", c.ErrorFraction))
	}
	if _, err := parseWrong(c.WrongAnswers); err != nil {
		add("wrong_answers", err)
	}
	if c.MaxBodyBytes < 1 {
		add("max_body_bytes", fmt.Errorf("%d must be >= 1", c.MaxBodyBytes))
	}
	return errors.Join(errs...)
}

// ServiceTime is the expected time one request holds a slot, from the means
// of the distributions: TTFT + (L - min(k, L))·TokenTime, where L is the
// mean output length plus mean reasoning length and k is TokensPerChunk (the
// first chunk, at TTFT, carries k tokens; each later token costs TokenTime).
// It is exact when every distribution is fixed, no request's max_tokens
// cuts the output and PrefillPerToken is 0 (a prompt's own prefill cost,
// which depends on its length and the cache, is not in it).
func (c Config) ServiceTime() time.Duration {
	l := c.OutputTokens.Mean() + c.ReasoningTokens.Mean()
	first := min(float64(max(c.TokensPerChunk, 1)), l)
	sec := c.TTFT.Mean() + (l-first)*c.TokenTime.Mean()
	return time.Duration(sec * float64(time.Second))
}

// Capacity is the throughput in requests per second the server sustains
// with every slot busy: Slots / ServiceTime. With one token per chunk that is
// S / (t0 + (L-1)·tt).
func (c Config) Capacity() float64 {
	st := c.ServiceTime().Seconds()
	if st <= 0 {
		return 0
	}
	return float64(c.Slots) / st
}
