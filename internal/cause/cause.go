// Package cause is the one table of the causes of an invalid verdict: each
// cause's name (a metric label value and a JSON value), what it means, what
// to do about it, whether it blames the prober's host, and which verdicts
// carry it. The verdict rule (internal/verdict) names them; the status
// page, the telemetry catalog's help, the dashboards, the fleet and the
// reports read their words and lists here rather than keep their own. A
// new cause is one row of Table. A leaf: it imports nothing of the project.
package cause

import "strings"

// Cause names why a verdict is invalid. The set is closed (Table).
type Cause string

// Kind says which verdicts carry a cause.
type Kind string

// Kinds of cause.
const (
	// KindGenerator: the generator-validity rule's causes, on a probe's, a
	// ladder step's and the daemon's live verdict (the
	// llmprobe_generator_invalid_cause series).
	KindGenerator Kind = "generator"
	// KindStep: a ladder step measured no one deployment; it names the
	// target, never the prober, and only a ladder step carries it.
	KindStep Kind = "step"
	// KindFleet: a fleet ladder step's share of a shard is missing or
	// invalid; only a fleet step's verdict carries it (never the live
	// gauge: one prober's window).
	KindFleet Kind = "fleet"
)

// The causes.
const (
	HostStarved     Cause = "host_starved"
	CgroupThrottled Cause = "cgroup_throttled"
	DispatchLag     Cause = "dispatch_lag"
	InFlightCap     Cause = "in_flight_cap"
	RateNotReached  Cause = "rate_not_reached"
	IdentityChanged Cause = "identity_changed"
	TargetRestarted Cause = "target_restarted"
	ShardMissing    Cause = "shard_missing"
	ShardInvalid    Cause = "shard_invalid"
)

// Entry is one cause's row of the table.
type Entry struct {
	Name Cause
	Kind Kind
	// Host marks a cause that blames the prober's host (it lacked CPU, was
	// throttled): not the generator's configuration, not the target.
	Host bool
	// Badge is the cause's short name on the status page's prober badge.
	Badge string
	// Meaning is what the cause says happened, in words.
	Meaning string
	// Action is what to do about it.
	Action string
}

// Table is every cause, generator causes first, in a stable order.
var Table = []Entry{
	{Name: HostStarved, Kind: KindGenerator, Host: true, Badge: "host",
		Meaning: "the generator was late and the prober's host lacked CPU (CPU pressure, a busy host, its threads waiting runnable, Go scheduler latency, CPU steal, or the prober using every CPU it has): the prober's trouble, not the target's",
		Action:  "give the prober more CPU: move it to a less busy host or give it dedicated cores (other processes held the CPU), lower the rate or split it over more probers, or, if this lateness is acceptable, widen max_lag_p99 (--max-lag-p99); do not spin-wait (--spin): spinning burns the CPU the prober lacks"},
	{Name: CgroupThrottled, Kind: KindGenerator, Host: true, Badge: "cgroup",
		Meaning: "the generator was late and the prober's cgroup was throttled by its CPU quota (a Kubernetes CPU limit): the prober's trouble, not the target's",
		Action:  "raise or remove the prober's CPU limit (Kubernetes resources.limits.cpu; the cgroup's cpu.max or cpu.cfs_quota_us) and request what it uses (resources.requests.cpu), or lower the rate; do not spin-wait (--spin): spinning spends the quota sooner"},
	{Name: DispatchLag, Kind: KindGenerator, Badge: "lag",
		Meaning: "the generator was late though its host was not visibly starved (timer precision, a rate beyond one pacer)",
		Action:  "lower the rate or split it over more probers, or widen max_lag_p99 (--max-lag-p99); spin-waiting the last part of each wait (--spin) tightens dispatch only where the host has a spare CPU"},
	{Name: InFlightCap, Kind: KindGenerator, Badge: "cap",
		Meaning: "arrivals were left unsent because the in-flight cap was full: offered load was suppressed",
		Action:  "raise the in-flight cap (max_in_flight, --max-in-flight); a cap that fills because the target is slow is the target's trouble, visible in its latency"},
	{Name: RateNotReached, Kind: KindGenerator, Badge: "rate",
		Meaning: "the first attempts dispatched fell outside the tolerance band around the requested rate",
		Action:  "look at the unsent reasons: a budget, rate cap or interrupt withheld arrivals; otherwise the generator could not keep up (see dispatch lag)"},
	{Name: IdentityChanged, Kind: KindStep, Badge: "identity_changed",
		Meaning: "the target's identity (model or version) changed while the step ran: a deploy",
		Action:  "nothing to fix in the prober: the target was deployed during the step; the steps before it stand as a lower bound for the old identity, and the next ladder measures the new one once the target settled"},
	{Name: TargetRestarted, Kind: KindStep, Badge: "target_restarted",
		Meaning: "the target refused connections while the step ran (nothing listening: a restart)",
		Action:  "nothing to fix in the prober: the target restarted during the step; the next ladder runs once it answers again and its baseline TTFT is back in range"},
	{Name: ShardMissing, Kind: KindFleet, Badge: "shard_missing",
		Meaning: "a shard's results for the step did not reach the coordinator in time (down, unreachable, late, or it refused the ladder): the merged figures would be a silent partial figure",
		Action:  "check that every shard is up and reachable from shard 0 on its admin port (fleet.peers), that the shards run the same ladder configuration, and that their clocks agree (the step timetable is wall-clock)"},
	{Name: ShardInvalid, Kind: KindFleet, Badge: "shard_invalid",
		Meaning: "a shard's own generator was invalid for the step (its verdict's causes are in the reason)",
		Action:  "see the shard's own causes in the reason and act on that shard (its host, its in-flight cap, its rate)"},
}

// The causes of each kind, and the host causes, in the table's order.
var (
	// Generator lists the generator-validity rule's causes: the
	// llmprobe_generator_invalid_cause label's values.
	Generator = Of(func(e Entry) bool { return e.Kind == KindGenerator })
	// Step lists the causes only a ladder step carries.
	Step = Of(func(e Entry) bool { return e.Kind == KindStep })
	// Fleet lists the causes only a fleet step carries.
	Fleet = Of(func(e Entry) bool { return e.Kind == KindFleet })
	// Host lists the causes that blame the prober's host.
	Host = Of(func(e Entry) bool { return e.Host })
)

// Of lists the table's causes whose entry keep accepts, in order.
func Of(keep func(Entry) bool) []Cause {
	var out []Cause
	for _, e := range Table {
		if keep(e) {
			out = append(out, e.Name)
		}
	}
	return out
}

// Lookup returns c's entry; false when c is not in the table.
func Lookup(c Cause) (Entry, bool) {
	for _, e := range Table {
		if e.Name == c {
			return e, true
		}
	}
	return Entry{}, false
}

// Action is what to do about c ("" for a cause not in the table).
func (c Cause) Action() string { e, _ := Lookup(c); return e.Action }

// Meaning is what c says happened ("" for a cause not in the table).
func (c Cause) Meaning() string { e, _ := Lookup(c); return e.Meaning }

// IsHost reports whether c blames the prober's host.
func (c Cause) IsHost() bool { e, _ := Lookup(c); return e.Host }

// Badge is c's short name on the status page (c itself when unknown).
func (c Cause) Badge() string {
	if e, ok := Lookup(c); ok {
		return e.Badge
	}
	return string(c)
}

// Join is the names of cs joined by ", ": "host_starved, cgroup_throttled".
func Join(cs []Cause) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = string(c)
	}
	return strings.Join(s, ", ")
}
