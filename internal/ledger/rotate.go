package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// RotatingOptions configure a RotatingSink. Zero values take the defaults.
type RotatingOptions struct {
	// Path is the active file, e.g. /var/lib/llmprobe/ledger.jsonl. Rotated
	// files are named <Path minus .jsonl>-<UTC timestamp>.jsonl beside it.
	Path string
	// MaxBytes rotates the active file before it would grow past this size
	// (default 64 MiB).
	MaxBytes int64
	// RotateEvery rotates the active file once it is this old (default 24h;
	// a negative value disables age rotation).
	RotateEvery time.Duration
	// MaxAge removes rotated files whose last write is older than this
	// (0: no age limit).
	MaxAge time.Duration
	// Keep is how many rotated files to keep; older ones are removed (default 7).
	Keep int
	// Queue bounds the records waiting to be written (default 4096). When it
	// is full, records are dropped and counted: the daemon is never slowed.
	Queue int
	// FlushEvery is how often buffered lines are flushed (default 1s).
	FlushEvery time.Duration
	// Header is written at the top of every file, so each file stands alone.
	Header RunHeader
	// Logger receives write errors (rate-limited to one per rotation period).
	Logger *slog.Logger
	// Now is the wall clock (for file age and names); time.Now by default.
	Now func() time.Time
}

// RotatingSink is the daemon's ledger sink: records are encoded on the
// caller's goroutine and handed to one writer goroutine through a bounded
// queue; the writer buffers, flushes periodically, and rotates by size and
// age, keeping a bounded number of old files. Write errors never panic or
// block the caller: they are counted (Stats) and logged.
type RotatingSink struct {
	o     RotatingOptions
	queue chan []byte
	done  chan struct{}
	close sync.Once

	written, dropped, writeErrors, rotations atomic.Int64

	mu     sync.RWMutex // guards closed against sends racing Close
	closed bool

	// writer goroutine state
	f        *os.File
	buf      []byte // lines not yet written to f
	buffered int64  // records in buf
	broken   bool   // the last write failed: the file may end in a partial line
	size     int64  // bytes in f plus bytes in buf
	opened   time.Time
	lastErr  error
}

// flushAt is the buffer size that triggers a write.
const flushAt = 64 << 10

// RotatingStats are a RotatingSink's counters.
type RotatingStats struct {
	Written     int64 // records written to the file
	Dropped     int64 // records dropped (queue full, encode or write error, after Close)
	WriteErrors int64 // failed writes, flushes, opens or rotations
	Rotations   int64 // files rotated
}

// NewRotatingSink opens (appending to) o.Path and starts the writer.
func NewRotatingSink(o RotatingOptions) (*RotatingSink, error) {
	if o.Path == "" {
		return nil, errors.New("ledger: rotating sink: empty path")
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 64 << 20
	}
	if o.RotateEvery == 0 {
		o.RotateEvery = 24 * time.Hour
	}
	if o.Keep <= 0 {
		o.Keep = 7
	}
	if o.Queue <= 0 {
		o.Queue = 4096
	}
	if o.FlushEvery <= 0 {
		o.FlushEvery = time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.Header.Kind = "run"
	if o.Header.Schema == 0 {
		o.Header.Schema = SchemaVersion
	}
	s := &RotatingSink{o: o, queue: make(chan []byte, o.Queue), done: make(chan struct{})}
	if err := s.open(); err != nil {
		return nil, err
	}
	go s.run()
	return s, nil
}

// Record implements Sink. It never blocks on I/O.
func (s *RotatingSink) Record(r *Record) {
	b, err := json.Marshal(r)
	if err != nil {
		s.dropped.Add(1)
		return
	}
	b = append(b, '\n')
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		s.dropped.Add(1)
		return
	}
	select {
	case s.queue <- b:
	default:
		s.dropped.Add(1)
	}
}

// Stats returns the sink's counters.
func (s *RotatingSink) Stats() RotatingStats {
	return RotatingStats{Written: s.written.Load(), Dropped: s.dropped.Load(), WriteErrors: s.writeErrors.Load(), Rotations: s.rotations.Load()}
}

// Close stops accepting records, writes what is queued, flushes and closes
// the active file. It is idempotent and returns the last write error seen.
func (s *RotatingSink) Close() error {
	s.close.Do(func() {
		s.mu.Lock()
		s.closed = true
		close(s.queue)
		s.mu.Unlock()
	})
	<-s.done
	return s.lastErr
}

func (s *RotatingSink) run() {
	defer close(s.done)
	t := time.NewTicker(s.o.FlushEvery)
	defer t.Stop()
	for {
		select {
		case b, ok := <-s.queue:
			if !ok {
				s.flush()
				if s.f != nil {
					if err := s.f.Close(); err != nil {
						s.fail(fmt.Errorf("ledger: close %s: %w", filepath.Base(s.o.Path), err))
					}
					s.f = nil
				}
				return
			}
			s.write(b)
		case <-t.C:
			s.flush()
			if s.o.RotateEvery > 0 && s.f != nil && s.size > 0 && s.o.Now().Sub(s.opened) >= s.o.RotateEvery {
				s.rotate()
			}
		}
	}
}

func (s *RotatingSink) write(b []byte) {
	if s.f != nil && s.size > 0 && (s.size+int64(len(b)) > s.o.MaxBytes ||
		(s.o.RotateEvery > 0 && s.o.Now().Sub(s.opened) >= s.o.RotateEvery)) {
		s.rotate()
	}
	if s.f == nil { // a failed rotation or open: try again, at most once per record
		if err := s.open(); err != nil {
			s.fail(err)
			s.dropped.Add(1)
			return
		}
	}
	s.buf = append(s.buf, b...)
	s.buffered++
	s.size += int64(len(b))
	if len(s.buf) >= flushAt {
		s.flush()
	}
}

// flush writes the buffer to the file. On failure the buffered records are
// counted as dropped (never retried: the buffer stays bounded) and the next
// write starts on a fresh line, so a reader skips at most one broken line.
func (s *RotatingSink) flush() {
	if s.f == nil || len(s.buf) == 0 {
		return
	}
	out := s.buf
	if s.broken {
		out = append([]byte{'\n'}, out...)
	}
	_, err := s.f.Write(out)
	if err != nil {
		s.fail(fmt.Errorf("ledger: write %s: %w", filepath.Base(s.o.Path), err))
		s.dropped.Add(s.buffered)
		s.broken = true
	} else {
		s.written.Add(s.buffered)
		s.broken = false
	}
	s.buf, s.buffered = s.buf[:0], 0
	if cap(s.buf) > 4*flushAt {
		s.buf = nil
	}
}

// open opens the active file for appending and buffers the header when the
// file is empty.
func (s *RotatingSink) open() error {
	if err := os.MkdirAll(filepath.Dir(s.o.Path), 0o755); err != nil {
		return fmt.Errorf("ledger: create ledger directory: %w", err)
	}
	f, err := os.OpenFile(s.o.Path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("ledger: open %s: %w", filepath.Base(s.o.Path), err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return fmt.Errorf("ledger: stat %s: %w", filepath.Base(s.o.Path), err)
	}
	s.f, s.size, s.opened, s.broken = f, st.Size(), s.o.Now(), false
	if s.size == 0 {
		b, err := json.Marshal(s.o.Header)
		if err != nil {
			return fmt.Errorf("ledger: encode run header: %w", err)
		}
		s.buf = append(append(s.buf, b...), '\n')
		s.size += int64(len(b) + 1)
	}
	return nil
}

func (s *RotatingSink) rotate() {
	s.flush()
	if err := s.f.Close(); err != nil {
		s.fail(fmt.Errorf("ledger: close %s for rotation: %w", filepath.Base(s.o.Path), err))
	}
	s.f = nil
	stem := strings.TrimSuffix(s.o.Path, ".jsonl")
	name := fmt.Sprintf("%s-%s.jsonl", stem, s.o.Now().UTC().Format("20060102T150405.000000000Z"))
	if err := os.Rename(s.o.Path, name); err != nil {
		s.fail(fmt.Errorf("ledger: rotate %s: %w", filepath.Base(s.o.Path), err))
	} else {
		s.rotations.Add(1)
	}
	s.prune(stem)
	if err := s.open(); err != nil {
		s.fail(err)
	}
}

// prune removes rotated files beyond Keep, oldest first (names sort by
// time), and those last written more than MaxAge ago.
func (s *RotatingSink) prune(stem string) {
	matches, err := filepath.Glob(stem + "-*.jsonl")
	if err != nil {
		return
	}
	sort.Strings(matches)
	remove := func(m string) {
		if err := os.Remove(m); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.fail(fmt.Errorf("ledger: remove old ledger %s: %w", filepath.Base(m), err))
		}
	}
	if extra := len(matches) - s.o.Keep; extra > 0 {
		for _, m := range matches[:extra] {
			remove(m)
		}
		matches = matches[extra:]
	}
	if s.o.MaxAge <= 0 {
		return
	}
	now := s.o.Now()
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && now.Sub(st.ModTime()) > s.o.MaxAge {
			remove(m)
		}
	}
}

func (s *RotatingSink) fail(err error) {
	s.writeErrors.Add(1)
	if s.lastErr == nil || s.lastErr.Error() != err.Error() {
		s.o.Logger.Warn("ledger sink write failed", "err", err)
	}
	s.lastErr = err
}
