package replay

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Spec is a fixture's <name>.json: how to serve the stream and what a
// client must make of it.
type Spec struct {
	About  string `json:"about"`            // what the fixture exercises
	Source string `json:"source,omitempty"` // the public documentation its shapes follow

	Status      int    `json:"status,omitempty"`       // HTTP status; 0 means 200
	ContentType string `json:"content_type,omitempty"` // "" means text/event-stream

	HeadersMS int         `json:"headers_ms,omitempty"` // delay before the response headers
	FirstMS   int         `json:"first_ms,omitempty"`   // delay before the first segment
	GapMS     int         `json:"gap_ms,omitempty"`     // delay before every later segment
	DelaysMS  map[int]int `json:"delays_ms,omitempty"`  // per-segment overrides (0-based index → ms)

	Limits Limits `json:"limits,omitempty"` // client limits the expectation assumes
	Expect Expect `json:"expect"`

	// Captured says where a fixture recorded from a real server came from
	// (server, build, date); empty for a fixture written by hand.
	Captured string `json:"captured,omitempty"`
	// Request is the JSON request body that produced a captured stream, and
	// Path the URL path it was posted to (e.g. "/v1/chat/completions").
	Request json.RawMessage `json:"request,omitempty"`
	Path    string          `json:"path,omitempty"`
}

// Limits are the client settings a fixture's expectation assumes (0 = the
// client's default / no bound).
type Limits struct {
	MaxEventBytes int `json:"max_event_bytes,omitempty"`
	IdleMS        int `json:"idle_ms,omitempty"`
	TotalMS       int `json:"total_ms,omitempty"`
}

// Layer names where a fixture's failure is detected.
const (
	LayerDecoder = ""       // the adapter's decoder (or no failure)
	LayerSSE     = "sse"    // the SSE reader (event size)
	LayerClient  = "client" // the client (status, content type, error body, timeouts, truncation)
	LayerTiming  = "timing" // only visible with real timing (idle/total timeouts)
)

// Expect is what a client must make of the stream.
type Expect struct {
	Outcome ledger.Outcome `json:"outcome"`
	Reason  ledger.Reason  `json:"reason"`
	// Layer is where the failure shows: "" (the decoder, or no failure),
	// "sse", "client" or "timing". Decode-level tests check decoder
	// failures; the others need the SSE reader, the client or real time.
	Layer string `json:"layer,omitempty"`
	// DecodeError is the reason the decoder itself returns (as an error,
	// not an in-band Event.Err), when it does.
	DecodeError ledger.Reason `json:"decode_error,omitempty"`

	ContentEvents   int           `json:"content_events"`
	ReasoningEvents int           `json:"reasoning_events"`
	FinishReason    string        `json:"finish_reason,omitempty"`
	Model           string        `json:"model,omitempty"`
	Usage           *ledger.Usage `json:"usage,omitempty"` // nil: the server reported none
	// Tokens lists the per-event output token counts derived from usage
	// deltas, one per content event, when the stream carries them.
	Tokens []int `json:"tokens,omitempty"`
	// InBandError is the ServerError type an in-band error carries.
	InBandError string `json:"in_band_error,omitempty"`
	// ErrorContains is text the record's error must contain (e.g. the
	// server's own message of an in-band error, as cleaned).
	ErrorContains string `json:"error_contains,omitempty"`
	// Done says the API's terminal marker is in the stream.
	Done bool `json:"done"`
}

// Fixture is one loaded fixture.
type Fixture struct {
	API  string // directory name: the API
	Name string // file stem
	Body []byte // the .sse file, byte for byte
	Spec Spec
}

// ID is "<api>/<name>".
func (f *Fixture) ID() string { return f.API + "/" + f.Name }

// Segments returns the body cut after each blank line (see SplitSegments).
func (f *Fixture) Segments() [][]byte { return SplitSegments(f.Body) }

// Delay returns the declared delay before segment i.
func (f *Fixture) Delay(i int) time.Duration {
	ms := f.Spec.GapMS
	if i == 0 {
		ms = f.Spec.FirstMS
	}
	if d, ok := f.Spec.DelaysMS[i]; ok {
		ms = d
	}
	return time.Duration(ms) * time.Millisecond
}

// Until returns the declared time from the start of the body to the end
// of segment i: the sum of the delays before segments 0..i (headers delay
// not included).
func (f *Fixture) Until(i int) time.Duration {
	var d time.Duration
	for j := 0; j <= i; j++ {
		d += f.Delay(j)
	}
	return d
}

// Load reads the fixture <dir>/<name>.sse and <dir>/<name>.json; the API is
// the directory's base name.
func Load(dir, name string) (*Fixture, error) {
	body, err := os.ReadFile(filepath.Join(dir, name+".sse"))
	if err != nil {
		return nil, fmt.Errorf("replay: fixture body: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, name+".json"))
	if err != nil {
		return nil, fmt.Errorf("replay: fixture spec: %w", err)
	}
	f := &Fixture{API: filepath.Base(dir), Name: name, Body: body}
	if err := decodeSpec(raw, &f.Spec); err != nil {
		return nil, fmt.Errorf("replay: fixture %s: %w", f.ID(), err)
	}
	return f, nil
}

func decodeSpec(raw []byte, s *Spec) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(s); err != nil {
		return fmt.Errorf("spec: %w", err)
	}
	if err := ledger.Check(s.Expect.Outcome, s.Expect.Reason); err != nil {
		return fmt.Errorf("spec expect: %w", err)
	}
	if s.Expect.DecodeError != "" && !ledger.Valid(ledger.StreamError, s.Expect.DecodeError) {
		return fmt.Errorf("spec expect: decode_error %q is not a stream_error reason", s.Expect.DecodeError)
	}
	switch s.Expect.Layer {
	case LayerDecoder, LayerSSE, LayerClient, LayerTiming:
	default:
		return fmt.Errorf("spec expect: unknown layer %q", s.Expect.Layer)
	}
	if s.HeadersMS < 0 || s.FirstMS < 0 || s.GapMS < 0 {
		return errors.New("spec: negative delay")
	}
	for i, d := range s.DelaysMS {
		if i < 0 || d < 0 {
			return fmt.Errorf("spec: delays_ms[%d]=%d is negative", i, d)
		}
	}
	return nil
}

// LoadAll loads every fixture under root (root/<api>/<name>.sse + .json),
// sorted by API then name. A .sse without its .json, or the reverse, is an
// error.
func LoadAll(root string) ([]*Fixture, error) {
	apis, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("replay: fixtures root: %w", err)
	}
	var out []*Fixture
	for _, a := range apis {
		if !a.IsDir() {
			continue
		}
		dir := filepath.Join(root, a.Name())
		files, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("replay: fixtures of %s: %w", a.Name(), err)
		}
		stems := map[string]int{}
		for _, fi := range files {
			switch ext := filepath.Ext(fi.Name()); ext {
			case ".sse":
				stems[strings.TrimSuffix(fi.Name(), ext)] |= 1
			case ".json":
				stems[strings.TrimSuffix(fi.Name(), ext)] |= 2
			}
		}
		names := make([]string, 0, len(stems))
		for n, bits := range stems {
			if bits != 3 {
				return nil, fmt.Errorf("replay: fixture %s/%s needs both .sse and .json", a.Name(), n)
			}
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			f, err := Load(dir, n)
			if err != nil {
				return nil, err
			}
			out = append(out, f)
		}
	}
	return out, nil
}

// SplitSegments cuts body after every blank line (an SSE event boundary:
// "\n\n", "\r\n\r\n", "\r\r" or mixed). The segments concatenate back to
// body exactly; a tail with no blank line after it is the last segment.
func SplitSegments(body []byte) [][]byte {
	var segs [][]byte
	start, lineStart := 0, 0
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '\n' && c != '\r' {
			continue
		}
		end := i + 1
		if c == '\r' && end < len(body) && body[end] == '\n' {
			end++
		}
		blank := i == lineStart
		i = end - 1
		lineStart = end
		if blank && end > start {
			segs = append(segs, body[start:end])
			start = end
		}
	}
	if start < len(body) {
		segs = append(segs, body[start:])
	}
	return segs
}
