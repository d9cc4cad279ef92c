package config

import (
	"encoding"
	"reflect"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Defaults is the built-in configuration: every top-level key's value
// when neither the file, the environment nor a flag sets it (the first
// koanf layer). It has no targets; DefaultTarget fills what a target entry
// leaves out.
func Defaults() Config {
	return Config{
		Admin:     Admin{Listen: ":9464"},
		Log:       Log{Level: "info", Format: "auto"},
		Ledger:    Ledger{MaxSizeMB: 100, MaxAge: Duration(168 * time.Hour), Keep: 10, DebugKeep: 200},
		Drain:     Drain{Timeout: Duration(30 * time.Second)},
		Limits:    Limits{MaxRate: 100, MaxBufferedBytes: DefaultMaxBufferedBytes, MaxConcurrentLadders: DefaultMaxConcurrentLadders},
		Probe:     DefaultProbe(),
		Fleet:     Fleet{Shard: "0", Shards: 1},
		Telemetry: Telemetry{Exemplars: DefaultExemplars},
	}
}

// DefaultTarget is what a target entry leaves out: its keys are filled one
// by one (a distribution, input or output, is replaced whole), and a target
// without classes gets the one class named "default". Name, url and model
// have no default.
func DefaultTarget() Target {
	def := DefaultClass()
	def.Name = "default"
	return Target{
		Client: Client{
			API:           "openai-chat",
			MaxEventBytes: DefaultMaxEventBytes,
			TTFTBoundary:  ledger.TTFTContent,
			Timeouts: Timeouts{Connect: Duration(5 * time.Second), Headers: Duration(30 * time.Second),
				FirstContent: Duration(60 * time.Second), Idle: Duration(30 * time.Second), Total: Duration(5 * time.Minute)},
		},
		MaxInFlight: 64,
		// Below the 5 s llama.cpp and uvicorn (vLLM) keep idle connections.
		IdleConnTimeout: Duration(4 * time.Second),
		Retries:         Retries{Backoff: Duration(100 * time.Millisecond), MaxBackoff: Duration(10 * time.Second), Jitter: 0.5},
		Budget:          Budget{Zone: "UTC"},
		ServerMetrics:   ServerMetrics{Interval: Duration(2 * time.Second), Timeout: Duration(2 * time.Second), Flavour: servermetrics.Auto},
		Identity:        Identity{PollEvery: Duration(time.Minute)},
		Baseline:        Baseline{Enabled: true, Rate: 0.2, Arrival: "poisson", Burstiness: 1},
		Classes:         []Class{def},
		Ladder: Ladder{
			Schedule:     Schedule{Zone: "UTC"},
			StepDuration: Duration(60 * time.Second),
			Gap:          Duration(10 * time.Second),
			Arrival:      "poisson",
			Burstiness:   1,
			Abort: Abort{ErrorFraction: 0.5, RejectionFraction: 0.5, TTFTGateMultiple: 5,
				OnUnsent: true, UnsentFraction: 0.01, OnGeneratorInvalid: true},
			GoodFractionTarget: 0.9,
			KneeFactor:         2,
			SettleMax:          Duration(5 * time.Minute),
			MaxLagP99:          Duration(10 * time.Millisecond),
			RateTolerance:      0.10,
			LagConfidence:      0.999,
			LagHardFactor:      10,
			StopAt:             "capacity",
		},
	}
}

// DefaultClass is what a class entry leaves out (a class has no default
// name).
func DefaultClass() Class {
	return Class{
		Weight: 1,
		Prompt: workload.PromptSpec{Source: "synthetic"},
		Input:  workload.DistSpec{Dist: "fixed", Value: 128},
		Output: workload.DistSpec{Dist: "fixed", Value: 128},

		RecordAnswers: RecordAnswersNone,
	}
}

// targetDefaults and classDefaults are DefaultTarget and DefaultClass as
// koanf maps; the default class list is filled separately (a list is never
// merged with its default).
func targetDefaults() map[string]any {
	m := asMap(DefaultTarget())
	delete(m, "classes")
	return m
}

func classDefaults() map[string]any { return asMap(DefaultClass()) }

// defaultClasses is the class list of a target that names none.
func defaultClasses() []any {
	out := []any{}
	for _, c := range DefaultTarget().Classes {
		out = append(out, asMap(c))
	}
	return out
}

// asMap turns a configuration value into the map koanf loads, keyed by
// the koanf tags: durations as Go duration strings, nested structs as
// maps, nil slices and maps left out (no default).
func asMap(v any) map[string]any {
	m, _ := toKoanf(reflect.ValueOf(v)).(map[string]any)
	return m
}

func toKoanf(v reflect.Value) any {
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		b, _ := m.MarshalText()
		return string(b)
	}
	if v.Type() == goDurationType {
		return Duration(v.Int()).String()
	}
	if isTextValue(v.Type()) && v.Kind() == reflect.String {
		return v.String()
	}
	switch v.Kind() {
	case reflect.Struct:
		m := map[string]any{}
		for _, f := range keyFields(v.Type()) {
			fv := v.FieldByIndex(f.Index)
			if (fv.Kind() == reflect.Slice || fv.Kind() == reflect.Map) && fv.IsNil() {
				continue
			}
			m[keyOf(f)] = toKoanf(fv)
		}
		return m
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			out[i] = toKoanf(v.Index(i))
		}
		return out
	case reflect.Map:
		out := make(map[string]any, v.Len())
		iter := v.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = toKoanf(iter.Value())
		}
		return out
	default:
		return v.Interface()
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

// OneShot is the target the one-shot commands (`llmprobe probe` and
// `llmprobe ladder`) describe when no flag says otherwise: DefaultTarget,
// with the differences a short run from a terminal needs. Each is on
// purpose (a profile, not drift):
//
//   - name "probe": a one-shot target is named by its command (its
//     reports name it by URL or --name);
//   - model llmprobe-sim: without --url the target is the built-in
//     simulator, which serves that model;
//   - max_in_flight 0 (no cap): a one-shot run measures the target's own
//     queueing, so no arrival is held back by the prober;
//   - output 64 tokens: runs of seconds, not minutes;
//   - seed 1 (baseline and ladder): the same command plans the same
//     arrivals, prompts and backoffs every time;
//   - ladder steps 1..32 req/s of 20s with 2s gaps: a whole ladder in
//     about two and a half minutes, run once, now (run_on_start), with
//     its hard maximum (ladder.max_rate) at limits.max_rate, 100 req/s,
//     shown as a flag;
//   - ladder abort on unsent off with unsent_fraction 0: with no cap
//     nothing is unsent, and with a cap (--max-in-flight) any unsent
//     request aborts unless --on-invalid continue.
//
// OneShotLadder adds the ladder's TTFT gate.
func OneShot() Target {
	t := DefaultTarget()
	t.Name = "probe"
	t.Model = "llmprobe-sim"
	t.MaxInFlight = 0
	t.Classes[0].Output.Value = 64
	t.Baseline.Seed, t.Ladder.Seed = 1, 1
	t.Ladder.Steps = []float64{1, 2, 4, 8, 16, 32}
	t.Ladder.StepDuration, t.Ladder.Gap = Duration(20*time.Second), Duration(2*time.Second)
	t.Ladder.RunOnStart = true
	t.Ladder.MaxRate = Defaults().Limits.MaxRate
	t.Ladder.Abort.OnUnsent, t.Ladder.Abort.UnsentFraction = false, 0
	return t
}

// OneShotLadder is OneShot for `llmprobe ladder`: named "ladder", enabled,
// with a TTFT gate of 1s, since a capacity is only defined against a gate
// (`probe` has no gate unless one is given).
func OneShotLadder() Target {
	t := OneShot()
	t.Name = "ladder"
	t.Ladder.Enabled = true
	t.Classes[0].Gates.TTFT = time.Second
	return t
}
