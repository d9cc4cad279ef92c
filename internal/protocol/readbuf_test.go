package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// The connection's read buffer is small (readBufferSize): response headers,
// events and chunks larger than it still arrive whole, and a record's
// per-chunk gaps grow with the chunks seen, never preallocated up to
// MaxChunkGaps (memory per stream in flight: docs/benchmark.md).
func TestSmallReadBufferAndLazyGaps(t *testing.T) {
	if readBufferSize > 4096 {
		t.Fatalf("readBufferSize %d: the cases below are sized for a buffer of at most 4 KiB", readBufferSize)
	}
	big := strings.Repeat("y", 3*readBufferSize)
	cases := []struct {
		name    string
		events  int    // content events
		text    string // each event's content
		header  string // value of a long response header ("" = none)
		maxGaps int    // bound on cap(ChunkGaps)
	}{
		{"no content events but finish", 0, "x", "", 0},
		{"one event", 1, "x", "", 0},
		{"a hundred events", 100, "x", "", 256},
		{"events larger than the buffer", 4, big, "", 16},
		{"headers larger than the buffer", 3, "x", strings.Repeat("h", 3*readBufferSize), 16},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					w.Header().Set("X-Long", tc.header)
				}
				w.Header().Set("Content-Type", "text/event-stream")
				for i := 0; i < tc.events; i++ {
					fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", tc.text)
					w.(http.Flusher).Flush()
				}
				fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			c := newClient(t, ClientOptions{NoProxy: true})
			res, rec := probe(t, c, context.Background(), srv.URL, Params{Model: "m"})
			if res.Outcome != ledger.OK {
				t.Fatalf("outcome %+v", res)
			}
			if rec.ContentEvents != tc.events || len(rec.ChunkGaps) != max(tc.events-1, 0) {
				t.Fatalf("content events %d, gaps %d; want %d and %d", rec.ContentEvents, len(rec.ChunkGaps), tc.events, max(tc.events-1, 0))
			}
			if cap(rec.ChunkGaps) > tc.maxGaps {
				t.Errorf("gap slice capacity %d for %d gaps (want at most %d): preallocated", cap(rec.ChunkGaps), len(rec.ChunkGaps), tc.maxGaps)
			}
			if rec.ChunkTokens != nil {
				t.Errorf("per-chunk tokens %v kept though the server sent none", rec.ChunkTokens)
			}
		})
	}
}
