package fleet

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/stats"
)

// TestClassLagLimitDisagrees: a class's figures are merged from every
// shard's part of that class. A report whose class counted dispatch lags
// against another limit than its every-class part is refused (its class
// would not merge); and should a class still not merge, the step is
// invalid with why, never a class of zeros judged as if measured on a
// valid step.
func TestClassLagLimitDisagrees(t *testing.T) {
	const n, s = 2, 600
	l := benchCoordinator(t, n, float64(n*s)/60)
	g := gathered{reports: map[int]*StepReport{}, missing: map[int]string{}}
	for shard := range n {
		var r StepReport
		if err := json.Unmarshal(benchReport(t, l, shard, s), &r); err != nil {
			t.Fatal(err)
		}
		if err := l.checkReport(&r, "t-1", 1, shard); err != nil {
			t.Fatalf("shard %d: a true report refused: %v", shard, err)
		}
		g.reports[shard] = &r
	}
	if step, _, _ := l.merge(1, g); !step.Summary.Validity.Valid || !step.Classes[0].Summary.Validity.Valid || step.Classes[0].Summary.Planned != n*s {
		t.Fatalf("the true reports: step valid %v, class valid %v with %d planned (want %d): %v", step.Summary.Validity.Valid,
			step.Classes[0].Summary.Validity.Valid, step.Classes[0].Summary.Planned, n*s, step.Summary.Validity.Reasons())
	}

	// Shard 1's class counted against twice the limit.
	bad := *g.reports[1]
	bad.Classes = map[string]stats.ShardSummary{}
	for name, p := range g.reports[1].Classes {
		p.LagLimitNS *= 2
		bad.Classes[name] = p
	}
	cp := bad
	if err := l.checkReport(&cp, "t-1", 1, 1); err == nil || !strings.Contains(err.Error(), "dispatch lag") {
		t.Errorf("a class counted against another lag limit: checked as %v, want refused naming the limit", err)
	}

	// Merged anyway (as if it had been let through): the step is invalid,
	// saying which class did not merge.
	g.reports[1] = &bad
	step, _, _ := l.merge(1, g)
	reasons := strings.Join(step.Summary.Validity.Reasons(), "; ")
	if step.Summary.Validity.Valid || !strings.Contains(reasons, "class chat") {
		t.Errorf("a class that does not merge: step valid %v (%s), want invalid naming the class", step.Summary.Validity.Valid, reasons)
	}
	if c := step.Classes[0].Summary; c.Validity.Valid {
		t.Errorf("class chat: %d planned, valid: zeros judged as if measured", c.Planned)
	}
}
