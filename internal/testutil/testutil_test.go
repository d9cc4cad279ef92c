package testutil

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/sim"
)

// fatalTB records Fatalf and stops the helper as testing.T does (here by
// panicking with errFatal, recovered by failed).
type fatalTB struct {
	testing.TB
	msg string
}

var errFatal = errors.New("fatal")

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	panic(errFatal)
}

// failed runs fn with a fatalTB and returns its Fatalf message ("" when
// fn returned without one).
func failed(t *testing.T, fn func(tb testing.TB)) (msg string) {
	t.Helper()
	f := &fatalTB{TB: t}
	defer func() {
		if p := recover(); p != nil && p != errFatal {
			panic(p)
		}
		msg = f.msg
	}()
	fn(f)
	return ""
}

func TestEventually(t *testing.T) {
	var n atomic.Int32
	if msg := failed(t, func(tb testing.TB) {
		Eventually(tb, 5*time.Second, "the third check", func() bool { return n.Add(1) >= 3 })
	}); msg != "" {
		t.Fatalf("a condition that comes true failed: %s", msg)
	}
	start := time.Now()
	msg := failed(t, func(tb testing.TB) {
		Eventually(tb, 50*time.Millisecond, "a condition that never holds", func() bool { return false })
	})
	if want := "timed out after 50ms waiting for a condition that never holds"; msg != want {
		t.Errorf("message %q, want %q", msg, want)
	}
	if waited := time.Since(start); waited < 50*time.Millisecond {
		t.Errorf("gave up after %v, before its 50ms", waited)
	}
}

func TestEventuallyOK(t *testing.T) {
	var n atomic.Int32
	if msg := failed(t, func(tb testing.TB) {
		EventuallyOK(tb, 5*time.Second, "the third check", func() error {
			if n.Add(1) < 3 {
				return errors.New("not yet")
			}
			return nil
		})
	}); msg != "" {
		t.Fatalf("a check that comes to pass failed: %s", msg)
	}
	msg := failed(t, func(tb testing.TB) {
		EventuallyOK(tb, 30*time.Millisecond, "the answer", func() error { return errors.New("still 41") })
	})
	if want := "the answer: not within 30ms: still 41"; msg != want {
		t.Errorf("message %q, want %q (the last error included)", msg, want)
	}
}

func TestPollEvery(t *testing.T) {
	for _, tc := range []struct{ within, want time.Duration }{
		{0, time.Millisecond},
		{100 * time.Millisecond, time.Millisecond},
		{5 * time.Second, 20 * time.Millisecond},
		{time.Minute, 240 * time.Millisecond},
		{10 * time.Minute, time.Second},
	} {
		if got := pollEvery(tc.within); got != tc.want {
			t.Errorf("pollEvery(%v) = %v, want %v", tc.within, got, tc.want)
		}
	}
}

func TestSyncBuffer(t *testing.T) {
	var b SyncBuffer
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				fmt.Fprintf(&b, "%d\n", i)
				_ = b.String()
			}
		}()
	}
	wg.Wait()
	if n := strings.Count(b.String(), "\n"); n != 800 {
		t.Errorf("%d lines, want 800", n)
	}
	c := b.Bytes()
	c[0] = 'x'
	if b.String()[0] == 'x' {
		t.Error("Bytes returned the buffer itself, not a copy")
	}
}

func TestStartSimStopsWithTheTest(t *testing.T) {
	cfg := sim.DefaultConfig()
	var base string
	t.Run("serve", func(t *testing.T) {
		s, u := ServeSim(t, cfg)
		base = u
		if !strings.HasPrefix(u, "http://127.0.0.1:") || !strings.HasSuffix(u, "/v1") {
			t.Fatalf("base URL %q, want http://127.0.0.1:<port>/v1", u)
		}
		resp, err := http.Get(strings.TrimSuffix(u, "/v1") + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("/healthz: %s", resp.Status)
		}
		if s == nil {
			t.Fatal("no server")
		}
	})
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := c.Get(strings.TrimSuffix(base, "/v1") + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the simulator still answers after its test ended: %s", resp.Status)
	}
}

// TestBasicAuth: every request sent through BasicAuth carries the
// credentials; the caller's request is left as it was.
func TestBasicAuth(t *testing.T) {
	var got []string
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		u, p, ok := r.BasicAuth()
		got = append(got, fmt.Sprintf("%v %s:%s", ok, u, p))
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	rt := BasicAuth{User: "fleet", Password: "pw", Next: next}
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:1/x", nil)
	for range 2 {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if len(got) != 2 || got[0] != "true fleet:pw" || got[1] != got[0] {
		t.Errorf("sent %q, want the credentials on each request", got)
	}
	if _, _, ok := req.BasicAuth(); ok {
		t.Error("the caller's request was changed")
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
