package stats

import (
	"math"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// prefixRec is an ok record of class c with a TTFT, and, when prompt > 0,
// a usage of prompt tokens of which cached were reported cached (cached <
// 0: not reported).
func prefixRec(c string, ttft time.Duration, prompt, cached int) ledger.Record {
	r := okRec(0, ms, ttft, ttft+10*ms, 2)
	r.Class = c
	if prompt > 0 {
		r.Usage.Prompt = prompt
		if cached >= 0 {
			r.Usage.CachedPrompt = ledger.KnownCount(cached)
		}
	}
	return r
}

// TestPrefixSpeedup: cold TTFT over cached TTFT at p50 and p95, ok
// records only, judged from PrefixMinSample TTFTs a side; cached tokens
// summed over the records that reported them (usage, or llama.cpp's
// timings when usage says nothing), "not reported" when none did.
func TestPrefixSpeedup(t *testing.T) {
	pairs := map[string]string{"chat": "chat-cold"}
	many := func(c string, n int, ttft time.Duration, prompt, cached int) []ledger.Record {
		var out []ledger.Record
		for i := range n {
			out = append(out, prefixRec(c, ttft+time.Duration(i)*ms, prompt, cached))
		}
		return out
	}
	cases := []struct {
		name           string
		recs           []ledger.Record
		judged         bool
		p50, p95       float64
		frac, coldFrac float64 // -1: not reported
	}{
		{"judged", append(many("chat", 20, 100*ms, 1000, 900), many("chat-cold", 20, 300*ms, 1000, 0)...),
			true, 309.0 / 109, 318.0 / 118, 0.9, 0},
		{"too few cached", append(many("chat", PrefixMinSample-1, 100*ms, 1000, 900), many("chat-cold", 20, 300*ms, 1000, 0)...),
			false, 0, 0, 0.9, 0},
		{"too few cold", append(many("chat", 20, 100*ms, 1000, 900), many("chat-cold", PrefixMinSample-1, 300*ms, 1000, 0)...),
			false, 0, 0, 0.9, 0},
		// p50 judged, p95 not: below PrefixTailMinSample a p95 is a maximum.
		{"the minimum, not reported", append(many("chat", PrefixMinSample, 100*ms, 1000, -1), many("chat-cold", PrefixMinSample, 100*ms, 0, -1)...),
			true, 1, 0, -1, -1},
		{"p95 one short of its minimum", append(many("chat", PrefixTailMinSample-1, 100*ms, 1000, 900), many("chat-cold", 20, 300*ms, 1000, 0)...),
			true, 309.0 / 109, 0, 0.9, 0},
		{"failures and other classes ignored", append(append(many("chat", 10, 100*ms, 1000, 500), many("chat-cold", 10, 200*ms, 1000, 0)...),
			failRec(0, ms, 5*time.Second, ledger.Timeout, ledger.ReasonTotal), prefixRec("other", time.Hour, 1000, 1000)),
			true, 204.0 / 104, 0, 0.5, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(Config{PrefixPairs: pairs}, tc.recs)
			if len(s.Prefix) != 1 {
				t.Fatalf("prefix %+v", s.Prefix)
			}
			f := s.Prefix[0]
			if f.Class != "chat" || f.ColdClass != "chat-cold" || f.Judged != tc.judged {
				t.Fatalf("%+v", f)
			}
			if tc.judged {
				want50 := float64(f.ColdTTFT.P50) / float64(f.CachedTTFT.P50)
				if math.Abs(f.SpeedupP50-want50) > 1e-9 || math.Abs(f.SpeedupP50-tc.p50) > 0.05 || math.Abs(f.SpeedupP95-tc.p95) > 0.05 {
					t.Errorf("speedups %.3f %.3f, want %.3f %.3f", f.SpeedupP50, f.SpeedupP95, tc.p50, tc.p95)
				}
			} else if f.SpeedupP50 != 0 || f.SpeedupP95 != 0 {
				t.Errorf("not judged, yet speedups %g %g", f.SpeedupP50, f.SpeedupP95)
			}
			for _, side := range []struct {
				got  CacheTokens
				want float64
			}{{f.Cached, tc.frac}, {f.Cold, tc.coldFrac}} {
				if side.want < 0 {
					if side.got.Known || side.got.Records != 0 {
						t.Errorf("not reported, yet %+v", side.got)
					}
				} else if !side.got.Known || math.Abs(side.got.Fraction-side.want) > 1e-9 {
					t.Errorf("cached %+v, want fraction %g", side.got, side.want)
				}
			}
		})
	}
	if s := Summarize(Config{}, many("chat", 20, ms, 10, 5)); s.Prefix != nil {
		t.Errorf("figures without pairs: %+v", s.Prefix)
	}
}

// TestCacheTokensFromTimings: llama.cpp's timings stand in for a usage
// without a cache count (prompt = cache_n + prompt_n when the usage is
// unknown); a disagreeing or invalid account is not counted.
func TestCacheTokensFromTimings(t *testing.T) {
	var c CacheTokens
	r := prefixRec("chat", ms, 0, -1)
	r.Usage = ledger.Usage{}
	r.ServerTimings = &ledger.ServerTimings{CacheN: 750, PromptN: 50}
	c.add(&r)
	bad := prefixRec("chat", ms, 900, -1) // usage 900 against timings 800: neither believed
	bad.ServerTimings = &ledger.ServerTimings{CacheN: 750, PromptN: 50}
	c.add(&bad)
	inv := prefixRec("chat", ms, 800, -1)
	inv.ServerTimings = &ledger.ServerTimings{CacheN: 750, PromptN: 50, Invalid: true}
	c.add(&inv)
	if c = c.done(); !c.Known || c.Records != 1 || c.Cached != 750 || c.Prompt != 800 || c.Fraction != 750.0/800 {
		t.Errorf("%+v", c)
	}
}
