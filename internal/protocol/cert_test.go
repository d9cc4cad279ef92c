package protocol

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	file string // the CA certificate as a PEM file
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "llmprobe test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(30 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	file := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, file: file}
}

// leaf issues a server certificate for names valid from notBefore to notAfter.
func (ca *testCA) leaf(t *testing.T, notBefore, notAfter time.Time, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "llmprobe test server"},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func tlsServer(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(streamHandler(content("a"), content("b"), finishStop, done))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are logged
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestDoCertificates(t *testing.T) {
	ca := newTestCA(t)
	now := time.Now()
	in3days := now.Add(72 * time.Hour).Truncate(time.Second)
	tests := []struct {
		name   string
		cert   tls.Certificate
		opts   TLSOptions
		reason ledger.Reason
		errHas []string
	}{
		{name: "trusted, expires in 3 days", cert: ca.leaf(t, now.Add(-time.Hour), in3days, "localhost"), opts: TLSOptions{CAFile: ca.file}, reason: ledger.ReasonStop},
		{name: "names another host", cert: ca.leaf(t, now.Add(-time.Hour), in3days, "api.example.com", "10.1.2.3"), opts: TLSOptions{CAFile: ca.file},
			reason: ledger.ReasonTLSHostname, errHas: []string{"api.example.com, 10.1.2.3", "issuer llmprobe test CA", "not host localhost"}},
		{name: "expired", cert: ca.leaf(t, now.Add(-48*time.Hour), now.Add(-24*time.Hour), "localhost"), opts: TLSOptions{CAFile: ca.file},
			reason: ledger.ReasonTLSExpired, errHas: []string{"certificate valid", "issuer llmprobe test CA"}},
		{name: "unknown authority", cert: ca.leaf(t, now.Add(-time.Hour), in3days, "localhost"),
			reason: ledger.ReasonTLSUntrusted, errHas: []string{"unknown authority (issuer llmprobe test CA)"}},
		{name: "skip verify: expiry still read", cert: ca.leaf(t, now.Add(-time.Hour), in3days, "localhost"), opts: TLSOptions{InsecureSkipVerify: true}, reason: ledger.ReasonStop},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := tlsServer(t, tt.cert)
			c := newClient(t, ClientOptions{TLS: tt.opts, Timeouts: Timeouts{Total: 10 * time.Second}})
			res, rec := probe(t, c, context.Background(), strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/v1", Params{})
			if res.Reason != tt.reason {
				t.Fatalf("result %+v, want reason %s", res, tt.reason)
			}
			for _, s := range tt.errHas {
				if !strings.Contains(res.Err, s) {
					t.Errorf("error text %q lacks %q", res.Err, s)
				}
			}
			if res.Outcome != ledger.OK {
				if rec.Cert != nil {
					t.Errorf("a failed handshake recorded certificate facts %+v", rec.Cert)
				}
				return
			}
			want := ledger.CertFacts{LeafExpiry: in3days.Unix(), EarliestExpiry: in3days.Unix()}
			if !tt.opts.InsecureSkipVerify {
				want.LastChainExpiry = in3days.Unix() // the CA outlives the leaf
			}
			if rec.Cert == nil || *rec.Cert != want {
				t.Errorf("certificate facts %+v, want %+v", rec.Cert, want)
			}
		})
	}
}

func TestPlainHTTPHasNoCertificate(t *testing.T) {
	srv := httptest.NewServer(streamHandler(content("a"), finishStop, done))
	defer srv.Close()
	_, rec := probe(t, newClient(t, ClientOptions{}), context.Background(), srv.URL+"/v1", Params{})
	if rec.Cert != nil {
		t.Errorf("plain HTTP recorded certificate facts %+v", rec.Cert)
	}
}

func TestPathErrorNamesTheHostCleaned(t *testing.T) {
	c := newClient(t, ClientOptions{})
	err := &url.Error{Op: "Post", URL: "http://x", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "llm\x1b[31m.internal", IsNotFound: true}}}
	res, ok := c.pathError(err)
	if !ok || res.Outcome != ledger.TransportError || res.Reason != ledger.ReasonDNS {
		t.Fatalf("pathError = %+v, %v; want transport_error/dns", res, ok)
	}
	if strings.ContainsRune(res.Err, '\x1b') || !strings.Contains(res.Err, "name resolution failed for host llm") {
		t.Errorf("error text %q", res.Err)
	}
	if _, ok := c.pathError(io.EOF); ok {
		t.Error("pathError claimed an EOF")
	}
}

func TestCertFactsChains(t *testing.T) {
	at := func(h int) *x509.Certificate { return &x509.Certificate{NotAfter: time.Unix(int64(h)*3600, 0)} }
	leaf, inter, root, altRoot := at(100), at(50), at(1000), at(80)
	cs := &tls.ConnectionState{
		PeerCertificates: []*x509.Certificate{leaf, inter},
		VerifiedChains:   [][]*x509.Certificate{{leaf, inter, root}, {leaf, altRoot}},
	}
	got := certFacts(cs)
	want := ledger.CertFacts{LeafExpiry: 100 * 3600, EarliestExpiry: 50 * 3600, LastChainExpiry: 80 * 3600}
	if got == nil || *got != want {
		t.Errorf("certFacts = %+v, want %+v", got, want)
	}
	if certFacts(nil) != nil || certFacts(&tls.ConnectionState{}) != nil {
		t.Error("facts from no certificates")
	}
}
