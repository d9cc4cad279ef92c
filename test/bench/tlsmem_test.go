package bench

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// relayEnv, when set to "listen,upstream,cert,key,mode", makes TestTLSRelay of
// this test binary a TLS terminator (mode tls: a byte relay; tls-h2: an
// HTTP/2 reverse proxy): the child process BenchmarkStreamMemoryTLS runs in
// front of the simulator, so that the server side of TLS costs neither the
// generator's memory nor its CPU.
const relayEnv = "LLMPROBE_BENCH_TLS_RELAY"

// BenchmarkStreamMemoryTLS measures what a stream in flight costs the
// generator over plain HTTP (the streaming transport), over HTTPS with
// HTTP/1.1 and over HTTPS with HTTP/2 (net/http, TLS 1.3, the certificate
// verified against one made in the test), in turn, in one run:
// LLMPROBE_BENCH_TLS_RATE (default 170 req/s) of LLMPROBE_BENCH_TLS_STREAM
// (default 6s) streams of 100 tokens for LLMPROBE_BENCH_TLS_WINDOW (default
// 20s), so about 1,000 streams are in flight at the samples (8 and 14 s
// in; BenchmarkStreamCost's: live heap and goroutine stacks per stream in
// flight after a collection, and the resident set then). The TLS server
// runs in a process of its own (this test binary re-run as TestTLSRelay)
// in front of the simulator's process: a byte relay offering no ALPN
// (tls), or a reverse proxy speaking HTTP/2 (tls-h2). maxrss_mb is the
// process's lifetime peak: meaningful for the first case of a run, or one
// case per run (-bench 'StreamMemoryTLS/tls-h2'). Run with
//
//	go test -run '^$' -bench StreamMemoryTLS -benchtime 1x -timeout 10m ./test/bench/
func BenchmarkStreamMemoryTLS(b *testing.B) {
	bin := buildLLMProbe(b)
	rate := envFloat(b, "LLMPROBE_BENCH_TLS_RATE", 170)
	window := envDuration(b, "LLMPROBE_BENCH_TLS_WINDOW", 20*time.Second)
	stream := envDuration(b, "LLMPROBE_BENCH_TLS_STREAM", 6*time.Second)
	const tokens = 100
	base, simPID := startSim(b, bin, "--ttft", "1ms", "--token-time", (stream / tokens).String(), "--output-tokens", strconv.Itoa(tokens))
	for _, c := range []string{"plain", "tls", "tls-h2"} {
		b.Run(c, func(b *testing.B) {
			b.ReportMetric(loadAvg(), "load1_before")
			u, opts := base, protocol.ClientOptions{}
			if c != "plain" {
				u, opts = startRelay(b, base, c)
			}
			streamCost(b, u, simPID, opts, tokens, rate, window, stream)
			var ru syscall.Rusage
			if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
				b.ReportMetric(float64(ru.Maxrss)/1024, "maxrss_mb") // Linux: kilobytes
			}
		})
	}
}

// startRelay runs a TLS relay to the plain base URL in a child process,
// with a fresh self-signed certificate for 127.0.0.1, and returns the HTTPS
// base URL and client options trusting that certificate. Mode "tls" relays
// bytes (HTTP/1.1 end to end); "tls-h2" is a reverse proxy that speaks
// HTTP/2 (or HTTP/1.1) to the client and HTTP/1.1 to the simulator.
func startRelay(b *testing.B, base, mode string) (string, protocol.ClientOptions) {
	b.Helper()
	upstream := strings.TrimSuffix(strings.TrimPrefix(base, "http://"), "/v1")
	certPath, keyPath, _ := testutil.SelfSigned(b, b.TempDir(), x509.ExtKeyUsageServerAuth)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestTLSRelay$", "-test.count", "1")
	cmd.Env = append(os.Environ(), relayEnv+"="+strings.Join([]string{addr, upstream, certPath, keyPath, mode}, ","))
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "https://" + addr + "/v1", protocol.ClientOptions{TLS: protocol.TLSOptions{CAFile: certPath}}
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("TLS relay did not start")
	return "", protocol.ClientOptions{}
}

// TestTLSRelay is not a test: it is the TLS relay's process when relayEnv
// is set (by startRelay), and skips otherwise. It serves until interrupted.
func TestTLSRelay(t *testing.T) {
	spec := os.Getenv(relayEnv)
	if spec == "" {
		t.Skip("the TLS relay of BenchmarkStreamMemoryTLS; runs only as its child process")
	}
	f := strings.Split(spec, ",")
	if len(f) != 5 {
		t.Fatalf("%s=%q: want listen,upstream,cert,key,mode", relayEnv, spec)
	}
	if f[4] == "tls-h2" {
		serveH2Proxy(t, f[0], f[1], f[2], f[3])
		return
	}
	cert, err := tls.LoadX509KeyPair(f[2], f[3])
	if err != nil {
		t.Fatalf("relay certificate: %v", err)
	}
	ln, err := tls.Listen("tcp", f[0], &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatalf("relay listen: %v", err)
	}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	go func() { <-stop; ln.Close() }()
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			t.Fatalf("relay accept: %v", err)
		}
		go relay(c, f[1])
	}
}

// relay copies bytes both ways between the client's connection c and a new
// connection to upstream, until either side closes.
func relay(c net.Conn, upstream string) {
	defer c.Close()
	u, err := net.Dial("tcp", upstream)
	if err != nil {
		fmt.Fprintf(os.Stderr, "relay dial %s: %v\n", upstream, err)
		return
	}
	defer u.Close()
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(u, c)
		if tc, ok := u.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		close(done)
	}()
	_, _ = io.Copy(c, u)
	_ = c.Close()
	<-done
}

// serveH2Proxy serves a streaming reverse proxy to upstream over TLS, with
// HTTP/2 offered by ALPN, until interrupted.
func serveH2Proxy(t *testing.T, listen, upstream, certFile, keyFile string) {
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: upstream})
	rp.FlushInterval = -1 // every write of the stream flushed at once
	rp.Transport = &http.Transport{MaxIdleConnsPerHost: 100000}
	srv := &http.Server{Addr: listen, Handler: rp, ReadHeaderTimeout: 10 * time.Second}
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt)
	go func() { <-stop; srv.Close() }()
	if err := srv.ListenAndServeTLS(certFile, keyFile); !errors.Is(err, http.ErrServerClosed) {
		t.Fatalf("h2 proxy: %v", err)
	}
}
