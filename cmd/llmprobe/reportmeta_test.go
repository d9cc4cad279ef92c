package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// A report's command line carries no credentials: URL user info and secret
// query values are redacted, and so is every secret the client knows.
func TestCommandLineRedacted(t *testing.T) {
	red := sanitize.NewRedactor("s3cr3t-k3y-value")
	for _, c := range []struct {
		args []string
		want string
		bad  []string
	}{
		{[]string{"--url", "http://alice:hunter2@10.0.0.1:8000/v1", "--seed", "7"},
			"llmprobe ladder --url http://" + sanitize.Marker + "@10.0.0.1:8000/v1 --seed 7", []string{"hunter2", "alice"}},
		{[]string{"--url=https://h/v1?api_key=abc123&x=1"}, "", []string{"abc123"}},
		{[]string{"--header", "X-Note: s3cr3t-k3y-value"}, "", []string{"s3cr3t-k3y-value"}},
		{[]string{"--think-time", "a b"}, "llmprobe ladder --think-time 'a b'", nil},
	} {
		got := commandLine("ladder", c.args, red)
		if c.want != "" && got != c.want {
			t.Errorf("commandLine(%q) = %q, want %q", c.args, got, c.want)
		}
		for _, b := range c.bad {
			if strings.Contains(got, b) {
				t.Errorf("commandLine(%q) = %q: leaks %q", c.args, got, b)
			}
		}
	}
}

// probe --html writes a page with the header and the outcome table.
func TestProbeHTMLFile(t *testing.T) {
	t.Parallel()
	path := tempPath(t, "p.html")
	mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--rate", "10", "--duration", "1s", "--arrival", "constant",
		"--max-tokens", "8", "--seed", "42", "--slo-ttft", "2s", "--html", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{"<th>llmprobe version</th><td>" + currentBuild().Version + "</td>",
		"<th>command</th><td>llmprobe probe --rate 10 --duration 1s --arrival constant --max-tokens 8 --seed 42 --slo-ttft 2s --html ",
		"<th>target</th><td>built-in simulator (127.0.0.1:", "<th>API</th><td>openai-chat</td>", "<th>window</th><td>1s</td>",
		"<th>arrival process</th><td>constant</td>", "<th>seed</th><td>42</td>", "<th>gates</th><td>TTFT ≤ 2s</td>",
		"<th>prober host</th>", "<h2>Latency</h2>"} {
		if !strings.Contains(page, want) {
			t.Errorf("probe HTML lacks %q", want)
		}
	}
	m := regexp.MustCompile(`<tr><td>ok</td><td>(\d+)</td>`).FindStringSubmatch(page)
	if m == nil || m[1] == "0" {
		t.Errorf("no ok count in the outcome table: %v", m)
	}
}

// ladder --html carries the header: step duration, arrivals, seed.
func TestLadderHTMLHeader(t *testing.T) {
	t.Parallel()
	path := tempPath(t, "l.html")
	mustExit(t, ladderCodes, "ladder", "--steps", "5", "--step-duration", "1s", "--max-tokens", "8", "--arrival", "gamma",
		"--burstiness", "0.5", "--seed", "9", "--slo-ttft", "1s", "--html", path)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<th>step duration</th><td>1s</td>", "<th>arrival process</th><td>gamma (k = 0.5)</td>",
		"<th>seed</th><td>9</td>", "<th>model</th>", "<th>gates</th><td>TTFT ≤ 1s</td>", "TTFT gate 1s"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("ladder HTML lacks %q", want)
		}
	}
}
