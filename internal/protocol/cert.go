package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// certFacts reads the expiry of the server's certificates from a TLS
// connection's state, by the blackbox exporter's rules: the leaf's
// NotAfter, the earliest NotAfter of every certificate presented, and the
// latest over the verified chains of each chain's earliest NotAfter. nil
// when the server presented none.
func certFacts(cs *tls.ConnectionState) *ledger.CertFacts {
	if cs == nil || len(cs.PeerCertificates) == 0 {
		return nil
	}
	f := &ledger.CertFacts{LeafExpiry: cs.PeerCertificates[0].NotAfter.Unix()}
	f.EarliestExpiry = earliestExpiry(cs.PeerCertificates)
	for _, chain := range cs.VerifiedChains {
		if e := earliestExpiry(chain); e > f.LastChainExpiry {
			f.LastChainExpiry = e
		}
	}
	return f
}

// earliestExpiry is the earliest NotAfter of certs, as Unix seconds.
func earliestExpiry(certs []*x509.Certificate) int64 {
	var e int64
	for i, c := range certs {
		if n := c.NotAfter.Unix(); i == 0 || n < e {
			e = n
		}
	}
	return e
}

// maxNames bounds the certificate names quoted in a hostname mismatch.
const maxNames = 3

// pathError names a failure to reach the target by name or to trust its
// certificate: transport_error/dns naming the host, tls_hostname naming
// the host and the names the certificate holds, tls_expired naming when,
// tls_untrusted naming the issuer. Every name is server- or
// configuration-supplied text and goes through the Client's Redactor.
// ok is false for any other error (classifyError decides).
func (c *Client) pathError(err error) (ledger.Result, bool) {
	res := func(r ledger.Reason, msg string) (ledger.Result, bool) {
		return ledger.Result{Outcome: ledger.TransportError, Reason: r, Err: c.red.String(msg, maxErrorText)}, true
	}
	var (
		dnsErr  *net.DNSError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		unkAuth x509.UnknownAuthorityError
	)
	switch {
	case errors.As(err, &dnsErr):
		return res(ledger.ReasonDNS, "name resolution failed for host "+c.red.String(dnsErr.Name, maxLabel))
	case errors.As(err, &hostErr) && hostErr.Certificate != nil:
		return res(ledger.ReasonTLSHostname, "tls: certificate for "+c.certNames(hostErr.Certificate)+
			" (issuer "+c.issuer(hostErr.Certificate)+"), not host "+c.red.String(hostErr.Host, maxLabel))
	case errors.As(err, &invErr) && invErr.Reason == x509.Expired && invErr.Cert != nil:
		return res(ledger.ReasonTLSExpired, "tls: certificate valid "+invErr.Cert.NotBefore.UTC().Format(time.RFC3339)+
			" to "+invErr.Cert.NotAfter.UTC().Format(time.RFC3339)+" (issuer "+c.issuer(invErr.Cert)+")")
	case errors.As(err, &unkAuth):
		msg := "tls: certificate signed by an unknown authority"
		if unkAuth.Cert != nil {
			msg += " (issuer " + c.issuer(unkAuth.Cert) + ")"
		}
		return res(ledger.ReasonTLSUntrusted, msg)
	}
	return ledger.Result{}, false
}

// certNames lists a certificate's DNS and IP names (or its common name
// when it has none), cleaned, at most maxNames of them.
func (c *Client) certNames(cert *x509.Certificate) string {
	names := append([]string(nil), cert.DNSNames...)
	for _, ip := range cert.IPAddresses {
		names = append(names, ip.String())
	}
	if len(names) == 0 && cert.Subject.CommonName != "" {
		names = append(names, "CN "+cert.Subject.CommonName)
	}
	if len(names) == 0 {
		return "no names"
	}
	more := ""
	if len(names) > maxNames {
		more = " and " + strconv.Itoa(len(names)-maxNames) + " more"
		names = names[:maxNames]
	}
	for i, n := range names {
		names[i] = c.red.String(n, maxLabel)
	}
	return strings.Join(names, ", ") + more
}

// issuer is a certificate's issuer's common name (or organisation), cleaned.
func (c *Client) issuer(cert *x509.Certificate) string {
	name := cert.Issuer.CommonName
	if name == "" && len(cert.Issuer.Organization) > 0 {
		name = cert.Issuer.Organization[0]
	}
	if name == "" {
		return "unnamed"
	}
	return c.red.String(name, maxLabel)
}
