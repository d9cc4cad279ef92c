package admin

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Bounds on the error a refused reload answers: every line cleaned by the
// one rule (printable, bounded), at most maxReloadLines of them.
const (
	maxReloadLine  = 1024
	maxReloadLines = 100
)

// lifecycle registers /-/reload: POST or PUT reloads the configuration,
// as SIGHUP does (Prometheus' lifecycle API); any other method is 405. With
// no Reload (admin.enable_lifecycle off) it answers 403, as Prometheus does
// without --web.enable-lifecycle.
func lifecycle(mux *http.ServeMux, o Options) {
	h := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if o.Reload == nil {
			http.Error(w, "Lifecycle API is not enabled: start llmprobe run with --web.enable-lifecycle (admin.enable_lifecycle).", http.StatusForbidden)
			return
		}
		if err := o.Reload(); err != nil {
			// 500, as Prometheus answers a reload that fails: the request
			// was fine, the file on disk is not.
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = fmt.Fprintf(w, "Reload refused; the running configuration is unchanged:\n%s\n", reloadError(err))
			return
		}
		_, _ = fmt.Fprintln(w, "Configuration reloaded.")
	}
	mux.HandleFunc("POST /-/reload", h)
	mux.HandleFunc("PUT /-/reload", h)
}

// reloadError is err's text for the response body: one problem a line (a
// configuration's errors are one a line), each through the sanitiser.
func reloadError(err error) string {
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	if len(lines) > maxReloadLines {
		lines = append(lines[:maxReloadLines], fmt.Sprintf("… and %d more", len(lines)-maxReloadLines))
	}
	for i, l := range lines {
		lines[i] = sanitize.String(l, maxReloadLine)
	}
	return strings.Join(lines, "\n")
}
