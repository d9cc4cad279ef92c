package deploy

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const root = ".."

// docs parses every YAML document of a file.
func docs(t *testing.T, path string) []map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var out []map[string]any
	for {
		var d map[string]any
		err := dec.Decode(&d)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if d != nil {
			out = append(out, d)
		}
	}
	return out
}

func one(t *testing.T, path string) map[string]any {
	t.Helper()
	ds := docs(t, path)
	if len(ds) != 1 {
		t.Fatalf("%s: %d YAML documents, want 1", path, len(ds))
	}
	return ds[0]
}

func strs(v any) []string {
	var out []string
	list, _ := v.([]any)
	for _, x := range list {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func exists(t *testing.T, path, what string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Errorf("%s: %v", what, err)
	}
}

func TestKustomizeBase(t *testing.T) {
	base := filepath.Join(root, "deploy", "kubernetes", "base")
	k := one(t, filepath.Join(base, "kustomization.yaml"))
	kinds := map[string]bool{}
	for _, r := range strs(k["resources"]) {
		p := filepath.Join(base, r)
		exists(t, p, "kustomization resource "+r)
		for _, d := range docs(t, p) {
			kind, _ := d["kind"].(string)
			md, _ := d["metadata"].(map[string]any)
			if d["apiVersion"] == nil || kind == "" || md == nil || md["name"] == nil {
				t.Errorf("%s: a document lacks apiVersion, kind or metadata.name", r)
			}
			kinds[kind] = true
		}
	}
	for _, want := range []string{"Deployment", "Service", "ServiceMonitor", "PrometheusRule", "Namespace"} {
		if !kinds[want] {
			t.Errorf("kustomize base has no %s", want)
		}
	}
	gens, _ := k["configMapGenerator"].([]any)
	if len(gens) == 0 {
		t.Error("no configMapGenerator for the llmprobe config")
	}
	for _, g := range gens {
		gm, _ := g.(map[string]any)
		for _, f := range strs(gm["files"]) {
			exists(t, filepath.Join(base, f), "configMapGenerator file "+f)
		}
	}

	dep := one(t, filepath.Join(base, "deployment.yaml"))
	text, _ := yaml.Marshal(dep)
	for _, want := range []string{"secretKeyRef", "llmprobe-api-keys", "llmprobe-config", "runAsNonRoot: true", "requests:"} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("deployment.yaml: no %q", want)
		}
	}

	// Rendered as kubectl kustomize renders it (kustomize's own library).
	n := len(render(t, base))
	if n < len(strs(k["resources"]))+1 {
		t.Errorf("rendered %d objects, want the %d resources and the ConfigMap", n, len(strs(k["resources"])))
	}
}

func TestPrometheusRuleMatchesAlerts(t *testing.T) {
	pr := one(t, filepath.Join(root, "deploy", "kubernetes", "base", "prometheusrule.yaml"))
	rules := one(t, filepath.Join(root, "alerts", "llmprobe.rules.yml"))
	spec, _ := pr["spec"].(map[string]any)
	if pr["kind"] != "PrometheusRule" || spec == nil {
		t.Fatalf("prometheusrule.yaml: kind %v, spec %v", pr["kind"], spec != nil)
	}
	if !reflect.DeepEqual(spec["groups"], rules["groups"]) {
		t.Error("PrometheusRule groups differ from alerts/llmprobe.rules.yml: run go generate ./internal/dashgen")
	}
}

func TestComposeStack(t *testing.T) {
	dir := filepath.Join(root, "deploy", "compose")
	c := one(t, filepath.Join(dir, "docker-compose.yml"))
	services, _ := c["services"].(map[string]any)
	for _, want := range []string{"sim", "llmprobe", "prometheus", "grafana"} {
		if services[want] == nil {
			t.Errorf("compose: no %s service", want)
		}
	}
	mounts := map[string]string{} // container path → host path
	for name, s := range services {
		sm, _ := s.(map[string]any)
		if b, ok := sm["build"].(map[string]any); ok {
			ctx, _ := b["context"].(string)
			exists(t, filepath.Join(dir, ctx), name+" build context")
			if df, _ := b["dockerfile"].(string); df != "" {
				exists(t, filepath.Join(dir, ctx, df), name+" dockerfile")
			}
		}
		for _, v := range strs(sm["volumes"]) {
			parts := strings.Split(v, ":")
			if len(parts) < 2 || !strings.HasPrefix(parts[0], ".") {
				continue
			}
			exists(t, filepath.Join(dir, parts[0]), name+" volume "+parts[0])
			mounts[parts[1]] = parts[0]
		}
	}
	if _, ok := mounts["/etc/prometheus/rules/llmprobe.rules.yml"]; !ok {
		t.Error("compose: Prometheus does not mount alerts/llmprobe.rules.yml")
	}

	prom := one(t, filepath.Join(dir, "prometheus.yml"))
	if !slices.Contains(strs(prom["rule_files"]), "/etc/prometheus/rules/llmprobe.rules.yml") {
		t.Error("compose prometheus.yml does not load the mounted rules")
	}
	scrapes, _ := prom["scrape_configs"].([]any)
	var native bool
	for _, s := range scrapes {
		sm, _ := s.(map[string]any)
		if sm["job_name"] == "llmprobe" && sm["scrape_native_histograms"] == true {
			native = true
		}
	}
	if !native {
		t.Error("compose prometheus.yml: no llmprobe job with scrape_native_histograms: true")
	}

	// Grafana's dashboard provider must point at where compose mounts dashboards/.
	prov := one(t, filepath.Join(root, "dashboards", "provisioning", "dashboards", "llmprobe.yaml"))
	providers, _ := prov["providers"].([]any)
	if len(providers) != 1 {
		t.Fatalf("dashboard provisioning: %d providers, want 1", len(providers))
	}
	opts, _ := providers[0].(map[string]any)["options"].(map[string]any)
	path, _ := opts["path"].(string)
	if host, ok := mounts[path]; !ok || filepath.Clean(filepath.Join(dir, host)) != filepath.Clean(filepath.Join(root, "dashboards")) {
		t.Errorf("grafana: provider path %q is not the compose mount of dashboards/ (mounts %v)", path, mounts)
	}
	js, err := filepath.Glob(filepath.Join(root, "dashboards", "*.json"))
	if err != nil || len(js) == 0 {
		t.Errorf("no dashboards/*.json to provision (%v)", err)
	}
}

var goBuild = regexp.MustCompile(`RUN (CGO_ENABLED=0 .*go build .*)$`)

// dockerBuildCommand returns the go build command of the Dockerfile's build stage.
func dockerBuildCommand(t *testing.T) (from, build, runtime string) {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "FROM ") && from == "":
			from = line
		case strings.HasPrefix(line, "FROM "):
			runtime = line
		case goBuild.MatchString(line):
			build = goBuild.FindStringSubmatch(line)[1]
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return from, build, runtime
}

func TestDockerfile(t *testing.T) {
	from, build, runtime := dockerBuildCommand(t)
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m == nil {
		t.Fatal("go.mod: no go directive")
	}
	if !strings.Contains(from, "golang:"+string(m[1])) {
		t.Errorf("build stage %q does not use Go %s (go.mod)", from, m[1])
	}
	if !strings.Contains(runtime, "distroless/static") || !strings.Contains(runtime, "nonroot") {
		t.Errorf("runtime stage %q is not distroless static nonroot", runtime)
	}
	if !strings.HasSuffix(build, "./cmd/llmprobe") {
		t.Errorf("build stage does not build ./cmd/llmprobe: %q", build)
	}
	if os.Getenv("LLMPROBE_DOCKERFILE_BUILD") != "1" {
		t.Log("LLMPROBE_DOCKERFILE_BUILD != 1: not running the build stage's go build (a cold -trimpath build takes a minute)")
		return
	}
	// Run the build stage's command here (through sh, as RUN does): it must
	// build the same package with the same settings CI uses.
	out := regexp.MustCompile(`-o \S+`)
	if !out.MatchString(build) {
		t.Fatalf("build command has no -o: %q", build)
	}
	cmdline := out.ReplaceAllLiteralString(build, "-o "+filepath.Join(t.TempDir(), "llmprobe"))
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
}
