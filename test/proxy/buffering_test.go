package proxy

import (
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// Tolerances of the proxied path against the direct one (medians of 8
// streams of 32 tokens at 20 ms, 660 ms each): one TLS handshake and a
// loopback hop through nginx add a few milliseconds; 150 ms is a quarter of
// what a buffering proxy adds (the whole generation, 620 ms), so the two
// cases cannot be mistaken for each other.
const (
	requests  = 8
	every     = 250 * time.Millisecond
	tolerance = 150 * time.Millisecond
	lagBound  = 50 * time.Millisecond // a dispatch lag above it: the host, not the path
)

// TestBufferingThroughNginx runs the simulator directly and through nginx
// with TLS, proxy_buffering off and on, over HTTP/1.1 and HTTP/2: off, the
// figures equal the direct path's within tolerance and no stream is
// flagged; on, every stream is flagged buffered_by_intermediary and
// counted. The certificate expiring in 3 days is exported.
func TestBufferingThroughNginx(t *testing.T) {
	requireNginx(t)
	upstream := startSim(t, simTTFT)
	expiry := time.Now().Add(72 * time.Hour).Truncate(time.Second)
	off := startNginx(t, proxyConfig{Upstream: upstream, CertExpiry: expiry})
	on := startNginx(t, proxyConfig{Upstream: upstream, Buffering: true})

	direct := run(t, client(t, off.cfg.CAFile, true), "http://"+upstream+"/v1", requests, every, nil)
	df := summarise(direct)
	t.Logf("direct: %v", df)
	if df.ok != requests {
		t.Fatalf("direct: %v", df)
	}
	if df.buffered > 0 {
		// The rule's false alarm on a direct stream: only a client starved
		// for the whole stream reads it in one burst.
		t.Errorf("direct: %d of %d streams flagged buffered (host starved: %v)", df.buffered, df.ok, hostStarved(direct, lagBound))
	}
	for _, h1 := range []bool{true, false} {
		name := map[bool]string{true: "HTTP/1.1", false: "HTTP/2"}[h1]
		t.Run("off/"+name, func(t *testing.T) {
			rec, err := telemetry.New(telemetry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			recs := run(t, client(t, off.cfg.CAFile, h1), off.TLSURL(), requests, every, rec)
			f := summarise(recs)
			t.Logf("proxy_buffering off, TLS, %s: %v", name, f)
			if f.ok != requests {
				t.Fatalf("%v; first record %+v", f, *recs[0])
			}
			starved := hostStarved(recs, lagBound) || hostStarved(direct, lagBound)
			for _, d := range []struct {
				what          string
				proxied, base time.Duration
			}{{"TTFT p50", f.ttft, df.ttft}, {"e2e p50", f.e2e, df.e2e}} {
				if diff := (d.proxied - d.base).Abs(); diff > tolerance {
					if starved {
						t.Logf("%s %v through the proxy, %v direct: off by more than %v, on a starved host", d.what, d.proxied, d.base, tolerance)
						continue
					}
					t.Errorf("%s %v through the proxy, %v direct: off by more than %v", d.what, d.proxied, d.base, tolerance)
				}
			}
			if f.buffered > 0 && !starved {
				t.Errorf("%d streams flagged buffered with proxy_buffering off", f.buffered)
			}
			checkCertSeries(t, rec, expiry)
			t.Logf("ledger record: %s", recordJSON(t, recs[len(recs)-1]))
		})
		t.Run("on/"+name, func(t *testing.T) {
			rec, err := telemetry.New(telemetry.Options{})
			if err != nil {
				t.Fatal(err)
			}
			recs := run(t, client(t, on.cfg.CAFile, h1), on.TLSURL(), requests, every, rec)
			f := summarise(recs)
			t.Logf("proxy_buffering on, TLS, %s: %v", name, f)
			if f.ok != requests {
				t.Fatalf("%v; first record %+v", f, *recs[0])
			}
			// Each stream's flag against the timing: a stream whose first
			// token came no earlier than the direct path's whole response
			// less the tolerance was held by the proxy, and must be flagged;
			// one whose first token came as early as the direct path's
			// was not, and must not be.
			held := 0
			for _, r := range recs {
				ttft, _ := r.TTFT()
				switch {
				case ttft >= df.e2e-tolerance:
					held++
					if !r.BufferedByIntermediary {
						t.Errorf("stream %d held (TTFT %v, direct e2e p50 %v) but not flagged", r.ID, ttft, df.e2e)
					}
				case ttft <= df.ttft+tolerance && r.BufferedByIntermediary:
					t.Errorf("stream %d streamed (TTFT %v, direct TTFT p50 %v) but flagged", r.ID, ttft, df.ttft)
				}
			}
			// Measured with nginx 1.22: it holds an HTTP/1.1 response
			// (headers and body) until the upstream's end, and passes an
			// HTTP/2 stream through as it comes, buffering on or off.
			if h1 && held != requests {
				t.Errorf("%d of %d streams held by nginx with proxy_buffering on over HTTP/1.1", held, requests)
			}
			if got, _ := gauge(t, rec.Registry(), "llmprobe_buffered_streams_total"); got != float64(f.buffered) {
				t.Errorf("llmprobe_buffered_streams_total %v, want %d", got, f.buffered)
			}
			t.Logf("ledger record: %s", recordJSON(t, recs[len(recs)-1]))
		})
	}
}

// checkCertSeries holds the certificate expiry series to the test
// certificate's NotAfter, and logs them.
func checkCertSeries(t *testing.T, rec *telemetry.Recorder, expiry time.Time) {
	t.Helper()
	for _, name := range []string{"llmprobe_tls_leaf_cert_expiry_timestamp_seconds", "llmprobe_tls_earliest_cert_expiry_timestamp_seconds", "llmprobe_tls_last_chain_expiry_timestamp_seconds"} {
		v, ok := gauge(t, rec.Registry(), name)
		if !ok || v != float64(expiry.Unix()) {
			t.Errorf("%s = %v (present %v), want %d (%s)", name, v, ok, expiry.Unix(), expiry.UTC().Format(time.RFC3339))
			continue
		}
		t.Logf(`%s{target="gw"} %d  (%s, in %v)`, name, int64(v), expiry.UTC().Format(time.RFC3339), time.Until(expiry).Round(time.Minute))
	}
}
