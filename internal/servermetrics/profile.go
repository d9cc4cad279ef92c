package servermetrics

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Flavour is the kind of inference server whose metric names are known.
type Flavour string

// Flavours. Auto detects the flavour from the names the server exposes at
// the start of a window; None means no known names, configured metrics
// only.
const (
	Auto   Flavour = "auto"
	VLLM   Flavour = "vllm"
	SGLang Flavour = "sglang"
	TGI    Flavour = "tgi"
	// LlamaCPP is llama.cpp's llama-server (its llamacpp: names).
	LlamaCPP Flavour = "llamacpp"
	None     Flavour = "none"
)

// FlavourChoices lists the flavours ParseFlavour accepts, for messages and
// flag help.
const FlavourChoices = "auto, vllm, sglang, tgi or llamacpp"

// ParseFlavour reads a configured flavour: auto (or empty), vllm, sglang,
// tgi, llamacpp. It is the one parser of a flavour: configuration checks,
// wiring and the command-line flags all call it.
func ParseFlavour(s string) (Flavour, error) {
	switch f := Flavour(strings.ToLower(strings.TrimSpace(s))); f {
	case "", Auto:
		return Auto, nil
	case VLLM, SGLang, TGI, LlamaCPP:
		return f, nil
	}
	return "", fmt.Errorf("unknown server flavour %q (want %s)", s, FlavourChoices)
}

// UnmarshalText reads a configured flavour (server_metrics.flavour,
// --server-metrics-flavour) by ParseFlavour: configuration, the flags and
// the domain hold the parsed value.
func (f *Flavour) UnmarshalText(b []byte) error {
	v, err := ParseFlavour(string(b))
	if err != nil {
		return fmt.Errorf("want %s; got %q", FlavourChoices, string(b))
	}
	*f = v
	return nil
}

// UnmarshalJSON reads a flavour as a View records it, verbatim: a
// detected flavour (none) is no configuration value, and a stored result
// is read as written. Configuration reads text (UnmarshalText).
func (f *Flavour) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*f = Flavour(s)
	return nil
}

// Role is what a known metric means, whatever its name on a given server.
type Role string

// Roles.
const (
	Running     Role = "running"     // requests being served now (gauge)
	Waiting     Role = "waiting"     // requests queued for service now (gauge)
	KVCache     Role = "kv_cache"    // KV-cache usage, a fraction 0–1 (gauge)
	TTFT        Role = "ttft"        // server time to first token (histogram, seconds)
	ITL         Role = "itl"         // server time between output tokens (histogram, seconds)
	TPOT        Role = "tpot"        // server mean time per output token of a request (histogram, seconds)
	E2E         Role = "e2e"         // server end-to-end request latency (histogram, seconds)
	QueueTime   Role = "queue_time"  // time a request waited in the server's queue (histogram, seconds)
	Finished    Role = "finished"    // requests finished (counter)
	GenTokens   Role = "gen_tokens"  // output tokens generated (counter)
	Preemptions Role = "preemptions" // requests preempted (counter)
	// PrefixQueries and PrefixHits are the prompt tokens looked up in the
	// server's prefix cache and those found there (counters, tokens).
	PrefixQueries Role = "prefix_cache_queries"
	PrefixHits    Role = "prefix_cache_hits"
	// Roles llama.cpp exposes (some may serve other engines later).
	KVTokens      Role = "kv_tokens"           // tokens held in the KV cache (gauge)
	PromptTokens  Role = "prompt_tokens"       // prompt tokens computed (counter)
	PromptSeconds Role = "prompt_seconds"      // time spent on prompts, summed over slots (counter, seconds)
	GenSeconds    Role = "gen_seconds"         // time spent generating, summed over slots (counter, seconds)
	Decodes       Role = "decodes"             // decode calls (counter)
	TokensMax     Role = "tokens_max"          // largest context a slot has held (a high-water mark: gauge)
	PromptTPSLife Role = "prompt_tps_lifetime" // prompt tokens/s averaged over the server's life (gauge)
	GenTPSLife    Role = "gen_tps_lifetime"    // generated tokens/s averaged over the server's life (gauge)
	SlotsPerDec   Role = "busy_slots_lifetime" // busy slots per decode averaged over the server's life (gauge)
	Configured    Role = ""                    // a configured metric name, no known meaning
)

// Known is one row of a flavour's profile: a role and the names that carry
// it, the first one present on the server winning (newer names first).
type Known struct {
	Role  Role
	Kind  Kind // the kind the role needs (an untyped family is read as a gauge)
	Names []string
	// Max aggregates the series of a gauge by their maximum instead of
	// their sum (a fraction such as KV-cache usage: the fullest engine).
	Max bool
	// AsGauge reads a gauge role whatever type the server declares: a
	// server that declares an average or a high-water mark a counter
	// (llama.cpp) must not have it read by increase, where each fall
	// would look like a restart.
	AsGauge bool
}

// Profile returns the metric names known for a flavour (nil for Auto and
// None), from the servers' documentation (vLLM "Production Metrics", SGLang
// "Production Metrics", TGI "Metrics"). A name missing from a server is
// reported as missing, never as zero.
func Profile(f Flavour) []Known {
	p := profiles[f]
	out := make([]Known, len(p))
	for i, k := range p {
		k.Names = append([]string(nil), k.Names...)
		out[i] = k
	}
	return out
}

// profiles is the table behind Profile; it is never modified.
var profiles = map[Flavour][]Known{
	VLLM: {
		{Running, Gauge, []string{"vllm:num_requests_running"}, false, false},
		{Waiting, Gauge, []string{"vllm:num_requests_waiting"}, false, false},
		{KVCache, Gauge, []string{"vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"}, true, false},
		{TTFT, Histogram, []string{"vllm:time_to_first_token_seconds"}, false, false},
		{ITL, Histogram, []string{"vllm:inter_token_latency_seconds", "vllm:time_per_output_token_seconds"}, false, false},
		{TPOT, Histogram, []string{"vllm:request_time_per_output_token_seconds"}, false, false},
		{E2E, Histogram, []string{"vllm:e2e_request_latency_seconds"}, false, false},
		{QueueTime, Histogram, []string{"vllm:request_queue_time_seconds"}, false, false},
		{Finished, Counter, []string{"vllm:request_success_total"}, false, false},
		{GenTokens, Counter, []string{"vllm:generation_tokens_total"}, false, false},
		{Preemptions, Counter, []string{"vllm:num_preemptions_total"}, false, false},
		// vLLM V1's prefix cache counters (prompt tokens queried, and hit).
		{PrefixQueries, Counter, []string{"vllm:prefix_cache_queries_total", "vllm:prefix_cache_queries"}, false, false},
		{PrefixHits, Counter, []string{"vllm:prefix_cache_hits_total", "vllm:prefix_cache_hits"}, false, false},
	},
	// SGLang is reported to spell its prefix sglang_ in newer releases;
	// both spellings are tried.
	SGLang: {
		{Running, Gauge, []string{"sglang:num_running_reqs", "sglang_num_running_reqs"}, false, false},
		{Waiting, Gauge, []string{"sglang:num_queue_reqs", "sglang_num_queue_reqs"}, false, false},
		{KVCache, Gauge, []string{"sglang:token_usage", "sglang_token_usage"}, true, false},
		{TTFT, Histogram, []string{"sglang:time_to_first_token_seconds", "sglang_time_to_first_token_seconds"}, false, false},
		{ITL, Histogram, []string{"sglang:inter_token_latency_seconds", "sglang_inter_token_latency_seconds"}, false, false},
		{TPOT, Histogram, []string{"sglang:time_per_output_token_seconds", "sglang_time_per_output_token_seconds"}, false, false},
		{E2E, Histogram, []string{"sglang:e2e_request_latency_seconds", "sglang_e2e_request_latency_seconds"}, false, false},
		{Finished, Counter, []string{"sglang:num_requests_total", "sglang_num_requests_total"}, false, false},
		{GenTokens, Counter, []string{"sglang:generation_tokens_total", "sglang_generation_tokens_total"}, false, false},
	},
	// TGI has no TTFT histogram and no KV-cache fraction.
	TGI: {
		{Running, Gauge, []string{"tgi_batch_current_size"}, false, false},
		{Waiting, Gauge, []string{"tgi_queue_size"}, false, false},
		{TPOT, Histogram, []string{"tgi_request_mean_time_per_token_duration"}, false, false},
		{E2E, Histogram, []string{"tgi_request_duration"}, false, false},
		{QueueTime, Histogram, []string{"tgi_request_queue_duration"}, false, false},
		{Finished, Counter, []string{"tgi_request_success"}, false, false},
	},
	// llama.cpp's llama-server (tools/server, checked against the build in
	// ../shared/engines/llama.cpp): busy slots and deferred requests are
	// its running and waiting; its KV-cache series exist only in older
	// builds (b4747 had them); its lifetime averages and high-water mark
	// are gauges, whatever it declares (b4747 declared
	// n_busy_slots_per_decode a counter, and n_tokens_max is one still).
	LlamaCPP: {
		{Running, Gauge, []string{"llamacpp:requests_processing"}, false, true},
		{Waiting, Gauge, []string{"llamacpp:requests_deferred"}, false, true},
		{KVCache, Gauge, []string{"llamacpp:kv_cache_usage_ratio"}, true, true},
		{KVTokens, Gauge, []string{"llamacpp:kv_cache_tokens"}, false, true},
		{PromptTokens, Counter, []string{"llamacpp:prompt_tokens_total"}, false, false},
		{GenTokens, Counter, []string{"llamacpp:tokens_predicted_total"}, false, false},
		{PromptSeconds, Counter, []string{"llamacpp:prompt_seconds_total"}, false, false},
		{GenSeconds, Counter, []string{"llamacpp:tokens_predicted_seconds_total"}, false, false},
		{Decodes, Counter, []string{"llamacpp:n_decode_total"}, false, false},
		{TokensMax, Gauge, []string{"llamacpp:n_tokens_max"}, false, true},
		{PromptTPSLife, Gauge, []string{"llamacpp:prompt_tokens_seconds"}, false, true},
		{GenTPSLife, Gauge, []string{"llamacpp:predicted_tokens_seconds"}, false, true},
		{SlotsPerDec, Gauge, []string{"llamacpp:n_busy_slots_per_decode"}, false, true},
	},
}

// prefixes identify a flavour by the names a server exposes.
var prefixes = []struct {
	f      Flavour
	prefix []string
}{
	{VLLM, []string{"vllm:"}},
	{SGLang, []string{"sglang:", "sglang_"}},
	{TGI, []string{"tgi_"}},
	{LlamaCPP, []string{"llamacpp:"}},
}

// Detect names the flavour of an exposition: the first of vLLM, SGLang, TGI
// and llama.cpp whose prefix (vllm:, sglang: or sglang_, tgi_, llamacpp:)
// starts some family name, or None.
func Detect(e *Exposition) Flavour {
	if e == nil {
		return None
	}
	for _, p := range prefixes {
		for name := range e.Families {
			for _, x := range p.prefix {
				if strings.HasPrefix(name, x) {
					return p.f
				}
			}
		}
	}
	return None
}

// roleLabel is how Explain and errors name a role.
func roleLabel(r Role) string {
	switch r {
	case Running:
		return "running"
	case Waiting:
		return "waiting queue"
	case KVCache:
		return "KV cache"
	case TTFT:
		return "server TTFT"
	case ITL:
		return "server ITL"
	case TPOT:
		return "server TPOT"
	case E2E:
		return "server e2e"
	case QueueTime:
		return "server queue time"
	case Finished:
		return "finished requests"
	case GenTokens:
		return "generated tokens"
	case Preemptions:
		return "preemptions"
	case PromptTokens:
		return "prompt tokens"
	}
	return string(r)
}
