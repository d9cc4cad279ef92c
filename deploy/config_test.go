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
		cfg, err := wiring.Load(config.Options{Path: renderedConfig(t, objs, dep), Environ: func() []string { return podEnviron(c, "llmprobe-7d9c8b6f5-x2x4z") }})
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
				cfg, err := wiring.Load(config.Options{Path: path, Environ: func() []string { return podEnviron(c, pod) }})
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
