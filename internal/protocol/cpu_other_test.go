//go:build !unix

package protocol

import "time"

// processCPU is unknown here: no CPU metric is reported.
func processCPU() time.Duration { return 0 }
