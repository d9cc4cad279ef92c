package protocol

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// A server that streams more content events than the client keeps gaps for
// cannot grow the record without bound: the gaps stop at MaxChunkGaps, the
// record says so, and every event is still counted.
func TestChunkGapsBounded(t *testing.T) {
	const events = MaxChunkGaps + 100
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := 0; i < events; i++ {
			fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n")
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	c := newClient(t, ClientOptions{NoProxy: true})
	res, rec := probe(t, c, context.Background(), srv.URL, Params{Model: "m"})
	if res.Outcome != ledger.OK {
		t.Fatalf("outcome %+v", res)
	}
	if rec.ContentEvents != events || len(rec.ChunkGaps) != MaxChunkGaps || !rec.ChunksTruncated {
		t.Fatalf("content events %d (want %d), gaps %d (want %d), truncated %v", rec.ContentEvents, events, len(rec.ChunkGaps), MaxChunkGaps, rec.ChunksTruncated)
	}
}
