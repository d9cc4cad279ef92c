package stats

import "fmt"

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

// Causes of an invalid ladder step that name the target, never the prober:
// the step measured no one deployment. They are not generator causes (not
// in Causes, no llmprobe_generator_invalid_cause series): only a ladder step
// carries them.
const (
	// CauseIdentityChanged: the target's identity (model or version)
	// changed while the step ran: a deploy.
	CauseIdentityChanged Cause = "identity_changed"
	// CauseTargetRestarted: the target refused connections while the step
	// ran (nothing listening: a restart).
	CauseTargetRestarted Cause = "target_restarted"
)

// StepCauses are the causes only a ladder step carries, in a stable order.
var StepCauses = []Cause{CauseIdentityChanged, CauseTargetRestarted}

func stepAction(c Cause) string {
	switch c {
	case CauseIdentityChanged:
		return "nothing to fix in the prober: the target was deployed during the step; the steps before it stand as a lower bound for the old identity, and the next ladder measures the new one once the target settled"
	case CauseTargetRestarted:
		return "nothing to fix in the prober: the target restarted during the step; the next ladder runs once it answers again and its baseline TTFT is back in range"
	}
	return ""
}

// Cut marks a step invalid with cause (identity_changed or
// target_restarted) and why, also in each class's figures (one step).
func (s *LadderStep) Cut(cause Cause, why string) {
	add := func(v *Validity) {
		if v.Has(cause) {
			return
		}
		v.Valid = false
		v.Causes = append(v.Causes, InvalidCause{Cause: cause, Reason: why, Action: cause.Action()})
	}
	add(&s.Summary.Validity)
	for i := range s.Classes {
		add(&s.Classes[i].Summary.Validity)
	}
}

// CutCause is the step's identity_changed or target_restarted cause, or "".
func (s LadderStep) CutCause() Cause {
	for _, c := range StepCauses {
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
