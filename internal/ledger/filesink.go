package ledger

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileSink writes a one-shot run's ledger as JSONL: the RunHeader on the
// first line, then one Record per line in finishing order. Writes are
// buffered; Close flushes and closes the file. A write error is kept (the
// first one) and reported by Close and Err; the records it lost (the
// buffered ones) and every later one are dropped and counted rather than
// panicking the caller.
type FileSink struct {
	mu       sync.Mutex
	f        *os.File
	w        *bufio.Writer
	buffered int // records in w not yet flushed to f
	err      error
	dropped  int
}

// CreateFileSink creates (or truncates) path and writes h as its first line.
func CreateFileSink(path string, h RunHeader) (*FileSink, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("ledger: create JSONL ledger: %w", err)
	}
	w := bufio.NewWriterSize(f, 64<<10)
	s := &FileSink{f: f, w: w}
	h.Kind = "run"
	if h.Schema == 0 {
		h.Schema = SchemaVersion
	}
	if err := json.NewEncoder(w).Encode(h); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("ledger: write run header to %s: %w", filepath.Base(path), err)
	}
	return s, nil
}

// Record implements Sink. The record is encoded before the sink's lock is
// taken, so that finishing requests do not queue behind each other's JSON.
func (s *FileSink) Record(r *Record) {
	b, encErr := json.Marshal(r)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.f == nil {
		s.dropped++
		return
	}
	if encErr != nil {
		s.fail(fmt.Errorf("ledger: encode record %d: %w", r.ID, encErr))
		return
	}
	line := append(b, '\n')
	// Flush explicitly rather than inside Write, so that a failed flush
	// counts the records it loses.
	if len(line) > s.w.Available() && s.w.Buffered() > 0 {
		if err := s.w.Flush(); err != nil {
			s.fail(fmt.Errorf("ledger: write record %d: %w", r.ID, err))
			return
		}
		s.buffered = 0
	}
	if _, err := s.w.Write(line); err != nil {
		s.fail(fmt.Errorf("ledger: write record %d: %w", r.ID, err))
		return
	}
	if s.w.Buffered() == 0 { // too long for the buffer: written through
		s.buffered = 0
	} else {
		s.buffered++
	}
}

// fail keeps the first error and counts as dropped the record at hand and
// every buffered one (a failed flush loses them). Callers hold s.mu.
func (s *FileSink) fail(err error) {
	if s.err == nil {
		s.err = err
	}
	s.dropped += s.buffered + 1
	s.buffered = 0
}

// Err returns the first write error, if any, and how many records were not
// written.
func (s *FileSink) Err() (dropped int, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropped, s.err
}

// Close flushes buffered records and closes the file. It returns the
// write errors seen, if any (each naming the OS error, e.g. "no space left
// on device"); Err reports the first of them afterwards. Close is
// idempotent.
func (s *FileSink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	errs := []error{s.err}
	if err := s.w.Flush(); err != nil {
		err = fmt.Errorf("ledger: flush JSONL ledger: %w", err)
		errs = append(errs, err)
		s.dropped += s.buffered
		if s.err == nil {
			s.err = err
		}
	}
	s.buffered = 0
	if err := s.f.Close(); err != nil {
		err = fmt.Errorf("ledger: close JSONL ledger: %w", err)
		errs = append(errs, err)
		if s.err == nil {
			s.err = err
		}
	}
	s.f = nil
	return errors.Join(errs...)
}

// RunHeader is the first line of a JSONL ledger: the run's wall-clock anchor
// and what was asked for. Wall time of any offset = EpochUnixNano + offset.
type RunHeader struct {
	Kind          string    `json:"kind"` // always "run"
	RunID         string    `json:"run_id"`
	Epoch         time.Time `json:"epoch"`           // wall clock at offset 0 (RFC 3339, for humans)
	EpochUnixNano int64     `json:"epoch_unix_nano"` // the same instant, for joining with server logs
	Mode          Mode      `json:"mode"`
	Version       string    `json:"version,omitempty"`
	Schema        int       `json:"schema"`
}

// SchemaVersion is the JSONL ledger schema version (README, "The request ledger").
const SchemaVersion = 1
