package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/cause"
	"github.com/llmprobe/llmprobe/internal/fleet"
)

// fleetRecipe is the sh block of docs/fleet.md's "A local fleet": its
// llmprobe command lines, in order, without the trailing `&`.
func fleetRecipe(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "docs", "fleet.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i := strings.Index(doc, "\n## A local fleet\n")
	if i < 0 {
		t.Fatal(`docs/fleet.md: no section "A local fleet"`)
	}
	doc = doc[i:]
	start := strings.Index(doc, "```sh\n")
	end := strings.Index(doc[start+6:], "```")
	if start < 0 || end < 0 {
		t.Fatal("docs/fleet.md: no sh block in \"A local fleet\"")
	}
	var cmds [][]string
	for _, line := range strings.Split(doc[start+6:start+6+end], "\n") {
		line, _, _ = strings.Cut(line, "#")
		line = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), "&"))
		if f := strings.Fields(line); len(f) > 0 && f[0] == "llmprobe" {
			cmds = append(cmds, f[1:])
		}
	}
	return cmds
}

var loopbackPort = regexp.MustCompile(`127\.0\.0\.1:(\d+)`)

// flagValue is the value of --name in args ("" when absent).
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--"+name && i+1 < len(args) {
			return args[i+1]
		}
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v
		}
	}
	return ""
}

func getJSON(t *testing.T, url string, v any) error {
	t.Helper()
	b, err := getBody(url)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// TestLocalFleetRecipe runs docs/fleet.md's local fleet as written (on free
// ports in place of the documented ones, in config/fleet.yaml too): the
// simulator and three `llmprobe run` shards. The fleet forms: every shard
// answers as its index of 3, shard 0's first fleet ladder is followed by
// shards 1 and 2, each reports its share of every step, the ladder ends
// done (or, on a starved host, aborted for a host cause, never a shard
// missing), and shard 0 publishes the fleet's capacity.
func TestLocalFleetRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the local fleet recipe runs four processes for about a minute")
	}
	cmds := fleetRecipe(t)
	if len(cmds) != 4 || cmds[0][0] != "sim" {
		t.Fatalf("docs/fleet.md's local fleet: %v: want `llmprobe sim` and three `llmprobe run`", cmds)
	}
	cfgBody, err := os.ReadFile(filepath.Join(root, "config", "fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// Every documented loopback port, in the commands and the file, moved
	// to a free one.
	ports := map[string]string{}
	move := func(s string) string {
		return loopbackPort.ReplaceAllStringFunc(s, func(m string) string {
			p := loopbackPort.FindStringSubmatch(m)[1]
			if ports[p] == "" {
				ports[p] = strconv.Itoa(freePort(t))
			}
			return "127.0.0.1:" + ports[p]
		})
	}
	cfg := filepath.Join(t.TempDir(), "fleet.yaml")
	if err := os.WriteFile(cfg, []byte(move(string(cfgBody))), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range cmds {
		for i, a := range c {
			c[i] = move(a)
			if a == "config/fleet.yaml" {
				c[i] = cfg
			}
		}
	}

	bin := buildLLMProbe(t)
	sim := start(t, "sim", bin, cmds[0]...)
	sim.waitHTTP(t, "http://"+flagValue(cmds[0], "listen")+"/metrics", 30*time.Second)
	admin := make([]string, 3)
	for _, c := range cmds[1:] {
		if c[0] != "run" || flagValue(c, "config.file") != cfg {
			t.Fatalf("%v: want `llmprobe run --config.file config/fleet.yaml …`", c)
		}
		id, err := fleet.ParseShard(flagValue(c, "shard"))
		if err != nil || id.Shards != 3 {
			t.Fatalf("%v: --shard %q: %v (want INDEX/3)", c, flagValue(c, "shard"), err)
		}
		admin[id.Shard] = "http://" + flagValue(c, "web.listen-address")
		p := start(t, fmt.Sprintf("shard %d", id.Shard), bin, c...)
		// In the documented order, each up before the next starts.
		p.waitHTTP(t, admin[id.Shard]+fleet.PathShard, 30*time.Second)
	}
	for i, a := range admin {
		var info fleet.ShardInfo
		if err := getJSON(t, a+fleet.PathShard, &info); err != nil || info.Shard != i || info.Shards != 3 {
			t.Errorf("%s%s: %+v, %v: want shard %d of 3", a, fleet.PathShard, info, err, i)
		}
	}

	// Shard 0's first fleet ladder (run_on_start), to its end.
	var lad fleet.Announcement
	deadline := time.Now().Add(3 * time.Minute)
	for {
		var v fleet.View
		if err := getJSON(t, admin[0]+fleet.PathLadders, &v); err == nil && len(v.Ladders) > 0 {
			lad = v.Ladders[0]
			if lad.State != fleet.StateRunning {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("shard 0's fleet ladder did not end within 3 minutes: %+v", lad)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("fleet ladder %s: %s %s", lad.ID, lad.State, lad.Reason)
	switch {
	case lad.State == fleet.StateDone:
	case lad.State == fleet.StateAborted && hostCause(lad.Reason):
		t.Logf("aborted for a host cause (a busy host): %s", lad.Reason)
	default:
		t.Fatalf("fleet ladder %s: %s %q: want done (or aborted for a host cause)", lad.ID, lad.State, lad.Reason)
	}
	steps := len(lad.Steps)
	if lad.State != fleet.StateDone {
		steps = 1
	}
	for i, a := range admin {
		var v fleet.View
		if err := getJSON(t, a+fleet.PathLadders, &v); err != nil || len(v.Ladders) == 0 || v.Ladders[0].ID != lad.ID {
			t.Errorf("shard %d does not know ladder %s: %+v, %v", i, lad.ID, v, err)
		}
		for s := 1; s <= steps; s++ {
			var rep fleet.StepReport
			url := fmt.Sprintf("%s%s/%s/steps/%d", a, fleet.PathLadders, lad.ID, s)
			if err := getJSON(t, url, &rep); err != nil || rep.Shard != i || rep.Shards != 3 || rep.Step != s {
				t.Errorf("shard %d, step %d: %+v, %v: want its report", i, s, rep, err)
			}
		}
		m, err := getBody(a + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		if want := fmt.Sprintf(`llmprobe_fleet_info{shard="%d",shards="3"} 1`, i); !strings.Contains(string(m), want) {
			t.Errorf("shard %d's /metrics: no %s", i, want)
		}
		fleetCapacity := regexp.MustCompile(`(?m)^llmprobe_capacity_requests_per_second\{[^}]*scope="fleet"[^}]*\} `).Match(m)
		switch {
		case i > 0 && fleetCapacity:
			t.Errorf("shard %d publishes a fleet capacity: shard 0 alone does", i)
		case i == 0 && lad.State == fleet.StateDone && !fleetCapacity:
			t.Error("shard 0 publishes no fleet capacity after a done fleet ladder")
		}
	}
}

// hostCause says whether an abort reason is a prober host's (a shard's
// generator invalid for a host cause on a busy machine), not a shard
// missing from the fleet.
func hostCause(reason string) bool {
	for _, missing := range []string{string(cause.ShardMissing), "no results", "not found among the peers"} {
		if strings.Contains(reason, missing) {
			return false
		}
	}
	if strings.Contains(reason, "generator invalid") {
		return true
	}
	for _, c := range cause.Generator {
		if strings.Contains(reason, string(c)) {
			return true
		}
	}
	return false
}
