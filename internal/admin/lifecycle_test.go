package admin

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReloadEndpoint: POST and PUT /-/reload run Reload (200); a refused
// reload is a 500 whose body carries the error, one problem a line,
// cleaned; GET is 405; with no Reload (the lifecycle API off) it is 403
// and says how to turn it on.
func TestReloadEndpoint(t *testing.T) {
	calls := 0
	var fail error
	h := Handler(Options{Gatherer: testRegistry(t), Reload: func() error { calls++; return fail }})
	off := Handler(Options{Gatherer: testRegistry(t)})
	do := func(h http.Handler, method string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, "/-/reload", nil))
		return w
	}
	for _, m := range []string{http.MethodPost, http.MethodPut} {
		if w := do(h, m); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "reloaded") {
			t.Errorf("%s: %d %q", m, w.Code, w.Body.String())
		}
	}
	if calls != 2 {
		t.Errorf("Reload ran %d times, want 2", calls)
	}
	fail = errors.New("c.yaml: targets[0].timeouts.total: invalid duration \"soon\"\nc.yaml: admin.colour: unknown key\x1b[31m")
	w := do(h, http.MethodPost)
	body := w.Body.String()
	if w.Code != http.StatusInternalServerError || !strings.Contains(body, "targets[0].timeouts.total") || !strings.Contains(body, "admin.colour") ||
		!strings.Contains(body, "unchanged") {
		t.Errorf("refused reload: %d %q", w.Code, body)
	}
	if strings.Contains(body, "\x1b") {
		t.Errorf("the error reached the body uncleaned: %q", body)
	}
	for _, m := range []string{http.MethodGet, http.MethodDelete} {
		if w := do(h, m); w.Code != http.StatusMethodNotAllowed {
			t.Errorf("%s /-/reload: %d, want 405", m, w.Code)
		}
	}
	if calls != 3 {
		t.Errorf("Reload ran %d times, want 3 (GET and DELETE must not reload)", calls)
	}
	if w := do(off, http.MethodPost); w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "--web.enable-lifecycle") {
		t.Errorf("lifecycle off: %d %q, want 403 naming --web.enable-lifecycle", w.Code, w.Body.String())
	}
}
