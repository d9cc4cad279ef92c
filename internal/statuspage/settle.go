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
	Why            string        // what it waits for, in words
}
