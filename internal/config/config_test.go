package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const minimal = `
targets:
  - name: t1
    url: http://127.0.0.1:8000/v1
    model: m
`

func write(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv() []string { return nil }

func TestDefaultsApplied(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	tg := c.Targets[0]
	if tg.API != "openai-chat" || tg.Timeouts.Total.D() != 5*time.Minute || tg.MaxInFlight != 64 {
		t.Fatalf("target defaults not applied: %+v", tg)
	}
	if len(tg.Classes) != 1 || tg.Classes[0].Name != "default" || tg.Classes[0].Input.Value != 128 {
		t.Fatalf("class defaults not applied: %+v", tg.Classes)
	}
	if c.Admin.Listen != ":9464" || c.Drain.Timeout.D() != 30*time.Second {
		t.Fatalf("top-level defaults not applied: %+v %+v", c.Admin, c.Drain)
	}
	if tg.Ladder.SettleMax.D() != 5*time.Minute {
		t.Errorf("ladder.settle_max default %v, want 5m", tg.Ladder.SettleMax)
	}
	if tg.Ladder.StopAt != "capacity" || tg.Ladder.BaselineSettle != 0 || tg.Identity.PollEvery.D() != time.Minute {
		t.Fatalf("ladder/identity defaults not applied: stop_at %q baseline_settle %v poll_every %v",
			tg.Ladder.StopAt, tg.Ladder.BaselineSettle, tg.Identity.PollEvery)
	}
}

func TestErrorsNameFileAndKey(t *testing.T) {
	cases := []struct {
		name string
		body string
		want []string // each must appear, prefixed by "<file>: "
	}{
		{"unknown top key", minimal + "bogus: 1\n", []string{"bogus: unknown key"}},
		{"unknown nested key", minimal + "    timeouts: {totl: 5s}\n", []string{"targets[0].timeouts.totl: unknown key"}},
		{"bad duration", minimal + "    timeouts: {total: 10q}\n", []string{"targets[0].timeouts.total: invalid duration"}},
		{"duration as number", minimal + "    timeouts: {total: 10}\n", []string{"targets[0].timeouts.total: want a duration string"}},
		{"literal key", minimal + "    api_key: sk-abc\n", []string{"targets[0].api_key: unknown key: literal secrets"}},
		{"rate out of range", minimal + "    baseline: {rate: 1000}\n", []string{"targets[0].baseline.rate:", "hard maximum"}},
		{"zero rate", minimal + "    baseline: {rate: 0}\n", []string{"targets[0].baseline.rate: must be above 0"}},
		{"secret header", minimal + "    headers: {Authorization: Bearer x}\n", []string{"targets[0].headers.Authorization: looks secret"}},
		{"auth header", minimal + "    headers: {X-Auth: sk-abc}\n", []string{"targets[0].headers.X-Auth: looks secret"}},
		{"authentication header", minimal + "    headers: {Authentication: sk-abc}\n", []string{"targets[0].headers.Authentication: looks secret"}},
		{"plural keys header", minimal + "    headers: {X-Api-Keys: sk-abc}\n", []string{"targets[0].headers.X-Api-Keys: looks secret"}},
		{"plural keys query", strings.Replace(minimal, "/v1", "/v1?access_keys=sk-abc", 1), []string{"targets[0].url: query parameter \"access_keys\" looks secret"}},
		{"timeout over total", minimal + "    timeouts: {connect: 10m, total: 1m}\n", []string{"targets[0].timeouts.connect:", "longer than timeouts.total"}},
		{"duplicate names", minimal + "  - name: t1\n    url: http://127.0.0.1:1/v1\n    model: m\n", []string{"targets[1].name: duplicate target name"}},
		{"label-unsafe name", strings.Replace(minimal, "name: t1", "name: \"T 1\"", 1), []string{"targets[0].name: want 1-63"}},
		{"ladder shorter than interval", minimal + "    ladder: {enabled: true, steps: [1, 2], step_duration: 1m, gap: 0s, schedule: {every: 1m}}\n",
			[]string{"targets[0].ladder.schedule.every:", "shorter than the ladder"}},
		{"ladder step above max", minimal + "    ladder: {enabled: true, steps: [1, 50], max_rate: 10, schedule: {every: 24h}}\n",
			[]string{"targets[0].ladder.steps[1]:", "hard maximum"}},
		{"ladder steps not increasing", minimal + "    ladder: {enabled: true, steps: [2, 1], schedule: {every: 24h}}\n",
			[]string{"targets[0].ladder.steps[1]: step rates must increase"}},
		{"daily bad time", minimal + "    ladder: {enabled: true, steps: [1], schedule: {daily: \"25:00\"}}\n",
			[]string{"targets[0].ladder.schedule.daily: want HH:MM"}},
		{"bad zone", minimal + "    budget: {zone: Mars/Base}\n", []string{"targets[0].budget.zone: unknown time zone"}},
		{"url credentials", strings.Replace(minimal, "http://127.0.0.1", "http://u:p@127.0.0.1", 1), []string{"targets[0].url: credentials"}},
		{"url query key", strings.Replace(minimal, "/v1", "/v1?api-key=sk-abc", 1), []string{"targets[0].url: query parameter \"api-key\" looks secret"}},
		{"no targets", "log: {level: info}\n", []string{"targets: at least one target"}},
		{"bad ladder lag", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, max_lag_p99: 0s}\n", []string{"targets[0].ladder.max_lag_p99: want above 0"}},
		{"bad region", minimal + "region: \"EU West\"\n", []string{"region: want 1-63"}},
		{"too many retries", minimal + "    retries: {max_attempts: 50}\n", []string{"targets[0].retries.max_attempts: want 0..10"}},
		{"retry jitter", minimal + "    retries: {jitter: 1.5}\n", []string{"targets[0].retries.jitter: want 0..1"}},
		{"retry jitter not a number", minimal + "    retries: {jitter: much}\n", []string{"targets[0].retries.jitter: want a number"}},
		{"buffered bytes below one event", minimal + "limits: {max_buffered_bytes: 1000}\n", []string{"limits.max_buffered_bytes: want 1048576"}},
		{"buffered bytes not whole", minimal + "limits: {max_buffered_bytes: lots}\n", []string{"limits.max_buffered_bytes: want a whole number"}},
		{"cancel fraction", minimal + "    cancellation: {fraction: 1.5}\n", []string{"targets[0].cancellation.fraction: want 0..1"}},
		{"negative baseline settle", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, baseline_settle: -1s}\n",
			[]string{"targets[0].ladder.baseline_settle:", "negative duration"}},
		{"settle_max too long", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, settle_max: 2h}\n",
			[]string{"targets[0].ladder.settle_max:", "want 0 (do not wait) or 1s to 1h0m0s, got 2h0m0s"}},
		{"settle_max too short", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, settle_max: 10ms}\n",
			[]string{"targets[0].ladder.settle_max:", "got 10ms"}},
		{"identity poll too often", minimal + "    identity: {response_header: x-build, poll_every: 10ms}\n",
			[]string{"targets[0].identity.poll_every: want at least 1s"}},
		{"negative max in flight", minimal + "    max_in_flight: -1\n", []string{"targets[0].max_in_flight: want 0 (no cap) or 1..100000, got -1"}},
		{"idle connection timeout zero", minimal + "    idle_conn_timeout: 0s\n", []string{"targets[0].idle_conn_timeout: want 100ms..1h (below the server's own keep-alive timeout), got 0s"}},
		{"idle connection timeout too long", minimal + "    idle_conn_timeout: 2h\n", []string{"targets[0].idle_conn_timeout: want 100ms..1h"}},
		{"negative event size", minimal + "    max_event_bytes: -5\n", []string{"targets[0].max_event_bytes: want 0 (the default) or more bytes"}},
		{"http1 not a bool", minimal + "    http1: sometimes\n", []string{"targets[0].http1: want true or false"}},
		{"zero burstiness", minimal + "    baseline: {arrival: gamma, burstiness: 0}\n", []string{"targets[0].baseline.burstiness: want above 0"}},
		{"ladder burstiness", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, burstiness: -1}\n", []string{"targets[0].ladder.burstiness: want above 0"}},
		{"rate tolerance", minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, rate_tolerance: 1.5}\n", []string{"targets[0].ladder.rate_tolerance: want above 0 and at most 1"}},
		{"lag confidence", minimal + "    ladder: {lag_confidence: 1}\n", []string{"targets[0].ladder.lag_confidence: want at least 0.9 and below 1"}},
		{"lag confidence too loose", minimal + "    ladder: {lag_confidence: 0.5}\n", []string{"targets[0].ladder.lag_confidence: want at least 0.9 and below 1"}},
		{"lag hard factor", minimal + "    ladder: {lag_hard_factor: 1.5}\n", []string{"targets[0].ladder.lag_hard_factor: want from 2 to 1000"}},
		{"zero backoff", minimal + "    retries: {backoff: 0s}\n", []string{"targets[0].retries.backoff: must be above 0"}},
		{"good fraction without a ladder", minimal + "    ladder: {good_fraction_target: 2}\n", []string{"targets[0].ladder.good_fraction_target: want above 0 and at most 1"}},
		{"lag without a ladder", minimal + "    ladder: {max_lag_p99: 2m}\n", []string{"targets[0].ladder.max_lag_p99: want above 0 and at most 1m"}},
		{"arrival read by its type", minimal + "    baseline: {arrival: bursty}\n", []string{"targets[0].baseline.arrival: want poisson, constant or gamma, got \"bursty\""}},
		{"arrival not a string", minimal + "    baseline: {arrival: 3}\n", []string{"targets[0].baseline.arrival: want a string, got int 3"}},
		{"several at once", minimal + "bogus: 1\nlog: {level: loud}\n", []string{"bogus: unknown key", "log.level: want one of"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.body)
			_, err := LoadWith(Options{Path: p, Environ: noEnv})
			if err == nil {
				t.Fatal("want an error, got none")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("want config.Errors, got %T: %v", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(unplaced(err), p+": ") || !strings.Contains(err.Error(), w) {
					t.Errorf("error does not name file and %q:\n%v", w, err)
				}
			}
			if strings.Contains(err.Error(), "sk-abc") || strings.Contains(err.Error(), "Bearer x") {
				t.Errorf("error echoes a secret: %v", err)
			}
		})
	}
}

func TestMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.yaml")
	_, err := LoadWith(Options{Path: p, Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), p+": cannot read config file") {
		t.Fatalf("want an error naming %s, got %v", p, err)
	}
}

func TestBadYAML(t *testing.T) {
	p := write(t, "targets: [\n")
	_, err := LoadWith(Options{Path: p, Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), p+": cannot parse YAML") {
		t.Fatalf("want a parse error naming the file, got %v", err)
	}
}

func TestEnvOverride(t *testing.T) {
	p := write(t, minimal+"admin: {listen: \"127.0.0.1:1\"}\n")
	env := func() []string {
		return []string{
			"LLMPROBE_ADMIN__LISTEN=127.0.0.1:9999",
			"LLMPROBE_LEDGER__KEEP=7",
			"LLMPROBE_OTEL__ENABLED=true",
			"LLMPROBE_LEDGER__DIR=2026",          // a string key keeps a numeric-looking value
			"LLMPROBE_API_KEY=secret-not-config", // no "__": not configuration
			"OTHER__X=1",
		}
	}
	c, err := LoadWith(Options{Path: p, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin.Listen != "127.0.0.1:9999" || c.Ledger.Keep != 7 || !c.OTel.Enabled || c.Ledger.Dir != "2026" {
		t.Fatalf("env did not override: %+v %+v %+v", c.Admin, c.Ledger, c.OTel)
	}

	bad := func() []string {
		return []string{"LLMPROBE_LOG__LEVL=debug", "LLMPROBE_DRAIN__TIMEOUT=soon", "LLMPROBE_TARGETS__0__URL=x", "LLMPROBE_LEDGER__KEEP=many"}
	}
	_, err = LoadWith(Options{Path: p, Environ: bad})
	for _, w := range []string{"env LLMPROBE_LOG__LEVL: log.levl: unknown key", "env LLMPROBE_DRAIN__TIMEOUT: drain.timeout: invalid duration", "env LLMPROBE_TARGETS__0__URL: targets.0.url: targets cannot be set", "env LLMPROBE_LEDGER__KEEP: ledger.keep: want a whole number"} {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("want %q in\n%v", w, err)
		}
	}
}

func TestFlagOverride(t *testing.T) {
	p := write(t, minimal+"log: {level: warn}\n")
	env := func() []string { return []string{"LLMPROBE_LOG__LEVEL=error", "LLMPROBE_ADMIN__LISTEN=127.0.0.1:5"} }
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs)
	fs.String("config", "", "not a config key")
	if err := fs.Parse([]string{"--log-level=debug", "--config=x", "--drain-timeout=2s"}); err != nil {
		t.Fatal(err)
	}
	c, err := LoadWith(Options{Path: p, Flags: fs, Environ: env})
	if err != nil {
		t.Fatal(err)
	}
	if c.Log.Level != "debug" {
		t.Errorf("flag did not beat env and file: level %q", c.Log.Level)
	}
	if c.Admin.Listen != "127.0.0.1:5" {
		t.Errorf("unchanged flag default overrode env: listen %q", c.Admin.Listen)
	}
	if c.Drain.Timeout.D() != 2*time.Second {
		t.Errorf("drain-timeout flag: %s", c.Drain.Timeout)
	}

	fs2 := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs2)
	if err := fs2.Parse([]string{"--log-format=xml"}); err != nil {
		t.Fatal(err)
	}
	_, err = LoadWith(Options{Path: p, Flags: fs2, Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), "flag --log-format: log.format: want one of") {
		t.Fatalf("want an error naming the flag, got %v", err)
	}
}

// TestMaxBufferedBytes: limits.max_buffered_bytes defaults to 64 MiB, is
// set by the file, the environment or --max-buffered-bytes, and is refused
// below one maximum-size event.
func TestMaxBufferedBytes(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxBufferedBytes != DefaultMaxBufferedBytes {
		t.Errorf("default %d, want %d", c.Limits.MaxBufferedBytes, DefaultMaxBufferedBytes)
	}
	env := func() []string { return []string{"LLMPROBE_LIMITS__MAX_BUFFERED_BYTES=8388608"} }
	if c, err = LoadWith(Options{Path: write(t, minimal), Environ: env}); err != nil || c.Limits.MaxBufferedBytes != 8<<20 {
		t.Errorf("environment: %v, %v", c.Limits.MaxBufferedBytes, err)
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	RegisterFlags(fs)
	if err := fs.Parse([]string{"--max-buffered-bytes=16777216"}); err != nil {
		t.Fatal(err)
	}
	if c, err = LoadWith(Options{Path: write(t, minimal), Flags: fs, Environ: noEnv}); err != nil || c.Limits.MaxBufferedBytes != 16<<20 {
		t.Errorf("flag: %v, %v", c.Limits.MaxBufferedBytes, err)
	}
	_, err = LoadWith(Options{Path: write(t, minimal+"limits: {max_buffered_bytes: 1000}\n"), Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), "limits.max_buffered_bytes") {
		t.Errorf("1000 bytes accepted: %v", err)
	}
}

// TestMaxConcurrentLadders: limits.max_concurrent_ladders defaults to 1,
// is set by the file or the environment, and is refused outside 1..1000.
func TestMaxConcurrentLadders(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MaxConcurrentLadders != DefaultMaxConcurrentLadders || DefaultMaxConcurrentLadders != 1 {
		t.Errorf("default %d, want 1", c.Limits.MaxConcurrentLadders)
	}
	env := func() []string { return []string{"LLMPROBE_LIMITS__MAX_CONCURRENT_LADDERS=3"} }
	if c, err = LoadWith(Options{Path: write(t, minimal), Environ: env}); err != nil || c.Limits.MaxConcurrentLadders != 3 {
		t.Errorf("environment: %v, %v", c.Limits.MaxConcurrentLadders, err)
	}
	for _, tc := range []struct {
		yaml string
		ok   bool
		want int
	}{
		{"limits: {max_concurrent_ladders: 4}\n", true, 4},
		{"limits: {max_concurrent_ladders: 1000}\n", true, 1000},
		{"limits: {max_concurrent_ladders: 0}\n", false, 0},
		{"limits: {max_concurrent_ladders: -1}\n", false, 0},
		{"limits: {max_concurrent_ladders: 1001}\n", false, 0},
		{"limits: {max_concurrent_ladders: many}\n", false, 0},
	} {
		c, err := LoadWith(Options{Path: write(t, minimal+tc.yaml), Environ: noEnv})
		switch {
		case tc.ok && (err != nil || c.Limits.MaxConcurrentLadders != tc.want):
			t.Errorf("%q: %v, %v; want %d", tc.yaml, c, err, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "limits.max_concurrent_ladders")):
			t.Errorf("%q accepted or not named: %v", tc.yaml, err)
		}
	}
}

// TestTelemetryExemplars: telemetry.exemplars defaults to 4, 0 means
// none, and a count outside 0..32 is refused and named.
func TestTelemetryExemplars(t *testing.T) {
	for _, tc := range []struct {
		yaml string
		ok   bool
		want int
	}{
		{"", true, DefaultExemplars},
		{"telemetry: {exemplars: 0}\n", true, 0},
		{"telemetry: {exemplars: 10}\n", true, 10},
		{"telemetry: {exemplars: 32}\n", true, 32},
		{"telemetry: {exemplars: 33}\n", false, 0},
		{"telemetry: {exemplars: -1}\n", false, 0},
		{"telemetry: {exemplars: some}\n", false, 0},
	} {
		c, err := LoadWith(Options{Path: write(t, minimal+tc.yaml), Environ: noEnv})
		switch {
		case tc.ok && (err != nil || c.Telemetry.Exemplars != tc.want):
			t.Errorf("%q: %v, %v; want %d", tc.yaml, c.Telemetry.Exemplars, err, tc.want)
		case !tc.ok && (err == nil || !strings.Contains(err.Error(), "telemetry.exemplars")):
			t.Errorf("%q accepted or not named: %v", tc.yaml, err)
		}
	}
	if DefaultExemplars != 4 {
		t.Errorf("DefaultExemplars = %d; docs/configuration.md and docs/metrics.md say 4", DefaultExemplars)
	}
}

func TestRedacted(t *testing.T) {
	p := write(t, `
targets:
  - name: t1
    url: https://api.example.com/v1?api-version=2024
    model: m
    api_key_env: MY_KEY
    headers: {X-Team: blue}
    header_env: {X-Api-Token: TOKEN_VAR}
`)
	c, err := LoadWith(Options{Path: p, Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	// Built in code, bypassing validation (which refuses both).
	c.Targets[0].Headers["X-Session-Token"] = "zzz"
	c.Targets[0].Headers["Authentication"] = "yyy"
	c.Targets[0].Headers["X-Api-Keys"] = "xxx"
	c.Targets[0].URL = "https://api.example.com/v1?api-key=abc123"
	r := c.Redacted()
	b, _ := json.Marshal(r)
	s := string(b)
	for _, leak := range []string{"abc123", "zzz", "yyy", "xxx"} {
		if strings.Contains(s, leak) {
			t.Errorf("redacted config leaks %q: %s", leak, s)
		}
	}
	for _, keep := range []string{"https://api.example.com/v1?api-key=[redacted]", "MY_KEY", "TOKEN_VAR", "blue", `"X-Session-Token":"[redacted]"`} {
		if !strings.Contains(s, keep) {
			t.Errorf("redacted config lost %q: %s", keep, s)
		}
	}
	if c.Targets[0].URL != "https://api.example.com/v1?api-key=abc123" {
		t.Errorf("Redacted modified the original")
	}
}

func TestAPIKey(t *testing.T) {
	dir := t.TempDir()
	kf := filepath.Join(dir, "key")
	if err := os.WriteFile(kf, []byte("file-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LLMPROBE_TEST_KEY_G", "env-key")
	cases := []struct {
		t       Target
		want    string
		wantErr bool
	}{
		{Target{Name: "a", Client: Client{APIKeyEnv: "LLMPROBE_TEST_KEY_G"}}, "env-key", false},
		{Target{Name: "a", Client: Client{APIKeyFile: kf}}, "file-key", false},
		{Target{Name: "a", Client: Client{APIKeyEnv: "LLMPROBE_TEST_UNSET_G"}}, "", true},
		{Target{Name: "a", Client: Client{APIKeyFile: filepath.Join(dir, "none")}}, "", true},
		{Target{Name: "a"}, "", false},
	}
	for i, tc := range cases {
		got, err := tc.t.APIKey()
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("case %d: got %q, %v", i, got, err)
		}
	}
}

// TestShortLadderStep: a ladder step shorter than timeouts.first_content
// is accepted: its requests still run to their end, since a step settles
// for timeouts.total (the one-shot ladder's 20s steps and 60s
// first-content timeout are such a pair).
func TestShortLadderStep(t *testing.T) {
	body := minimal + "    ladder: {enabled: true, steps: [1], schedule: {every: 24h}, step_duration: 20s}\n"
	if _, err := LoadWith(Options{Path: write(t, body), Environ: noEnv}); err != nil {
		t.Fatal(err)
	}
}

// TestNoCap: max_in_flight 0 means no cap (the one-shot commands' default).
func TestNoCap(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal+"    max_in_flight: 0\n"), Environ: noEnv})
	if err != nil || c.Targets[0].MaxInFlight != 0 {
		t.Fatalf("max_in_flight 0: %v", err)
	}
}

func TestValidateBuiltInCode(t *testing.T) {
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	c.Targets[0].MaxInFlight = -1 // 0 is valid: no cap
	err = c.Validate()
	if err == nil || !strings.Contains(err.Error(), "targets[0].max_in_flight") {
		t.Fatalf("Validate missed max_in_flight: %v", err)
	}
}

func TestBuiltIn(t *testing.T) {
	builtIn := []byte("targets:\n  - name: sim\n    url: http://127.0.0.1:4321/v1\n    model: llmprobe-sim\n")
	c, err := LoadWith(Options{BuiltIn: builtIn, Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Targets) != 1 || c.Targets[0].URL != "http://127.0.0.1:4321/v1" {
		t.Fatalf("built-in targets not loaded: %+v", c.Targets)
	}
	_, err = LoadWith(Options{BuiltIn: append(builtIn, []byte("    modle: x\n")...), Environ: noEnv})
	if err == nil || !strings.Contains(err.Error(), "built-in: targets[0].modle: unknown key") {
		t.Fatalf("want an error naming built-in, got %v", err)
	}
	// A file replaces the built-in targets.
	c, err = LoadWith(Options{BuiltIn: builtIn, Path: write(t, minimal), Environ: noEnv})
	if err != nil || len(c.Targets) != 1 || c.Targets[0].Name != "t1" {
		t.Fatalf("file over built-in: %+v %v", c, err)
	}
}

// TestChecks: a Check reports into the same list as the built-in rules:
// its errors name the file and the key, come with the others, and a key
// already reported (here a malformed value) is not reported twice.
func TestChecks(t *testing.T) {
	var seen *Config
	check := func(c *Config, add func(key, format string, args ...any)) {
		seen = c
		add("targets[0].api", "refused by the check: %q", c.Targets[0].API)
		add("targets[0].timeouts", "refused by the check too")
	}
	p := write(t, minimal+"    api: grpc\n    timeouts: {totl: 5s}\nlog: {level: loud}\n")
	_, err := LoadWith(Options{Path: p, Environ: noEnv, Checks: []Check{check}})
	if err == nil || seen == nil {
		t.Fatalf("check not run: %v", err)
	}
	for _, w := range []string{p + `: targets[0].api: refused by the check: "grpc"`, p + ": log.level: want one of", p + ": targets[0].timeouts.totl: unknown key"} {
		if !strings.Contains(unplaced(err), w) {
			t.Errorf("want %q in\n%v", w, err)
		}
	}
	if strings.Contains(err.Error(), "refused by the check too") {
		t.Errorf("a key already reported is reported again:\n%v", err)
	}
	// Without the check, the configuration's own rules do not know APIs.
	if _, err := LoadWith(Options{Path: write(t, minimal+"    api: grpc\n"), Environ: noEnv}); err != nil {
		t.Errorf("config alone refuses an api it cannot know: %v", err)
	}
	// Validate runs checks on a configuration built in code.
	c, err := LoadWith(Options{Path: write(t, minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(check); err == nil || !strings.Contains(err.Error(), "targets[0].api: refused by the check") {
		t.Errorf("Validate(check): %v", err)
	}
}

// TestTelemetryClassicHistograms: telemetry.classic_histograms is off by
// default and read from the file and the environment.
func TestTelemetryClassicHistograms(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		env        []string
		want       bool
	}{
		{"default", minimal, nil, false},
		{"file", minimal + "telemetry: {classic_histograms: true}\n", nil, true},
		{"env", minimal, []string{"LLMPROBE_TELEMETRY__CLASSIC_HISTOGRAMS=true"}, true},
	} {
		c, err := LoadWith(Options{Path: write(t, tc.body), Environ: func() []string { return tc.env }})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Telemetry.ClassicHistograms != tc.want {
			t.Errorf("%s: classic_histograms = %v, want %v", tc.name, c.Telemetry.ClassicHistograms, tc.want)
		}
	}
	if _, err := LoadWith(Options{Path: write(t, minimal+"telemetry: {classic_histogram: true}\n"), Environ: noEnv}); err == nil ||
		!strings.Contains(err.Error(), "telemetry.classic_histogram") {
		t.Errorf("a misspelt telemetry key: err = %v, want it named", err)
	}
}
