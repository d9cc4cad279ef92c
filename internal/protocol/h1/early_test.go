package h1_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/protocol/h1"
	"github.com/llmprobe/llmprobe/internal/testutil"
)

// earlyServer reads a request's headers and read bytes of its body, then
// answers 413 (when answer) and ends as end says: "close" (the unread
// body makes the kernel reset it: FIN then RST), "rst" (SO_LINGER 0), or
// "hold" (neither reads nor closes until the test ends).
func earlyServer(t *testing.T, read int64, answer bool, end string) string {
	t.Helper()
	return testutil.NewRawServer(t, func(c *testutil.RawConn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		_, _ = io.CopyN(io.Discard, br, read)
		if answer {
			_, _ = io.WriteString(c, "HTTP/1.1 413 Content Too Large\r\nContent-Type: application/json\r\nContent-Length: 27\r\nConnection: close\r\n\r\n{\"error\":\"body too large\"}\n")
		}
		switch end {
		case "rst":
			_ = c.Conn.(*net.TCPConn).SetLinger(0)
		case "hold":
			<-c.Stop
		}
	}).URL()
}

// bigBody is a POST of n bytes, of known length unless chunked.
func bigBody(ctx context.Context, t *testing.T, url string, n int, chunked bool) *http.Request {
	t.Helper()
	var body io.Reader = strings.NewReader(strings.Repeat("x", n))
	if chunked {
		body = io.MultiReader(body) // hides the length: sent chunked
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestEarlyResponse (RFC 9112 §9.5): a response the server sends before
// it reads the request's body (a body-size limit's 413) is the request's
// response, whether the server then closes (FIN then RST), resets, or
// holds the connection without reading: the status is read, the
// connection is not reused. Small bodies are written before the response
// is read, large ones (or of unknown length) while the connection is
// watched for a response.
func TestEarlyResponse(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n       int
		chunked bool
		end     string
	}{
		{"small body, close", 16 << 10, false, "close"},
		{"small body, reset", 16 << 10, false, "rst"},
		{"1 MiB body, close", 1 << 20, false, "close"},
		{"1 MiB body, reset", 1 << 20, false, "rst"},
		{"16 MiB body, held unread", 16 << 20, false, "hold"},
		{"chunked 16 MiB body, held unread", 16 << 20, true, "hold"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(h1.Options{})
			defer tr.CloseIdleConnections()
			// The deadline bounds a failure (a write that waits forever
			// for a server that will not read), it is not measured.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := tr.RoundTrip(bigBody(ctx, t, earlyServer(t, 0, true, tc.end), tc.n, tc.chunked))
			if err != nil {
				t.Fatalf("round trip: %v, want the early 413", err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close {
				t.Errorf("status %d (close %v) body %q, want 413 and the connection closed", resp.StatusCode, resp.Close, b)
			}
		})
	}
}

// TestWriteFailureUnwrapped: a connection that fails while the body is
// written (reset, or closed with the body unread) without any response
// byte ends the request with the socket's error, reachable by errors.Is
// (ECONNRESET or EPIPE, as the kernel saw it first) through
// *h1.WriteError; net/http's requestBodyReadError no longer hides it.
func TestWriteFailureUnwrapped(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    int
		end  string
	}{
		{"reset during a 4 MiB body", 4 << 20, "rst"},
		{"closed during a 4 MiB body", 4 << 20, "close"},
		{"reset during a 64 KiB body", 64 << 10, "rst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := newTransport(h1.Options{})
			defer tr.CloseIdleConnections()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			resp, err := tr.RoundTrip(bigBody(ctx, t, earlyServer(t, 16<<10, false, tc.end), tc.n, false))
			if err == nil {
				resp.Body.Close()
				t.Fatalf("status %d, want the connection's failure", resp.StatusCode)
			}
			var we *h1.WriteError
			sock := errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
			switch {
			case ctx.Err() != nil:
				t.Fatalf("%v: the request waited for its deadline", err)
			case tc.n > 64<<10 && !errors.As(err, &we):
				t.Errorf("%T %v: want a *h1.WriteError", err, err)
			case !sock && !errors.Is(err, io.EOF):
				t.Errorf("%v: want ECONNRESET or EPIPE (or EOF when the write ended first) reachable by errors.Is", err)
			}
		})
	}
}

// failingBody fails after its first bytes.
type failingBody struct{ n int }

var errBody = errors.New("the caller's body failed")

func (b *failingBody) Read(p []byte) (int, error) {
	if b.n <= 0 {
		return 0, errBody
	}
	n := min(len(p), b.n)
	b.n -= n
	return n, nil
}

// TestBodyReadFailure: the caller's body failing is not the connection's
// failure (no *h1.WriteError) and does not wait for a response that is
// not due, on either write path.
func TestBodyReadFailure(t *testing.T) {
	for _, length := range []int64{1 << 10, -1} {
		tr := newTransport(h1.Options{})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, earlyServer(t, 0, false, "hold"), io.NopCloser(&failingBody{n: 100}))
		if err != nil {
			t.Fatal(err)
		}
		req.ContentLength = length
		resp, err := tr.RoundTrip(req)
		var we *h1.WriteError
		switch {
		case err == nil:
			resp.Body.Close()
			t.Errorf("length %d: status %d, want the body's failure", length, resp.StatusCode)
		case ctx.Err() != nil:
			t.Errorf("length %d: %v: waited for the deadline", length, err)
		case errors.As(err, &we) || !strings.Contains(err.Error(), errBody.Error()):
			t.Errorf("length %d: %v, want the body's own failure", length, err)
		}
		cancel()
		tr.CloseIdleConnections()
	}
}
