package ladder

import (
	"bytes"
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ladderresult"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// TestLadderCutByDeployOrRestart: a deploy (the identity changes) or a
// restart (connections refused) inside step 2 stops the ladder there: step
// 1 stands for the old identity as a lower bound, step 2 is invalid with
// the cause, step 3 never runs, and the history line says all of it.
func TestLadderCutByDeployOrRestart(t *testing.T) {
	defer goleak.VerifyNone(t)
	v1, v2 := ladderresult.Identity{Model: "m", Version: "v1"}, ladderresult.Identity{Model: "m", Version: "v2"}
	for _, tc := range []struct {
		name      string
		cause     cause.Cause
		changedTo ladderresult.Identity
	}{
		{"deploy", cause.IdentityChanged, v2},
		{"restart", cause.TargetRestarted, ladderresult.Identity{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ident atomic.Pointer[ladderresult.Identity]
			ident.Store(&v1)
			cfg := baseConfig("cut")
			cfg.Steps, cfg.StepDuration, cfg.Arrival = []float64{10, 20, 30}, time.Second, "constant"
			cfg.Identity = func() ladderresult.Identity { return *ident.Load() }
			var step2 atomic.Int32
			r, g := buildFake(t, cfg, func(led *ledger.Ledger) dispatch.Exec {
				ok := fakeExec(led, 5*time.Millisecond, nil)
				return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
					if rec.Step == 2 && step2.Add(1) >= 3 {
						if tc.cause == cause.TargetRestarted {
							dispatched()
							return ledger.Result{Outcome: ledger.TransportError, Reason: ledger.ReasonConnectionRefused}
						}
						ident.Store(&v2)
					}
					return ok(ctx, rec, dispatched)
				}
			})
			res, err := r.Run(context.Background(), "schedule")
			g.Drain(context.Background(), time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Steps) != 2 {
				t.Fatalf("%d steps ran, want 2 (cut in step 2): %s", len(res.Steps), res.AbortReason)
			}
			s2 := res.Steps[1]
			if s2.Summary.Validity.Valid || s2.CutCause() != tc.cause || !s2.Aborted {
				t.Errorf("step 2: valid %v, cut %q, aborted %v (%s); want invalid, %s", s2.Summary.Validity.Valid, s2.CutCause(), s2.Aborted, s2.AbortReason, tc.cause)
			}
			if res.Identity != v1 || res.Partial != tc.cause || res.ChangedTo != tc.changedTo || res.Complete() {
				t.Errorf("result identity %v partial %q changed to %v", res.Identity, res.Partial, res.ChangedTo)
			}
			if s1 := res.Steps[0]; s1.IdentityStart != v1 || s1.IdentityEnd != v1 {
				t.Errorf("step 1 identities %v → %v, want v1 throughout", s1.IdentityStart, s1.IdentityEnd)
			}
			// Step 1 (10 req/s, 5 ms answers) met its gates: the old identity's
			// capacity is at least 10 req/s, never a measurement, never 0.
			if !res.Steps[0].Summary.Validity.Valid {
				t.Skipf("step 1 invalid (%v): this host was too busy to judge the capacity", res.Steps[0].Summary.Validity.CauseNames())
			}
			if res.CapacityStep != 1 || res.CapacityBound != ladderresult.BoundLower {
				t.Errorf("capacity %g (step %d, %s), want 10 req/s from step 1 as a lower bound", res.Capacity, res.CapacityStep, res.CapacityBound)
			}
			b, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			for _, want := range []string{`"identity":{"model":"m","version":"v1"}`, `"partial":"` + string(tc.cause) + `"`, `"cause":"` + string(tc.cause) + `"`} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("JSON lacks %s", want)
				}
			}
			var back ladderresult.LadderResult
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if back.Identity != res.Identity || back.Partial != res.Partial || back.ChangedTo != res.ChangedTo || back.Steps[0].IdentityEnd != v1 {
				t.Errorf("read back: identity %v partial %q changed to %v", back.Identity, back.Partial, back.ChangedTo)
			}
		})
	}
}

// TestLadderIdentityUnchanged: a ladder whose identity holds is complete,
// and an identity first known during it is no change.
func TestLadderIdentityUnchanged(t *testing.T) {
	defer goleak.VerifyNone(t)
	var ident atomic.Pointer[ladderresult.Identity]
	ident.Store(&ladderresult.Identity{})
	cfg := baseConfig("same")
	cfg.Steps, cfg.StepDuration = []float64{10, 20}, 500*time.Millisecond
	cfg.Identity = func() ladderresult.Identity { return *ident.Load() }
	r, g := buildFake(t, cfg, func(led *ledger.Ledger) dispatch.Exec {
		ok := fakeExec(led, 5*time.Millisecond, nil)
		return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
			ident.Store(&ladderresult.Identity{Model: "m", Version: "v1"})
			return ok(ctx, rec, dispatched)
		}
	})
	res, err := r.Run(context.Background(), "schedule")
	g.Drain(context.Background(), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Complete() || len(res.Steps) != 2 || res.Steps[0].CutCause() != "" || res.Steps[1].CutCause() != "" {
		t.Errorf("partial %q, %d steps: want a complete ladder of 2", res.Partial, len(res.Steps))
	}
}
