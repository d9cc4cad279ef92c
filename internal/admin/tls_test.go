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

	"github.com/llmprobe/llmprobe/internal/testutil"
	"go.uber.org/goleak"
)

func TestServerTLSFromWebConfig(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	certPath, keyPath, pool := testutil.SelfSigned(t, dir, x509.ExtKeyUsageServerAuth)
	cfg := filepath.Join(dir, "web.yml")
	if err := os.WriteFile(cfg, []byte("tls_server_config:\n  cert_file: "+certPath+"\n  key_file: "+keyPath+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServerWith(ServerOptions{Handler: Handler(Options{Gatherer: testRegistry(t)}), Addrs: []string{l.Addr().String()}, WebConfigFile: cfg})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, l) }()

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}
	client := &http.Client{Timeout: 5 * time.Second, Transport: tr}
	resp, err := client.Get("https://" + l.Addr().String() + "/-/healthy")
	if err != nil {
		t.Fatalf("HTTPS request: %v", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.TLS == nil {
		t.Errorf("status %d, TLS %v", resp.StatusCode, resp.TLS != nil)
	}
	// Plain HTTP to the TLS listener is refused.
	plain := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{}}
	if resp, err := plain.Get("http://" + l.Addr().String() + "/-/healthy"); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode == 200 {
			t.Error("plain HTTP served on a TLS listener")
		}
	}
	tr.CloseIdleConnections()
	plain.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Serve after cancel: %v", err)
	}
}

func TestServerRunStopsAndBadConfigFails(t *testing.T) {
	defer goleak.VerifyNone(t)
	srv := NewServerWith(ServerOptions{Handler: Handler(Options{Gatherer: testRegistry(t)}), Addrs: []string{"127.0.0.1:0"}, WebConfigFile: ""})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	time.Sleep(50 * time.Millisecond) // let it listen; the test holds either way
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}

	bad := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(bad, []byte("tls_server_config:\n  cert_file: /nonexistent.crt\n  key_file: /nonexistent.key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	srv = NewServerWith(ServerOptions{Handler: Handler(Options{Gatherer: testRegistry(t)}), Addrs: []string{l.Addr().String()}, WebConfigFile: bad})
	ctx2, cancel2 := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel2()
	if err := srv.Serve(ctx2, l); err == nil || ctx2.Err() != nil {
		t.Errorf("Serve with missing certificate files = %v, want an immediate error", err)
	}
}
