package proxy

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"text/template"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
)

const (
	nginxEnv         = "LLMPROBE_NGINX"
	nginxRequiredEnv = "LLMPROBE_NGINX_REQUIRED"
)

// requireNginx returns the nginx binary, or skips the test (fails it with
// LLMPROBE_NGINX_REQUIRED=1) when there is none.
func requireNginx(t *testing.T) string {
	t.Helper()
	cands := []string{os.Getenv(nginxEnv)}
	if p, err := exec.LookPath("nginx"); err == nil {
		cands = append(cands, p)
	}
	cands = append(cands, "/usr/sbin/nginx")
	for _, c := range cands {
		if st, err := os.Stat(c); c != "" && err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return c
		}
	}
	msg := "nginx is absent (set " + nginxEnv + ", or apt-get install nginx; .ci/run installs it)"
	if os.Getenv(nginxRequiredEnv) == "1" {
		t.Fatalf("%s (%s=1: required)", msg, nginxRequiredEnv)
	}
	t.Skip(msg)
	return ""
}

// freePort is a loopback port nothing listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// testCA is a certificate authority made by the test (crypto/x509).
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // PEM, for the client's ca_file
}

func newCA(t *testing.T, dir string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmprobe proxy test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(90 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "ca.pem")
	writePEM(t, file, "CERTIFICATE", der)
	return &testCA{cert: cert, key: key, file: file}
}

// issue writes a server certificate for 127.0.0.1 and localhost expiring
// at notAfter, and its key, into dir; it returns their paths.
func (ca *testCA) issue(t *testing.T, dir string, notAfter time.Time) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "llmprobe proxy test server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: notAfter,
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "server.crt"), filepath.Join(dir, "server.key")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// proxyConfig is what a test asks of nginx.
type proxyConfig struct {
	Upstream     string        // host:port of the model server
	Buffering    bool          // proxy_buffering on
	Buffers      string        // proxy_buffers ("" = nginx's default, 8 4k|8k)
	ReadTimeout  time.Duration // proxy_read_timeout; 0 = 60s
	KeepAlive    time.Duration // keepalive_timeout to the client; 0 = 75s (nginx's default)
	KeepAliveHdr time.Duration // keepalive_timeout's second value: a Keep-Alive: timeout=N header (whole seconds); 0 = none
	CertExpiry   time.Time     // the server certificate's NotAfter; zero = in 90 days
	Dir, Cert    string        // filled by startNginx
	Key          string
	TLSPort      int
	PlainPort    int
	CAFile       string
	ReadTimeoutS string
	KeepAliveS   string
	KeepAliveHS  string
}

const nginxConf = `worker_processes 1;
daemon off;
master_process on;
pid {{.Dir}}/nginx.pid;
error_log {{.Dir}}/error.log info;
events { worker_connections 1024; }
http {
    access_log {{.Dir}}/access.log;
    client_body_temp_path {{.Dir}}/tmp/body;
    proxy_temp_path {{.Dir}}/tmp/proxy;
    fastcgi_temp_path {{.Dir}}/tmp/fastcgi;
    uwsgi_temp_path {{.Dir}}/tmp/uwsgi;
    scgi_temp_path {{.Dir}}/tmp/scgi;
    keepalive_timeout {{.KeepAliveS}}{{if .KeepAliveHS}} {{.KeepAliveHS}}{{end}};
    upstream model {
        server {{.Upstream}} max_fails=0;
        keepalive 16;
    }
    server {
        listen 127.0.0.1:{{.TLSPort}} ssl http2;
        listen 127.0.0.1:{{.PlainPort}};
        ssl_certificate {{.Cert}};
        ssl_certificate_key {{.Key}};
        location / {
            proxy_pass http://model;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering {{if .Buffering}}on{{else}}off{{end}};
            {{if .Buffers}}proxy_buffers {{.Buffers}};{{end}}
            proxy_read_timeout {{.ReadTimeoutS}};
            proxy_connect_timeout 2s;
        }
    }
}
`

// nginx is one nginx started by a test.
type nginx struct {
	cfg    proxyConfig
	cmd    *exec.Cmd
	log    string
	exited chan error // cmd.Wait's result
}

// TLSURL and PlainURL are the proxy's API base URLs.
func (n *nginx) TLSURL() string   { return "https://localhost:" + strconv.Itoa(n.cfg.TLSPort) + "/v1" }
func (n *nginx) PlainURL() string { return "http://127.0.0.1:" + strconv.Itoa(n.cfg.PlainPort) + "/v1" }

// startNginx writes cfg's configuration and a certificate from a fresh
// test CA into a temporary directory, starts nginx on it and stops it when
// the test ends (logging its error log if the test failed).
func startNginx(t *testing.T, cfg proxyConfig) *nginx {
	t.Helper()
	bin := requireNginx(t)
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "tmp"), 0o700); err != nil {
		t.Fatal(err)
	}
	if cfg.CertExpiry.IsZero() {
		cfg.CertExpiry = time.Now().Add(90 * 24 * time.Hour)
	}
	ca := newCA(t, dir)
	cfg.Dir, cfg.CAFile = dir, ca.file
	cfg.Cert, cfg.Key = ca.issue(t, dir, cfg.CertExpiry)
	cfg.ReadTimeoutS, cfg.KeepAliveS = seconds(cfg.ReadTimeout, 60*time.Second), seconds(cfg.KeepAlive, 75*time.Second)
	if cfg.KeepAliveHdr > 0 {
		cfg.KeepAliveHS = strconv.FormatInt(int64(cfg.KeepAliveHdr/time.Second), 10) + "s"
	}
	var conf bytes.Buffer
	for attempt := 0; ; attempt++ {
		cfg.TLSPort, cfg.PlainPort = freePort(t), freePort(t)
		conf.Reset()
		if err := template.Must(template.New("nginx").Parse(nginxConf)).Execute(&conf, &cfg); err != nil {
			t.Fatal(err)
		}
		n, err := runNginx(bin, dir, conf.Bytes(), cfg)
		if err == nil {
			t.Cleanup(func() { n.stop(t) })
			return n
		}
		if attempt == 4 || !strings.Contains(err.Error(), "Address already in use") {
			t.Fatal(err)
		}
	}
}

// seconds formats d for nginx in milliseconds (def when 0).
func seconds(d, def time.Duration) string {
	if d == 0 {
		d = def
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}

func runNginx(bin, dir string, conf []byte, cfg proxyConfig) (*nginx, error) {
	path := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(path, conf, 0o600); err != nil {
		return nil, err
	}
	logFile := filepath.Join(dir, "error.log")
	_ = os.Remove(logFile)
	cmd := exec.Command(bin, "-p", dir, "-e", logFile, "-c", path)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // master and workers: one group, ours
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting nginx: %w", err)
	}
	n := &nginx{cfg: cfg, cmd: cmd, log: logFile, exited: make(chan error, 1)}
	go func() { n.exited <- cmd.Wait() }()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-n.exited:
			b, _ := os.ReadFile(logFile)
			return nil, fmt.Errorf("nginx exited: %v\n%s%s", err, stderr.String(), testutil.Tail(string(b), 2000))
		case <-time.After(50 * time.Millisecond):
		}
		if listening(cfg.TLSPort) && listening(cfg.PlainPort) {
			return n, nil
		}
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-n.exited
	return nil, fmt.Errorf("nginx did not listen within 20s: %s", stderr.String())
}

// listening reports whether something accepts connections on port.
func listening(port int) bool {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}

// stop ends nginx (SIGTERM to its master: a fast shutdown), its workers
// with it; SIGKILL to its process group if it has not exited in 10s.
func (n *nginx) stop(t *testing.T) {
	_ = n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.exited:
	case <-time.After(10 * time.Second):
		_ = syscall.Kill(-n.cmd.Process.Pid, syscall.SIGKILL)
		<-n.exited
		t.Errorf("nginx did not stop on SIGTERM within 10s")
	}
	if t.Failed() {
		b, _ := os.ReadFile(n.log)
		t.Logf("--- nginx error log, last lines:\n%s", testutil.Tail(string(b), 3000))
	}
}
