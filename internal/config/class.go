package config

import (
	"encoding/json"
	"fmt"

	"github.com/llmprobe/llmprobe/internal/answercheck"
)

// MaxChecksPerClass bounds classes[].checks: each check's name is a label
// value of llmprobe_answer_checks_total, so a canary class adds at most
// this many checks × (results + failure reasons) series per target.
const MaxChecksPerClass = 32

// The values of classes[].record_answers.
const (
	RecordAnswersNone    = "none"    // a check's record keeps the answer's hash only
	RecordAnswersExcerpt = "excerpt" // and a sanitised excerpt of at most 256 bytes
)

// IsCanary reports whether the class is an answer canary: it has checks,
// which are then its prompts (docs/checks.md).
func (c Class) IsCanary() bool { return len(c.Checks) > 0 }

func validateClass(el *errorList, p string, cl *Class, names map[string]bool) {
	if !ValidName(cl.Name) {
		el.add(p+".name", "want %s (it is a metric label), got %q", NameRule, cl.Name)
	} else if names[cl.Name] {
		el.add(p+".name", "duplicate class name %q", cl.Name)
	}
	names[cl.Name] = true
	if !(cl.Weight > 0) {
		el.add(p+".weight", "must be above 0, got %g", cl.Weight)
	}
	if cl.CacheBustFraction < 0 || cl.CacheBustFraction > 1 {
		el.add(p+".cache_bust_fraction", "want 0..1, got %g", cl.CacheBustFraction)
	}
	if s := cl.Session; s.Enabled() && (s.Turns < 2 || s.Turns > MaxSessionTurns) {
		el.add(p+".session.turns", "want 2..%d (0: no session), got %d", MaxSessionTurns, s.Turns)
	} else if !s.Enabled() && s.Think != "" {
		el.add(p+".session.think", "is set but session.turns is not (want turns 2..%d)", MaxSessionTurns)
	}
	validateChecks(el, p, cl)
}

// validateChecks checks a class's answer checks: at most MaxChecksPerClass,
// each named by the name rule (the name is a label value) and unique in
// the class, with one prompt and one kind, and nothing of the class that
// would change the checks' prompts (a prompt file or dataset, a shared
// prefix, a session, cache busting). A canary class's input and output
// are not used: each check's max_tokens bounds its answer.
func validateChecks(el *errorList, p string, cl *Class) {
	switch cl.RecordAnswers {
	case "", RecordAnswersNone:
	case RecordAnswersExcerpt:
		if !cl.IsCanary() {
			el.add(p+".record_answers", "excerpt keeps a check's answer, and class %s has no checks", cl.Name)
		}
	default:
		el.add(p+".record_answers", "want none or excerpt, got %q", cl.RecordAnswers)
	}
	if !cl.IsCanary() {
		return
	}
	if len(cl.Checks) > MaxChecksPerClass {
		el.add(p+".checks", "at most %d checks a class (each name is a label value), got %d", MaxChecksPerClass, len(cl.Checks))
	}
	conflict := "a canary class sends its checks as its prompts: remove %s, or put the checks in a class of their own"
	if s := cl.Prompt.Source; s != "" && s != "synthetic" {
		el.add(p+".prompt.source", conflict, "the prompt "+s)
	}
	if cl.Prefix.Tokens != 0 {
		el.add(p+".prefix.tokens", conflict, "the shared prefix")
	}
	if cl.Session.Enabled() {
		el.add(p+".session.turns", conflict, "the session")
	}
	if cl.CacheBustFraction != 0 {
		el.add(p+".cache_bust_fraction", conflict, "cache busting (it would change the checks' prompts)")
	}
	seen := map[string]bool{}
	for k := range cl.Checks {
		c := &cl.Checks[k]
		key := fmt.Sprintf("%s.checks[%d]", p, k)
		ok := true
		switch {
		case !ValidName(c.Name):
			el.add(key+".name", "want %s (it is a metric label), got %q", NameRule, c.Name)
			ok = false
		case seen[c.Name]:
			el.add(key+".name", "duplicate check name %q in class %s", c.Name, cl.Name)
			ok = false
		}
		seen[c.Name] = true
		if n := kindsSet(c); n != 1 {
			el.add(key, "set exactly one of expect, json, tool_call, stop, length, model (got %d)", n)
			ok = false
		}
		if (c.Prompt == "") == (len(c.Messages) == 0) {
			el.add(key+".prompt", "set prompt or messages (one of them)")
			ok = false
		}
		if c.MaxTokens < 0 {
			el.add(key+".max_tokens", "want 0 (%d) or more, got %d", answercheck.DefaultMaxTokens, c.MaxTokens)
			ok = false
		}
		if err := jsonValues(c); err != nil {
			el.add(key, "%v", err)
			ok = false
		}
		if ok {
			if err := validateCheck(c); err != nil {
				el.add(key, "%v", err)
			}
		}
	}
}

// validateCheck is the check's own validation (answercheck's Check.Validate:
// patterns compile, schemas compile, the kind's settings are complete),
// when the answercheck package has it.
func validateCheck(c *answercheck.Check) error {
	if v, ok := any(c).(interface{ Validate() error }); ok {
		return v.Validate()
	}
	return nil
}

// jsonValues rewrites a check's JSON Schemas (json.schema, each tool's
// parameters) as encoding/json decodes JSON: objects map[string]any,
// arrays []any, numbers float64, so that a schema written in YAML (whose
// integers decode as int) reaches a JSON Schema validator, and a request
// body, as the JSON it means. A schema that is not JSON is refused.
func jsonValues(c *answercheck.Check) error {
	norm := func(what string, m map[string]any) (map[string]any, error) {
		if m == nil {
			return nil, nil
		}
		b, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("%s is not JSON: %v", what, err)
		}
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("%s is not JSON: %v", what, err)
		}
		return out, nil
	}
	var err error
	if c.JSON != nil {
		if c.JSON.Schema, err = norm("json.schema", c.JSON.Schema); err != nil {
			return err
		}
	}
	if c.Tool != nil {
		for i := range c.Tool.Tools {
			if c.Tool.Tools[i].Parameters, err = norm(fmt.Sprintf("tool_call.tools[%d].parameters", i), c.Tool.Tools[i].Parameters); err != nil {
				return err
			}
		}
	}
	return nil
}

// kindsSet counts the kinds a check sets (exactly one is valid).
func kindsSet(c *answercheck.Check) int {
	n := 0
	for _, set := range []bool{c.Expect != nil, c.JSON != nil, c.Tool != nil, c.Stop != nil, c.Length != nil, c.Model != nil} {
		if set {
			n++
		}
	}
	return n
}
