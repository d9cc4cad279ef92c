package sim

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

func TestPrefixBlocks(t *testing.T) {
	pc := newPrefixCache(100)
	const per = 16 * CharsPerToken        // runes per block
	shared := strings.Repeat("abcd", per) // 4 blocks
	a := pc.blocks("m", []byte(shared+strings.Repeat("x", per)), 16)
	b := pc.blocks("m", []byte(shared+strings.Repeat("y", per+10)), 16)
	if len(a) != 5 || len(b) != 5 {
		t.Fatalf("blocks %d and %d, want 5 full blocks each", len(a), len(b))
	}
	if !slices.Equal(a[:4], b[:4]) || a[4] == b[4] {
		t.Errorf("the shared prefix's blocks differ, or the unique blocks are equal: %x %x", a, b)
	}
	if other := pc.blocks("other-model", []byte(shared), 16); slices.Equal(other, a[:4]) {
		t.Error("another model's blocks are the same: the chain is not rooted at the model")
	}
	if moved := pc.blocks("m", []byte("z"+shared), 16); moved[1] == a[1] {
		t.Error("the same text at another position hashes the same: blocks are not chained")
	}
	// Runes, not bytes: 64 two-byte runes are one block, 63 none.
	if n := len(pc.blocks("m", []byte(strings.Repeat("é", per)), 16)); n != 1 {
		t.Errorf("%d blocks of 64 two-byte runes, want 1", n)
	}
	if n := len(pc.blocks("m", []byte(strings.Repeat("é", per-1)), 16)); n != 0 {
		t.Errorf("%d blocks of 63 runes, want 0", n)
	}
}

// TestPrefixCacheLRU: the cache keeps at most its limit of blocks and
// evicts the least recently used, a chain's tail before its root.
func TestPrefixCacheLRU(t *testing.T) {
	pc := newPrefixCache(5)
	chainA, chainB, chainC := []uint64{1, 2, 3}, []uint64{11, 12, 13}, []uint64{21, 22}
	pc.insert(chainA)
	pc.insert(chainB) // 6 > 5: A's tail (3) goes
	if got := pc.lookup(chainA, 10); got != 2 {
		t.Errorf("after B, A's cached prefix is %d blocks, want 2 (its tail evicted first)", got)
	}
	if got := pc.lookup(chainB, 10); got != 3 {
		t.Errorf("B's cached prefix is %d blocks, want 3", got)
	}
	pc.lookup(chainA, 10) // A used last: B is now the least recently used
	pc.insert(chainC)     // 7 > 5: B's 13 and 12 go
	if got := pc.lookup(chainB, 10); got != 1 {
		t.Errorf("after C, B's cached prefix is %d blocks, want 1", got)
	}
	if got := pc.lookup(chainA, 1); got != 1 {
		t.Errorf("lookup capped at 1 block found %d", got)
	}
	if pc.size() != 5 {
		t.Errorf("size %d, want the limit 5", pc.size())
	}
	pc.setLimit(2)
	if pc.size() != 2 {
		t.Errorf("size %d after the limit fell to 2", pc.size())
	}
	pc.reset()
	if pc.size() != 0 || pc.lookup(chainA, 10) != 0 {
		t.Error("reset left blocks")
	}
}

// prefixPrompt is a prompt of prefix runes of shared text and suffix runes
// of text unique to tag.
func prefixPrompt(prefix, suffix int, tag string) string {
	return strings.Repeat("w", prefix) + strings.Repeat(tag, suffix/len(tag)+1)[:suffix]
}

// TestPrefillCost: a request's prefill costs PrefillPerToken for each
// prompt token not reused from the cache, exactly; with the cache off,
// every token.
func TestPrefillCost(t *testing.T) {
	const perToken = 100 * time.Microsecond
	cfg := testConfig()
	cfg.PrefillPerToken = perToken
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	req := func(tag string) request {
		p := prefixPrompt(4000, 40, tag) // 1,010 tokens: 1,000 shared
		return request{Model: "m", Prompt: []byte(p), PromptChars: len(p)}
	}
	// 4,000 shared runes are 62 whole 64-rune blocks (3,968 runes): 992 tokens.
	tests := []struct {
		name    string
		tag     string
		enabled bool
		cached  int
	}{
		{"cold", "a", true, 0},
		{"shared prefix", "b", true, 992},
		{"same prompt again", "b", true, 1008}, // all but the last token, in whole blocks: 63 blocks
		{"cache off", "c", false, 0},
	}
	for _, tt := range tests {
		lc := s.live.get()
		lc.PrefixCache.Enabled = tt.enabled
		l := s.lookupPrefix(lc, req(tt.tag))
		if l.cached != tt.cached {
			t.Errorf("%s: %d cached tokens, want %d", tt.name, l.cached, tt.cached)
		}
		if want := time.Duration(1010-tt.cached) * perToken; l.prefill != want {
			t.Errorf("%s: prefill %v, want %v", tt.name, l.prefill, want)
		}
		s.prefillDone(l)
	}
}

// cacheUsage posts a non-streaming request with the shared system prompt
// and returns the prompt tokens and cached tokens its usage reports.
func cacheUsage(t *testing.T, c *http.Client, base string, a api, system, user string) (prompt, cached int) {
	t.Helper()
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var path, body string
	switch a {
	case apiChat:
		path, body = "/chat/completions", `{"model":"m","max_tokens":2,"messages":[{"role":"system","content":`+q(system)+`},{"role":"user","content":`+q(user)+`}]}`
	case apiCompletions:
		path, body = "/completions", `{"model":"m","max_tokens":2,"prompt":`+q(system+user)+`}`
	case apiResponses:
		path, body = "/responses", `{"model":"m","max_output_tokens":2,"instructions":`+q(system)+`,"input":`+q(user)+`}`
	case apiMessages:
		path, body = "/messages", `{"model":"m","max_tokens":2,"system":`+q(system)+`,"messages":[{"role":"user","content":`+q(user)+`}]}`
	}
	resp := post(t, c, base+path, body, nil)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v struct {
		Usage struct {
			PromptTokens int `json:"prompt_tokens"`
			InputTokens  int `json:"input_tokens"`
			CacheRead    int `json:"cache_read_input_tokens"`
			Details      struct {
				Cached *int `json:"cached_tokens"`
			} `json:"prompt_tokens_details"`
			InputDetails struct {
				Cached *int `json:"cached_tokens"`
			} `json:"input_tokens_details"`
		} `json:"usage"`
	}
	mustJSON(t, raw, &v)
	u := v.Usage
	switch a {
	case apiResponses:
		if u.InputDetails.Cached == nil {
			t.Fatalf("no input_tokens_details.cached_tokens: %s", raw)
		}
		return u.InputTokens, *u.InputDetails.Cached
	case apiMessages:
		return u.InputTokens + u.CacheRead, u.CacheRead
	}
	if u.Details.Cached == nil {
		t.Fatalf("no prompt_tokens_details.cached_tokens: %s", raw)
	}
	return u.PromptTokens, *u.Details.Cached
}

// TestPrefixCacheUsageAndSwitch: every API reports the prompt tokens its
// request reused, vLLM's prefix-cache counters count them, and POST
// /admin/state {"prefix_cache": false} (a deploy that lost the cache)
// makes every request cold until it is turned on again.
func TestPrefixCacheUsageAndSwitch(t *testing.T) {
	system := strings.Repeat("w", 4000) // 1,000 tokens; 62 whole blocks
	for _, a := range []api{apiChat, apiCompletions, apiResponses, apiMessages} {
		t.Run(apiCases[a].name, func(t *testing.T) {
			s, base := startServer(t, testConfig())
			c := testClient(t)
			steps := []struct {
				name   string
				state  string // posted to /admin/state first, "" = none
				user   string
				cached int
			}{
				{"cold", "", "first question  ", 0},
				{"warm", "", "second question ", 992},
				{"cache off", `{"prefix_cache":false}`, "third question  ", 0},
				{"still off", "", "fourth question ", 0},
				{"on again, cold", `{"prefix_cache":true}`, "fifth question  ", 0},
				{"warm again", "", "sixth question  ", 992},
			}
			queries, hits := 0, 0
			for _, st := range steps {
				if st.state != "" {
					resp := post(t, c, strings.TrimSuffix(base, "/v1")+"/admin/state", st.state, nil)
					resp.Body.Close()
					if resp.StatusCode != http.StatusOK {
						t.Fatalf("%s: /admin/state %s: %s", st.name, st.state, resp.Status)
					}
				}
				prompt, cached := cacheUsage(t, c, base, a, system, st.user)
				if prompt != 1004 || cached != st.cached {
					t.Errorf("%s: usage prompt %d cached %d, want 1004 and %d", st.name, prompt, cached, st.cached)
				}
				if s.State().PrefixCache {
					queries, hits = queries+prompt, hits+cached
				}
			}
			fams := scrapeMetrics(t, c, base)
			if q, _ := value(t, fams, metricPrefixQueries, dto.MetricType_COUNTER, DefaultModel); int(q) != queries {
				t.Errorf("%s %v, want %d (requests that skip the lookup are not queries)", metricPrefixQueries, q, queries)
			}
			if h, _ := value(t, fams, metricPrefixHits, dto.MetricType_COUNTER, DefaultModel); int(h) != hits {
				t.Errorf("%s %v, want %d", metricPrefixHits, h, hits)
			}
			if st := s.State(); !st.PrefixCache || st.PrefixCacheUsedBlocks != 62 || st.PrefixCacheBlocks != 8192 {
				t.Errorf("state %+v: want the cache on with 62 blocks of 8192 used", st)
			}
		})
	}
}

// TestPrefillTime: end to end, a cold 1,010-token prompt at 1 ms per token
// waits at least its 1.01 s of prefill for its first token, and the same
// prefix once cached makes the first token come at least twice as fast
// (18 uncached tokens: 18 ms planned; the bound leaves a busy host room).
func TestPrefillTime(t *testing.T) {
	cfg := testConfig()
	cfg.PrefillPerToken = time.Millisecond
	_, base := startServer(t, cfg)
	c := testClient(t)
	ttft := func(user string) time.Duration {
		body, _ := json.Marshal(map[string]any{"model": "m", "stream": true, "max_tokens": 2,
			"messages": []map[string]string{{"role": "system", "content": strings.Repeat("w", 4000)}, {"role": "user", "content": user}}})
		start := time.Now()
		resp := post(t, c, base+"/chat/completions", string(body), nil)
		defer resp.Body.Close()
		for _, ev := range readSSE(t, resp.Body) {
			if strings.Contains(string(ev.data), `"content":" `) {
				return ev.at.Sub(start)
			}
		}
		t.Fatal("no content")
		return 0
	}
	cold := ttft(strings.Repeat("a", 40))
	warm := ttft(strings.Repeat("b", 40))
	if cold < 1010*time.Millisecond {
		t.Errorf("cold TTFT %v, below the 1.01 s of prefill configured", cold)
	}
	if warm < 18*time.Millisecond || warm > cold/2 {
		t.Errorf("warm TTFT %v: want at least 18 ms and at most half the cold %v", warm, cold)
	}
	t.Logf("cold TTFT %v, warm %v: speedup %.1f", cold, warm, float64(cold)/float64(warm))
}

func TestPrefixCacheConfigValidate(t *testing.T) {
	tests := []struct {
		name string
		mod  func(*Config)
		key  string
	}{
		{"negative prefill", func(c *Config) { c.PrefillPerToken = -time.Microsecond }, "prefill_per_token"},
		{"prefill too long", func(c *Config) { c.PrefillPerToken = 2 * time.Second }, "prefill_per_token"},
		{"no block tokens", func(c *Config) { c.PrefixCache.BlockTokens = 0 }, "prefix_cache"},
		{"no blocks", func(c *Config) { c.PrefixCache.Blocks = 0 }, "prefix_cache"},
		{"too many blocks", func(c *Config) { c.PrefixCache.Blocks = maxCacheBlocks + 1 }, "prefix_cache"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.mod(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("%s: %v, want an error naming %s", tt.name, err, tt.key)
		}
	}
	s, err := New(DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	bad := 0
	if _, err := s.Update(Update{PrefixCacheBlocks: &bad}); err == nil {
		t.Error("an update to 0 cache blocks was taken")
	}
}
