package statuspage

import "time"

// LadderSettle is the daemon's wait, before a ladder, for the target to
// settle: the previous ladder's requests ended and the baseline TTFT back
// within its normal range (docs/ladder.md, "A deploy during a ladder").
// The daemon's Activity text says the same in words.
type LadderSettle struct {
	Trigger        string        // the ladder waiting: schedule, identity_change, start, manual
	Since          time.Time     // when the wait began
	Max            time.Duration // ladder.settle_max: the ladder starts anyway, with a note, past it
	LadderInFlight int           // the previous ladder's requests still in flight
	BaselineTTFT   time.Duration // the latest baseline TTFT (0: none since the wait's reference point)
	Limit          time.Duration // the top of the baseline TTFT's normal range (0: no reference)
	// Waiting is what the target has not settled from: the daemon's
	// finding, worded here (SettleWhy).
	Waiting SettleWait
}

// SettleWait is what a ladder waits for before it starts; the zero value
// is nothing (settled).
type SettleWait struct {
	Kind SettleKind
	// Failure is, for SettleFailed, the failed baseline request's outcome
	// and reason ("timeout/first_content"): the ledger's closed sets.
	Failure string
	// TTFT is, for SettleSlow, the baseline TTFT above the range's top.
	TTFT time.Duration
	// Answers and Need are, for SettleFew, the baseline answers seen since
	// the target last changed and how many are needed.
	Answers, Need int
}

// SettleKind is why a target has not settled.
type SettleKind int

// The reasons, in the order the daemon checks them.
const (
	Settled          SettleKind = iota
	SettleInFlight              // the previous ladder's requests are still in flight
	SettleFailed                // a baseline request since the change failed
	SettleSlow                  // a baseline TTFT above its normal range
	SettleFew                   // too few baseline answers since the change
	SettleNoIdentity            // the target's identity is not known yet
)
