package statuspage

import (
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Buffered is the path fact of a target whose streams an intermediary
// buffers (ledger.Record.BufferedByIntermediary): data only; the page's
// words for it are ledger.BufferedVerdict and ledger.BufferedSettings.
type Buffered struct {
	// Streams is how many ok streams since the daemon started were
	// flagged, of OK ok streams.
	Streams, OK int
	// Last is when the latest flagged stream ended (zero: none).
	Last time.Time
	// Verdict and Settings are ledger.BufferedVerdict and
	// ledger.BufferedSettings when Streams > 0, "" otherwise.
	Verdict, Settings string
}

// bufferedCount counts a target's ok and flagged streams.
type bufferedCount struct {
	mu          sync.Mutex
	ok, flagged int
	last        time.Time
}

func (b *bufferedCount) record(now time.Time, rec *ledger.Record) {
	if rec.Outcome != ledger.OK {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.ok++
	if rec.BufferedByIntermediary {
		b.flagged++
		b.last = now
	}
}

// fact is the target's Buffered fact; nil before any flagged stream.
func (b *bufferedCount) fact() *Buffered {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.flagged == 0 {
		return nil
	}
	return &Buffered{Streams: b.flagged, OK: b.ok, Last: b.last, Verdict: ledger.BufferedVerdict, Settings: ledger.BufferedSettings}
}
