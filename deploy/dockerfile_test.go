package deploy

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dockerRun is one `docker run` example of the Dockerfile's header.
type dockerRun struct {
	line    string
	name    string            // --name
	publish map[string]string // -p host port → container port
	mounts  map[string]string // -v container path → host path
	args    []string          // llmprobe's arguments, after the image
}

// dockerRuns reads the Dockerfile header's `docker run` examples.
func dockerRuns(t *testing.T) []dockerRun {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []dockerRun
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "#")
		if !ok {
			if strings.HasPrefix(sc.Text(), "FROM ") {
				break // the header ends at the first stage
			}
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "docker" || f[1] != "run" {
			continue
		}
		r := dockerRun{line: strings.TrimSpace(line), publish: map[string]string{}, mounts: map[string]string{}}
		for i := 2; i < len(f); i++ {
			switch a := f[i]; {
			case a == "-p" || a == "-v" || a == "--name" || a == "--network":
				if i+1 >= len(f) {
					t.Fatalf("Dockerfile: %q: %s without a value", r.line, a)
				}
				v := f[i+1]
				i++
				switch a {
				case "-p":
					h, c, _ := strings.Cut(v, ":")
					r.publish[h] = c
				case "-v":
					parts := strings.Split(v, ":")
					r.mounts[parts[1]] = strings.Replace(parts[0], "$PWD", root, 1)
				case "--name":
					r.name = v
				}
			case strings.HasPrefix(a, "llmprobe:"):
				for strings.Count(f[i], "$(") > strings.Count(f[i], ")") && i+1 < len(f) {
					i++ // llmprobe:$(cat VERSION): one word to the shell
				}
				r.args = f[i+1:]
				i = len(f)
			}
		}
		if r.args == nil {
			t.Fatalf("Dockerfile: %q: no llmprobe image", r.line)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// anyAddr checks that addr listens on every interface (a container's
// published port reaches nothing else) and returns its port.
func anyAddr(t *testing.T, what, addr string) string {
	t.Helper()
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "0.0.0.0" {
		t.Errorf("%s: listens on %q: want 0.0.0.0:PORT in a container", what, addr)
	}
	return port
}

var okRequests = regexp.MustCompile(`(?m)^llmprobe_requests_total\{[^}]*outcome="ok"[^}]*\} (\S+)$`)

// waitOK waits until admin's /metrics counts a request that ended ok.
func (p *proc) waitOK(t *testing.T, admin string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if b, err := getBody(admin + "/metrics"); err == nil {
			for _, m := range okRequests.FindAllStringSubmatch(string(b), -1) {
				if v, _ := strconv.ParseFloat(m[1], 64); v > 0 {
					return
				}
			}
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: no request ended ok within %v:\n%s", p.name, within, p.out.String())
}

// TestDockerfileExamples runs the Dockerfile header's `docker run` examples
// as the container would, without Docker: each listens on 0.0.0.0 on the
// port it publishes, and the container configuration reaches the
// simulator container by its name; then the same llmprobe commands run
// here (on 127.0.0.1 and free ports: the one change) and probe the
// simulator successfully.
func TestDockerfileExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds llmprobe and runs the examples")
	}
	runs := dockerRuns(t)
	if len(runs) < 3 {
		t.Fatalf("Dockerfile: %d docker run examples, want the built-in one and the two of the simulator in its own container", len(runs))
	}
	sims := map[string]string{} // container name → its simulator's port
	bin := buildLLMProbe(t)
	for _, r := range runs {
		switch r.args[0] {
		case "sim":
			port := anyAddr(t, r.line, flagValue(r.args, "listen"))
			if r.name == "" {
				t.Errorf("%q: the simulator's container has no --name for llmprobe to reach it by", r.line)
			}
			sims[r.name] = port
		case "run":
			t.Run(strings.Join(r.args, " "), func(t *testing.T) { runExample(t, bin, r, sims) })
		default:
			t.Errorf("%q: runs llmprobe %s", r.line, r.args[0])
		}
	}
}

func runExample(t *testing.T, bin string, r dockerRun, sims map[string]string) {
	admin := freePort(t)
	args := append([]string(nil), r.args...)
	var listen string
	if path := flagValue(args, "config.file"); path != "" {
		// The mounted file, with the container's names and addresses
		// made this host's.
		dir, file := filepath.Split(path)
		host, ok := r.mounts[strings.TrimSuffix(dir, "/")]
		if !ok {
			t.Fatalf("%q: --config.file %s is in no mounted directory", r.line, path)
		}
		body, err := os.ReadFile(filepath.Join(host, file))
		if err != nil {
			t.Fatal(err)
		}
		cfg := string(body)
		m := regexp.MustCompile(`(?m)^\s+listen:\s*"?([^"\s]+)"?`).FindStringSubmatch(cfg)
		if m == nil {
			t.Fatalf("%s: no admin.listen", file)
		}
		listen = m[1]
		cfg = strings.Replace(cfg, listen, "127.0.0.1:"+strconv.Itoa(admin), 1)
		reached := false
		for name, port := range sims {
			if strings.Contains(cfg, "http://"+name+":"+port+"/") {
				reached = true
				simPort := strconv.Itoa(freePort(t))
				cfg = strings.ReplaceAll(cfg, "http://"+name+":"+port+"/", "http://127.0.0.1:"+simPort+"/")
				sim := start(t, "sim", bin, "sim", "--listen", "127.0.0.1:"+simPort)
				sim.waitHTTP(t, "http://127.0.0.1:"+simPort+"/metrics", 30*time.Second)
			}
		}
		if !reached {
			t.Fatalf("%s: probes none of the simulator containers %v", file, sims)
		}
		p := filepath.Join(t.TempDir(), file)
		if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		for i, a := range args {
			if a == path {
				args[i] = p
			}
		}
	} else {
		listen = flagValue(args, "web.listen-address")
		for i, a := range args {
			if a == listen {
				args[i] = "127.0.0.1:" + strconv.Itoa(admin)
			}
		}
	}
	port := anyAddr(t, r.line, listen)
	published := false
	for _, c := range r.publish {
		published = published || c == port
	}
	if !published {
		t.Errorf("%q: the admin port %s is not published (-p %v)", r.line, port, r.publish)
	}
	p := start(t, "llmprobe", bin, args...)
	url := "http://127.0.0.1:" + strconv.Itoa(admin)
	p.waitHTTP(t, url+"/-/healthy", 30*time.Second)
	p.waitOK(t, url, 60*time.Second)
}
