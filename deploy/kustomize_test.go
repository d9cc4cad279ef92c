package deploy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// obj is one rendered Kubernetes object.
type obj = map[string]any

// render builds the kustomization in dir as `kubectl kustomize` does
// (kustomize's own library) and returns its objects.
func render(t *testing.T, dir string) []obj {
	t.Helper()
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	y, err := m.AsYaml()
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out []obj
	dec := yaml.NewDecoder(bytes.NewReader(y))
	for {
		var d obj
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("kustomize build %s: output: %v", dir, err)
		}
		out = append(out, d)
	}
	return out
}

// get walks a path of map keys.
func get(v any, path ...string) any {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func str(v any, path ...string) string { s, _ := get(v, path...).(string); return s }

func list(v any, path ...string) []any { l, _ := get(v, path...).([]any); return l }

func labelsOf(v any, path ...string) map[string]string {
	out := map[string]string{}
	m, _ := get(v, path...).(map[string]any)
	for k, x := range m {
		out[k], _ = x.(string)
	}
	return out
}

// selects reports whether every pair of selector is in labels (and the
// selector is not empty: an empty one would select everything).
func selects(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// find returns the objects of a kind (and name, when given).
func find(objs []obj, kind, name string) []obj {
	var out []obj
	for _, o := range objs {
		if o["kind"] == kind && (name == "" || str(o, "metadata", "name") == name) {
			out = append(out, o)
		}
	}
	return out
}

func only(t *testing.T, objs []obj, kind, name string) obj {
	t.Helper()
	f := find(objs, kind, name)
	if len(f) != 1 {
		t.Fatalf("%d %s %q rendered, want 1", len(f), kind, name)
	}
	return f[0]
}

// container returns the pod template's container of that name.
func container(t *testing.T, workload obj, name string) obj {
	t.Helper()
	for _, c := range list(workload, "spec", "template", "spec", "containers") {
		if str(c, "name") == name {
			return c.(obj)
		}
	}
	t.Fatalf("%s: no container %q", str(workload, "kind"), name)
	return nil
}

// envOf is a container's plain env values (valueFrom entries as "<from>").
func envOf(c obj) map[string]string {
	out := map[string]string{}
	for _, e := range list(c, "env") {
		v, ok := get(e, "value").(string)
		if !ok && get(e, "valueFrom") != nil {
			v = "<from>"
		}
		out[str(e, "name")] = v
	}
	return out
}

// fleetOverlays are the overlays that run llmprobe as a fleet, with the
// region each sets ("" = none).
var fleetOverlays = []struct{ dir, region string }{
	{"fleet", ""},
	{filepath.Join("regions", "eu-west-1"), "eu-west-1"},
	{filepath.Join("regions", "us-east-1"), "us-east-1"},
}

// podTemplateOf is a workload's pod template with what the fleet overlay
// may change taken out: the scheduling affinity, the resources, the fleet's
// own environment variables, and the generated ConfigMap's hash suffix.
func podTemplateOf(t *testing.T, w obj) any {
	t.Helper()
	b, err := yaml.Marshal(get(w, "spec", "template"))
	if err != nil {
		t.Fatal(err)
	}
	var tpl obj
	if err := yaml.Unmarshal(b, &tpl); err != nil {
		t.Fatal(err)
	}
	spec := get(tpl, "spec").(obj)
	delete(spec, "affinity")
	for _, c := range list(spec, "containers") {
		cm := c.(obj)
		delete(cm, "resources")
		var env []any
		for _, e := range list(cm, "env") {
			if !strings.HasPrefix(str(e, "name"), "LLMPROBE_FLEET__") {
				env = append(env, e)
			}
		}
		cm["env"] = env
	}
	for _, v := range list(spec, "volumes") {
		if cm, ok := get(v, "configMap").(obj); ok {
			name, _ := cm["name"].(string)
			if i := strings.LastIndexByte(name, '-'); i > 0 {
				cm["name"] = name[:i]
			}
		}
	}
	return tpl
}

// TestKustomizeFleet builds the fleet overlay and the region overlays and
// checks what a fleet needs of Kubernetes: a StatefulSet (stable ordinals)
// whose shard count is its replica count, the base's pod template
// unchanged, a headless Service for discovery that the ServiceMonitor does
// not scrape (every pod scraped once), each pod scraped as instance = its
// name, a PodDisruptionBudget and preferred anti-affinity over the fleet's
// pods, and the region label set per region.
func TestKustomizeFleet(t *testing.T) {
	kube := filepath.Join(root, "deploy", "kubernetes")
	base := render(t, filepath.Join(kube, "base"))
	baseDep := only(t, base, "Deployment", "llmprobe")
	regions := map[string]string{}
	for _, o := range fleetOverlays {
		t.Run(o.dir, func(t *testing.T) {
			objs := render(t, filepath.Join(kube, o.dir))
			if d := find(objs, "Deployment", ""); len(d) != 0 {
				t.Errorf("%d Deployments rendered: the fleet's pods are the StatefulSet's alone", len(d))
			}
			sts := only(t, objs, "StatefulSet", "llmprobe")
			pod := labelsOf(sts, "spec", "template", "metadata", "labels")
			if !selects(labelsOf(sts, "spec", "selector", "matchLabels"), pod) {
				t.Errorf("StatefulSet selector %v does not select its pods %v", labelsOf(sts, "spec", "selector", "matchLabels"), pod)
			}
			if get(sts, "spec", "strategy") != nil {
				t.Error("spec.strategy (a Deployment's field) left on the StatefulSet")
			}
			if got := str(sts, "spec", "podManagementPolicy"); got != "Parallel" {
				t.Errorf("podManagementPolicy %q, want Parallel (shards have no start order)", got)
			}

			// fleet.shards is the replica count, in every overlay.
			replicas, _ := get(sts, "spec", "replicas").(int)
			c := container(t, sts, "llmprobe")
			env := envOf(c)
			if replicas < 2 || env["LLMPROBE_FLEET__SHARDS"] != fmt.Sprint(replicas) {
				t.Errorf("replicas %d, LLMPROBE_FLEET__SHARDS %q: want the same count, at least 2", replicas, env["LLMPROBE_FLEET__SHARDS"])
			}

			// The pod template is the base's: same image, args, Secret,
			// probes, security context, volumes.
			if got, want := podTemplateOf(t, sts), podTemplateOf(t, baseDep); !reflect.DeepEqual(got, want) {
				gy, _ := yaml.Marshal(got)
				wy, _ := yaml.Marshal(want)
				t.Errorf("the StatefulSet's pod template differs from the base Deployment's beyond affinity, resources and LLMPROBE_FLEET__*:\n--- fleet\n%s--- base\n%s", gy, wy)
			}
			for _, v := range list(sts, "spec", "template", "spec", "volumes") {
				if n := str(v, "configMap", "name"); n != "" && len(find(objs, "ConfigMap", n)) != 1 {
					t.Errorf("volume %s: ConfigMap %q not rendered", str(v, "name"), n)
				}
			}

			// Resources: requested, limited, never a limit below the request.
			for _, r := range []string{"cpu", "memory"} {
				req, lim := str(c, "resources", "requests", r), str(c, "resources", "limits", r)
				if req == "" || lim == "" {
					t.Errorf("resources.%s: request %q, limit %q: want both", r, req, lim)
				}
			}

			// Discovery: the StatefulSet's headless Service.
			peers := only(t, objs, "Service", str(sts, "spec", "serviceName"))
			if str(peers, "spec", "clusterIP") != "None" || get(peers, "spec", "publishNotReadyAddresses") != true {
				t.Errorf("Service %s: clusterIP %q, publishNotReadyAddresses %v: want a headless Service publishing not-ready pods",
					str(peers, "metadata", "name"), str(peers, "spec", "clusterIP"), get(peers, "spec", "publishNotReadyAddresses"))
			}
			if !selects(labelsOf(peers, "spec", "selector"), pod) {
				t.Errorf("Service %s does not select the fleet's pods", str(peers, "metadata", "name"))
			}
			admin := -1
			for _, p := range list(c, "ports") {
				if str(p, "name") == "admin" {
					admin, _ = get(p, "containerPort").(int)
				}
			}
			var peerPort bool
			for _, p := range list(peers, "spec", "ports") {
				n, _ := get(p, "port").(int)
				peerPort = peerPort || (n == admin && str(p, "targetPort") == "admin")
			}
			if !peerPort {
				t.Errorf("Service %s: no port %d to the admin port", str(peers, "metadata", "name"), admin)
			}

			// Scraped once: the ServiceMonitor selects one Service, not the
			// headless one.
			sm := only(t, objs, "ServiceMonitor", "llmprobe")
			var scraped []string
			for _, s := range find(objs, "Service", "") {
				if selects(labelsOf(sm, "spec", "selector", "matchLabels"), labelsOf(s, "metadata", "labels")) {
					scraped = append(scraped, str(s, "metadata", "name"))
				}
			}
			if len(scraped) != 1 || scraped[0] == str(peers, "metadata", "name") {
				t.Errorf("the ServiceMonitor selects Services %v: want exactly one, not the headless %s (each pod would be scraped twice)", scraped, str(peers, "metadata", "name"))
			}
			only(t, objs, "PrometheusRule", "llmprobe")

			// Voluntary disruptions: one shard at a time.
			pdb := only(t, objs, "PodDisruptionBudget", "llmprobe")
			if get(pdb, "spec", "maxUnavailable") != 1 || !selects(labelsOf(pdb, "spec", "selector", "matchLabels"), pod) {
				t.Errorf("PodDisruptionBudget: maxUnavailable %v, selector %v: want 1 over the fleet's pods", get(pdb, "spec", "maxUnavailable"), labelsOf(pdb, "spec", "selector", "matchLabels"))
			}

			// Preferred anti-affinity across nodes and zones.
			if get(sts, "spec", "template", "spec", "affinity", "podAntiAffinity", "requiredDuringSchedulingIgnoredDuringExecution") != nil {
				t.Error("required anti-affinity: a fleet larger than its nodes would not schedule")
			}
			var keys []string
			for _, term := range list(sts, "spec", "template", "spec", "affinity", "podAntiAffinity", "preferredDuringSchedulingIgnoredDuringExecution") {
				if selects(labelsOf(term, "podAffinityTerm", "labelSelector", "matchLabels"), pod) {
					keys = append(keys, str(term, "podAffinityTerm", "topologyKey"))
				}
			}
			slices.Sort(keys)
			if want := []string{"kubernetes.io/hostname", "topology.kubernetes.io/zone"}; !slices.Equal(keys, want) {
				t.Errorf("preferred anti-affinity over the fleet's pods by %v, want %v", keys, want)
			}

			// The region label, set at scrape time; instance, the pod's
			// name (stable across restarts), in every overlay.
			got, podName := "", false
			for _, e := range list(sm, "spec", "endpoints") {
				for _, r := range list(e, "relabelings") {
					switch {
					case str(r, "targetLabel") == "region" && str(r, "action") == "replace":
						got = str(r, "replacement")
					case str(r, "targetLabel") == "instance" && str(r, "action") == "replace":
						src := list(r, "sourceLabels")
						podName = len(src) == 1 && src[0] == "__meta_kubernetes_pod_name"
					}
				}
			}
			if !podName {
				t.Error("ServiceMonitor: no relabeling of instance to the pod's name")
			}
			if got != o.region {
				t.Errorf("ServiceMonitor sets region %q, want %q", got, o.region)
			}
			if o.region != "" {
				if prev, dup := regions[got]; dup {
					t.Errorf("region %q set by %s and %s", got, prev, o.dir)
				}
				regions[got] = o.dir
			}
		})
	}
	if len(regions) < 2 {
		t.Errorf("region overlays %v: want at least two, one region each", slices.Collect(maps.Keys(regions)))
	}
}
