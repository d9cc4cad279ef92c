package config

import "fmt"

// Warnings are what a valid configuration does that its author may not
// mean: a class without a latency gate has no latency SLI, and a ladder
// then measures its capacity by errors alone. No default gate is assumed:
// a TTFT that is good for a short chat is bad for a 100k-token prompt, and
// an SLI against a number nobody chose would page on it. `validate` prints
// them and `run` logs them at start; neither refuses the file.
func (c *Config) Warnings() Errors {
	var es Errors
	for i, t := range c.Targets {
		for j, cl := range t.Classes {
			if cl.Gates != (Gates{}) {
				continue
			}
			key := fmt.Sprintf("targets[%d].classes[%d].gates", i, j)
			msg := "no latency gate (ttft, tpot or e2e): class " + cl.Name + " has no latency SLI, only availability"
			if t.Ladder.Enabled {
				msg += ", and its ladder's capacity ignores latency (errors alone stop it)"
			}
			es = append(es, FieldError{Source: c.Source(key), Key: key, Msg: msg + "; set gates.ttft (and gates.e2e) to what its users need"})
		}
	}
	return placed(c.Path, es)
}
