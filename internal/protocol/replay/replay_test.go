package replay

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplitSegments(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want []string
	}{
		{"empty", "", nil},
		{"lf", "data: a\n\ndata: b\n\n", []string{"data: a\n\n", "data: b\n\n"}},
		{"crlf", "event: x\r\ndata: a\r\n\r\ndata: b\r\n\r\n", []string{"event: x\r\ndata: a\r\n\r\n", "data: b\r\n\r\n"}},
		{"cr", "data: a\r\rdata: b\r\r", []string{"data: a\r\r", "data: b\r\r"}},
		{"mixed", "data: a\r\n\ndata: b\n\r\n", []string{"data: a\r\n\n", "data: b\n\r\n"}},
		{"comments and an unterminated tail", ": ping\n\ndata: a\n\ndata: {\"x", []string{": ping\n\n", "data: a\n\n", "data: {\"x"}},
		{"multi-line event stays whole", "data: a\ndata: b\n\n", []string{"data: a\ndata: b\n\n"}},
		{"leading blank line", "\ndata: a\n\n", []string{"\n", "data: a\n\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range SplitSegments([]byte(tc.in)) {
				got = append(got, string(s))
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func writeFixture(t *testing.T, dir, name, body, spec string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if body != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".sse"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if spec != "" {
		if err := os.WriteFile(filepath.Join(dir, name+".json"), []byte(spec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadAll(t *testing.T) {
	const ok = `{"about":"a","expect":{"outcome":"ok","reason":"stop"}}`
	for _, tc := range []struct {
		name, body, spec, wantErr string
	}{
		{"valid", "data: x\n\n", ok, ""},
		{"missing spec", "data: x\n\n", "", "needs both"},
		{"missing body", "", ok, "needs both"},
		{"unknown key", "data: x\n\n", `{"about":"a","colour":1,"expect":{"outcome":"ok","reason":"stop"}}`, "colour"},
		{"reason outside outcome", "data: x\n\n", `{"expect":{"outcome":"ok","reason":"idle"}}`, "does not belong"},
		{"decode error not a stream reason", "data: x\n\n", `{"expect":{"outcome":"stream_error","reason":"malformed","decode_error":"idle"}}`, "decode_error"},
		{"bad layer", "data: x\n\n", `{"expect":{"outcome":"ok","reason":"stop","layer":"moon"}}`, "layer"},
		{"negative delay", "data: x\n\n", `{"gap_ms":-1,"expect":{"outcome":"ok","reason":"stop"}}`, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeFixture(t, filepath.Join(root, "api"), "f", tc.body, tc.spec)
			fs, err := LoadAll(root)
			if tc.wantErr == "" {
				if err != nil || len(fs) != 1 || fs[0].ID() != "api/f" {
					t.Fatalf("LoadAll = %v, %v", fs, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
	if _, err := LoadAll(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("LoadAll of a missing root succeeded")
	}
}

func TestDelays(t *testing.T) {
	f := &Fixture{Spec: Spec{FirstMS: 30, GapMS: 5, DelaysMS: map[int]int{2: 100}}}
	want := []time.Duration{30, 5, 100, 5}
	for i, w := range want {
		if got := f.Delay(i); got != w*time.Millisecond {
			t.Errorf("Delay(%d) = %v, want %v", i, got, w*time.Millisecond)
		}
	}
	if got := f.Until(3); got != 140*time.Millisecond {
		t.Errorf("Until(3) = %v, want 140ms", got)
	}
}

// TestHandlerTiming serves a fixture and checks status, headers, bytes and
// that each segment arrives no earlier than its declared time.
func TestHandlerTiming(t *testing.T) {
	f := &Fixture{API: "api", Name: "t",
		Body: []byte("data: a\n\n: ping\n\ndata: b\n\n"),
		Spec: Spec{Status: 429, ContentType: "text/event-stream; charset=utf-8", HeadersMS: 20, FirstMS: 30, GapMS: 40}}
	srv := httptest.NewServer(Handler(f))
	defer srv.Close()

	start := time.Now()
	resp, err := http.Post(srv.URL+"/v1/x", "application/json", strings.NewReader(`{"stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	headersAt := time.Since(start)
	if resp.StatusCode != 429 || resp.Header.Get("Content-Type") != f.Spec.ContentType || resp.Header.Get("Retry-After") != "1" {
		t.Fatalf("status %d, headers %v", resp.StatusCode, resp.Header)
	}
	if headersAt < 20*time.Millisecond {
		t.Errorf("headers after %v, declared 20ms", headersAt)
	}
	br := bufio.NewReader(resp.Body)
	var got bytes.Buffer
	for i, seg := range f.Segments() {
		buf := make([]byte, len(seg))
		if _, err := io.ReadFull(br, buf); err != nil {
			t.Fatalf("segment %d: %v", i, err)
		}
		at := time.Since(start)
		// Lower bounds only: a timer never fires early, a loaded machine is late.
		if min := time.Duration(f.Spec.HeadersMS)*time.Millisecond + f.Until(i); at < min {
			t.Errorf("segment %d at %v, declared no earlier than %v", i, at, min)
		}
		got.Write(buf)
	}
	if rest, _ := io.ReadAll(br); len(rest) != 0 {
		t.Errorf("extra bytes %q", rest)
	}
	if !bytes.Equal(got.Bytes(), f.Body) {
		t.Errorf("body %q, want %q", got.Bytes(), f.Body)
	}
}

// TestHandlerStopsWhenClientLeaves checks a long stall ends as soon as the
// client goes away (goleak checks the handler goroutine is gone).
func TestHandlerStopsWhenClientLeaves(t *testing.T) {
	f := &Fixture{API: "api", Name: "stall", Body: []byte("data: a\n\ndata: b\n\n"), Spec: Spec{DelaysMS: map[int]int{1: 60_000}}}
	done := make(chan struct{})
	h := Handler(f)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(done)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	resp, err := http.Post(srv.URL, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, len("data: a\n\n"))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("handler still sleeping 10s after the client left")
	}
}
