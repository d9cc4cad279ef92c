package config

import "fmt"

// Warnings are what a valid configuration does that its author may not
// mean: a class without a latency gate has no latency SLI, and a ladder
// then measures its capacity by errors alone. No default gate is assumed:
// a TTFT that is good for a short chat is bad for a 100k-token prompt, and
// an SLI against a number nobody chose would page on it. `validate` prints
// them and `run` logs them at start; neither refuses the file. A canary
// class (checks) is the other way round: gates on it are what is unusual.
func (c *Config) Warnings() Errors {
	var es Errors
	for i, t := range c.Targets {
		for j, cl := range t.Classes {
			key := fmt.Sprintf("targets[%d].classes[%d].gates", i, j)
			if cl.IsCanary() { // answers are its SLI: a latency gate is unusual, none expected
				if !cl.Gates.IsZero() {
					es = append(es, FieldError{Source: c.Source(key), Key: key, Msg: "latency gates on canary class " + cl.Name +
						" (it has checks): its requests are short and few, and its latency joins the target's figures anyway; a gate here is unusual"})
				}
				continue
			}
			if !cl.Gates.IsZero() {
				continue
			}
			msg := "no latency gate (ttft, tpot or e2e): class " + cl.Name + " has no latency SLI, only availability"
			if t.Ladder.Enabled {
				msg += ", and its ladder's capacity ignores latency (errors alone stop it)"
			}
			es = append(es, FieldError{Source: c.Source(key), Key: key, Msg: msg + "; set gates.ttft (and gates.e2e) to what its users need"})
		}
	}
	return placed(c.Path, es)
}
