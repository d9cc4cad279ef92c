package ladder

import "strings"

// The abort reasons a caller must tell apart from the rules about the
// target (errors, rejections, TTFT): an interrupt, the generator-invalid
// rule (the prober, not the target, stopped the ladder) and the unsent rule
// (arrivals the prober's own limits held back: its in-flight cap, a rate
// cap, a budget). A step's AbortReason starts with one of them (after
// "mid-step: " when the rule fired inside the step) when it is theirs.
const (
	ReasonInterrupted      = "interrupted"
	ReasonGeneratorInvalid = "generator invalid"
	ReasonUnsent           = "unsent fraction"
	midStep                = "mid-step: "
)

// AbortedBy names which kind of reason a step's AbortReason is:
// ReasonInterrupted, ReasonGeneratorInvalid, ReasonUnsent, or "" for a rule
// about the target (or no abort).
func AbortedBy(stepReason string) string {
	r := strings.TrimPrefix(stepReason, midStep)
	for _, k := range []string{ReasonInterrupted, ReasonGeneratorInvalid, ReasonUnsent} {
		if strings.HasPrefix(r, k) {
			return k
		}
	}
	return ""
}
