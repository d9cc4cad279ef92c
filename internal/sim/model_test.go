package sim

import (
	"context"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"
)

// drain reads a response to its end and returns when it ended.
func drain(t testing.TB, resp *http.Response) time.Time {
	t.Helper()
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Errorf("read body: %v", err)
	}
	return time.Now()
}

func chatBody(stream bool) string { return apiCases[0].body("m", 0, stream) }

func TestAdmissionLimit(t *testing.T) {
	for _, status := range []int{http.StatusTooManyRequests, http.StatusServiceUnavailable} {
		t.Run(http.StatusText(status), func(t *testing.T) {
			cfg := testConfig()
			cfg.Slots = 2
			cfg.AdmissionLimit = 5
			cfg.RejectStatus = status
			cfg.RetryAfter = 1500 * time.Millisecond // rounds up to 2
			cfg.TTFT = FixedDist(0.4)                // long enough that all 12 arrive while 5 are held
			cfg.OutputTokens = FixedDist(1)
			s, base := startServer(t, cfg)
			c := testClient(t)
			const n = 12
			var mu sync.Mutex
			codes := map[int]int{}
			var retry []string
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
					drain(t, resp)
					mu.Lock()
					defer mu.Unlock()
					codes[resp.StatusCode]++
					if resp.StatusCode != 200 {
						retry = append(retry, resp.Header.Get("Retry-After"))
					}
				})
			}
			wg.Wait()
			if codes[200] != 5 || codes[status] != n-5 {
				t.Fatalf("status counts %v, want 5×200 and %d×%d", codes, n-5, status)
			}
			for _, r := range retry {
				if r != "2" {
					t.Fatalf("Retry-After %q, want 2", r)
				}
			}
			st := s.Stats()
			if st.Admitted != 5 || st.Rejected != n-5 || st.Completed != 5 || st.Queued != 0 || st.InService != 0 {
				t.Fatalf("stats %+v", st)
			}
		})
	}
}

func TestSlotQueueingFIFO(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 1
	cfg.TTFT = FixedDist(0.15)
	cfg.OutputTokens = FixedDist(1)
	s, base := startServer(t, cfg)
	c := testClient(t)
	const n = 4
	start := time.Now()
	ends := make([]time.Duration, n)
	var wg sync.WaitGroup
	for i := range n {
		// Stagger arrivals so their FIFO order is known.
		time.Sleep(10 * time.Millisecond)
		wg.Go(func() {
			resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
			ends[i] = drain(t, resp).Sub(start)
		})
	}
	// While the first is served, the others queue.
	for s.Stats().Admitted < n {
		time.Sleep(time.Millisecond)
	}
	if st := s.Stats(); st.Completed == 0 && (st.InService != 1 || st.Queued != n-1) {
		t.Errorf("mid-run stats %+v, want 1 in service and %d queued", st, n-1)
	}
	wg.Wait()
	if !slices.IsSorted(ends) {
		t.Fatalf("completion order %v is not arrival order", ends)
	}
	// One slot: the i-th finishes no earlier than (i+1) service times.
	for i, e := range ends {
		if min := time.Duration(i+1) * 150 * time.Millisecond; e < min {
			t.Fatalf("request %d done after %v, before %v: slot not exclusive", i, e, min)
		}
	}
	// Each waits for the one before it: ends are about a service time apart
	// (lower bound with slack for when the client saw the previous end).
	for i := 1; i < n; i++ {
		if gap := ends[i] - ends[i-1]; gap < 100*time.Millisecond {
			t.Fatalf("request %d ended %v after request %d: it did not queue", i, gap, i-1)
		}
	}
}

// TestCapacity checks capacity = S / (t0 + (L-1)·tt): n requests offered at
// once to S slots take at least n/S service times, and not much more.
func TestCapacity(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 4
	cfg.AdmissionLimit = 100
	cfg.TTFT = FixedDist(0.020)
	cfg.TokenTime = FixedDist(0.005)
	cfg.OutputTokens = FixedDist(9)
	if got, want := cfg.ServiceTime(), 60*time.Millisecond; got != want {
		t.Fatalf("ServiceTime %v, want %v", got, want)
	}
	if got := cfg.Capacity(); got < 66.6 || got > 66.7 {
		t.Fatalf("Capacity %v, want 66.67", got)
	}
	_, base := startServer(t, cfg)
	c := testClient(t)
	const n = 32
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { drain(t, post(t, c, base+"/chat/completions", chatBody(true), nil)) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	ideal := time.Duration(float64(n) / cfg.Capacity() * float64(time.Second)) // 480 ms
	if elapsed < ideal*95/100 {
		t.Fatalf("%d requests took %v, faster than capacity allows (%v)", n, elapsed, ideal)
	}
	if elapsed > ideal*3 {
		t.Fatalf("%d requests took %v, far slower than capacity predicts (%v)", n, elapsed, ideal)
	}
	t.Logf("%d requests in %v; capacity predicts %v", n, elapsed, ideal)
}

// TestStallStopsTokens checks a stall with bounds that load can only make
// safer: tokens arrive no earlier than they are sent.
func TestStallStopsTokens(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 2
	cfg.TTFT = FixedDist(0)
	cfg.TokenTime = FixedDist(0.01)
	cfg.OutputTokens = FixedDist(40) // ~400 ms of tokens
	cfg.Windows = []Window{{Start: 150 * time.Millisecond, Duration: 400 * time.Millisecond, Stall: true}}
	before := time.Now() // the server starts after this: its stall ends after before+550ms
	s, base := startServer(t, cfg)
	stallEnd := before.Add(550 * time.Millisecond)
	c := testClient(t)

	var first, second summary
	var wg sync.WaitGroup
	resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
	wg.Go(func() {
		defer resp.Body.Close()
		first = parseChatStream(t, readSSE(t, resp.Body)) // timestamps taken as events arrive
	})
	// A second request arriving during the stall finds a free slot but must
	// not start service (its TTFT is 0) until the stall ends.
	wg.Go(func() {
		time.Sleep(250 * time.Millisecond)
		r2 := post(t, c, base+"/chat/completions", chatBody(true), nil)
		defer r2.Body.Close()
		second = parseChatStream(t, readSSE(t, r2.Body))
	})
	time.Sleep(300 * time.Millisecond)
	if off := s.offset(); off > 150*time.Millisecond && off < 550*time.Millisecond && !s.Stalled() {
		t.Errorf("Stalled() false at %v, inside the stall window", off)
	}
	wg.Wait()
	if first.contentTokens != 40 || second.contentTokens != 40 {
		t.Fatalf("content tokens %d and %d, want 40", first.contentTokens, second.contentTokens)
	}
	// Before the stall (server offsets 0..150ms) at most 16 tokens can be
	// sent; everything else must arrive after the stall ends.
	early := 0
	for _, at := range first.contentAt {
		if at.Before(stallEnd) {
			early++
		}
	}
	if early > 16 {
		t.Fatalf("%d tokens arrived before the stall ended; at most 16 can precede it", early)
	}
	if last := first.contentAt[len(first.contentAt)-1]; last.Sub(before) < 790*time.Millisecond {
		t.Fatalf("stream ended %v after start; 400ms of tokens plus a 400ms stall need >= 790ms", last.Sub(before))
	}
	if at := second.contentAt[0]; at.Before(stallEnd) {
		t.Fatalf("request sent during the stall got its first token %v after start, inside the stall", at.Sub(before))
	}
	if s.Stalled() {
		t.Errorf("Stalled() true after the window")
	}
}

func TestSlowdownSlows(t *testing.T) {
	run := func(ws []Window) time.Duration {
		cfg := testConfig()
		cfg.TTFT = FixedDist(0.02)
		cfg.TokenTime = FixedDist(0.01)
		cfg.OutputTokens = FixedDist(16) // 170 ms normally
		cfg.Windows = ws
		_, base := startServer(t, cfg)
		c := testClient(t)
		start := time.Now()
		return drain(t, post(t, c, base+"/chat/completions", chatBody(true), nil)).Sub(start)
	}
	normal := run(nil)
	slow := run([]Window{{Start: 0, Duration: 10 * time.Second, Factor: 4}})
	// 4 × 170 ms = 680 ms; without the slowdown it takes 170 ms.
	if slow < 600*time.Millisecond || slow < normal {
		t.Fatalf("slowdown ×4: %v vs normal %v", slow, normal)
	}
}

func TestClientGoneFreesSlot(t *testing.T) {
	cfg := testConfig()
	cfg.Slots = 1
	cfg.TTFT = FixedDist(0)
	cfg.TokenTime = FixedDist(0.05)
	cfg.OutputTokens = FixedDist(1000) // 50 s unless cancelled
	s, base := startServer(t, cfg)
	c := testClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	resp := postCtx(t, ctx, c, base+"/chat/completions", chatBody(true), nil)
	buf := make([]byte, 1)
	if _, err := resp.Body.Read(buf); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	cfg2 := apiCases[0].body("m", 2, false) // a capped request reuses the freed slot
	done := make(chan int, 1)
	go func() {
		r := post(t, c, base+"/chat/completions", cfg2, nil)
		drain(t, r)
		done <- r.StatusCode
	}()
	select {
	case code := <-done:
		if code != 200 {
			t.Fatalf("status %d", code)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("slot not freed after the client went away")
	}
	if st := s.Stats(); st.Aborted != 1 || st.Completed != 1 {
		t.Fatalf("stats %+v", st)
	}
}

func TestCloseEndsStreams(t *testing.T) {
	cfg := testConfig()
	cfg.TokenTime = FixedDist(1)
	cfg.OutputTokens = FixedDist(1000)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	base, closeFn, err := s.Start("")
	if err != nil {
		t.Fatal(err)
	}
	c := testClient(t)
	resp := post(t, c, base+"/chat/completions", chatBody(true), nil)
	defer resp.Body.Close()
	start := time.Now()
	if err := closeFn(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("close took %v", d)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	if st := s.Stats(); st.Aborted != 1 {
		t.Fatalf("stats %+v", st)
	}
}
