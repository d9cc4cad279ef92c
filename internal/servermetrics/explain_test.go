package servermetrics

import "testing"

func TestExplain(t *testing.T) {
	g := func(r Role, start, mn, mx, last float64) Stat {
		return Stat{Role: r, Kind: Gauge, Gauge: &GaugeStat{Start: start, Min: mn, Max: mx, Last: last, Samples: 3}}
	}
	h := func(r Role, n, p95 float64, lower bool) Stat {
		return Stat{Role: r, Kind: Histogram, Histogram: &HistogramStat{Count: n, P50: &Quantile{Value: p95 / 2}, P95: &Quantile{Value: p95, LowerBound: lower}}}
	}
	tests := []struct {
		name string
		v    View
		want string
	}{
		{"the knee", View{Flavour: VLLM, Stats: []Stat{g(Waiting, 0, 0, 37, 37), g(KVCache, 0.1, 0.1, 0.98, 0.98)}},
			"waiting queue grew from 0 to 37; KV cache up to 98 %"},
		{"queue grew then drained", View{Stats: []Stat{g(Waiting, 2, 0, 40, 0)}}, "waiting queue grew from 2 to 40 (0 at the end)"},
		{"no queue", View{Stats: []Stat{g(Waiting, 0, 0, 0, 0)}}, "no waiting queue"},
		{"steady queue", View{Stats: []Stat{g(Waiting, 5, 5, 5, 5)}}, "waiting queue steady at 5"},
		{"queue fell", View{Stats: []Stat{g(Waiting, 9, 1, 9, 1)}}, "waiting queue fell from 9 to 1"},
		{"queue dipped and came back", View{Stats: []Stat{g(Waiting, 9, 1, 9, 9)}}, "waiting queue between 1 and 9"},
		{"latencies and counts", View{Stats: []Stat{g(Running, 1, 1, 64, 60), h(TTFT, 412, 1.234, false), h(ITL, 9000, 0.0453, false), h(TPOT, 400, 0.04, false), h(QueueTime, 412, 95, true)}},
			"running up to 64; server TTFT p95 1.23s (n=412); server ITL p95 45.3ms (n=9000); server queue time p95 ≥ 95s (n=412)"},
		{"TPOT when no ITL", View{Stats: []Stat{h(TPOT, 30, 0.000850, false)}}, "server TPOT p95 850µs (n=30)"},
		{"preemptions and resets", View{Stats: []Stat{
			{Role: Preemptions, Kind: Counter, Counter: &CounterStat{Increase: 12}},
			{Role: Finished, Metric: "vllm:request_success_total", Kind: Counter, Counter: &CounterStat{Increase: 3, Resets: 1, LowerBound: true}},
		}}, "12 preemptions; server counters reset during the window (a restart?): vllm:request_success_total went down; counts are lower bounds"},
		{"many resets named, at most three", View{Stats: []Stat{
			{Metric: "a_total", Kind: Counter, Counter: &CounterStat{Resets: 1}},
			{Metric: "b_total", Kind: Counter, Counter: &CounterStat{Resets: 2}},
			{Metric: "c_seconds", Kind: Histogram, Histogram: &HistogramStat{Resets: 1}},
			{Metric: "d_total", Kind: Counter, Counter: &CounterStat{Resets: 1}},
		}}, "server counters reset during the window (a restart?): a_total, b_total, c_seconds and 1 more went down; counts are lower bounds"},
		{"series missing at the start, no reset", View{Stats: []Stat{h(TTFT, 412, 1.234, false),
			{Role: TTFT, Kind: Histogram, Histogram: &HistogramStat{Count: 3, LowerBound: true}}}},
			"server TTFT p95 1.23s (n=412); some server series were missing at the start or left out: counts are lower bounds"},
		{"a hostile bucket bound", View{Stats: []Stat{h(TTFT, 10, 1e300, false), h(ITL, 10, 2e6, false)}},
			"server TTFT p95 1e+300s (n=10); server ITL p95 2e+06s (n=10)"},
		{"failed scrapes and no end", View{Scrapes: 28, FailedScrapes: 3, Partial: true, Stats: []Stat{g(Waiting, 0, 0, 0, 0)}},
			"no waiting queue; 3 of 31 scrapes failed; no end scrape"},
		{"failed scrapes with their cause", View{Scrapes: 5, FailedScrapes: 1, FailureCause: "timeout after 2s", Stats: []Stat{g(Waiting, 0, 0, 0, 0)}},
			"no waiting queue; 1 of 6 scrapes failed (last: timeout after 2s)"},
		{"llama.cpp: slots, deferred, tokens", View{Flavour: LlamaCPP, Slots: 4, Stats: []Stat{g(Running, 0, 0, 4, 0), g(Waiting, 0, 0, 4, 0),
			{Role: PromptTokens, Kind: Counter, Counter: &CounterStat{Increase: 214, Rate: 21.4}},
			{Role: GenTokens, Kind: Counter, Counter: &CounterStat{Increase: 2900, Rate: 290}},
			{Role: GenSeconds, Kind: Counter, Counter: &CounterStat{Increase: 11.6, Rate: 1.16}},
			g(SlotsPerDec, 3.3, 2.9, 3.3, 2.9)}},
			"deferred requests grew from 0 to 4 (0 at the end); slots busy up to 4 of 4; 214 prompt tokens (21.4/s); 2900 tokens generated (290/s; 250/s per sequence)"},
		{"llama.cpp: no slot busy when scraped", View{Flavour: LlamaCPP, Slots: 4, Stats: []Stat{g(Running, 0, 0, 0, 0), g(Waiting, 0, 0, 0, 0)}},
			"no deferred requests; no slot busy at any scrape"},
		{"a rate of thousands, never in exponent form", View{Flavour: LlamaCPP, Stats: []Stat{
			{Role: GenTokens, Kind: Counter, Counter: &CounterStat{Increase: 10752, Rate: 1036.4}}}},
			"10752 tokens generated (1036/s)"},
		{"fractional gauge", View{Stats: []Stat{g(Running, 0.5, 0.5, 2.25, 2.25)}}, "running up to 2.25"},
		{"prefix cache hits", View{Flavour: VLLM, Stats: []Stat{
			{Role: PrefixQueries, Kind: Counter, Counter: &CounterStat{Increase: 20216}},
			{Role: PrefixHits, Kind: Counter, Counter: &CounterStat{Increase: 15872}}}},
			"prefix cache hit 79 % of 20216 prompt tokens (15872)"},
		{"prefix cache hits above the queries: no fraction", View{Flavour: VLLM, Stats: []Stat{
			{Role: PrefixQueries, Kind: Counter, Counter: &CounterStat{Increase: 10}},
			{Role: PrefixHits, Kind: Counter, Counter: &CounterStat{Increase: 11}},
			g(Waiting, 0, 0, 0, 0)}},
			"no waiting queue"},
		{"nothing known", View{Flavour: None}, "no known server metrics"},
		{"nothing of the flavour", View{Flavour: SGLang}, "no server metrics of sglang exposed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Explain(tt.v); got != tt.want {
				t.Errorf("Explain\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}
