package fleet

import (
	"time"

	"github.com/llmprobe/llmprobe/internal/stats"
	"github.com/llmprobe/llmprobe/internal/verdict"
)

// The fleet's endpoints on every shard's admin server (GET, JSON).
const (
	// PathShard answers ShardInfo: which shard this is.
	PathShard = "/fleet/v1/shard"
	// PathLadders answers View: the fleet ladders this shard knows (on
	// shard 0, the coordinator's authoritative state).
	PathLadders = "/fleet/v1/ladders"
)

// Timing of the protocol (documented in docs/fleet.md).
const (
	// AnnounceLead is how long after its announcement a fleet ladder's
	// first step starts.
	AnnounceLead = 2 * time.Second
	// PollEvery is how often a shard reads the coordinator's ladder state.
	PollEvery = 500 * time.Millisecond
	// LostAfter is how long a shard offers without a fresh ladder state
	// from the coordinator before it stops its share on its own.
	LostAfter = 3 * time.Second
	// DecisionLead is how long before a step's start the coordinator has
	// decided whether it runs.
	DecisionLead = time.Second
	// MinGap is the smallest ladder.gap of a fleet: the coordinator
	// gathers and judges a step in its settle window and gap, and must
	// decide DecisionLead before the next step.
	MinGap = 2 * time.Second
	// CheckEvery is how often the coordinator applies the abort rules to
	// the shards' merged in-step counts.
	CheckEvery = time.Second
	// MaxReportBytes bounds one step report read from a shard.
	MaxReportBytes = 64 << 20
)

// ShardInfo is what PathShard answers.
type ShardInfo struct {
	Identity
	// Instance is random per process: it tells a prober its own address
	// among its peers, and two processes claiming one shard apart.
	Instance string   `json:"instance"`
	Targets  []string `json:"targets"`
}

// Ladder states.
const (
	StateRunning = "running" // steps up to Allowed may start
	StateStopped = "stopped" // its stop_at rule ended it
	StateAborted = "aborted" // an abort rule (or a shard's) ended it: offer nothing more, now
	StateDone    = "done"    // every step was offered
)

// Announcement is a fleet ladder as the coordinator declares it: every
// shard offers its share of step i at StepStarts[i−1] while the state is
// running and Allowed ≥ i. A step not yet allowed starts at the latest
// Period after the one before (the timetable, Start + (i−1)·Period when
// no step ended early).
type Announcement struct {
	ID      string    `json:"id"`
	Target  string    `json:"target"`
	Trigger string    `json:"trigger"`
	Start   time.Time `json:"start"`
	// PeriodSeconds is step_duration + settle + gap (each shard computes
	// it from its own configuration; a different fingerprint refuses).
	PeriodSeconds float64 `json:"step_period_s"`
	// Steps are the fleet's step rates (each shard offers 1/N of them).
	Steps       []float64 `json:"steps"`
	Fingerprint string    `json:"fingerprint"`
	// Allowed is the highest step that may start.
	Allowed int `json:"allowed_step"`
	// StepStarts are the starts of steps 1 to Allowed: step 1 at Start;
	// each next one set when it is allowed, ladder.gap after every
	// shard's results of the step before were in (their requests all
	// finished) but at least AnnounceLead ahead, and never later than
	// Period after the step before.
	StepStarts []time.Time `json:"step_starts"`

	State     string     `json:"state"`
	Reason    string     `json:"reason,omitempty"`
	AbortedAt *time.Time `json:"aborted_at,omitempty"`
}

// View is what PathLadders answers.
type View struct {
	Identity
	Instance string         `json:"instance"`
	Ladders  []Announcement `json:"ladders"`
}

// StepReport is one shard's results for one step of a fleet ladder
// (GET /fleet/v1/ladders/{id}/steps/{step}): its counts and latency
// sketches, every class together (All) and per class, and its own
// generator verdict and abort reason.
type StepReport struct {
	Ladder      string  `json:"ladder"`
	Target      string  `json:"target"`
	Step        int     `json:"step"`
	Shard       int     `json:"shard"`
	Shards      int     `json:"shards"`
	Fingerprint string  `json:"fingerprint"`
	Rate        float64 `json:"rate"` // this shard's offered rate
	// Pending counts requests still in flight when the step was
	// summarised (in no count).
	Pending     int                           `json:"pending"`
	AbortReason string                        `json:"abort_reason,omitempty"`
	Valid       bool                          `json:"valid"`
	Causes      []verdict.InvalidCause        `json:"invalid_causes,omitempty"`
	All         stats.ShardSummary            `json:"all"`
	Classes     map[string]stats.ShardSummary `json:"classes"`
	// Host is the shard's host health over its share of the step (CPU
	// pressure, cgroup throttling, run-queue wait, …); absent when not
	// measured. The coordinator names the step's host cause from it.
	Host *verdict.HostHealth `json:"host,omitempty"`
}

// LiveReport is one shard's step in progress
// (GET /fleet/v1/ladders/{id}/live): counts only, and the in-step TTFT
// rule's counts (ladder.TTFTInFlight).
type LiveReport struct {
	Ladder      string             `json:"ladder"`
	Shard       int                `json:"shard"`
	Step        int                `json:"step"`
	Planned     int                `json:"planned"`
	Finished    int                `json:"finished"`
	All         stats.ShardSummary `json:"all"`
	TTFTJudged  int                `json:"ttft_judged"`
	TTFTOver    int                `json:"ttft_over"`
	TTFTWaiting int                `json:"ttft_waiting"`
	AbortReason string             `json:"abort_reason,omitempty"`
}
