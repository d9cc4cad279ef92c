package ledger

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Count is a token count a server may or may not report: the zero value is
// unknown, which is not the same as a reported 0. In JSON it is a number
// when known and absent (with omitzero) when not.
type Count struct {
	N     int
	Known bool
}

// KnownCount returns a known count of n.
func KnownCount(n int) Count { return Count{N: n, Known: true} }

// MarshalJSON implements json.Marshaler: the number, or null when unknown
// (a field tagged omitzero is left out instead).
func (c Count) MarshalJSON() ([]byte, error) {
	if !c.Known {
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, int64(c.N), 10), nil
}

// UnmarshalJSON implements json.Unmarshaler: a whole number is known, null
// is unknown.
func (c *Count) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*c = Count{}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("token count: %w", err)
	}
	*c = Count{N: n, Known: true}
	return nil
}

// CacheReport is what a server said, unchecked, about the prompt cache's
// part in one request: the prompt tokens it read from its cache (OpenAI's
// usage.prompt_tokens_details.cached_tokens, the Responses API's
// input_tokens_details.cached_tokens, Anthropic's cache_read_input_tokens)
// and the prompt tokens it wrote to its cache (Anthropic's
// cache_creation_input_tokens). Counts are int64 so that any integer the
// decoder read is seen as it was sent.
type CacheReport struct {
	Read, Write       int64
	HasRead, HasWrite bool
}

// WithCache is how a server's cache counts join a checked Usage: each
// reported count must be a whole number in 0..MaxUsageTokens, and the read
// count at most the prompt tokens when those are known. A count that cannot
// be true is dropped (left unknown) and the usage flagged CacheInvalid; the
// other counts stand, since they were checked on their own (CheckUsage). An
// Invalid usage (its counts unknown) takes no cache counts either.
func (u Usage) WithCache(c CacheReport) Usage {
	if !u.Known {
		return u
	}
	ok := func(n int64) bool { return n >= 0 && n <= MaxUsageTokens && n <= int64(u.Prompt) }
	if c.HasRead {
		if ok(c.Read) {
			u.CachedPrompt = KnownCount(int(c.Read))
		} else {
			u.CacheInvalid = true
		}
	}
	if c.HasWrite {
		if ok(c.Write) && (!u.CachedPrompt.Known || c.Write+int64(u.CachedPrompt.N) <= int64(u.Prompt)) {
			u.CacheWrite = KnownCount(int(c.Write))
		} else {
			u.CacheInvalid = true
		}
	}
	return u
}

// Cache sources: where a record's cached prompt count came from.
const (
	CacheFromUsage   = "usage"   // the API's usage (OpenAI details, Anthropic cache fields)
	CacheFromTimings = "timings" // llama.cpp's timings.cache_n
)

// CachedPromptTokens is how many of the request's prompt tokens the server
// says it served from its prompt (prefix) cache, where that came from, and
// whether it is known at all. The API's usage is preferred; failing that,
// llama.cpp's timings (cache_n, checked against cache_n + prompt_n and
// against the usage's prompt count when both are known). Unknown (false)
// when the server said nothing believable: never a zero.
func (r *Record) CachedPromptTokens() (n int, source string, ok bool) {
	if c := r.Usage.CachedPrompt; c.Known && r.Usage.Known && !r.Usage.CacheInvalid {
		return c.N, CacheFromUsage, true
	}
	st := r.ServerTimings
	if st == nil || st.Invalid || r.Usage.CacheInvalid {
		return 0, "", false
	}
	if r.Usage.Known && st.CacheN+st.PromptN != r.Usage.Prompt {
		return 0, "", false // two accounts of the prompt that disagree: neither is trusted
	}
	return st.CacheN, CacheFromTimings, true
}

// CachedOfPrompt is CachedPromptTokens with the prompt count it is a part
// of: the usage's prompt tokens or, from llama.cpp's timings without a
// usage, cache_n + prompt_n. These are the numerator and denominator of a
// cached-token fraction; ok is false when either is unknown. The caller
// judges a pair that does not fit (cached above the prompt).
func (r *Record) CachedOfPrompt() (cached, prompt int, ok bool) {
	n, _, ok := r.CachedPromptTokens()
	switch {
	case !ok:
		return 0, 0, false
	case r.Usage.Known:
		return n, r.Usage.Prompt, true
	}
	// Without a usage the count is the timings' (the usage's own needs a
	// known usage).
	return n, r.ServerTimings.CacheN + r.ServerTimings.PromptN, true
}
