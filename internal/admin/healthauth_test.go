package admin

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

// authServer serves Handler (with a Reload) behind the web config at path
// and returns its base URL, a client and a stop function.
func authServer(t *testing.T, path string, healthWithoutAuth bool, scheme string, tr *http.Transport) (string, *http.Client, func()) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := Handler(Options{Gatherer: testRegistry(t), Ready: func() bool { return true }, Reload: func() error { return nil }})
	srv := NewServerWith(ServerOptions{Handler: h, Addrs: []string{l.Addr().String()}, WebConfigFile: path, HealthWithoutAuth: healthWithoutAuth})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()
	client := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	return scheme + "://" + l.Addr().String(), client, func() {
		client.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	}
}

func bcryptHash(t *testing.T, pass string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(pass), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	return string(h)
}

func status(t *testing.T, c *http.Client, method, url, user, pass string) int {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestHealthAuth: with basic auth in the web config, the health endpoints
// need it too by default; with HealthWithoutAuth, GET and HEAD of
// /-/healthy and /-/ready answer without it while every other path —
// /metrics, /config, POST /-/reload, POST to a health path — still needs
// the right user and password (an unknown user or a wrong password is
// 401). Users changed in the file apply at once; the private copy of the
// web config is gone after shutdown.
func TestHealthAuth(t *testing.T) {
	defer goleak.VerifyNone(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp) // where the copy without users goes
	path := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(path, []byte("basic_auth_users:\n  prom: "+bcryptHash(t, "s3cret")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	type check struct {
		method, path, user, pass string
		want                     int
	}
	tests := []struct {
		name   string
		optIn  bool
		checks []check
	}{
		{"default: health needs auth", false, []check{
			{"GET", "/-/healthy", "", "", 401},
			{"GET", "/-/ready", "", "", 401},
			{"GET", "/-/healthy", "prom", "s3cret", 200},
			{"POST", "/-/reload", "", "", 401},
			{"POST", "/-/reload", "prom", "s3cret", 200},
		}},
		{"health_without_auth", true, []check{
			{"GET", "/-/healthy", "", "", 200},
			{"HEAD", "/-/healthy", "", "", 200},
			{"GET", "/-/ready", "", "", 200},
			{"GET", "/-/healthy", "prom", "wrong", 200},
			{"POST", "/-/healthy", "", "", 401},
			{"GET", "/metrics", "", "", 401},
			{"GET", "/config", "", "", 401},
			{"GET", "/", "", "", 401},
			{"GET", "/metrics", "prom", "wrong", 401},
			{"GET", "/metrics", "nobody", "s3cret", 401},
			{"GET", "/metrics", "prom", "s3cret", 200},
			{"POST", "/-/reload", "", "", 401},
			{"POST", "/-/reload", "prom", "wrong", 401},
			{"POST", "/-/reload", "prom", "s3cret", 200},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			base, c, stop := authServer(t, path, tc.optIn, "http", &http.Transport{})
			defer stop()
			for _, ch := range tc.checks {
				if got := status(t, c, ch.method, base+ch.path, ch.user, ch.pass); got != ch.want {
					t.Errorf("%s %s as %q/%q: %d, want %d", ch.method, ch.path, ch.user, ch.pass, got, ch.want)
				}
			}
			if tc.optIn {
				// The password changes in place: the old one stops working.
				if err := os.WriteFile(path, []byte("basic_auth_users:\n  prom: "+bcryptHash(t, "n3w")+"\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				if got := status(t, c, "GET", base+"/metrics", "prom", "s3cret"); got != 401 {
					t.Errorf("old password after the change: %d, want 401", got)
				}
				if got := status(t, c, "GET", base+"/metrics", "prom", "n3w"); got != 200 {
					t.Errorf("new password: %d, want 200", got)
				}
			}
		})
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "llmprobe-web-config-*")); len(left) != 0 {
		t.Errorf("the web config copy outlived the server: %v", left)
	}
}

// TestHealthAuthWithTLS: with TLS and relative certificate paths in the
// web config, health_without_auth keeps TLS exactly as configured (the
// copy resolves the paths against the original's directory) and exempts
// only the health checks.
func TestHealthAuthWithTLS(t *testing.T) {
	defer goleak.VerifyNone(t)
	t.Setenv("TMPDIR", t.TempDir())
	dir := t.TempDir()
	certPath, keyPath, pool := testutil.SelfSigned(t, dir, x509.ExtKeyUsageServerAuth)
	path := filepath.Join(dir, "web.yml")
	body := "tls_server_config:\n  cert_file: " + filepath.Base(certPath) + "\n  key_file: " + filepath.Base(keyPath) +
		"\nbasic_auth_users:\n  prom: " + bcryptHash(t, "s3cret") + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ValidateWebConfig(path); err != nil {
		t.Fatal(err)
	}
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	base, c, stop := authServer(t, path, true, "https", tr)
	defer stop()
	for _, ch := range []struct {
		path, user string
		want       int
	}{{"/-/healthy", "", 200}, {"/-/ready", "", 200}, {"/metrics", "", 401}, {"/metrics", "prom", 200}} {
		if got := status(t, c, "GET", base+ch.path, ch.user, "s3cret"); got != ch.want {
			t.Errorf("GET %s as %q: %d, want %d", ch.path, ch.user, got, ch.want)
		}
	}
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	defer plain.CloseIdleConnections()
	if resp, err := plain.Get("http://" + base[len("https://"):] + "/-/healthy"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served a health check on the TLS listener")
		}
	}
}

// TestHealthAuthNoUsers: health_without_auth with a web config that has no
// users changes nothing (no copy, no gate).
func TestHealthAuthNoUsers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(path, []byte("http_server_config:\n  http2: false\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	copyPath, has, cleanup, err := withoutUsers(path)
	defer cleanup()
	if err != nil || has || copyPath != "" {
		t.Errorf("withoutUsers = %q, %v, %v: want no copy", copyPath, has, err)
	}
	if err := os.WriteFile(path, []byte("basic_auth_users:\n  prom: not-a-hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := withoutUsers(path); err == nil {
		t.Error("a user whose hash is not bcrypt was accepted")
	}
}
