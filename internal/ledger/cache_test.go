package ledger

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestUsageWithCache(t *testing.T) {
	valid := CheckUsage(1000, 16, 0)
	tests := []struct {
		name  string
		usage Usage
		rep   CacheReport
		want  Usage
	}{
		{"nothing reported", valid, CacheReport{}, valid},
		{"reported zero is known", valid, CacheReport{HasRead: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CachedPrompt: KnownCount(0)}},
		{"read and write", valid, CacheReport{Read: 800, HasRead: true, Write: 150, HasWrite: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CachedPrompt: KnownCount(800), CacheWrite: KnownCount(150)}},
		{"all of the prompt", valid, CacheReport{Read: 1000, HasRead: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CachedPrompt: KnownCount(1000)}},
		{"negative read", valid, CacheReport{Read: -1, HasRead: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CacheInvalid: true}},
		{"read above the prompt", valid, CacheReport{Read: 1001, HasRead: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CacheInvalid: true}},
		{"huge read", valid, CacheReport{Read: 1 << 62, HasRead: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CacheInvalid: true}},
		{"write and read above the prompt", valid, CacheReport{Read: 600, HasRead: true, Write: 600, HasWrite: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CachedPrompt: KnownCount(600), CacheInvalid: true}},
		{"negative write", valid, CacheReport{Write: -5, HasWrite: true},
			Usage{Known: true, Prompt: 1000, Completion: 16, CacheInvalid: true}},
		{"usage itself invalid", CheckUsage(-1, 16, 0), CacheReport{Read: 10, HasRead: true}, Usage{Invalid: true}},
	}
	for _, tt := range tests {
		if got := tt.usage.WithCache(tt.rep); got != tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestCachedPromptTokens(t *testing.T) {
	usage := CheckUsage(1855, 8, 0)
	timings := func(cacheN, promptN int) *ServerTimings { return &ServerTimings{CacheN: cacheN, PromptN: promptN} }
	tests := []struct {
		name string
		rec  Record
		n    int
		src  string
		ok   bool
	}{
		{"unknown", Record{Usage: usage}, 0, "", false},
		{"usage", Record{Usage: usage.WithCache(CacheReport{Read: 1834, HasRead: true})}, 1834, CacheFromUsage, true},
		{"usage zero", Record{Usage: usage.WithCache(CacheReport{HasRead: true})}, 0, CacheFromUsage, true},
		{"usage wins over timings", Record{Usage: usage.WithCache(CacheReport{Read: 1834, HasRead: true}), ServerTimings: timings(0, 1855)}, 1834, CacheFromUsage, true},
		{"timings", Record{Usage: usage, ServerTimings: timings(1834, 21)}, 1834, CacheFromTimings, true},
		{"timings without usage", Record{ServerTimings: timings(30, 1)}, 30, CacheFromTimings, true},
		{"timings disagree with usage", Record{Usage: usage, ServerTimings: timings(1900, 21)}, 0, "", false},
		{"invalid timings", Record{Usage: usage, ServerTimings: &ServerTimings{Invalid: true}}, 0, "", false},
		{"invalid usage cache", Record{Usage: usage.WithCache(CacheReport{Read: -3, HasRead: true}), ServerTimings: timings(1834, 21)}, 0, "", false},
		// A ledger file read back may pair a cached count with an unknown
		// usage (WithCache never does): not believed.
		{"cached count on an unknown usage", Record{Usage: Usage{CachedPrompt: KnownCount(5)}}, 0, "", false},
		{"cached count on an unknown usage, with timings", Record{Usage: Usage{CachedPrompt: KnownCount(5)}, ServerTimings: timings(30, 1)}, 30, CacheFromTimings, true},
	}
	for _, tt := range tests {
		n, src, ok := tt.rec.CachedPromptTokens()
		if n != tt.n || src != tt.src || ok != tt.ok {
			t.Errorf("%s: (%d, %q, %v), want (%d, %q, %v)", tt.name, n, src, ok, tt.n, tt.src, tt.ok)
		}
		c, p, ok := tt.rec.CachedOfPrompt()
		if ok != tt.ok || c != tt.n || ok && p == 0 {
			t.Errorf("%s: CachedOfPrompt (%d, %d, %v), want (%d, >0, %v)", tt.name, c, p, ok, tt.n, tt.ok)
		}
	}
}

// TestUsageCacheJSON: in the ledger's JSON an unknown cache count is absent
// and a reported 0 is 0, and both read back as they were.
func TestUsageCacheJSON(t *testing.T) {
	tests := []struct {
		usage Usage
		json  string
	}{
		{Usage{Known: true, Prompt: 5, Completion: 2}, `{"known":true,"prompt_tokens":5,"completion_tokens":2}`},
		{Usage{Known: true, Prompt: 5, Completion: 2, CachedPrompt: KnownCount(0)}, `{"known":true,"prompt_tokens":5,"completion_tokens":2,"cached_prompt_tokens":0}`},
		{Usage{Known: true, Prompt: 5, Completion: 2, CachedPrompt: KnownCount(4), CacheWrite: KnownCount(1)},
			`{"known":true,"prompt_tokens":5,"completion_tokens":2,"cached_prompt_tokens":4,"cache_write_tokens":1}`},
		{Usage{Known: true, Prompt: 5, Completion: 2, CacheInvalid: true}, `{"known":true,"prompt_tokens":5,"completion_tokens":2,"cache_invalid":true}`},
	}
	for _, tt := range tests {
		b, err := json.Marshal(tt.usage)
		if err != nil || string(b) != tt.json {
			t.Errorf("marshal %+v: %s, %v; want %s", tt.usage, b, err, tt.json)
			continue
		}
		var back Usage
		if err := json.Unmarshal(b, &back); err != nil || back != tt.usage {
			t.Errorf("round trip of %s: %+v, %v", b, back, err)
		}
	}
	var u Usage
	if err := json.Unmarshal([]byte(`{"cached_prompt_tokens":"many"}`), &u); err == nil || !strings.Contains(err.Error(), "token count") {
		t.Errorf("a count that is not a number: err %v", err)
	}
}
