package config

// defaults are the top-level built-in values (the first koanf layer).
func defaults() map[string]any {
	return map[string]any{
		"admin.listen":              ":9464",
		"admin.web_config_file":     "",
		"log.level":                 "info",
		"log.format":                "auto",
		"ledger.dir":                "",
		"ledger.max_size_mb":        100,
		"ledger.max_age":            "168h",
		"ledger.keep":               10,
		"ledger.debug_keep":         200,
		"otel.enabled":              false,
		"otel.tracing":              false,
		"drain.timeout":             "30s",
		"limits.max_rate":           100.0,
		"limits.max_buffered_bytes": DefaultMaxBufferedBytes,
		"region":                    "",
	}
}

// targetDefaults fill keys a target entry leaves out. Maps merge key by key,
// except the atomic ones (a distribution is replaced whole).
func targetDefaults() map[string]any {
	return map[string]any{
		"api":           "openai-chat",
		"max_in_flight": 64,
		"ttft_boundary": "content",
		"usage_deltas":  false,
		"retries":       map[string]any{"max_attempts": 0, "backoff": "100ms", "max_backoff": "10s", "jitter": 0.5},
		"cancellation":  map[string]any{"fraction": 0.0, "delay": "0s", "max_delay": "0s"},
		"timeouts": map[string]any{
			"connect": "5s", "headers": "30s", "first_content": "60s", "idle": "30s", "total": "5m",
		},
		"budget":         map[string]any{"tokens_per_day": 0, "requests_per_day": 0, "zone": "UTC"},
		"server_metrics": map[string]any{"url": "", "interval": "2s", "timeout": "2s", "flavour": "auto"},
		"identity":       map[string]any{"poll_every": "1m"},
		"baseline":       map[string]any{"enabled": true, "rate": 0.2, "arrival": "poisson", "seed": 0},
		"ladder": map[string]any{
			"enabled":       false,
			"schedule":      map[string]any{"zone": "UTC"},
			"step_duration": "60s",
			"gap":           "10s",
			"arrival":       "poisson",
			"abort": map[string]any{
				"error_fraction": 0.5, "rejection_fraction": 0.5, "ttft_gate_multiple": 5.0,
				"on_unsent": true, "unsent_fraction": 0.01, "on_generator_invalid": true,
			},
			"good_fraction_target":   0.9,
			"knee_factor":            2.0,
			"max_lag_p99":            "10ms",
			"run_on_identity_change": false,
			"run_on_start":           false,
			"stop_at":                "capacity",
			"baseline_settle":        "0s",
		},
	}
}

// classDefaults fill keys a class entry leaves out.
func classDefaults() map[string]any {
	return map[string]any{
		"weight":              1.0,
		"prompt":              map[string]any{"source": "synthetic"},
		"input":               map[string]any{"dist": "fixed", "value": 128},
		"output":              map[string]any{"dist": "fixed", "value": 128},
		"gates":               map[string]any{"ttft": "0s", "tpot": "0s", "e2e": "0s"},
		"cache_bust_fraction": 0.0,
	}
}

// isAtomic reports keys replaced whole rather than merged with their defaults.
func isAtomic(k string) bool { return k == "input" || k == "output" }

// fillDefaults copies into m every key of def that m lacks, recursing into
// maps both sides hold (except atomic keys).
func fillDefaults(m, def map[string]any) {
	for k, dv := range def {
		mv, ok := m[k]
		if !ok {
			m[k] = deepCopy(dv)
			continue
		}
		if isAtomic(k) {
			continue
		}
		mm, ok1 := mv.(map[string]any)
		dm, ok2 := dv.(map[string]any)
		if ok1 && ok2 {
			fillDefaults(mm, dm)
		}
	}
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			out[k] = deepCopy(v)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = deepCopy(v)
		}
		return out
	default:
		return v
	}
}
