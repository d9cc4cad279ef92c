package probehandler

import (
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// TestProbeAllowList: a target is a configured name or a URL under an
// allowed prefix, compared on the parsed URL; anything else is refused
// with 403 and a message saying why, nothing is sent and nothing planned.
func TestProbeAllowList(t *testing.T) {
	var hits atomic.Int64
	srv := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	u, _ := url.Parse(srv)
	host, port := u.Hostname(), u.Port()
	e := newEnv(t, targetsYAML("known", srv+"/v1")+modYAML([]string{srv + "/v1"}, "m", "{model: x}"))
	tests := []struct {
		target string
		code   int
		msg    string
	}{
		{"unknown-target", 403, `target "unknown-target" is neither a configured target nor a URL under probe.allowed_targets`},
		{"user:pw@" + host, 403, "(not shown: not a target name)"},
		{"http://" + host + ":" + port + ".evil.example/v1", 403, "target refused: not a URL"},
		{"http://" + host + ".evil.example:" + port + "/v1", 403, "not under any of the 1 prefixes"},
		{"http://" + host + "." + port + "/v1", 403, "not under any of the 1 prefixes"},
		{"http://" + host + ":" + port + "@evil.example/v1", 403, "credentials in the URL are not accepted"},
		{"http://u:secretpw@" + host + ":" + port + "/v1", 403, "credentials in the URL are not accepted"},
		{"http://localhost:" + port + "/v1", 403, "not under any"},
		{"https://" + host + ":" + port + "/v1", 403, "not under any"},
		{"http://" + host + ":8/v1", 403, "not under any"},
		{"http://" + host + ":1" + port + "0/v1", 403, "the port must be a number"},
		{srv + "/v10", 403, "not under any"},
		{srv + "/v1x", 403, "not under any"},
		{srv + "/", 403, "not under any"},
		{srv + "/v1/../admin", 403, "dot segments"},
		{srv + "/v1%2F..%2Fadmin", 403, "escaped"},
		{srv + "/v1?api_key=x", 403, "a query is not accepted"},
		{"file:///etc/passwd", 403, "http(s)"},
		{"gopher://" + host + ":" + port + "/v1", 403, "http(s)"},
	}
	for _, tt := range tests {
		code, body := e.get(t, "module=m&target="+url.QueryEscape(tt.target))
		if code != tt.code || !strings.Contains(body, tt.msg) {
			t.Errorf("target %q: %d %q, want %d containing %q", tt.target, code, body, tt.code, tt.msg)
		}
		if strings.Contains(body, "secretpw") || strings.Contains(body, "user:pw") {
			t.Errorf("target %q: the answer echoes a credential: %q", tt.target, body)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server", n)
	}
	if n := len(e.records()); n != 0 {
		t.Errorf("%d records planned for refused targets", n)
	}
	// Under the prefix: sent (the server answers 404: the probe ran).
	if code, body := e.get(t, "module=m&target="+url.QueryEscape(srv+"/v1/deeper")); code != 200 || !strings.Contains(body, `probe_llm_outcome{outcome="http_error",reason="not_found"} 1`) {
		t.Errorf("a URL under the prefix: %d %s", code, body)
	}
	// With no allowed_targets, only names.
	e2 := newEnv(t, targetsYAML("known", srv+"/v1")+"probe: {modules: {m: {model: x}}}\n")
	if code, body := e2.get(t, "module=m&target="+url.QueryEscape(srv+"/v1")); code != 403 || !strings.Contains(body, "probe.allowed_targets is empty") {
		t.Errorf("no allow-list: %d %q", code, body)
	}
	if code, _ := e2.get(t, "module=m&target=known"); code != 200 {
		t.Errorf("a configured target with no allow-list: %d", code)
	}
}

// TestProbeBadRequests: what is wrong with the scrape itself is a 400
// naming it; nothing is planned.
func TestProbeBadRequests(t *testing.T) {
	srv := httpServer(t, http.NotFoundHandler())
	e := newEnv(t, targetsYAML("known", srv+"/v1")+modYAML([]string{srv}, "m", "{model: x}", "nomodel", "{}",
		"burst", "{model: x, timeouts: {total: 10s}, burst: {requests: 3, spacing: 1s}}"))
	tests := []struct {
		query, header, msg string
		code               int
	}{
		{"target=known", "", "the module parameter is missing (configured modules: burst, m, nomodel)", 400},
		{"module=nope&target=known", "", `unknown module "nope"`, 400},
		{"module=m", "", "the target parameter is missing", 400},
		{"module=m&target=known", "abc", "X-Prometheus-Scrape-Timeout-Seconds: want a positive number of seconds", 400},
		{"module=m&target=known", "-1", "want a positive number", 400},
		{"module=m&target=known", "NaN", "want a positive number", 400},
		{"module=m&target=known", "0.4", "the scrape timeout 400ms leaves nothing once probe.timeout_offset 500ms is taken off", 400},
		{"module=burst&target=known", "2.5", "the burst spans 2s (3 requests 1s apart), not shorter than the probe's timeout 2s (the scrape timeout 2.5s less probe.timeout_offset 500ms)", 400},
		{"module=nomodel&target=" + url.QueryEscape(srv+"/v1"), "", "module nomodel names no model: it can probe configured targets only", 400},
	}
	for _, tt := range tests {
		var hdr []string
		if tt.header != "" {
			hdr = []string{ScrapeTimeoutHeader, tt.header}
		}
		code, body := e.get(t, tt.query, hdr...)
		if code != tt.code || !strings.Contains(body, tt.msg) {
			t.Errorf("%s [%s]: %d %q, want %d containing %q", tt.query, tt.header, code, body, tt.code, tt.msg)
		}
	}
	if n := len(e.records()); n != 0 {
		t.Errorf("%d records planned for bad requests", n)
	}
	// The burst fits a longer scrape.
	if code, body := e.get(t, "module=burst&target=known", ScrapeTimeoutHeader, "5"); code != 200 || !strings.Contains(body, "probe_llm_requests 3") {
		t.Errorf("a burst that fits: %d %s", code, body)
	}
}

// TestProbeOnlyGET: a HEAD (a link checker, a load balancer's health
// check) or any other method but GET is refused with 405 and Allow: GET,
// and sends and records nothing; the same scrape as a GET probes.
func TestProbeOnlyGET(t *testing.T) {
	var hits atomic.Int64
	srv := httpServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNotFound)
	}))
	e := newEnv(t, targetsYAML("known", srv+"/v1")+"probe: {modules: {m: {model: x}}}\n")
	for _, m := range []string{http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions} {
		req, err := http.NewRequest(m, e.url+"/probe?module=m&target=known", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != http.MethodGet {
			t.Errorf("%s /probe: %d, Allow %q; want 405, Allow GET", m, resp.StatusCode, resp.Header.Get("Allow"))
		}
	}
	if n, r := hits.Load(), len(e.records()); n != 0 || r != 0 {
		t.Errorf("%d requests reached the target and %d records were planned: want none", n, r)
	}
	if code, _ := e.get(t, "module=m&target=known"); code != http.StatusOK || hits.Load() != 1 {
		t.Errorf("GET: %d, %d requests sent; want 200 and one", code, hits.Load())
	}
}
