package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// llamaView folds the llama.cpp scrapes captured in servermetrics'
// testdata (before, under load with 4 busy slots and 4 deferred, after)
// with the server's 4 slots and one failed sample, as a ladder step would.
func llamaView(t *testing.T) *servermetrics.View {
	t.Helper()
	acc := servermetrics.NewAccumulator(servermetrics.Auto, nil)
	t0 := time.Date(2026, 12, 1, 23, 48, 0, 0, time.UTC)
	for i, name := range []string{"llamacpp_start.prom", "llamacpp_mid.prom", "llamacpp_end.prom"} {
		b, err := os.ReadFile(filepath.Join("..", "servermetrics", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		e, err := servermetrics.Parse(b, "text/plain; version=0.0.4")
		if err != nil {
			t.Fatal(err)
		}
		e.At = t0.Add(time.Duration(i) * 10 * time.Second)
		acc.Add(e)
	}
	v := acc.View()
	v.URL, v.Slots = "http://127.0.0.1:18150/metrics", 4
	v.FailedScrapes, v.FailureCause = 1, "timeout after 2s"
	v.Explanation = servermetrics.Explain(v)
	return &v
}

// TestLadderServerViewLlamaCPP: a llama.cpp step shows its slots busy/idle,
// its deferred requests, KV cache as not exported (this build has no
// KV-cache series), and a failed scrape's cause beside the count, in the
// text and the HTML report.
func TestLadderServerViewLlamaCPP(t *testing.T) {
	res := ladderResult("llama")
	res.Steps[res.KneeStep-1].Server = llamaView(t)
	var txt, page bytes.Buffer
	if err := LadderText(&txt, res); err != nil {
		t.Fatal(err)
	}
	if err := LadderHTML(&page, res, Meta{}); err != nil {
		t.Fatal(err)
	}
	row := ""
	for _, l := range strings.Split(txt.String(), "\n") {
		if strings.Contains(l, " 4/0 ") {
			row = l
		}
	}
	for _, want := range []string{"slots busy/idle", "deferred start→max", "server view (http://127.0.0.1:18150/metrics, llamacpp)",
		"deferred requests grew from 0 to 4 (0 at the end); slots busy up to 4 of 4;", "2900 tokens generated (145/s; 252/s per sequence)",
		"1 of 4 scrapes failed (last: timeout after 2s)"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, txt.String())
		}
	}
	if !strings.Contains(row, " 0→4 ") || !strings.Contains(row, " n/a ") {
		t.Errorf("step row %q: want busy/idle 4/0, deferred 0→4, KV cache n/a", row)
	}
	for _, want := range []string{"<th>slots busy/idle</th>", "<th>deferred start→max</th>", "<td>4/0</td>", "<td>0→4</td>", "<td>n/a</td>"} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML lacks %q", want)
		}
	}
}
