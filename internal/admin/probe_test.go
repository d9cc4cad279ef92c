package admin

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestProbeRoute: GET /probe reaches the handler the daemon gives, query
// and headers intact; without one there is no route.
func TestProbeRoute(t *testing.T) {
	var seen *http.Request
	probe := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		w.WriteHeader(http.StatusTeapot)
	})
	h := Handler(Options{Gatherer: testRegistry(t), Probe: probe})
	rr := get(t, h, "/probe?target=t1&module=m", map[string]string{"X-Prometheus-Scrape-Timeout-Seconds": "2"})
	if rr.Code != http.StatusTeapot || seen == nil || seen.URL.Query().Get("module") != "m" || seen.Header.Get("X-Prometheus-Scrape-Timeout-Seconds") != "2" {
		t.Errorf("GET /probe: %d, handler saw %v", rr.Code, seen)
	}
	post := httptest.NewRecorder()
	h.ServeHTTP(post, httptest.NewRequest(http.MethodPost, "/probe?target=t1&module=m", nil))
	if post.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /probe: %d", post.Code)
	}
	if rr := get(t, Handler(Options{Gatherer: testRegistry(t)}), "/probe?target=t1&module=m", nil); rr.Code != http.StatusNotFound {
		t.Errorf("no probe handler: %d", rr.Code)
	}
}
