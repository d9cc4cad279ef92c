package deploy

import (
	"path/filepath"
	"slices"
	"testing"
)

// clusterScoped are the kinds that live outside any namespace; every other
// kind a kustomization renders is namespaced.
var clusterScoped = map[string]bool{
	"Namespace": true, "ClusterRole": true, "ClusterRoleBinding": true,
	"CustomResourceDefinition": true, "PersistentVolume": true, "StorageClass": true,
	"PriorityClass": true, "ValidatingWebhookConfiguration": true, "MutatingWebhookConfiguration": true,
}

// kustomizations is every kustomization under deploy/kubernetes: the base,
// the fleet and every region (found, not listed: a region copied from
// another is checked too).
func kustomizations(t *testing.T) []string {
	t.Helper()
	kube := filepath.Join(root, "deploy", "kubernetes")
	regions, err := filepath.Glob(filepath.Join(kube, "regions", "*", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dirs := []string{filepath.Join(kube, "base"), filepath.Join(kube, "fleet")}
	for _, r := range regions {
		dirs = append(dirs, filepath.Dir(r))
	}
	if len(regions) < 2 {
		t.Errorf("%d region overlays, want at least two", len(regions))
	}
	return dirs
}

// TestKustomizeNamespace: `kubectl apply -k` of any overlay puts every
// namespaced object in the llmprobe Namespace the base declares, never in
// the caller's current namespace; and what the workload names (the
// StatefulSet's headless Service, the ServiceAccount, the ConfigMap) is
// rendered in that same namespace, or peer DNS would resolve nothing and
// every fleet step would be shard_missing.
func TestKustomizeNamespace(t *testing.T) {
	for _, dir := range kustomizations(t) {
		rel, _ := filepath.Rel(filepath.Join(root, "deploy", "kubernetes"), dir)
		t.Run(rel, func(t *testing.T) {
			objs := render(t, dir)
			ns := only(t, objs, "Namespace", "")
			want := str(ns, "metadata", "name")
			var missing []string
			for _, o := range objs {
				kind, name := str(o, "kind"), str(o, "metadata", "name")
				got := str(o, "metadata", "namespace")
				switch {
				case clusterScoped[kind] && got != "":
					t.Errorf("%s %s: cluster-scoped, but namespace %q", kind, name, got)
				case !clusterScoped[kind] && got == "":
					missing = append(missing, kind+" "+name)
				case !clusterScoped[kind] && got != want:
					t.Errorf("%s %s: namespace %q, want %q (the Namespace rendered)", kind, name, got, want)
				}
			}
			if len(missing) > 0 {
				t.Errorf("no metadata.namespace (kubectl apply -k would put them in the current namespace): %v", missing)
			}

			// What the pods name is in their namespace.
			workloads := append(find(objs, "Deployment", ""), find(objs, "StatefulSet", "")...)
			if len(workloads) != 1 {
				t.Fatalf("%d workloads rendered, want 1", len(workloads))
			}
			w := workloads[0]
			in := func(kind, name string) bool {
				return slices.ContainsFunc(find(objs, kind, name), func(o obj) bool {
					return str(o, "metadata", "namespace") == str(w, "metadata", "namespace")
				})
			}
			if w["kind"] == "StatefulSet" && !in("Service", str(w, "spec", "serviceName")) {
				t.Errorf("StatefulSet %s: serviceName %q names no Service in its namespace %q",
					str(w, "metadata", "name"), str(w, "spec", "serviceName"), str(w, "metadata", "namespace"))
			}
			if sa := str(w, "spec", "template", "spec", "serviceAccountName"); sa != "" && !in("ServiceAccount", sa) {
				t.Errorf("%s: ServiceAccount %q not rendered in its namespace", str(w, "kind"), sa)
			}
			for _, v := range list(w, "spec", "template", "spec", "volumes") {
				if cm := str(v, "configMap", "name"); cm != "" && !in("ConfigMap", cm) {
					t.Errorf("%s: ConfigMap %q not rendered in its namespace", str(w, "kind"), cm)
				}
			}
		})
	}
}
