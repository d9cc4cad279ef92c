package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/sim"
)

// simPrefillPerToken is `llmprobe sim`'s prefill cost per uncached prompt
// token (about 20,000 prompt tokens a second), so that a shared prefix is
// measurably faster against it out of the box. The library default
// (sim.DefaultConfig) is 0, which keeps capacity arithmetic prompt-free for
// the tests and the built-in simulator of probe, ladder and run.
const simPrefillPerToken = 50 * time.Microsecond

func runSim(ctx context.Context, e env, args []string) error {
	def := sim.DefaultConfig()
	fs := newFlagSet("sim", e)
	listen := fs.String("listen", "127.0.0.1:8000", "address to serve on (host:port)")
	slots := fs.Int("slots", def.Slots, "service slots (concurrent generations)")
	admission := fs.Int("admission", def.AdmissionLimit, "admission limit: most requests queued plus running")
	reject := fs.Int("reject-status", def.RejectStatus, "status of a rejection beyond admission: 429 or 503")
	retryAfter := fs.Duration("retry-after", def.RetryAfter, "Retry-After sent with rejections (0: none)")
	ttft := fs.String("ttft", "lognormal:50ms,0.5", "prefill time distribution: 50ms | uniform:20ms-80ms | exp:50ms | lognormal:50ms,0.5")
	tokenTime := fs.String("token-time", "10ms", "time per output token distribution (same forms)")
	output := fs.String("output-tokens", "uniform:32-96", "natural output length distribution: 64 | uniform:32-96 | exp:64 | lognormal:56,0.5 (capped by max_tokens)")
	reasoning := fs.String("reasoning-tokens", "0", "reasoning tokens streamed before content (same forms)")
	perChunk := fs.Int("tokens-per-chunk", def.TokensPerChunk, "tokens carried by each stream chunk")
	stalls := fs.StringArray("stall", nil, "stall window START+DURATION from server start, e.g. 30s+10s (repeatable)")
	slowdowns := fs.StringArray("slowdown", nil, "slowdown window START+DURATION*FACTOR, e.g. 60s+30s*4 (repeatable)")
	models := fs.StringArray("model", nil, "model names served (repeatable; none: any name is accepted)")
	keyEnv := fs.String("api-key-env", "", "environment variable holding the API key the simulator requires (none: no auth)")
	seed := fs.Uint64("seed", def.Seed, "seed for every draw")
	version := fs.String("deploy-version", "", "deploy identity: the "+sim.VersionHeader+" response header and the root field of /v1/models entries (the version field of /admin/state: change it live with POST /admin/state)")
	errFrac := fs.Float64("error-fraction", 0, "fraction of admitted requests answered 500 at once (a broken deploy)")
	prefill := fs.Duration("prefill-per-token", simPrefillPerToken, "prefill time of each prompt token not served from the prefix cache, added to --ttft (0: the prompt costs nothing)")
	cacheOn := fs.Bool("prefix-cache", def.PrefixCache.Enabled, "simulate a prefix cache (turn it off live with POST /admin/state {\"prefix_cache\":false})")
	cacheBlocks := fs.Int("prefix-cache-blocks", def.PrefixCache.Blocks, "most blocks the prefix cache keeps (least recently used evicted)")
	blockTokens := fs.Int("prefix-cache-block-tokens", def.PrefixCache.BlockTokens, "tokens per prefix-cache block (a token is 4 characters of prompt)")
	wrong := fs.StringSlice("wrong-answers", nil, "kinds of prompt-library answers to get wrong: "+strings.Join(sim.WrongAnswerKinds(), ", ")+" (comma-separated or repeated; live: wrong_answers in /admin/state)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	cfg := def
	cfg.Slots, cfg.AdmissionLimit, cfg.RejectStatus, cfg.RetryAfter = *slots, *admission, *reject, *retryAfter
	cfg.TokensPerChunk, cfg.Seed, cfg.Models = *perChunk, *seed, *models
	cfg.Version, cfg.ErrorFraction = *version, *errFrac
	cfg.PrefillPerToken, cfg.WrongAnswers = *prefill, *wrong
	cfg.PrefixCache = sim.PrefixCacheConfig{Enabled: *cacheOn, Blocks: *cacheBlocks, BlockTokens: *blockTokens}
	var err error
	for _, d := range []struct {
		flag, val string
		dst       *sim.Dist
		parse     func(string) (sim.Dist, error)
	}{
		{"--ttft", *ttft, &cfg.TTFT, sim.ParseDurationDist},
		{"--token-time", *tokenTime, &cfg.TokenTime, sim.ParseDurationDist},
		{"--output-tokens", *output, &cfg.OutputTokens, sim.ParseCountDist},
		{"--reasoning-tokens", *reasoning, &cfg.ReasoningTokens, sim.ParseCountDist},
	} {
		if *d.dst, err = d.parse(d.val); err != nil {
			return badFlag("%s %q: %v", d.flag, d.val, err)
		}
	}
	w, err := simWindows("--", *stalls, *slowdowns)
	if err != nil {
		return err
	}
	cfg.Windows = append(cfg.Windows, w...)
	if *keyEnv != "" {
		if cfg.APIKey = e.getenv(*keyEnv); cfg.APIKey == "" {
			return badFlag("--api-key-env: environment variable %s is empty or unset", *keyEnv)
		}
	}
	if cfg.RejectStatus != http.StatusTooManyRequests && cfg.RejectStatus != http.StatusServiceUnavailable {
		return badFlag("--reject-status: must be 429 or 503, got %d", cfg.RejectStatus)
	}
	if err := sim.ValidVersion(cfg.Version); err != nil {
		return badFlag("--deploy-version: %v", err)
	}
	if err := cfg.Validate(); err != nil {
		return badFlag("%v", err)
	}
	s, err := sim.New(cfg)
	if err != nil {
		return err
	}
	url, closeFn, err := s.Start(*listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stderr, "llmprobe sim: serving OpenAI chat/completions/responses and Anthropic messages at %s\n", url)
	fmt.Fprintf(e.stderr, "  %d slots, admission %d, mean service %v, capacity ≈ %.1f req/s\n",
		cfg.Slots, cfg.AdmissionLimit, cfg.ServiceTime().Round(time.Millisecond), cfg.Capacity())
	cache := "off"
	if cfg.PrefixCache.Enabled {
		cache = fmt.Sprintf("on (%d blocks of %d tokens)", cfg.PrefixCache.Blocks, cfg.PrefixCache.BlockTokens)
	}
	fmt.Fprintf(e.stderr, "  prefill + %v per uncached prompt token; prefix cache %s\n", cfg.PrefillPerToken, cache)
	fmt.Fprintf(e.stderr, "  live settings (version, slots, admission_limit, error_fraction, ttft, prefix_cache, prefix_cache_blocks, wrong_answers): GET/POST %s/admin/state\n",
		strings.TrimSuffix(url, "/v1"))
	<-ctx.Done()
	return closeFn()
}
