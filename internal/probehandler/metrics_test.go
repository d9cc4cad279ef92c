package probehandler

import (
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

const ms = time.Millisecond

// okRec is an ok record planned at p, sent lag later, first token ttft
// after p, ended e2e after p, with the chunk gaps and output tokens given.
func okRec(p, lag, ttft, e2e time.Duration, tokens int, gaps ...time.Duration) ledger.Record {
	return ledger.Record{Planned: p, Dispatched: p + lag, FirstContent: p + ttft, End: p + e2e, ChunkGaps: gaps,
		Usage: ledger.Usage{Known: true, Completion: tokens}, Outcome: ledger.OK, Reason: ledger.ReasonStop}
}

func gather(t *testing.T, r result) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := r.registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// TestBurstAggregation: with a burst the worst request decides: success
// only when all are ok, TTFT and e2e the largest among the ok ones (a
// failure's times never count), lag the largest among the sent, tokens
// summed over the ok ones, inter-chunk quantiles over every ok gap.
func TestBurstAggregation(t *testing.T) {
	a := okRec(1*ms, 1*ms, 40*ms, 100*ms, 10, 5*ms, 6*ms, 7*ms)
	b := okRec(51*ms, 3*ms, 90*ms, 130*ms, 12, 9*ms, 30*ms)
	slow := ledger.Record{Planned: 101 * ms, Dispatched: 102 * ms, FirstContent: 900 * ms, End: 2000 * ms, ChunkGaps: []time.Duration{500 * ms},
		Outcome: ledger.Timeout, Reason: ledger.ReasonTotal}
	unsent := ledger.Record{Planned: 151 * ms, Outcome: ledger.Unsent, Reason: ledger.ReasonBudget}
	fams := gather(t, result{records: []ledger.Record{a, b, slow, unsent}, planned: 4, duration: 2 * time.Second})
	g := func(name string) float64 { return fams[name].GetMetric()[0].GetGauge().GetValue() }
	if g(mSuccess) != 0 || g(mRequests) != 4 || g(mDuration) != 2 {
		t.Errorf("success %v requests %v duration %v", g(mSuccess), g(mRequests), g(mDuration))
	}
	if g(mTTFT) != 0.090 || g(mE2E) != 0.130 || g(mTokens) != 22 || g(mLag) != 0.003 {
		t.Errorf("ttft %v e2e %v tokens %v lag %v, want 0.09 0.13 22 0.003", g(mTTFT), g(mE2E), g(mTokens), g(mLag))
	}
	s := fams[mInterChunk].GetMetric()[0].GetSummary()
	q := map[float64]float64{}
	for _, x := range s.GetQuantile() {
		q[x.GetQuantile()] = x.GetValue()
	}
	// The ok gaps: 5 6 7 9 30 ms (the timed-out request's 500 ms is out).
	if s.GetSampleCount() != 5 || q[0.5] != 0.007 || q[1] != 0.030 || q[0.99] != 0.030 {
		t.Errorf("inter-chunk count %d quantiles %v", s.GetSampleCount(), q)
	}
	count := map[string]float64{}
	for _, m := range fams[mOutcome].GetMetric() {
		count[m.GetLabel()[0].GetValue()+"/"+m.GetLabel()[1].GetValue()] = m.GetGauge().GetValue()
	}
	if count["ok/stop"] != 2 || count["timeout/total"] != 1 || count["unsent/budget"] != 1 || len(count) != closedSetSize() {
		t.Errorf("outcomes %v", count)
	}

	// All ok: success; a record still missing (planned, never ended): not.
	if fams := gather(t, result{records: []ledger.Record{a, b}, planned: 2}); fams[mSuccess].GetMetric()[0].GetGauge().GetValue() != 1 {
		t.Error("two ok of two: not a success")
	}
	if fams := gather(t, result{records: []ledger.Record{a}, planned: 2}); fams[mSuccess].GetMetric()[0].GetGauge().GetValue() != 0 {
		t.Error("one of two ended: a success")
	}
	// Nothing sent: no latency, no lag; an empty inter-chunk summary.
	fams = gather(t, result{records: []ledger.Record{unsent}, planned: 1})
	for _, name := range []string{mTTFT, mE2E, mTokens, mLag} {
		if fams[name] != nil {
			t.Errorf("%s present with nothing sent", name)
		}
	}
	if s := fams[mInterChunk].GetMetric()[0].GetSummary(); s.GetSampleCount() != 0 || len(s.GetQuantile()) != 0 {
		t.Errorf("empty inter-chunk summary %v", s)
	}
}

func TestBurstSchedule(t *testing.T) {
	b := &burst{n: 3, spacing: 250 * ms}
	var got []time.Duration
	for {
		off, ok := b.Next()
		if !ok {
			break
		}
		got = append(got, off)
	}
	if len(got) != 3 || got[0] != 0 || got[1] != 250*ms || got[2] != 500*ms {
		t.Errorf("offsets %v", got)
	}
}

// TestCollectorGivesUp: a probe that stops waiting unregisters what it
// planned; the record's later end passes by.
func TestCollectorGivesUp(t *testing.T) {
	c := NewCollector()
	led := ledger.New(time.Now(), c)
	r := c.start()
	rec := led.Plan(ledger.Meta{Target: "t"}, led.Now())
	r.plan(rec)
	ended, planned := r.wait(20 * ms)
	if len(ended) != 0 || planned != 1 || c.pending() != 0 {
		t.Errorf("ended %d planned %d pending %d", len(ended), planned, c.pending())
	}
	led.MarkDispatched(rec)
	if err := led.Finish(rec, ledger.OK, ledger.ReasonStop, ""); err != nil {
		t.Fatal(err)
	}
	if ended, _ := r.snapshot(); len(ended) != 0 {
		t.Error("a record reached a probe that stopped waiting")
	}
}

// closedSetSize is the number of outcome/reason pairs in the ledger's
// closed set: one probe_llm_outcome series each.
func closedSetSize() int {
	n := 0
	for _, o := range ledger.Outcomes {
		n += len(ledger.ReasonsFor(o))
	}
	return n
}
