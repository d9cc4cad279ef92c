package protocol

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"time"

	"github.com/llmprobe/llmprobe/internal/protocol/h1"
)

// TLSOptions configure TLS to targets.
type TLSOptions struct {
	CAFile             string // PEM CA bundle that replaces the system roots; "" = system roots
	CertFile           string // client certificate (PEM), with KeyFile, for mutual TLS
	KeyFile            string // client key (PEM)
	ServerName         string // overrides the name verified (SNI); "" = the URL's host
	InsecureSkipVerify bool   // do not verify the server: warned loudly, for tests only
}

// Transport sizing defaults: many concurrent streams to few hosts.
const (
	defaultMaxIdleConnsPerHost = 4096
	// MaxResponseHeaderBytes bounds a response's headers (Go's default is
	// 10 MB per response, outside limits.max_buffered_bytes): inference
	// servers and gateways send a few KiB. A larger header section ends the
	// request transport_error/transport_other, "response headers too large".
	MaxResponseHeaderBytes = 256 << 10
	dialKeepAlive          = 30 * time.Second
	readBufferSize         = 1024
	writeBufferSize        = 1024
)

// router sends each request through one of two transports: plain-HTTP
// requests that no proxy takes through the streaming HTTP/1.1 transport
// (h1: written and read on the request's goroutine, no goroutine of its
// own per connection, so a stream in flight costs a third less memory),
// everything else (TLS, HTTP/2, proxies) through Go's. Both dial through
// the same dialer and bound idle connections by the same rules.
type router struct {
	h1    *h1.Transport
	std   *http.Transport
	proxy func(*http.Request) (*url.URL, error) // nil: no proxy
}

func (r *router) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL != nil && req.URL.Scheme == "http" && r.direct(req) {
		return r.h1.RoundTrip(req)
	}
	// Go's transport replays HTTP/1 requests by the keep-alive rule
	// itself, HTTP/2 ones only on a GOAWAY or a refused stream: the
	// HTTP/2 race is replayed here (replayH2).
	for attempt := 0; ; attempt++ {
		var a h2Attempt
		resp, err := r.std.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), a.trace())))
		if err == nil || attempt >= maxReplays || req.Context().Err() != nil || !a.lostToPool(err) || !replayable(req) {
			return resp, err
		}
		next, rerr := h1.Rewind(req)
		if rerr != nil {
			return nil, rerr
		}
		req = next
	}
}

// direct reports whether no proxy takes req.
func (r *router) direct(req *http.Request) bool {
	if r.proxy == nil {
		return true
	}
	u, err := r.proxy(req)
	return err == nil && u == nil
}

// CloseIdleConnections closes both transports' idle connections.
func (r *router) CloseIdleConnections() {
	r.h1.CloseIdleConnections()
	r.std.CloseIdleConnections()
}

// newRouter builds both transports from o.
func newRouter(o ClientOptions) (*router, []string, error) {
	std, warnings, err := newTransport(o)
	if err != nil {
		return nil, nil, err
	}
	// h1 takes Go's transport's settings as built, so the two cannot drift.
	r := &router{std: std, proxy: std.Proxy, h1: h1.New(h1.Options{
		Dial:                   std.DialContext,
		MaxConnsPerHost:        std.MaxConnsPerHost,
		IdleConnTimeout:        std.IdleConnTimeout,
		MaxResponseHeaderBytes: std.MaxResponseHeaderBytes,
		ReadBufferSize:         std.ReadBufferSize,
		WriteBufferSize:        std.WriteBufferSize,
	})}
	return r, warnings, nil
}

// newTransport builds Go's HTTP transport: a dialer bounded by the connect
// timeout, TLS from opts, HTTP/2 negotiated over TLS unless disabled, the
// proxy from the environment, no response compression, idle pools sized
// for thousands of concurrent streams, and idle connections kept for less
// than the server keeps them (IdleConnTimeout, Keep-Alive: timeout=N). It returns the warnings to surface.
func newTransport(o ClientOptions) (*http.Transport, []string, error) {
	var warnings []string
	tlsConf, w, err := newTLSConfig(o.TLS)
	if err != nil {
		return nil, nil, err
	}
	warnings = append(warnings, w...)
	dialer := &net.Dialer{Timeout: o.Timeouts.Connect, KeepAlive: dialKeepAlive}
	idle := o.IdleConnTimeout
	if idle == 0 {
		idle = DefaultIdleConnTimeout
	}
	tr := &http.Transport{
		// Each connection can close itself once idle for its server's
		// advertised keep-alive timeout (keepalive.go).
		DialContext:         dialIdle(dialer.DialContext),
		TLSClientConfig:     tlsConf,
		TLSHandshakeTimeout: o.Timeouts.Connect,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: defaultMaxIdleConnsPerHost,
		MaxConnsPerHost:     o.MaxConnsPerHost,
		IdleConnTimeout:     idle, // below common servers' keep-alive timeouts
		DisableCompression:  true, // streams are timed as sent; no gzip buffering
		// Bounds HTTP/1 header bytes and, through the same field, HTTP/2's
		// header list size.
		MaxResponseHeaderBytes: MaxResponseHeaderBytes,
		Protocols:              new(http.Protocols),
		// A connection keeps its write buffer for life, but writes only
		// its requests: 1 KiB holds the headers and body of a typical
		// request in one write (a larger one takes more), and saves 3 KiB
		// per connection over the 4 KiB default.
		WriteBufferSize: writeBufferSize,
		// The connection's reader holds a response's headers and its
		// chunk-size lines, and refills from the socket; the SSE reader
		// buffers the events. 1 KiB (Go's default is 4 KiB) holds a chunk
		// of a typical stream in one read and saves 3 KiB per connection:
		// 30 MB at 10,000 streams in flight. A chunk-size line longer than
		// it (chunk extensions, which no inference server sends) ends the
		// stream as a transport error.
		ReadBufferSize: readBufferSize,
	}
	if !o.NoProxy {
		tr.Proxy = http.ProxyFromEnvironment
	}
	tr.Protocols.SetHTTP1(true)
	if !o.DisableHTTP2 {
		tr.Protocols.SetHTTP2(true)
	}
	return tr, warnings, nil
}

func newTLSConfig(o TLSOptions) (*tls.Config, []string, error) {
	conf := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: o.ServerName}
	var warnings []string
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, nil, fmt.Errorf("tls: reading CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, nil, fmt.Errorf("tls: CA file %s holds no PEM certificate", o.CAFile)
		}
		conf.RootCAs = pool
	}
	switch {
	case o.CertFile != "" && o.KeyFile != "":
		cert, err := tls.LoadX509KeyPair(o.CertFile, o.KeyFile)
		if err != nil {
			// The error names the files, never key material.
			return nil, nil, fmt.Errorf("tls: loading client certificate %s and key %s: %w", o.CertFile, o.KeyFile, err)
		}
		conf.Certificates = []tls.Certificate{cert}
	case o.CertFile != "" || o.KeyFile != "":
		return nil, nil, errors.New("tls: a client certificate needs both the cert file and the key file")
	}
	if o.InsecureSkipVerify {
		conf.InsecureSkipVerify = true
		warnings = append(warnings, "TLS certificate verification is DISABLED (insecure skip verify): any server, or anyone in between, is trusted; use only for testing")
	}
	return conf, warnings, nil
}
