package scrape

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/sanitize"
	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// TestLlamaCPPSlots: with the llamacpp flavour a window reads the number
// of slots from /props beside /metrics (llama.cpp exports busy slots
// only); when /props does not answer, the view says so and gives no idle
// figure.
func TestLlamaCPPSlots(t *testing.T) {
	mid := fixture(t, "llamacpp_mid.prom")
	tests := []struct {
		name  string
		props func(w http.ResponseWriter)
		slots int
		note  string
	}{
		{"props", func(w http.ResponseWriter) { _, _ = io.WriteString(w, `{"total_slots":4,"chat_template":"x"}`) }, 4, ""},
		{"no props", func(w http.ResponseWriter) { http.Error(w, "no", http.StatusNotFound) }, 0, "number of slots unknown (idle slots not given): GET /props: HTTP 404"},
		{"nonsense", func(w http.ResponseWriter) { _, _ = io.WriteString(w, `{"total_slots":-1}`) }, 0, "no total_slots from 1 to"},
		{"not JSON, echoing a secret", func(w http.ResponseWriter) { _, _ = io.WriteString(w, secret+"\x1b[2J") }, 0, "not JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/props" {
					tt.props(w)
					return
				}
				w.Header().Set("Content-Type", "text/plain; version=0.0.4")
				_, _ = w.Write(mid)
			})
			s := newScraper(t, Options{URL: u, Redactor: sanitize.NewRedactor(secret)})
			w, err := s.Start(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			v, err := w.End(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if v.Flavour != servermetrics.LlamaCPP || v.Slots != tt.slots {
				t.Fatalf("flavour %q, %d slots; want llamacpp, %d", v.Flavour, v.Slots, tt.slots)
			}
			notes := strings.Join(v.Notes, "; ")
			if tt.note == "" && notes != "" || !strings.Contains(notes, tt.note) || strings.Contains(notes, secret[:sanitize.MinFragment]) {
				t.Errorf("notes %q, want %q", notes, tt.note)
			}
			busy := "slots busy up to 4"
			if tt.slots > 0 {
				busy += " of 4"
			}
			if !strings.Contains(v.Explanation, busy+";") {
				t.Errorf("explanation %q lacks %q", v.Explanation, busy)
			}
		})
	}
}
