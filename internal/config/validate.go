package config

import (
	"fmt"
	"math"
	"net"
	"net/url"
	"regexp"
	"time"

	"github.com/prometheus/common/model"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// HardMaxRate is the largest limits.max_rate accepted (req/s).
const HardMaxRate = 10000.0

// Bounds of limits.max_buffered_bytes: 1 MiB to 64 GiB (wiring also asks
// room for each target's largest event: sse.BudgetForEvent).
const (
	MinMaxBufferedBytes = 1 << 20
	MaxMaxBufferedBytes = 64 << 30
)

var (
	envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	hhmm    = regexp.MustCompile(`^([01][0-9]|2[0-3]):([0-5][0-9])$`)
)

// Check is a rule the configuration cannot check alone: one made by the
// owner of a value (a registry, a parser, a file reader). It reports each
// problem with add, by key ("targets[0].api"), like the built-in rules:
// errors keep their source (file, environment variable or flag) and are
// reported together with the others. internal/wiring holds the domain's
// checks.
type Check func(c *Config, add func(key, format string, args ...any))

// Validate checks a decoded configuration (for example one built in code or
// after a change) by the built-in rules and checks, and returns every
// problem as Errors.
func (c *Config) Validate(checks ...Check) error {
	src := c.Path
	if src == "" {
		src = "config"
	}
	return c.validate(src, checks)
}

func oneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

func (c *Config) validate(fileSrc string, checks []Check) error {
	el := &errorList{src: func(key string) string { return c.sourceOf(key, fileSrc) }}
	if _, _, err := net.SplitHostPort(c.Admin.Listen); err != nil {
		el.add("admin.listen", "want host:port (e.g. \":9464\"): %v", err)
	}
	c.validateFleet(el)
	if c.Region != "" && !ValidName(c.Region) {
		el.add("region", "want %s, got %q", NameRule, c.Region)
	}
	if !oneOf(c.Log.Level, "debug", "info", "warn", "error") {
		el.add("log.level", "want one of debug, info, warn, error; got %q", c.Log.Level)
	}
	if !oneOf(c.Log.Format, "auto", "logfmt", "json", "text") {
		el.add("log.format", "want one of auto, logfmt, json, text; got %q", c.Log.Format)
	}
	if c.Ledger.MaxSizeMB < 1 || c.Ledger.MaxSizeMB > 100000 {
		el.add("ledger.max_size_mb", "want 1..100000, got %d", c.Ledger.MaxSizeMB)
	}
	if c.Ledger.Keep < 0 || c.Ledger.Keep > 10000 {
		el.add("ledger.keep", "want 0..10000, got %d", c.Ledger.Keep)
	}
	if c.Ledger.DebugKeep < 1 || c.Ledger.DebugKeep > 100000 {
		el.add("ledger.debug_keep", "want 1..100000, got %d", c.Ledger.DebugKeep)
	}
	if c.Telemetry.Exemplars < 0 || c.Telemetry.Exemplars > MaxExemplars {
		el.add("telemetry.exemplars", "want 0..%d, got %d", MaxExemplars, c.Telemetry.Exemplars)
	}
	if c.Drain.Timeout <= 0 {
		el.add("drain.timeout", "must be above 0")
	}
	if !(c.Limits.MaxRate > 0 && c.Limits.MaxRate <= HardMaxRate) {
		el.add("limits.max_rate", "want above 0 and at most %g req/s, got %g", HardMaxRate, c.Limits.MaxRate)
	}
	if b := c.Limits.MaxBufferedBytes; b < MinMaxBufferedBytes || b > MaxMaxBufferedBytes {
		el.add("limits.max_buffered_bytes", "want %d (1 MiB) to %d bytes, got %d", MinMaxBufferedBytes, MaxMaxBufferedBytes, b)
	}
	if n := c.Limits.MaxConcurrentLadders; n < 1 || n > MaxMaxConcurrentLadders {
		el.add("limits.max_concurrent_ladders", "want 1 to %d ladders at once, got %d", MaxMaxConcurrentLadders, n)
	}
	if len(c.Targets) == 0 {
		el.add("targets", "at least one target is required")
	}
	seen := map[string]int{}
	for i := range c.Targets {
		t := &c.Targets[i]
		p := fmt.Sprintf("targets[%d]", i)
		if !ValidName(t.Name) {
			el.add(p+".name", "want %s (it is a metric label), got %q", NameRule, t.Name)
		} else if j, dup := seen[t.Name]; dup {
			el.add(p+".name", "duplicate target name %q (also targets[%d])", t.Name, j)
		} else {
			seen[t.Name] = i
		}
		c.validateTarget(el, p, t)
	}
	c.validateProbe(el)
	for _, check := range checks {
		check(c, el.add)
	}
	return el.err()
}

// checkURL is the one rule for a URL llmprobe sends to: absolute http(s),
// no credentials, no secret-looking query parameter (HTTP client errors
// carry the whole URL, query included). The value is echoed only through
// the one redaction rule: a URL that does not parse may still carry a
// password. example shows a good one; fix says where credentials go.
func checkURL(el *errorList, key, raw, example, fix string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		el.add(key, "want an absolute http(s) URL such as %s, got %q", example, sanitize.URL(raw))
	case u.User != nil:
		el.add(key, "credentials in the URL are not accepted%s", fix)
	default:
		if q := sanitize.SecretParam(u.RawQuery); q != "" {
			el.add(key, "query parameter %q looks secret: credentials in the URL are not accepted%s", q, fix)
		}
	}
}

// validateTarget checks target t at key p: its URL, how it is reached,
// its budget, baseline and classes, its verdict thresholds, its ladder
// (when enabled) and its server metrics.
func (c *Config) validateTarget(el *errorList, p string, t *Target) {
	checkURL(el, p+".url", t.URL, "http://127.0.0.1:8000/v1", "; use api_key_env, api_key_file or header_env")
	validateClientKeys(el, p, t)

	if t.Budget.TokensPerDay < 0 {
		el.add(p+".budget.tokens_per_day", "must not be negative (0 = unlimited)")
	}
	if t.Budget.RequestsPerDay < 0 {
		el.add(p+".budget.requests_per_day", "must not be negative (0 = unlimited)")
	}
	if _, err := time.LoadLocation(t.Budget.Zone); err != nil {
		el.add(p+".budget.zone", "unknown time zone %q", t.Budget.Zone)
	}

	b := t.Baseline
	if b.Enabled {
		c.checkRate(el, p+".baseline.rate", b.Rate, c.Limits.MaxRate, "limits.max_rate")
	}
	checkBurstiness(el, p+".baseline.burstiness", b.Burstiness)

	if len(t.Classes) == 0 {
		el.add(p+".classes", "at least one class is required")
	}
	names := map[string]bool{}
	for j := range t.Classes {
		validateClass(el, fmt.Sprintf("%s.classes[%d]", p, j), &t.Classes[j], names)
	}
	validateColdTwins(el, p, t.Classes)
	validateVerdictKeys(el, p+".ladder", t.Ladder)
	if t.Ladder.Enabled {
		c.validateLadder(el, p, t)
	}
	validateServerMetrics(el, p+".server_metrics", t.ServerMetrics)
}

// validateClientKeys checks how the target is reached (the keys of
// Client, and the target's model): retries and cancellation, auth and
// headers (nothing secret in a literal), identity polling, TLS, the
// timeouts and their order, the connection and in-flight bounds.
func validateClientKeys(el *errorList, p string, t *Target) {
	if t.Retries.MaxAttempts < 0 || t.Retries.MaxAttempts > 10 {
		el.add(p+".retries.max_attempts", "want 0..10, got %d", t.Retries.MaxAttempts)
	}
	if t.Retries.Backoff <= 0 {
		el.add(p+".retries.backoff", "must be above 0")
	} else if t.Retries.MaxBackoff < t.Retries.Backoff {
		el.add(p+".retries.max_backoff", "must be at least retries.backoff (%v)", t.Retries.Backoff)
	}
	if j := t.Retries.Jitter; math.IsNaN(j) || j < 0 || j > 1 {
		el.add(p+".retries.jitter", "want 0..1, got %g", j)
	}
	if c := t.Cancellation; math.IsNaN(c.Fraction) || c.Fraction < 0 || c.Fraction > 1 {
		el.add(p+".cancellation.fraction", "want 0..1, got %g", c.Fraction)
	} else if c.MaxDelay != 0 && c.MaxDelay < c.Delay {
		el.add(p+".cancellation.max_delay", "must be 0 or at least cancellation.delay (%v)", c.Delay)
	}
	if t.Model == "" {
		el.add(p+".model", "required")
	}
	if t.APIKeyEnv != "" && t.APIKeyFile != "" {
		el.add(p+".api_key_env", "set api_key_env or api_key_file, not both")
	}
	if t.APIKeyEnv != "" && !envName.MatchString(t.APIKeyEnv) {
		el.add(p+".api_key_env", "want the name of an environment variable, not its value")
	}
	for h := range t.Headers {
		if sanitize.SecretName(h) {
			el.add(p+".headers."+h, "looks secret: put its value in an environment variable and name it in header_env")
		}
	}
	for h, e := range t.HeaderEnv {
		if !envName.MatchString(e) {
			el.add(p+".header_env."+h, "want the name of an environment variable, not its value")
		}
		if _, both := t.Headers[h]; both {
			el.add(p+".header_env."+h, "header also set literally in headers")
		}
	}
	if (t.Identity.ResponseHeader != "" || t.Identity.ModelsField != "") && t.Identity.PollEvery < Duration(time.Second) {
		el.add(p+".identity.poll_every", "want at least 1s, got %s", t.Identity.PollEvery)
	}
	if (t.TLS.CertFile == "") != (t.TLS.KeyFile == "") {
		el.add(p+".tls", "cert_file and key_file go together")
	}

	to := t.Timeouts
	if to.Total <= 0 {
		el.add(p+".timeouts.total", "must be above 0 (every request needs a bound)")
	} else {
		for _, x := range []struct {
			k string
			d Duration
		}{{"connect", to.Connect}, {"headers", to.Headers}, {"first_content", to.FirstContent}, {"idle", to.Idle}} {
			if x.d > to.Total {
				el.add(p+".timeouts."+x.k, "%s is longer than timeouts.total %s", x.d, to.Total)
			}
		}
	}
	// A headers timeout written over the total is refused above; a
	// first_content at (or over) the total, unset and cut to it or written
	// so, is then no second error: any headers within the total is within it.
	headersOverTotal := to.Total > 0 && to.Headers > to.Total && to.FirstContent >= to.Total
	if to.Headers > 0 && to.FirstContent > 0 && to.FirstContent < to.Headers && !headersOverTotal {
		el.add(p+".timeouts.first_content", "%s is shorter than timeouts.headers %s", to.FirstContent, to.Headers)
	}
	if t.IdleConnTimeout < Duration(100*time.Millisecond) || t.IdleConnTimeout > Duration(time.Hour) {
		el.add(p+".idle_conn_timeout", "want 100ms..1h (below the server's own keep-alive timeout), got %s", t.IdleConnTimeout)
	}
	if t.MaxInFlight < 0 || t.MaxInFlight > 100000 {
		el.add(p+".max_in_flight", "want 0 (no cap) or 1..100000, got %d", t.MaxInFlight)
	}
	if t.MaxEventBytes < 0 {
		el.add(p+".max_event_bytes", "want 0 (the default) or more bytes, got %d", t.MaxEventBytes)
	}
}

// validateVerdictKeys checks the generator's validity thresholds and the
// good-fraction verdict (p is the target's ladder key): they hold whether
// or not a ladder runs, since max_lag_p99 also judges the daemon's live
// window and the one-shot probe reads all three.
func validateVerdictKeys(el *errorList, p string, l Ladder) {
	if l.MaxLagP99 <= 0 || l.MaxLagP99.D() > time.Minute {
		el.add(p+".max_lag_p99", "want above 0 and at most 1m, got %v", l.MaxLagP99)
	}
	if !(l.RateTolerance > 0 && l.RateTolerance <= 1) {
		el.add(p+".rate_tolerance", "want above 0 and at most 1, got %g", l.RateTolerance)
	}
	if !(l.LagConfidence >= 0.9 && l.LagConfidence < 1) {
		el.add(p+".lag_confidence", "want at least 0.9 and below 1, got %g", l.LagConfidence)
	}
	if !(l.LagHardFactor >= 2 && l.LagHardFactor <= 1000) {
		el.add(p+".lag_hard_factor", "want from 2 to 1000, got %g", l.LagHardFactor)
	}
	if !(l.GoodFractionTarget > 0 && l.GoodFractionTarget <= 1) {
		el.add(p+".good_fraction_target", "want above 0 and at most 1, got %g", l.GoodFractionTarget)
	}
}

// MinServerMetricsInterval is the shortest server_metrics.interval
// (servermetrics/scrape.MinInterval; a wiring test holds the two equal).
const MinServerMetricsInterval = 100 * time.Millisecond

// Other bounds of server_metrics.
const (
	maxServerMetricsDuration = time.Minute
	maxServerMetricsNames    = 64
)

func validateServerMetrics(el *errorList, p string, sm ServerMetrics) {
	if sm.URL == "" {
		if len(sm.Metrics) > 0 {
			el.add(p+".url", "required when metrics are named")
		}
	} else {
		checkURL(el, p+".url", sm.URL, "http://127.0.0.1:8000/metrics (the server's metrics endpoint)", "")
	}
	if d := sm.Interval.D(); d != 0 && (d < MinServerMetricsInterval || d > maxServerMetricsDuration) {
		el.add(p+".interval", "want 0 (start and end of each step only) or %s to %s, got %s", MinServerMetricsInterval, maxServerMetricsDuration, d)
	}
	if d := sm.Timeout.D(); d <= 0 || d > maxServerMetricsDuration {
		el.add(p+".timeout", "want above 0 and at most %s, got %s", maxServerMetricsDuration, d)
	}
	if len(sm.Metrics) > maxServerMetricsNames {
		el.add(p+".metrics", "at most %d names, got %d", maxServerMetricsNames, len(sm.Metrics))
	}
	seen := map[string]bool{}
	for i, n := range sm.Metrics {
		k := fmt.Sprintf("%s.metrics[%d]", p, i)
		switch {
		case !model.LegacyValidation.IsValidMetricName(n):
			el.add(k, "%q is not a Prometheus metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)", n)
		case seen[n]:
			el.add(k, "%q named twice", n)
		}
		seen[n] = true
	}
}

// checkBurstiness: a gamma shape is above 0 and finite.
func checkBurstiness(el *errorList, key string, k float64) {
	if !(k > 0) || math.IsInf(k, 0) {
		el.add(key, "want above 0 (1 = Poisson, below 1 burstier), got %g", k)
	}
}

// checkRate checks one stream's rate (req/s) against its hard maximum max,
// set by limitKey: limits.max_rate (raised up to HardMaxRate) or
// ladder.max_rate (at most limits.max_rate). Each error names the limit and
// how far it may be raised; in a fleet the limit is per shard.
func (c *Config) checkRate(el *errorList, key string, r, max float64, limitKey string) {
	n := c.shards() // in a fleet, each shard offers 1/n of the rate
	raise := fmt.Sprintf("%s, which may be raised up to %g", limitKey, HardMaxRate)
	if limitKey != "limits.max_rate" {
		raise = fmt.Sprintf("%s, at most limits.max_rate %g", limitKey, c.Limits.MaxRate)
	}
	switch {
	case !(r > 0) || math.IsInf(r, 0):
		el.add(key, "must be above 0 req/s, got %g", r)
	case n == 1 && r > max:
		el.add(key, "%g req/s is above the hard maximum %g req/s (%s)%s", r, max, raise, c.fleetHint(el))
	case r > max*float64(n):
		el.add(key, "%g req/s is above %d shards × the hard maximum %g per shard (%s): each shard offers 1/%d of it", r, n, max, raise, n)
	}
}

// fleetHint is what the first rate error adds when the file describes a
// fleet (fleet.peers, or fleet.shard auto) but not its size: it was
// checked as a prober alone, and says the smallest fleet every rate fits.
func (c *Config) fleetHint(el *errorList) string {
	if el.fleetHinted || c.Fleet.Shards > 1 || (len(c.Fleet.Peers) == 0 && c.Fleet.Shard != ShardAuto) {
		return ""
	}
	el.fleetHinted = true
	n := 1.0
	for _, t := range c.Targets {
		n = math.Max(n, math.Ceil(t.Baseline.Rate/c.Limits.MaxRate))
		max := c.Limits.MaxRate
		if m := t.Ladder.MaxRate; m > 0 && m < max {
			max = m
		}
		for _, r := range t.Ladder.Steps {
			n = math.Max(n, math.Ceil(r/max))
		}
	}
	return fmt.Sprintf("; this file describes a fleet but not its size (fleet.shards), so it was checked as one prober:"+
		" validate it with --fleet.shards N (here N ≥ %g), the size LLMPROBE_FLEET__SHARDS gives each shard", n)
}

// Timetable is the ladder's length (ladder.Timetable), its steps
// settling for total, the target's timeouts.total.
func (l Ladder) Timetable(total Duration) ladder.Timetable {
	return ladder.Timetable{Steps: len(l.Steps), Step: l.StepDuration.D(), Settle: total.D(), Gap: l.Gap.D()}
}

func (c *Config) validateLadder(el *errorList, p string, t *Target) {
	l := t.Ladder
	lp := p + ".ladder"
	max, limitKey := c.Limits.MaxRate, "limits.max_rate"
	if l.MaxRate != 0 {
		if l.MaxRate > c.Limits.MaxRate || l.MaxRate < 0 {
			el.add(lp+".max_rate", "want above 0 and at most limits.max_rate %g, got %g", c.Limits.MaxRate, l.MaxRate)
		} else if l.MaxRate < c.Limits.MaxRate {
			max, limitKey = l.MaxRate, "ladder.max_rate"
		}
	}
	if len(l.Steps) == 0 {
		el.add(lp+".steps", "a ladder needs at least one step rate")
	}
	for i, r := range l.Steps {
		c.checkRate(el, fmt.Sprintf("%s.steps[%d]", lp, i), r, max, limitKey)
		if i > 0 && r <= l.Steps[i-1] {
			el.add(fmt.Sprintf("%s.steps[%d]", lp, i), "step rates must increase (%g after %g)", r, l.Steps[i-1])
		}
	}
	// A step shorter than timeouts.first_content is fine: its requests
	// still run to their end (a step settles for timeouts.total).
	if l.StepDuration < Duration(time.Second) {
		el.add(lp+".step_duration", "want at least 1s, got %s", l.StepDuration)
	}
	checkBurstiness(el, lp+".burstiness", l.Burstiness)
	checkSettleMax(el, lp+".settle_max", l.SettleMax)
	if !(l.KneeFactor > 1) {
		el.add(lp+".knee_factor", "want above 1, got %g", l.KneeFactor)
	}
	a := l.Abort
	for _, f := range []struct {
		k string
		v float64
	}{{"error_fraction", a.ErrorFraction}, {"rejection_fraction", a.RejectionFraction}, {"unsent_fraction", a.UnsentFraction}} {
		if f.v < 0 || f.v > 1 {
			el.add(lp+".abort."+f.k, "want 0..1 (0 = off), got %g", f.v)
		}
	}
	if a.TTFTGateMultiple != 0 && a.TTFTGateMultiple < 1 {
		el.add(lp+".abort.ttft_gate_multiple", "want 0 (off) or at least 1, got %g", a.TTFTGateMultiple)
	}

	s := l.Schedule
	sp := lp + ".schedule"
	if _, err := time.LoadLocation(s.Zone); err != nil {
		el.add(sp+".zone", "unknown time zone %q", s.Zone)
	}
	switch {
	case s.Every > 0 && s.Daily != "":
		el.add(sp, "set every or daily, not both")
	case s.Every > 0:
		if s.Offset >= s.Every {
			el.add(sp+".offset", "%s must be shorter than every %s", s.Offset, s.Every)
		}
		if span := l.Timetable(t.Timeouts.Total).Span(); s.Every.D() < span {
			el.add(sp+".every", "%s is shorter than the ladder itself (%s: steps, gaps and timeouts.total)", s.Every, span)
		}
	case s.Daily != "":
		if !hhmm.MatchString(s.Daily) {
			el.add(sp+".daily", "want HH:MM (24-hour), got %q", s.Daily)
		}
		if span := l.Timetable(t.Timeouts.Total).Span(); span > 24*time.Hour {
			el.add(sp+".daily", "the ladder (%s) is longer than a day", span)
		}
	default:
		if !l.RunOnIdentityChange && !l.RunOnStart {
			el.add(sp, "set every or daily (or run_on_identity_change / run_on_start)")
		}
	}
}
