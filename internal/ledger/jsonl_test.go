package ledger

import (
	"bufio"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmprobe/llmprobe/internal/testutil"
	"go.uber.org/goleak"
)

func readLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: bad line %q: %v", filepath.Base(path), sc.Text(), err)
		}
		out = append(out, m)
	}
	return out
}

func TestFileSinkHeaderThenRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.jsonl")
	epoch := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := CreateFileSink(path, RunHeader{RunID: "r1", Epoch: epoch, EpochUnixNano: epoch.UnixNano(), Mode: ModeOpen})
	if err != nil {
		t.Fatal(err)
	}
	l := New(time.Now(), s)
	for i := range 3 {
		r := l.Plan(Meta{Target: "t", Class: "c", Traffic: TrafficProbe, Mode: ModeOpen}, time.Duration(i+1)*time.Millisecond)
		l.MarkDispatched(r)
		if err := l.Finish(r, OK, ReasonStop, ""); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	lines := readLines(t, path)
	if len(lines) != 4 {
		t.Fatalf("lines = %d, want 4", len(lines))
	}
	if lines[0]["kind"] != "run" || lines[0]["run_id"] != "r1" || lines[0]["schema"] != float64(SchemaVersion) {
		t.Errorf("header = %v", lines[0])
	}
	for i, m := range lines[1:] {
		if m["id"] != float64(i+1) || m["outcome"] != "ok" {
			t.Errorf("record %d = %v", i, m)
		}
	}
	s.Record(&Record{ID: 9})
	if dropped, _ := s.Err(); dropped != 1 {
		t.Errorf("dropped after close = %d, want 1", dropped)
	}
}

// A write error is kept, reported by Err and Close, and every record it
// lost (those buffered when the flush failed, and every later one) is
// counted dropped, never lost silently.
func TestFileSinkWriteErrorCountsDrops(t *testing.T) {
	s, err := CreateFileSink(filepath.Join(t.TempDir(), "run.jsonl"), RunHeader{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.f.Close() // the disk goes away under the sink
	const n = 1000  // well past the 64 KiB buffer: writes must reach the file
	for i := range n {
		s.Record(&Record{ID: uint64(i + 1), Target: "t", Outcome: OK, Reason: ReasonStop})
	}
	dropped, werr := s.Err()
	if werr == nil || dropped != n {
		t.Fatalf("after a failed write: dropped %d of %d, err %v; want an error and every record counted dropped (none reached the file)", dropped, n, werr)
	}
	if s.Close() == nil {
		t.Error("Close hid the write error")
	}
}

func TestCreateFileSinkNamesFailure(t *testing.T) {
	_, err := CreateFileSink(filepath.Join(t.TempDir(), "missing", "x.jsonl"), RunHeader{})
	if err == nil {
		t.Fatal("want error for a missing directory")
	}
}

// fakeClock is a settable wall clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func rotated(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "ledger-*.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

func TestRotatingSinkRotatesBySizeAndKeepsK(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	path := filepath.Join(dir, "ledger.jsonl")
	s, err := NewRotatingSink(RotatingOptions{Path: path, MaxBytes: 600, RotateEvery: -1, Keep: 2, Queue: 1000,
		Header: RunHeader{RunID: "d"}, Now: func() time.Time { clk.Add(time.Millisecond); return clk.Now() }})
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		s.Record(&Record{ID: uint64(i + 1), Target: "t", Outcome: OK, Reason: ReasonStop})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	st := s.Stats()
	if st.Written != n || st.Dropped != 0 || st.WriteErrors != 0 {
		t.Fatalf("stats = %+v", st)
	}
	if st.Rotations < 3 {
		t.Fatalf("rotations = %d, want several for %d records in 600-byte files", st.Rotations, n)
	}
	old := rotated(t, dir)
	if len(old) != 2 {
		t.Fatalf("rotated files kept = %d (%v), want 2", len(old), old)
	}
	// Every kept file starts with a header, stays under the size limit, and the
	// kept records are the newest, contiguous and in order.
	var ids []float64
	for _, f := range append(old, path) {
		st, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() > 600 {
			t.Errorf("%s is %d bytes, over the limit", filepath.Base(f), st.Size())
		}
		lines := readLines(t, f)
		if len(lines) == 0 || lines[0]["kind"] != "run" {
			t.Errorf("%s does not start with a run header", filepath.Base(f))
			continue
		}
		for _, m := range lines[1:] {
			ids = append(ids, m["id"].(float64))
		}
	}
	if len(ids) == 0 || ids[len(ids)-1] != n {
		t.Fatalf("last id = %v, want %d", ids, n)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Fatalf("ids not contiguous: %v", ids)
		}
	}
}

func TestRotatingSinkRotatesByAge(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	s, err := NewRotatingSink(RotatingOptions{Path: filepath.Join(dir, "ledger.jsonl"), RotateEvery: time.Hour, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	s.Record(&Record{ID: 1, Outcome: OK})
	testutil.Eventually(t, 5*time.Second, "the record written", func() bool { return s.Stats().Written == 1 })
	clk.Add(2 * time.Hour)
	s.Record(&Record{ID: 2, Outcome: OK})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := s.Stats().Rotations; got != 1 {
		t.Errorf("rotations = %d, want 1", got)
	}
	if old := rotated(t, dir); len(old) != 1 || len(readLines(t, old[0])) != 2 {
		t.Errorf("rotated = %v, want one file with header + record 1", old)
	}
}

func TestRotatingSinkCountsErrorsAndDrops(t *testing.T) {
	defer goleak.VerifyNone(t)
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "ledger.jsonl")
	// Every flush to /dev/full fails with ENOSPC: the sink must keep going,
	// counting and logging, never panicking or blocking the caller.
	if err := os.Symlink("/dev/full", path); err != nil {
		t.Fatal(err)
	}
	s, err := NewRotatingSink(RotatingOptions{Path: path, RotateEvery: -1, Queue: 1000, FlushEvery: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		s.Record(&Record{ID: uint64(i + 1), Outcome: OK})
	}
	if err := s.Close(); err == nil {
		t.Error("Close returned no error after failed writes")
	}
	s.Record(&Record{ID: 99})
	st := s.Stats()
	if st.WriteErrors == 0 {
		t.Errorf("no write errors counted on a full device: %+v", st)
	}
	if st.Written != 0 || st.Dropped != 21 {
		t.Errorf("written %d dropped %d, want 0 and 21 (every record lost is counted)", st.Written, st.Dropped)
	}
}

func TestRotatingSinkRemovesRotatedFilesPastMaxAge(t *testing.T) {
	defer goleak.VerifyNone(t)
	dir := t.TempDir()
	stale := filepath.Join(dir, "ledger-20200101T000000.000000000Z.jsonl")
	if err := os.WriteFile(stale, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-48 * time.Hour)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	s, err := NewRotatingSink(RotatingOptions{Path: filepath.Join(dir, "ledger.jsonl"), MaxBytes: 300, MaxAge: 24 * time.Hour, Keep: 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		s.Record(&Record{ID: uint64(i + 1), Outcome: OK})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a rotated file older than MaxAge survived a rotation: %v", err)
	}
	if got := rotated(t, dir); len(got) == 0 {
		t.Error("fresh rotated files were removed too")
	}
}

func BenchmarkRotatingSinkRecord(b *testing.B) {
	s, err := NewRotatingSink(RotatingOptions{Path: filepath.Join(b.TempDir(), "ledger.jsonl"), Queue: 1 << 16})
	if err != nil {
		b.Fatal(err)
	}
	rec := &Record{ID: 1, Target: "t", Class: "c", Traffic: TrafficBaseline, Planned: 1, Dispatched: 2, FirstContent: 3, End: 4,
		ChunkGaps: make([]time.Duration, 64), Usage: Usage{Known: true, Prompt: 10, Completion: 64}, Outcome: OK, Reason: ReasonStop}
	b.ReportAllocs()
	for b.Loop() {
		s.Record(rec)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	st := s.Stats()
	b.ReportMetric(float64(st.Dropped)/float64(st.Written+st.Dropped), "dropped/op")
}

// TestFileSinkFullDevice: when the final flush fails (ENOSPC on
// /dev/full), Close and Err both name the OS error and every record is
// counted lost; Err is never (n > 0, nil).
func TestFileSinkFullDevice(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	s, err := CreateFileSink("/dev/full", RunHeader{RunID: "r"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 19 {
		s.Record(&Record{ID: uint64(i + 1), Outcome: OK, Reason: ReasonStop})
	}
	cerr := s.Close()
	n, err := s.Err()
	if n != 19 || err == nil || cerr == nil {
		t.Fatalf("Close = %v; Err = %d, %v: want 19 records lost and an error", cerr, n, err)
	}
	for _, e := range []error{err, cerr} {
		if !errors.Is(e, syscall.ENOSPC) {
			t.Errorf("error %v does not carry ENOSPC", e)
		}
	}
}
