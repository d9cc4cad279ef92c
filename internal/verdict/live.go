package verdict

import (
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
)

// LiveValidity is the generator-validity verdict over a sliding window of
// recent dispatches (the daemon's llmprobe_generator_valid): the same rule
// as a probe's or a ladder step's verdict (ValidityConfig.Judge), over the
// dispatches of the last Window, with the configured limit. It also keeps
// the largest dispatch lag of the window (llmprobe_dispatch_lag_max_seconds).
//
// Memory is bounded whatever the rate: one slot per second of the window,
// each with counts and a log-bucketed lag histogram (for the p99 quoted in
// the reason; the verdict itself is decided by exact counts against the
// limit). The requested rate is not judged (a live window has no fixed
// schedule to compare with).
//
// The verdict has hysteresis (hold): it turns invalid as soon as the rule
// finds the window invalid, and valid again only once a whole window is
// clean (no dispatch beyond the hard limit, no more than 1 % later than
// the limit, none unsent at the in-flight cap), so that it does not flip
// with every late dispatch that enters or leaves the window. Each flip is
// kept for TakeFlips. Safe for concurrent use.
type LiveValidity struct {
	mu     sync.Mutex
	cfg    ValidityConfig
	limit  time.Duration
	hard   time.Duration
	window time.Duration
	slots  []liveSlot // ring: slot of second s is slots[s % len]
	hold   liveHold
}

type liveSlot struct {
	sec                    int64
	used                   bool
	n, over, overHard, cap int
	max                    time.Duration
	min                    time.Duration
	low                    int // lags ≤ 0
	hist                   map[int]int
}

// NewLiveValidity returns an empty window of the given length (rounded up
// to whole seconds, at least one) judged by cfg.
func NewLiveValidity(window time.Duration, cfg ValidityConfig) *LiveValidity {
	n := int((window + time.Second - 1) / time.Second)
	n = max(n, 1)
	return &LiveValidity{cfg: cfg, limit: cfg.Limit(), hard: cfg.HardLimit(), window: time.Duration(n) * time.Second, slots: make([]liveSlot, n)}
}

// SetConfig changes the rule's configuration (a reload). A changed lag
// limit or hard limit empties the window (its counts were taken against
// the old limits) and ends a held invalid verdict: the evidence is gone.
func (v *LiveValidity) SetConfig(cfg ValidityConfig) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if lim, hard := cfg.Limit(), cfg.HardLimit(); lim != v.limit || hard != v.hard {
		clear(v.slots)
		v.limit, v.hard = lim, hard
		v.hold.held = false
	}
	v.cfg = cfg
}

// Window returns the window's length.
func (v *LiveValidity) Window() time.Duration { return v.window }

// Limit returns the dispatch-lag p99 limit in force.
func (v *LiveValidity) Limit() time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.limit
}

// slot returns the slot of now's second, reset if it held an older one.
// v.mu must be held.
func (v *LiveValidity) slot(now time.Time) *liveSlot {
	sec := now.Unix()
	s := &v.slots[int(sec%int64(len(v.slots)))]
	if !s.used || s.sec != sec {
		*s = liveSlot{sec: sec, used: true}
	}
	return s
}

// Observe adds one dispatch's lag (dispatched − planned) at now.
func (v *LiveValidity) Observe(now time.Time, lag time.Duration) {
	v.mu.Lock()
	defer v.mu.Unlock()
	s := v.slot(now)
	if s.n == 0 || lag > s.max {
		s.max = lag
	}
	if s.n == 0 || lag < s.min {
		s.min = lag
	}
	s.n++
	if lag > v.limit {
		s.over++
	}
	if lag > v.hard {
		s.overHard++
	}
	if lag <= 0 {
		s.low++
		return
	}
	if s.hist == nil {
		s.hist = map[int]int{}
	}
	s.hist[quantile.BucketOf(lag)]++
}

// ObserveCapped adds one arrival left unsent because the in-flight cap was
// full, at now.
func (v *LiveValidity) ObserveCapped(now time.Time) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.slot(now).cap++
}

// Record feeds one finished record at now: its dispatch lag, or an unsent
// client_cap arrival.
func (v *LiveValidity) Record(now time.Time, rec *ledger.Record) {
	if lag, ok := rec.DispatchLag(); ok {
		v.Observe(now, lag)
	} else if rec.Reason == ledger.ReasonClientCap {
		v.ObserveCapped(now)
	}
}

// current calls f with every slot inside the window ending at now. v.mu
// must be held.
func (v *LiveValidity) current(now time.Time, f func(*liveSlot)) {
	oldest := now.Unix() - int64(len(v.slots)) + 1
	for i := range v.slots {
		if s := &v.slots[i]; s.used && s.sec >= oldest && s.sec <= now.Unix() {
			f(s)
		}
	}
}

// MaxLag returns the largest dispatch lag of the window (0 when none).
func (v *LiveValidity) MaxLag(now time.Time) time.Duration {
	v.mu.Lock()
	defer v.mu.Unlock()
	var m time.Duration
	v.current(now, func(s *liveSlot) {
		if s.n > 0 && s.max > m {
			m = s.max
		}
	})
	return m
}

// Judge returns the verdict over the window ending at now, with the host's
// health over (about) the same window, held invalid until a clean window
// (see LiveValidity).
func (v *LiveValidity) Judge(now time.Time, host HostHealth) Validity {
	v.mu.Lock()
	defer v.mu.Unlock()
	e := v.evidence(now, host)
	return v.hold.apply(now, v.window, v.cfg, e, v.cfg.Judge(e))
}

// evidence sums the window ending at now. v.mu must be held. The daemon
// judges every target every second, most of them at a fraction of a
// request a second: up to 64 buckets are read from an array on the stack,
// more (a busy target) are first merged by index.
func (v *LiveValidity) evidence(now time.Time, host HostHealth) Evidence {
	e := Evidence{Mode: ledger.ModeOpen, Host: host}
	var buf [64]quantile.Bucket
	buckets := buf[:0]
	var merged map[int]int // once the buckets pass len(buf)
	var low int
	var lo, hi time.Duration
	v.current(now, func(s *liveSlot) {
		e.ClientCap += s.cap // arrivals left unsent, with or without a dispatch that second
		if s.n == 0 {
			return
		}
		if e.LagCount == 0 || s.min < lo {
			lo = s.min
		}
		if e.LagCount == 0 || s.max > hi {
			hi = s.max
		}
		for k, c := range s.hist {
			switch {
			case merged != nil:
				merged[k] += c
			case len(buckets) < len(buf):
				buckets = append(buckets, quantile.Bucket{Index: k, Count: c})
			default:
				merged = make(map[int]int, 4*len(buf))
				for _, b := range buckets {
					merged[b.Index] += b.Count
				}
				merged[k] += c
			}
		}
		low += s.low
		e.LagCount += s.n
		e.LagOver += s.over
		e.LagOverHard += s.overHard
	})
	e.FirstClientCap = e.ClientCap
	if merged != nil {
		buckets = make([]quantile.Bucket, 0, len(merged))
		for k, c := range merged {
			buckets = append(buckets, quantile.Bucket{Index: k, Count: c})
		}
	}
	if e.LagCount > 0 {
		slices.SortFunc(buckets, func(a, b quantile.Bucket) int { return a.Index - b.Index })
		p := quantile.BucketPercentiles(e.LagCount, low, lo, hi, buckets)
		e.LagP99, e.LagP99Approx, e.LagMax = p.P99, p.Count > 1, p.Max
	}
	return e
}
