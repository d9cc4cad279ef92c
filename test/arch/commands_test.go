package arch

import (
	"strings"
	"testing"
)

// assemblers are the packages that only wiring (and what runs a plan it
// assembled: the daemon, /probe) may use to build a run: a command that
// imports one builds a dispatcher itself instead of executing wiring's
// Plan.
var assemblers = []string{"internal/dispatch", "internal/hostload"}

// commandViolations returns, for each command package (cmd/*) in graph,
// the assembling packages it imports.
func commandViolations(graph map[string][]string) []string {
	var out []string
	for pkg, deps := range graph {
		if !strings.HasPrefix(pkg, "cmd/") && !strings.Contains(pkg, "/cmd/") {
			continue
		}
		for _, d := range deps {
			for _, a := range assemblers {
				if d == a {
					out = append(out, pkg+" → "+d+": a command keeps flags and output; wiring.NewPlan assembles the run and the plan executes it")
				}
			}
		}
	}
	return out
}

// TestCommandsAssembleNothing: no command imports dispatch or hostload, so
// no function in cmd/ builds a dispatch group, a ledger's executor or a
// host window: probe and ladder run wiring.Plan, as the daemon does.
func TestCommandsAssembleNothing(t *testing.T) {
	for _, v := range commandViolations(pkgs(t)) {
		t.Error(v)
	}
}

// TestCommandRuleCatches: the rule above can fail.
func TestCommandRuleCatches(t *testing.T) {
	if v := commandViolations(map[string][]string{"cmd/llmprobe": {"internal/wiring", "internal/dispatch"}}); len(v) != 1 {
		t.Errorf("cmd/llmprobe → dispatch: violations %q, want one", v)
	}
	if v := commandViolations(map[string][]string{"internal/daemon": {"internal/dispatch"}, "cmd/llmprobe": {"internal/wiring"}}); len(v) != 0 {
		t.Errorf("allowed edges refused: %q", v)
	}
}
