package testutil

import (
	"context"
	"os/exec"
	"testing"
	"time"
)

// BusyLoops starts n shell busy loops: other processes holding the cores,
// as on a shared host. Each is killed, by its own process, when the test
// ends or after limit, whichever comes first, so a loop never outlives its
// test.
func BusyLoops(t testing.TB, n int, limit time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	var cmds []*exec.Cmd
	for range n {
		c := exec.CommandContext(ctx, "sh", "-c", "while :; do :; done")
		if err := c.Start(); err != nil {
			cancel()
			t.Fatalf("busy loop: %v", err)
		}
		cmds = append(cmds, c)
	}
	t.Cleanup(func() {
		cancel()
		for _, c := range cmds {
			_ = c.Wait()
		}
	})
}
