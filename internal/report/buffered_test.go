package report

import (
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/stats"
)

func TestTextNamesBufferedStreams(t *testing.T) {
	for _, n := range []int{0, 3} {
		var b strings.Builder
		if err := Text(&b, stats.Summary{Mode: ledger.ModeOpen, Buffered: n}); err != nil {
			t.Fatal(err)
		}
		line := ""
		for l := range strings.Lines(b.String()) {
			if f := strings.Fields(l); len(f) > 1 && f[0] == "buffered" {
				line = l
			}
		}
		has := strings.Contains(line, " 3 ") && strings.Contains(line, ledger.BufferedVerdict+" (caused by: nginx proxy_buffering on")
		if has != (n > 0) {
			t.Errorf("%d buffered streams: the report says %v\n%s", n, has, b.String())
		}
	}
}
