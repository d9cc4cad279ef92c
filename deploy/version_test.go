package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// version is the VERSION file: the version the Dockerfile builds into the
// binary (`llmprobe --version`), the Kubernetes image tag and the compose
// demo's image tag.
func version(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	v := strings.TrimSpace(string(b))
	if !regexp.MustCompile(`^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$`).MatchString(v) {
		t.Fatalf("VERSION %q is not a semantic version", v)
	}
	return v
}

// versionLDFlag is how the Dockerfile builds VERSION into the binary.
const versionLDFlag = "-X github.com/prometheus/common/version.Version=$(cat VERSION)"

// TestImagesPinned: every image is pinned by version, never :latest or
// untagged; the Dockerfile builds VERSION into the binary; the Kubernetes
// image tag and the compose demo's image tag are VERSION.
func TestImagesPinned(t *testing.T) {
	v := version(t)
	df, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	froms := regexp.MustCompile(`(?m)^FROM\s+(?:--platform=\S+\s+)?(\S+)`).FindAllStringSubmatch(string(df), -1)
	if len(froms) != 2 {
		t.Fatalf("Dockerfile: %d FROM lines, want 2", len(froms))
	}
	for _, f := range froms {
		image := f[1]
		if !strings.Contains(image, ":") || strings.HasSuffix(image, ":latest") || strings.Contains(image, ":latest@") {
			t.Errorf("Dockerfile: base image %s is not pinned", image)
		}
	}
	gomod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goMinor := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(gomod)
	if m := regexp.MustCompile(`^golang:(\d+\.\d+)\.\d+(-\S+)?$`).FindStringSubmatch(froms[0][1]); m == nil || goMinor == nil || m[1] != string(goMinor[1]) {
		t.Errorf("build stage %s: want golang:<go.mod's Go>.<patch>", froms[0][1])
	}
	if !regexp.MustCompile(`^gcr\.io/distroless/static-debian\d+:nonroot(@sha256:[0-9a-f]{64})?$`).MatchString(froms[1][1]) {
		t.Errorf("runtime stage %s: want distroless static on a named Debian release, nonroot", froms[1][1])
	}
	_, build, _ := dockerBuildCommand(t)
	if !strings.Contains(build, versionLDFlag) {
		t.Errorf("the build command does not set the version from VERSION (%s): %s", versionLDFlag, build)
	}

	k := one(t, filepath.Join(root, "deploy", "kubernetes", "base", "kustomization.yaml"))
	images, _ := k["images"].([]any)
	if len(images) != 1 {
		t.Fatalf("kustomization: %d images, want 1", len(images))
	}
	im, _ := images[0].(map[string]any)
	if im["newName"] != "ghcr.io/llmprobe/llmprobe" || im["newTag"] != v {
		t.Errorf("kustomization image %v:%v, want ghcr.io/llmprobe/llmprobe:%s (VERSION)", im["newName"], im["newTag"], v)
	}

	c := one(t, filepath.Join(root, "deploy", "compose", "docker-compose.yml"))
	services, _ := c["services"].(map[string]any)
	for name, s := range services {
		sm, _ := s.(map[string]any)
		image, _ := sm["image"].(string)
		i := strings.LastIndex(image, ":")
		if i < 0 || image[i+1:] == "latest" || image[i+1:] == "" {
			t.Errorf("compose service %s: image %q is not pinned", name, image)
		}
		if strings.HasPrefix(image, "llmprobe:") && image != "llmprobe:"+v {
			t.Errorf("compose service %s: image %q, want llmprobe:%s (VERSION)", name, image, v)
		}
	}
	for _, name := range []string{"sim", "llmprobe"} {
		sm, _ := services[name].(map[string]any)
		if sm["image"] != "llmprobe:"+v {
			t.Errorf("compose service %s runs %v, want llmprobe:%s", name, sm["image"], v)
		}
	}

	deployDoc, err := os.ReadFile(filepath.Join(root, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(deployDoc), "ghcr.io/llmprobe/llmprobe:"+v) {
		t.Errorf("docs/deploy.md does not name the image ghcr.io/llmprobe/llmprobe:%s", v)
	}
}

// composeUp matches a `docker compose … up …` command line.
var composeUp = regexp.MustCompile("docker compose [^#`\n]*\\bup\\b[^#`\n]*")

// TestComposeUpCommandOneSpelling: every place that tells the reader how to
// start the compose demo (the compose file, the README, the docs, deploy/)
// writes the same command.
func TestComposeUpCommandOneSpelling(t *testing.T) {
	var files []string
	for _, g := range []string{"*.md", "docs/*.md", "deploy/*.md", "deploy/compose/*", "Dockerfile"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	const want = "docker compose -f deploy/compose/docker-compose.yml up --build"
	found := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, cmd := range composeUp.FindAllString(string(b), -1) {
			found++
			if got := strings.TrimSpace(cmd); got != want {
				t.Errorf("%s: %q, want %q", f, got, want)
			}
		}
	}
	if found < 3 {
		t.Errorf("the compose up command is written %d times, want it in the compose file, the README and docs/deploy.md", found)
	}
}

// TestDockerBuildVersion runs the Dockerfile's build command (as
// TestDockerfile does, with LLMPROBE_DOCKERFILE_BUILD=1) and checks that the
// binary's --version is VERSION: the image and the Kubernetes tag agree
// with what the binary says.
func TestDockerBuildVersion(t *testing.T) {
	if os.Getenv("LLMPROBE_DOCKERFILE_BUILD") != "1" {
		t.Skip("LLMPROBE_DOCKERFILE_BUILD != 1: not running the build stage's go build")
	}
	v := version(t)
	_, build, _ := dockerBuildCommand(t)
	bin := filepath.Join(t.TempDir(), "llmprobe")
	cmdline := regexp.MustCompile(`-o \S+`).ReplaceAllLiteralString(build, "-o "+bin)
	cmd := exec.Command("sh", "-c", cmdline)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "REVISION=0123abc", "BRANCH=release")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", cmdline, err, b)
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil {
		t.Fatal(err)
	}
	first := strings.SplitN(string(out), "\n", 2)[0]
	if want := "llmprobe, version " + v + " (branch: release, revision: 0123abc)"; first != want {
		t.Errorf("--version: %q, want %q", first, want)
	}
	if !regexp.MustCompile(`(?m)^  build date:       \d{8}-\d{2}:\d{2}:\d{2}$`).Match(out) {
		t.Errorf("--version has no build date:\n%s", out)
	}
}
