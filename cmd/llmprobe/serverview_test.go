package main

import (
	"encoding/json"
	"net"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/report"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
	"github.com/llmprobe/llmprobe/internal/sim"
)

// TestLadderServerViewByDefault: without --url the ladder reads the
// built-in simulator's /metrics beside every step: each step's JSON has
// the server's view (its TTFT counted over exactly the step's ok
// requests), its explanation and the TTFT gap.
func TestLadderServerViewByDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: a whole ladder in real time with the simulator's metrics beside each step")
	}
	t.Parallel()
	res := mustExit(t, ladderCodes, append(ladderArgs, "--json")...)
	var l ladder.Result
	if err := json.Unmarshal([]byte(res.stdout), &l); err != nil {
		t.Fatal(err)
	}
	for _, s := range l.Steps {
		v := s.Server
		if v == nil || v.Unavailable || v.Flavour != servermetrics.VLLM || !strings.HasSuffix(v.URL, "/metrics") || v.Explanation == "" {
			t.Fatalf("step %d: server view %+v", s.Index, v)
		}
		if ttft := v.Get(servermetrics.TTFT); ttft == nil || ttft.Histogram.Count != float64(s.Summary.Completed) {
			t.Errorf("step %d: server TTFT %+v for %d ok requests", s.Index, ttft, s.Summary.Completed)
		}
		if g := s.TTFTGap(); g == nil || g.ClientCount != s.Summary.TTFT.Count {
			t.Errorf("step %d: gap %+v", s.Index, g)
		}
	}
}

// TestServerMetricsFlag: --server-metrics names the endpoint; one that
// does not answer leaves every step a view saying why, and the ladder
// runs as without it. With --url and no --server-metrics there is none.
func TestServerMetricsFlag(t *testing.T) {
	if testing.Short() {
		t.Skip("full tier: probes and ladders with the simulator's metrics scraped beside them, in real time")
	}
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/metrics"
	ln.Close()
	res := mustExit(t, ladderCodes, append(ladderArgs, "--server-metrics", closed)...)
	for _, want := range []string{"server view (" + closed + ")", "step 1 server: server metrics unavailable: scrape " + closed, "connection refused", "capacity:"} {
		if !strings.Contains(res.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, res.stdout)
		}
	}

	s, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	u, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close(); _ = stop() }()
	res = mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--url", u, "--rate", "5", "--duration", "1s", "--json")
	var p report.Probe
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if p.Server != nil {
		t.Errorf("--url without --server-metrics read server metrics: %+v", p.Server)
	}
	res = mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--url", u, "--server-metrics", simMetricsURL(u), "--rate", "5", "--duration", "1s")
	if !strings.Contains(res.stdout, "server view ("+simMetricsURL(u)+", vllm) over the run: ") || !strings.Contains(res.stdout, "network + queueing gap p50 ") {
		t.Errorf("probe --server-metrics: no server view:\n%s", res.stdout)
	}
}

// TestProbeServerViewByDefault: probe without --url reports the built-in
// simulator's own view of the run in its JSON.
func TestProbeServerViewByDefault(t *testing.T) {
	t.Parallel()
	res := mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--rate", "5", "--duration", "1s", "--json")
	var p report.Probe
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if p.Server == nil || p.Server.Unavailable || p.Server.Flavour != servermetrics.VLLM || p.TTFTGap == nil {
		t.Fatalf("server view %+v gap %+v", p.Server, p.TTFTGap)
	}
	if ttft := p.Server.Get(servermetrics.TTFT); ttft == nil || ttft.Histogram.Count != float64(p.Completed) {
		t.Errorf("server TTFT %+v for %d ok requests", ttft, p.Completed)
	}
}

// TestServerMetricsFlavourFlag: --server-metrics-flavour picks the names
// read (checked by servermetrics' one parser), --server-metric adds one by
// name; an unknown flavour is a usage error naming the flag.
func TestServerMetricsFlavourFlag(t *testing.T) {
	t.Parallel()
	res := mustExit(t, []int{exitUsage}, "probe", "--server-metrics-flavour", "triton", "--rate", "5", "--duration", "1s")
	if !strings.Contains(res.stderr, `"--server-metrics-flavour" flag: want `+servermetrics.FlavourChoices) {
		t.Errorf("stderr: %s", res.stderr)
	}
	s, err := sim.New(sim.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	u, stop, err := s.Start("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { s.Close(); _ = stop() }()
	res = mustExit(t, []int{exitOK, exitGeneratorInvalid}, "probe", "--url", u, "--server-metrics", simMetricsURL(u), "--server-metrics-flavour", "tgi",
		"--server-metric", "vllm:num_requests_waiting", "--rate", "5", "--duration", "1s", "--json")
	var p report.Probe
	if err := json.Unmarshal([]byte(res.stdout), &p); err != nil {
		t.Fatal(err)
	}
	if p.Server == nil || p.Server.Flavour != servermetrics.TGI || p.Server.Metric("vllm:num_requests_waiting") == nil {
		t.Fatalf("server view %+v", p.Server)
	}
}
