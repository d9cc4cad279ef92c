package admin

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"sync"

	"go.yaml.in/yaml/v3"
	"golang.org/x/crypto/bcrypt"
)

// The paths admin.health_without_auth serves without basic auth (GET and
// HEAD only): a load balancer's or kubelet's health check can reach them
// without the password; they say nothing but "Healthy." and "Ready.".
const (
	healthyPath = "/-/healthy"
	readyPath   = "/-/ready"
)

// fakeHash is compared for an unknown user, so that a request takes as
// long whether the user exists or not (no user enumeration by timing).
// It is the bcrypt hash (cost 10) of a random string nobody knows.
const fakeHash = "$2a$10$0NuUJ2Jio6QzkpQWQNiJROyjTccBb5Ww7DPdqTtiMFWZgt9ODf692"

// maxAuthCache bounds the cache of checked credentials.
const maxAuthCache = 256

// The exporter toolkit checks basic auth for every path, with no way to
// leave one out (prometheus/exporter-toolkit#111). With health_without_auth
// on and users in the web config, the toolkit is given a copy of the web
// config without basic_auth_users (it still does TLS, headers and rate
// limits, unchanged), and authGate checks the users of the original file
// on every request to any other path, the way the toolkit does: bcrypt,
// one comparison at a time, a fixed hash for unknown users, a cache of
// results, the file re-read on every request so users can be changed in
// place.

// authGate requires basic auth (the users of the web config at path) on
// every request but GET/HEAD of the health paths.
type authGate struct {
	path string
	next http.Handler
	log  *slog.Logger

	mu    sync.Mutex // one bcrypt comparison at a time: they cost CPU
	cache map[[sha256.Size]byte]bool
}

func newAuthGate(path string, next http.Handler, log *slog.Logger) *authGate {
	return &authGate{path: path, next: next, log: log, cache: map[[sha256.Size]byte]bool{}}
}

func (g *authGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && isHealthPath(r.URL.Path) {
		g.next.ServeHTTP(w, r)
		return
	}
	users, err := readUsers(g.path)
	if err != nil {
		g.log.Error("admin: web config", "err", err)
		http.Error(w, http.StatusText(http.StatusInternalServerError), http.StatusInternalServerError)
		return
	}
	if len(users) == 0 { // the users were removed from the file: no auth, as with the toolkit
		g.next.ServeHTTP(w, r)
		return
	}
	if user, pass, ok := r.BasicAuth(); ok && g.check(users, user, pass) {
		g.next.ServeHTTP(w, r)
		return
	}
	w.Header().Set("WWW-Authenticate", "Basic")
	http.Error(w, http.StatusText(http.StatusUnauthorized), http.StatusUnauthorized)
}

func isHealthPath(p string) bool { return p == healthyPath || p == readyPath }

// check reports whether pass is user's password.
func (g *authGate) check(users map[string]string, user, pass string) bool {
	hash, known := users[user]
	if !known {
		hash = fakeHash
	}
	key := sha256.Sum256([]byte(fmt.Sprintf("%q:%q:%q", user, hash, pass)))
	g.mu.Lock()
	defer g.mu.Unlock()
	ok, hit := g.cache[key]
	if !hit {
		ok = bcrypt.CompareHashAndPassword([]byte(hash), []byte(pass)) == nil
		if len(g.cache) >= maxAuthCache {
			clear(g.cache)
		}
		g.cache[key] = ok
	}
	return ok && known
}

// webUsers is the part of a web config authGate reads.
type webUsers struct {
	Users map[string]string `yaml:"basic_auth_users"`
}

// readUsers returns the basic_auth_users of the web config at path, each
// hash checked to be bcrypt.
func readUsers(path string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	var u webUsers
	if err := yaml.Unmarshal(b, &u); err != nil {
		return nil, fmt.Errorf("web config %s: %w", path, err)
	}
	for name, h := range u.Users {
		if _, err := bcrypt.Cost([]byte(h)); err != nil {
			return nil, fmt.Errorf("web config %s: basic_auth_users.%s: %w", path, name, err)
		}
	}
	return u.Users, nil
}

// withoutUsers writes a copy of the web config at path without
// basic_auth_users, its relative file paths made absolute against path's
// directory (as the toolkit reads them), into a new private temporary
// directory. hasUsers false: the file has no users and no copy is made.
// The copy may hold an inline TLS key, as the original does: it is 0600 in
// a 0700 directory, which cleanup removes.
func withoutUsers(path string) (copyPath string, hasUsers bool, cleanup func(), err error) {
	users, err := readUsers(path)
	if err != nil || len(users) == 0 {
		return "", false, func() {}, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false, nil, fmt.Errorf("web config %s: %w", path, err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(b, &m); err != nil {
		return "", false, nil, fmt.Errorf("web config %s: %w", path, err)
	}
	delete(m, "basic_auth_users")
	if tls, ok := m["tls_server_config"].(map[string]any); ok {
		for _, k := range []string{"cert_file", "key_file", "client_ca_file"} {
			if p, ok := tls[k].(string); ok && p != "" && !filepath.IsAbs(p) {
				tls[k] = filepath.Join(filepath.Dir(path), p)
			}
		}
	}
	out, err := yaml.Marshal(m)
	if err != nil {
		return "", false, nil, fmt.Errorf("web config %s: %w", path, err)
	}
	dir, err := os.MkdirTemp("", "llmprobe-web-config-")
	if err != nil {
		return "", false, nil, fmt.Errorf("admin.health_without_auth needs a writable temporary directory ($TMPDIR): %w", err)
	}
	cleanup = func() { _ = os.RemoveAll(dir) }
	copyPath = filepath.Join(dir, "web-config.yml")
	if err := os.WriteFile(copyPath, out, 0o600); err != nil {
		cleanup()
		return "", false, nil, fmt.Errorf("admin.health_without_auth: %w", err)
	}
	return copyPath, true, cleanup, nil
}
