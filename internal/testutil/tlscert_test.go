package testutil

import (
	"crypto/tls"
	"crypto/x509"
	"testing"
)

func TestSelfSigned(t *testing.T) {
	for _, usage := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
		certPath, keyPath, pool := SelfSigned(t, t.TempDir(), usage)
		pair, err := tls.LoadX509KeyPair(certPath, keyPath)
		if err != nil {
			t.Fatalf("usage %v: the files are not a key pair: %v", usage, err)
		}
		_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: "127.0.0.1", KeyUsages: []x509.ExtKeyUsage{usage}})
		if err != nil {
			t.Errorf("usage %v: the pool does not verify the certificate for 127.0.0.1: %v", usage, err)
		}
		_, err = pair.Leaf.Verify(x509.VerifyOptions{Roots: x509.NewCertPool(), KeyUsages: []x509.ExtKeyUsage{usage}})
		if err == nil {
			t.Errorf("usage %v: verified without its pool", usage)
		}
	}
}
