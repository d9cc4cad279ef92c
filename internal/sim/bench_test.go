package sim

import (
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestChunkEmissionDoesNotAllocate guards the per-token path: appending a
// chunk of any API to a buffer with room allocates nothing.
func TestChunkEmissionDoesNotAllocate(t *testing.T) {
	for _, tc := range []struct {
		name string
		em   emitter
	}{{"chat", chatEmitter{}}, {"completions", completionsEmitter{}}, {"responses", responsesEmitter{}}, {"messages", messagesEmitter{}}} {
		t.Run(tc.name, func(t *testing.T) {
			g := &gen{id: "1", model: []byte(`"m"`), reasoning: 1 << 20, content: 1 << 20}
			buf := make([]byte, 0, 64<<10)
			buf = tc.em.head(buf, g)
			buf = tc.em.chunk(buf, g, 1, 0)
			buf = tc.em.chunk(buf, g, 0, 1) // opens the content part
			allocs := testing.AllocsPerRun(200, func() {
				buf = tc.em.chunk(buf[:0], g, 0, 2)
				g.doneC += 2
			})
			if allocs != 0 {
				t.Fatalf("%v allocations per chunk", allocs)
			}
		})
	}
}

// BenchmarkRequestFiller is the per-request cost a prompt outside the
// library pays: decoding the body (which also finds the last user message)
// and planning the response (the library's recogniser says no).
// Run: go test -run '^$' -bench RequestFiller -benchmem ./internal/sim/
func BenchmarkRequestFiller(b *testing.B) {
	lc := testConfig()
	for i, ac := range apiCases {
		body := []byte(ac.body("m", 0, true))
		b.Run(ac.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, err := decodeRequest(api(i), body)
				if err != nil {
					b.Fatal(err)
				}
				g := gen{content: 5}
				plan(&g, api(i), &req, &lc)
				if g.ans != nil {
					b.Fatal("a filler prompt was answered")
				}
			}
		})
	}
}

// benchServer starts a simulator answering 16 tokens with fixed pacing (ttft
// and tokenTime in seconds) and a client keeping up to slots connections.
func benchServer(b *testing.B, slots, admission int, ttft, tokenTime float64) (Config, string, *http.Client) {
	b.Helper()
	cfg := DefaultConfig()
	cfg.Slots = slots
	cfg.AdmissionLimit = admission
	cfg.TTFT = FixedDist(ttft)
	cfg.TokenTime = FixedDist(tokenTime)
	cfg.OutputTokens = FixedDist(16)
	_, base := startServer(b, cfg)
	tr := &http.Transport{MaxIdleConnsPerHost: slots}
	b.Cleanup(tr.CloseIdleConnections)
	return cfg, base, &http.Client{Transport: tr}
}

// BenchmarkStreams measures the simulator's cost per streamed request
// (client included, same process): 16 content tokens, no pacing delay.
// Run: go test -run '^$' -bench Streams -benchmem ./internal/sim/
func BenchmarkStreams(b *testing.B) {
	for _, ac := range apiCases {
		b.Run(ac.name, func(b *testing.B) {
			_, base, c := benchServer(b, 1024, 4096, 0, 0)
			body := ac.body("m", 0, true)
			b.SetParallelism(16)
			b.ResetTimer()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					resp, err := c.Post(base+ac.path, "application/json", strings.NewReader(body))
					if err != nil {
						b.Error(err)
						return
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						b.Error(fmt.Errorf("status %d", resp.StatusCode))
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// BenchmarkPacedStreams offers chat streams at fixed open-loop rates against
// realistic pacing (TTFT 5 ms, 1 ms/token, 16 tokens: 20 ms of service) and
// reports the rate achieved and how late responses ended beyond their
// service time (p99 and worst), client and server in one process.
// Run: go test -run '^$' -bench PacedStreams -benchtime 4000x ./internal/sim/
func BenchmarkPacedStreams(b *testing.B) {
	for _, rate := range []float64{1000, 2000, 3000} {
		b.Run(fmt.Sprintf("rate=%.0f", rate), func(b *testing.B) { pacedStreams(b, rate) })
	}
}

func pacedStreams(b *testing.B, rate float64) {
	cfg, base, c := benchServer(b, 4096, 8192, 0.005, 0.001)
	body := apiCases[0].body("m", 0, true)
	service := cfg.ServiceTime()
	lates := make(chan time.Duration, b.N)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		planned := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(planned))
		go func() {
			resp, err := c.Post(base+"/chat/completions", "application/json", strings.NewReader(body))
			if err != nil {
				b.Error(err)
				lates <- 0
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			lates <- time.Since(planned) - service
		}()
	}
	late := make([]time.Duration, 0, b.N)
	for range b.N {
		late = append(late, <-lates)
	}
	elapsed := time.Since(start)
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "req/s")
	b.ReportMetric(float64(slices.Max(late).Microseconds())/1000, "worst-late-ms")
	b.ReportMetric(float64(p99(late).Microseconds())/1000, "p99-late-ms")
}

func p99(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)*99/100]
}
