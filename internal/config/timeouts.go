package config

// FitUnset makes the timeouts left unset fit under a total that was set:
// when written("total") holds, each phase (connect, headers,
// first_content, idle) for which written is false is cut to the total, and
// headers also to a written first_content. A phase written longer than the
// total is kept, for validation to refuse. written names a key relative to
// timeouts ("total", "first_content").
func (to *Timeouts) FitUnset(written func(key string) bool) {
	if !written("total") || to.Total <= 0 {
		return
	}
	for _, p := range []struct {
		key string
		d   *Duration
	}{{"connect", &to.Connect}, {"headers", &to.Headers}, {"first_content", &to.FirstContent}, {"idle", &to.Idle}} {
		limit := to.Total
		if p.key == "headers" && written("first_content") && to.FirstContent > 0 && to.FirstContent < limit {
			limit = to.FirstContent
		}
		if !written(p.key) && *p.d > limit {
			*p.d = limit
		}
	}
}

// writtenTimeouts records, per target, the timeouts keys the layers wrote
// (raw before defaults are filled in), for FitUnset after decoding.
type writtenTimeouts []map[string]bool

func timeoutsWritten(raw map[string]any) writtenTimeouts {
	ts, _ := raw["targets"].([]any)
	w := make(writtenTimeouts, len(ts))
	for i, t := range ts {
		tm, _ := t.(map[string]any)
		to, _ := tm["timeouts"].(map[string]any)
		w[i] = map[string]bool{}
		for k := range to {
			w[i][k] = true
		}
	}
	return w
}

// fit applies FitUnset to each decoded target.
func (w writtenTimeouts) fit(c *Config) {
	for i := range c.Targets {
		if i < len(w) {
			c.Targets[i].Timeouts.FitUnset(func(k string) bool { return w[i][k] })
		}
	}
}
