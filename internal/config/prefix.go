package config

import "fmt"

// validateColdTwins checks the shared-prefix keys of a target's classes
// that config can check alone: what a prefix class cannot also be, that
// prefix keys are not set without prefix.tokens, and that no class takes
// the name of a generated cold twin. Ranges and the group choice are
// checked by workload (wiring.Checks).
func validateColdTwins(el *errorList, p string, classes []Class) {
	index := map[string]int{}
	for j, cl := range classes {
		if _, dup := index[cl.Name]; !dup {
			index[cl.Name] = j
		}
	}
	for j, cl := range classes {
		cp := fmt.Sprintf("%s.classes[%d]", p, j)
		if !cl.HasPrefix() {
			if cl.Prefix != (Prefix{}) {
				el.add(cp+".prefix.tokens", "required (above 0) when other prefix keys are set")
			}
			if cl.ColdTwin != (ColdTwin{}) {
				el.add(cp+".cold_twin.weight", "only a shared-prefix class (prefix.tokens) has a cold twin")
			}
			continue
		}
		twin := ColdTwinName(cl.Name)
		if ValidName(cl.Name) && !ValidName(twin) {
			el.add(cp+".name", "%q is too long for a shared-prefix class: its cold twin %q must be %s", cl.Name, twin, NameRule)
		}
		if k, taken := index[twin]; taken {
			el.add(fmt.Sprintf("%s.classes[%d].name", p, k), "%q is the name of the cold twin generated for the shared-prefix class %q (classes[%d]): rename this class", twin, cl.Name, j)
		}
		if !(cl.ColdTwin.Weight >= 0) {
			el.add(cp+".cold_twin.weight", "want 0 (the class's weight) or above, got %g", cl.ColdTwin.Weight)
		}
		if cl.CacheBustFraction != 0 {
			el.add(cp+".cache_bust_fraction", "a shared-prefix class is never cache busted (its cold twin measures the uncached prompt); want 0, got %g", cl.CacheBustFraction)
		}
		if s := cl.Prompt.Source; s != "" && s != "synthetic" {
			el.add(cp+".prompt.source", "a shared-prefix class generates its prompts: want synthetic, got %q", s)
		}
	}
}
