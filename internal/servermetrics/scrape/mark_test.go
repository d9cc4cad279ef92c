package scrape

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/servermetrics"
)

// TestMark: the waiting queue at the window's start and at the mark, read
// from a vLLM-style endpoint whose queue grows between scrapes; the mark is
// not folded into the window (the view's scrapes are the start and end
// only); a server without a waiting gauge, or a failed scrape, is not ok.
func TestMark(t *testing.T) {
	for _, tc := range []struct {
		name              string
		body              func(n int64) string
		status            int
		ok                bool
		wantStart, wantAt float64
	}{
		{"queue grew", func(n int64) string {
			return fmt.Sprintf("vllm:num_requests_waiting %d\nvllm:num_requests_running 8\n", 8*(n-1))
		}, http.StatusOK, true, 0, 8},
		{"no waiting gauge", func(int64) string { return "vllm:num_requests_running 8\n" }, http.StatusOK, false, 0, 0},
		{"mark fails", func(int64) string { return "vllm:num_requests_waiting 0\n" }, http.StatusInternalServerError, false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				k := n.Add(1)
				if k == 2 && tc.status != http.StatusOK {
					w.WriteHeader(tc.status)
					return
				}
				fmt.Fprint(w, tc.body(k))
			}))
			defer srv.Close()
			s, err := New(Options{URL: srv.URL, Flavour: servermetrics.VLLM, Timeout: time.Second})
			if err != nil {
				t.Fatal(err)
			}
			sess := Open(context.Background(), s)
			start, at, ok := sess.Mark(context.Background())
			if ok != tc.ok || start != tc.wantStart || at != tc.wantAt {
				t.Errorf("Mark = %g, %g, %v; want %g, %g, %v", start, at, ok, tc.wantStart, tc.wantAt, tc.ok)
			}
			v := sess.End(context.Background())
			if v == nil || v.Scrapes != 2 {
				t.Errorf("view %+v: want the start and end scrapes only", v)
			}
		})
	}
	if _, _, ok := (Session{}).Mark(context.Background()); ok {
		t.Error("a session of nothing marked a queue")
	}
}
