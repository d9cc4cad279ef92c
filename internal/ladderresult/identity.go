package ladderresult

import (
	"fmt"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// Identity is what a target said it is (the model it names and the
// version its identity poll reads): the deployment a ladder measured.
// Both are server text, cleaned (sanitize) before they reach here.
type Identity struct {
	Model   string `json:"model,omitempty"`
	Version string `json:"version,omitempty"`
}

// IsZero reports whether nothing is known of the identity.
func (i Identity) IsZero() bool { return i == Identity{} }

// String is the identity in words: "model m version v".
func (i Identity) String() string {
	m, v := i.Model, i.Version
	if m == "" {
		m = "?"
	}
	if v == "" {
		v = "?"
	}
	return fmt.Sprintf("model %s version %s", m, v)
}

// Cut marks a step invalid with c (identity_changed or target_restarted)
// and why, also in each class's figures (one step).
func (s *LadderStep) Cut(c cause.Cause, why string) {
	add := func(v *verdict.Validity) {
		if v.Has(c) {
			return
		}
		v.Valid = false
		v.Causes = append(v.Causes, verdict.InvalidCause{Cause: c, Reason: why, Action: c.Action()})
	}
	add(&s.Summary.Validity)
	for i := range s.Classes {
		add(&s.Classes[i].Summary.Validity)
	}
}

// CutCause is the step's identity_changed or target_restarted cause, or "".
func (s LadderStep) CutCause() cause.Cause {
	for _, c := range cause.Step {
		if s.Summary.Validity.Has(c) {
			return c
		}
	}
	return ""
}

// Complete reports whether the ladder measured one identity from its
// start to its end: no step was cut by a deploy or a restart. Only a
// complete ladder's capacity is compared across identities.
func (r LadderResult) Complete() bool { return r.Partial == "" }

// Judged reports whether some step of the ladder judged the target: its
// generator was valid and it had arrivals. A ladder without one (every
// step invalid, or every valid step's schedule drew no arrival) measured
// nothing: its "no capacity" is no finding about the target.
func (r LadderResult) Judged() bool {
	for _, s := range r.Steps {
		if s.Summary.Validity.Valid && s.Summary.Planned+s.Summary.Pending > 0 {
			return true
		}
	}
	return false
}

// LowerAll makes every capacity of v and classes a lower bound: a partial
// ladder (cut by a deploy or a restart) never measured its limit.
func LowerAll(v *Verdict, classes []ClassVerdict) {
	if v.CapacityStep > 0 {
		v.CapacityBound = BoundLower
	}
	for i := range classes {
		if classes[i].CapacityStep > 0 {
			classes[i].CapacityBound = BoundLower
		}
	}
}
