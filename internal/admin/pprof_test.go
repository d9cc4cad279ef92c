package admin

import (
	"net/http"
	"strings"
	"testing"
)

// TestPprofOptIn: Go's profiles are served only when LLMPROBE_PPROF=1.
func TestPprofOptIn(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
	}{{"", http.StatusNotFound}, {"0", http.StatusNotFound}, {"1", http.StatusOK}} {
		t.Run("env="+tc.env, func(t *testing.T) {
			t.Setenv(PprofEnv, tc.env)
			h := Handler(Options{Gatherer: testRegistry(t)})
			for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap?debug=1", "/debug/pprof/goroutine?debug=1"} {
				rec := get(t, h, path, nil)
				if rec.Code != tc.want {
					t.Fatalf("%s: status %d, want %d", path, rec.Code, tc.want)
				}
				if tc.want == http.StatusOK && !strings.Contains(rec.Body.String(), "goroutine") && !strings.Contains(rec.Body.String(), "heap") {
					t.Fatalf("%s: not a profile: %.200s", path, rec.Body.String())
				}
			}
		})
	}
}
