package deploy

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// podEnviron is the environment a container of the workload sees: its
// env values (a Secret's as a placeholder) and HOSTNAME, the pod's name.
func podEnviron(c obj, hostname string) []string {
	env := envOf(c)
	out := []string{"HOSTNAME=" + hostname}
	for k, v := range env {
		if v == "<from>" {
			v = "placeholder-secret"
		}
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// renderedConfig writes the config.yaml of the ConfigMap the workload
// mounts to a file and returns its path.
func renderedConfig(t *testing.T, objs []obj, w obj) string {
	t.Helper()
	for _, v := range list(w, "spec", "template", "spec", "volumes") {
		name := str(v, "configMap", "name")
		if name == "" {
			continue
		}
		cm := only(t, objs, "ConfigMap", name)
		body := str(cm, "data", "config.yaml")
		if body == "" {
			t.Fatalf("ConfigMap %s: no config.yaml", name)
		}
		p := filepath.Join(t.TempDir(), "config.yaml")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	t.Fatal("the workload mounts no ConfigMap")
	return ""
}

// TestKustomizeConfigs loads every rendered configuration as its pods
// would (the file the ConfigMap holds, the container's environment, the
// pod's host name) through wiring.Load: the base's prober is alone; in
// every fleet overlay pod llmprobe-i is shard i of the StatefulSet's
// replica count, finding its peers through the headless Service on the
// admin port, and a pod beyond the count (kubectl scale) refuses to start.
func TestKustomizeConfigs(t *testing.T) {
	kube := filepath.Join(root, "deploy", "kubernetes")
	t.Run("base", func(t *testing.T) {
		objs := render(t, filepath.Join(kube, "base"))
		dep := only(t, objs, "Deployment", "llmprobe")
		c := container(t, dep, "llmprobe")
		cfg, err := wiring.Load(config.Options{Path: renderedConfig(t, objs, dep), Environ: func() []string { return podEnviron(c, "llmprobe-7d9c8b6f5-x2x4z") }, Checks: wiring.Lints()})
		if err != nil {
			t.Fatal(err)
		}
		id, _, err := wiring.Fleet(cfg, func() (string, error) { return "llmprobe-7d9c8b6f5-x2x4z", nil })
		if err != nil || id.InFleet() {
			t.Errorf("base: %v, %v: want a prober alone", id, err)
		}
	})
	for _, o := range fleetOverlays {
		t.Run(o.dir, func(t *testing.T) {
			objs := render(t, filepath.Join(kube, o.dir))
			sts := only(t, objs, "StatefulSet", "llmprobe")
			c := container(t, sts, "llmprobe")
			replicas, _ := get(sts, "spec", "replicas").(int)
			path := renderedConfig(t, objs, sts)
			admin := 0
			for _, p := range list(c, "ports") {
				if str(p, "name") == "admin" {
					admin, _ = get(p, "containerPort").(int)
				}
			}
			for i := range replicas + 1 {
				pod := fmt.Sprintf("%s-%d", str(sts, "metadata", "name"), i)
				cfg, err := wiring.Load(config.Options{Path: path, Environ: func() []string { return podEnviron(c, pod) }, Checks: wiring.Lints()})
				if err != nil {
					t.Fatalf("%s: %v", pod, err)
				}
				id, peers, err := wiring.Fleet(cfg, func() (string, error) { return pod, nil })
				if i == replicas {
					if err == nil {
						t.Errorf("%s, beyond the %d replicas: starts as %v; want it refused", pod, replicas, id)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s: %v", pod, err)
				}
				if want := (fleet.Identity{Shard: i, Shards: replicas}); id != want {
					t.Errorf("%s: shard %v, want %v", pod, id, want)
				}
				if peers.DNS != str(sts, "spec", "serviceName") || peers.Port != admin || len(peers.URLs) != 0 {
					t.Errorf("%s: peers %+v, want the headless Service %q on the admin port %d", pod, peers, str(sts, "spec", "serviceName"), admin)
				}
			}
		})
	}
}

// TestShippedConfigsValidate (issue 25): every configuration file shipped
// under config/ and deploy/ passes `validate` (run's rules and the lints:
// no target that sends nothing, no budget spent before the day ends) with
// no warning, a fleet's file at each size the repository deploys it, and
// every budget lasts the day with room to spare: the expected spend
// (wiring.ExpectedUsage, a lower bound) is at most 90% of it.
func TestShippedConfigsValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "config", "*.yaml"))
	if err != nil || len(files) < 5 {
		t.Fatalf("config/*.yaml: %v, %d files", err, len(files))
	}
	files = append(files, filepath.Join(root, "deploy", "compose", "llmprobe.yaml"),
		filepath.Join(root, "deploy", "kubernetes", "base", "config.yaml"), filepath.Join(root, "deploy", "kubernetes", "fleet", "config.yaml"))
	// The sizes the repository deploys a fleet at: the fleet overlay's 3
	// replicas and regions/us-east-1's 2.
	fleetSizes := map[string][]int{filepath.Join(root, "deploy", "kubernetes", "fleet", "config.yaml"): {2, 3}}
	for _, f := range files {
		name, _ := filepath.Rel(root, f)
		sizes := fleetSizes[f]
		if sizes == nil {
			sizes = []int{0} // as the file and the environment say
		}
		for _, n := range sizes {
			o := config.Options{Path: f, Environ: func() []string { return []string{"OPENAI_API_KEY=x", "HOSTNAME=llmprobe-0"} }, Checks: wiring.Lints()}
			if n > 0 {
				o.Overrides, o.OverridesFrom = map[string]any{"fleet.shards": n}, "test"
			}
			cfg, err := wiring.Load(o)
			if err != nil {
				t.Errorf("%s (fleet.shards %d): %v", name, n, err)
				continue
			}
			if w := cfg.Warnings(); len(w) > 0 {
				t.Errorf("%s: warnings: %v", name, w)
			}
			for i, tg := range cfg.Targets {
				b := tg.Budget
				if b.TokensPerDay <= 0 && b.RequestsPerDay <= 0 {
					continue
				}
				u, err := wiring.ExpectedUsage(tg, i)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				for _, x := range []struct {
					what          string
					spend, budget float64
				}{{"tokens", u.Tokens, float64(b.TokensPerDay)}, {"requests", u.Requests, float64(b.RequestsPerDay)}} {
					if x.budget > 0 && x.spend > 0.9*x.budget {
						t.Errorf("%s: target %s spends %.0f %s a day of its %.0f: less than 10%% to spare", name, tg.Name, x.spend, x.what, x.budget)
					}
					if x.budget > 0 {
						t.Logf("%s: target %s: %.0f %s a day of %.0f (%.0f%%)", name, tg.Name, x.spend, x.what, x.budget, 100*x.spend/x.budget)
					}
				}
			}
		}
	}
}
