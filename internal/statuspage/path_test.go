package statuspage

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

func TestBuildSaysBufferedStreams(t *testing.T) {
	now := time.Date(2026, 12, 4, 22, 0, 0, 0, time.UTC)
	mem := NewMemory()
	in := Input{Now: now, Targets: []TargetInput{{Name: "gw", Memory: mem, Verdict: verdict.Validity{Valid: true}}}}
	if got := Build(in).Targets[0].Buffered; got != nil {
		t.Fatalf("a target with no records has a buffered fact %+v", got)
	}
	rec := func(o ledger.Outcome, r ledger.Reason, buffered bool) *ledger.Record {
		return &ledger.Record{Target: "gw", Class: "c", Traffic: ledger.TrafficBaseline, Planned: 1, Dispatched: 2,
			FirstContent: 700 * time.Millisecond, End: 701 * time.Millisecond, ContentEvents: 32, Outcome: o, Reason: r, BufferedByIntermediary: buffered}
	}
	mem.Record(now, rec(ledger.OK, ledger.ReasonStop, false), stats.Gates{})
	if got := Build(in).Targets[0].Buffered; got != nil {
		t.Fatalf("no flagged stream, yet a buffered fact %+v", got)
	}
	mem.Record(now.Add(time.Second), rec(ledger.OK, ledger.ReasonStop, true), stats.Gates{})
	mem.Record(now.Add(2*time.Second), rec(ledger.StreamError, ledger.ReasonTruncated, true), stats.Gates{})
	got := Build(in).Targets[0].Buffered
	want := Buffered{Streams: 1, OK: 2, Last: now.Add(time.Second), Verdict: ledger.BufferedVerdict, Settings: ledger.BufferedSettings}
	if got == nil || *got != want {
		t.Errorf("buffered fact %+v, want %+v", got, want)
	}
}
