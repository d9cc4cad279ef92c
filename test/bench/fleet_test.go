package bench

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/fleet"
)

// freeAddrs reserves n loopback addresses (closed again: the daemons
// listen on them).
func freeAddrs(b *testing.B, n int) []string {
	b.Helper()
	out := make([]string, n)
	for i := range out {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		out[i] = l.Addr().String()
		l.Close()
	}
	return out
}

// shardConfig is shard i's configuration in a fleet whose admin servers
// are at addrs (a prober alone when there is one): the simulator at base,
// a negligible baseline, and one ladder over steps at start, climbing to
// its top unless the generator is invalid (abort.on_generator_invalid).
func shardConfig(i int, addrs []string, base, history string, steps []float64, step time.Duration) string {
	var rates, peers []string
	for _, r := range steps {
		rates = append(rates, strconv.FormatFloat(r, 'f', -1, 64))
	}
	for _, a := range addrs {
		peers = append(peers, `"http://`+a+`"`)
	}
	fleetKeys := ""
	if len(addrs) > 1 {
		fleetKeys = fmt.Sprintf("fleet: {shard: %d, shards: %d, peers: [%s]}\n", i, len(addrs), strings.Join(peers, ", "))
	}
	return fmt.Sprintf(`admin: {listen: %q}
log: {level: warn, format: json}
drain: {timeout: 2s}
limits: {max_rate: 10000}
%stargets:
  - name: sim
    url: %s
    api: openai-chat
    model: bench
    timeouts: {connect: 2s, headers: 2s, first_content: 2s, idle: 2s, total: 2s}
    max_in_flight: 20000
    baseline: {rate: 0.5}
    classes:
      - name: chat
        input: {dist: fixed, value: 16}
        output: {dist: fixed, value: 8}
        gates: {ttft: 1s}
    ladder:
      enabled: true
      run_on_start: true
      steps: [%s]
      step_duration: %s
      gap: 2s
      stop_at: top
      history_file: %q
`, addrs[i], fleetKeys, base, strings.Join(rates, ", "), step, history)
}

// runLadder runs n probers (a fleet of n, or one prober alone) against the
// simulator at base until shard 0 has written its ladder, and returns it.
func runLadder(b *testing.B, bin, base string, n int, steps []float64, step time.Duration) fleet.Result {
	b.Helper()
	dir := b.TempDir()
	addrs := freeAddrs(b, n)
	history := filepath.Join(dir, "history.jsonl")
	// Shards 1..n−1 first, then shard 0 once they answer: every shard is
	// there for the first step (a late one's shares would be missing).
	order := make([]int, 0, n)
	for i := 1; i < n; i++ {
		order = append(order, i)
	}
	order = append(order, 0)
	for _, i := range order {
		cfg := filepath.Join(dir, fmt.Sprintf("shard%d.yaml", i))
		hist := history // shard 0's: the fleet's ladder (only shard 0 writes one)
		if i > 0 {
			hist = filepath.Join(dir, fmt.Sprintf("history%d.jsonl", i))
		}
		if err := os.WriteFile(cfg, []byte(shardConfig(i, addrs, base, hist, steps, step)), 0o600); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(bin, "run", "--config.file", cfg)
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		})
		ready := false
		for range 100 {
			if resp, err := http.Get("http://" + addrs[i] + "/-/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					ready = true
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if !ready {
			b.Fatalf("prober %d did not become ready at %s", i, addrs[i])
		}
	}
	// The whole timetable (each step, its 2 s settle and 2 s gap), and a
	// margin: every load loop here stops by itself.
	deadline := time.Now().Add(time.Duration(len(steps))*(step+4*time.Second) + 30*time.Second)
	for time.Now().Before(deadline) {
		if res, ok := readHistory(b, history); ok {
			return res
		}
		time.Sleep(500 * time.Millisecond)
	}
	b.Fatalf("no ladder in %s by the end of its timetable", history)
	return fleet.Result{}
}

// readHistory reads the first ladder line of a history file (a fleet's
// carries its shards' shares; a prober alone's is a ladder line).
func readHistory(b *testing.B, path string) (fleet.Result, bool) {
	f, err := os.Open(path)
	if err != nil {
		return fleet.Result{}, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	if !sc.Scan() {
		return fleet.Result{}, false
	}
	var res fleet.Result
	if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return res, true
}

// highestValid is the highest step rate at which the ladder's verdict was
// valid and, in a fleet, every shard's share was there and valid; and the
// first step that was not, described.
func highestValid(res fleet.Result) (rate float64, first string) {
	shardOK := map[int]bool{}
	for _, st := range res.Steps {
		shardOK[st.Index] = true
	}
	for _, ss := range res.ShardSteps {
		if ss.Missing != "" || !ss.Valid {
			shardOK[ss.Step] = false
		}
	}
	for _, st := range res.Steps {
		if !st.Summary.Validity.Valid || !shardOK[st.Index] {
			var why []string
			for _, c := range st.Summary.Validity.Causes {
				why = append(why, string(c.Cause)+": "+c.Reason)
			}
			for _, ss := range res.ShardSteps {
				if ss.Step == st.Index && (ss.Missing != "" || !ss.Valid) {
					why = append(why, fmt.Sprintf("shard %d: valid %v %v %s", ss.Shard, ss.Valid, ss.InvalidCauses, ss.Missing))
				}
			}
			return rate, fmt.Sprintf("step %d (%g req/s, lag p99 %.1f ms): %s", st.Index, st.Rate, st.Summary.DispatchLag.P99.Seconds()*1e3, strings.Join(why, "; "))
		}
		rate = st.Rate
	}
	return rate, ""
}

// BenchmarkFleetLadder runs the same ladder (LLMPROBE_BENCH_FLEET_STEPS,
// default 250…6000 req/s, LLMPROBE_BENCH_STEP each, default 5s, a 2 s
// settle and a 2 s gap) against one fast simulator (1 ms prefill, 8 tokens
// at 0.1 ms, no slot limit: the target is never the limit) from one prober
// alone and from a fleet of LLMPROBE_BENCH_SHARDS (default 3), every
// prober its own `llmprobe run` process on loopback with static peers. It
// reports the highest step rate whose verdict was valid (in the fleet:
// merged by shard 0, every shard's share present and its own generator
// valid), the limit of what that set-up can offer honestly. On one
// machine the probers and the simulator share its cores: a fleet spreads
// the generator's work over processes, not over hardware.
func BenchmarkFleetLadder(b *testing.B) {
	bin := buildLLMProbe(b)
	base, _ := startSim(b, bin, "--ttft", "1ms", "--token-time", "100us", "--output-tokens", "8")
	steps := envFloats(b, "LLMPROBE_BENCH_FLEET_STEPS", []float64{250, 500, 1000, 1500, 2000, 3000, 4000, 5000, 6000}) // the fleet's step rates
	step := envDuration(b, "LLMPROBE_BENCH_STEP", 5*time.Second)
	shards := 3
	if v := os.Getenv("LLMPROBE_BENCH_SHARDS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			b.Fatalf("LLMPROBE_BENCH_SHARDS: %q is not a fleet (at least 2)", v)
		}
		shards = n
	}
	for _, n := range []int{1, shards} {
		b.Run(fmt.Sprintf("probers=%d", n), func(b *testing.B) {
			for range b.N {
				res := runLadder(b, bin, base, n, steps, step)
				rate, first := highestValid(res)
				for _, st := range res.Steps {
					b.Logf("step %d: %g req/s, achieved %.1f, lag p99 %.2f ms, valid %v, ok %d/%d", st.Index, st.Rate, st.Summary.AchievedRate, st.Summary.DispatchLag.P99.Seconds()*1e3, st.Summary.Validity.Valid, st.Summary.Completed, st.Summary.Planned)
				}
				if first != "" {
					b.Logf("first step not valid: %s", first)
				}
				if res.Aborted {
					b.Logf("aborted: %s", res.AbortReason)
				}
				b.ReportMetric(rate, "highest_valid_rps")
				b.ReportMetric(float64(len(res.Steps)), "steps_run")
			}
		})
	}
}
