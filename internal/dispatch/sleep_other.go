//go:build !linux

package dispatch

import "time"

// canSleepPrecisely is false where no precise thread sleep is wired up: the
// pacer then sleeps on the runtime timer to the end of each wait.
const canSleepPrecisely = false

func sleepPrecisely(time.Duration) {}
