package report

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// probe --html: the shared header, the outcome table with its counts and
// the latency percentiles.
func TestProbeHTML(t *testing.T) {
	for name, s := range summaries() {
		var page bytes.Buffer
		m := testMeta()
		m.Window, m.WindowName = s.Window, "window"
		if err := ProbeHTML(&page, s, m); err != nil {
			t.Fatal(name, err)
		}
		got := page.String()
		for _, want := range []string{"<th>llmprobe version</th><td>1.2.3</td>", "<th>model</th><td>qwen-7b</td>",
			"<th>API</th><td>openai-chat</td>", "<th>window</th><td>" + dur(s.Window) + "</td>", "<th>seed</th><td>7</td>",
			"<th>gates</th><td>" + gates(s.Gates) + "</td>", "<th>command</th>", "<h2>Latency</h2>"} {
			if !strings.Contains(got, want) {
				t.Errorf("%s: page lacks %q", name, want)
			}
		}
		for o, n := range s.Outcomes.ByOutcome {
			re := regexp.MustCompile(`<tr><td>` + regexp.QuoteMeta(string(o)) + `</td><td>(\d+)</td>`)
			if m := re.FindStringSubmatch(got); m == nil || m[1] != itoa(n) {
				t.Errorf("%s: outcome %s row %v, want count %d", name, o, m, n)
			}
		}
		if s.TTFT.Count > 0 && !strings.Contains(got, "<tr><td>TTFT</td><td>"+itoa(s.TTFT.Count)+"</td><td>"+dur(s.TTFT.P50)+"</td>") {
			t.Errorf("%s: no TTFT percentiles row", name)
		}
	}
}

func TestProbeHTMLEscapes(t *testing.T) {
	var page bytes.Buffer
	if err := ProbeHTML(&page, summaries()["open"], Meta{Model: "<script>x</script>"}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(page.String(), "<script>") || !strings.Contains(page.String(), "&lt;script&gt;") {
		t.Error("a model name reached the page unescaped")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
