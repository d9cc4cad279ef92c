//go:build !linux

package hostload

import (
	"testing"
	"time"
)

// rusageCPU is read on Linux only (the process CPU is checked there).
func rusageCPU(*testing.T) time.Duration { return 0 }
