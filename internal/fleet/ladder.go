package fleet

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladder"
)

// keepShares is how many fleet ladders a shard keeps the results of, per
// target: the one running and the one before.
const keepShares = 2

// LadderOptions configure one target's fleet ladder on this shard.
type LadderOptions struct {
	// Steps are the fleet's rates (each shard offers 1/N of each).
	Steps []float64
	// Runner is this shard's share: its rates the fleet's divided by the
	// shard count, its seed the shard's own. The rest of its configuration
	// (checked by ladder.New, defaults filled) is the fleet ladder's: what
	// the coordinator judges by (gates, good fraction target, knee factor,
	// stop_at, abort rules) and its timetable (step duration, settle, gap).
	Runner *ladder.Runner
	// LedgerNow is the ledger's clock (offsets), to place a wall-clock
	// step start on the ledger.
	LedgerNow func() time.Duration
	// Begin and End are called when this shard starts and stops offering
	// a share (to label the baseline during="ladder"). Optional.
	Begin, End func()
}

// Ladder is one target's fleet ladders on this shard: the shares it offers
// and their results (served to the coordinator), and, on shard 0, the
// coordination.
type Ladder struct {
	n      *Node
	cfg    ladder.Config
	runner *ladder.Runner
	ledNow func() time.Duration
	begin  func()
	end    func()
	period time.Duration
	print  string

	mu      sync.Mutex
	shares  map[string]*share // by ladder id
	order   []string          // ids, oldest first
	ann     *Announcement     // shard 0: the ladder being coordinated (or the last)
	wake    chan struct{}     // shard 0: closed when ann changes
	last    *Result           // shard 0: the last fleet ladder's result
	current string            // the ladder whose step runs now ("": none)
}

// share is this shard's part of one fleet ladder.
type share struct {
	ann     Announcement
	refused string // why this shard does not offer it ("" when it does)
	from    int    // first step offered (a shard that saw it late joins at a later step)
	stopped string // why it stopped offering, after step stopAt
	stopAt  int
	steps   map[int]*StepReport
}

// NewLadder builds a target's fleet ladder on this node; Open registers it
// (its results are served, its shares followed) and Close unregisters it.
func (n *Node) NewLadder(o LadderOptions) (*Ladder, error) {
	if o.Runner == nil || o.LedgerNow == nil {
		return nil, errors.New("fleet ladder: a share runner and the ledger clock are required")
	}
	c := o.Runner.Config()
	var errs []error
	if len(o.Steps) == 0 || len(o.Steps) != len(c.Steps) {
		errs = append(errs, fmt.Errorf("fleet ladder: %d fleet steps for a share runner of %d", len(o.Steps), len(c.Steps)))
	}
	c.Steps = o.Steps
	if n.id.InFleet() && c.Gap < MinGap {
		errs = append(errs, fmt.Errorf("fleet ladder %s: gap %s is below %s (the coordinator judges each step in its settle and gap)", c.Target, c.Gap, MinGap))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	l := &Ladder{
		n: n, cfg: c, runner: o.Runner, ledNow: o.LedgerNow, begin: o.Begin, end: o.End,
		period: c.Timetable().Period(), shares: map[string]*share{}, wake: make(chan struct{}),
	}
	l.print = fingerprint(c, l.period, n.id.Shards)
	return l, nil
}

// Open registers the ladder with the node, replacing the target's previous
// one (a reload).
func (l *Ladder) Open() { l.n.add(l) }

// Close unregisters the ladder (if it is still the target's).
func (l *Ladder) Close() { l.n.remove(l) }

// Config is the fleet's ladder configuration (the fleet's step rates).
func (l *Ladder) Config() ladder.Config { return l.cfg }

func (l *Ladder) log() *slog.Logger {
	return l.n.log.With("target", l.cfg.Target, "shard", l.n.id.String())
}

// stepStart is the wall-clock start of step i (1-based) of a: the
// announced one for an allowed step, else the latest it can be, Period
// after the last announced start (every shard computes the period from its
// own configuration; the fingerprint holds them equal).
func (l *Ladder) stepStart(a Announcement, i int) time.Time {
	if k := len(a.StepStarts); k > 0 {
		if i <= k {
			return a.StepStarts[i-1]
		}
		return a.StepStarts[k-1].Add(time.Duration(i-k) * l.period)
	}
	return a.Start.Add(time.Duration(i-1) * l.period)
}

// decideBy is when the coordinator must have decided what follows step i.
func (l *Ladder) decideBy(a Announcement, i int) time.Time {
	return l.stepStart(a, i+1).Add(-DecisionLead)
}

// fingerprint names what every shard must agree on for their shares to be
// one ladder: the fleet's rates and timetable, the classes and their
// gates, and the judging figures (not the seeds, which differ by design,
// nor the abort rules, which each shard applies to its own share).
func fingerprint(c ladder.Config, period time.Duration, shards int) string {
	type gates struct { // nanoseconds, as every version has written them
		TTFT time.Duration `json:"ttft,omitempty"`
		TPOT time.Duration `json:"tpot,omitempty"`
		E2E  time.Duration `json:"e2e,omitempty"`
	}
	type class struct {
		Name   string
		Weight float64
		Gates  gates
	}
	v := struct {
		Steps                  []float64
		Step, Period           time.Duration
		Arrival                string
		Burstiness, Good, Knee float64
		StopAt                 string
		Classes                []class
		Shards                 int
		MaxLag, LagHard        time.Duration
		LagConfidence          float64
		RateTolerance          float64
		TTFTBoundary           string
	}{Steps: c.Steps, Step: c.StepDuration, Period: period, Arrival: string(c.Arrival), Burstiness: c.Burstiness,
		Good: c.GoodFractionTarget, Knee: c.KneeFactor, StopAt: string(c.StopAt), Shards: shards,
		MaxLag: c.Validity.Limit(), LagHard: c.Validity.HardLimit(), LagConfidence: c.Validity.Confidence(), RateTolerance: c.Validity.RateTolerance, TTFTBoundary: string(c.TTFTBoundary)}
	for _, x := range c.Classes {
		v.Classes = append(v.Classes, class{x.Name, x.Weight, gates{x.Gates.TTFT, x.Gates.TPOT, x.Gates.E2E}})
	}
	b, _ := json.Marshal(v)
	h := fnv.New64a()
	_, _ = h.Write(b)
	return fmt.Sprintf("%016x", h.Sum64())
}

// record keeps (or returns) this shard's share of a, dropping the oldest
// beyond keepShares.
func (l *Ladder) record(a Announcement) *share {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := l.shares[a.ID]; ok {
		return s
	}
	s := &share{ann: a, steps: map[int]*StepReport{}}
	l.shares[a.ID] = s
	l.order = append(l.order, a.ID)
	if len(l.order) > keepShares {
		delete(l.shares, l.order[0])
		l.order = slices.Delete(l.order, 0, 1)
	}
	return s
}

// update changes a share under the lock.
func (l *Ladder) update(s *share, f func(*share)) {
	l.mu.Lock()
	f(s)
	l.mu.Unlock()
}

// report returns this shard's final results for step i of ladder id, or
// why there are none (retry: they may come).
func (l *Ladder) report(id string, i int) (r *StepReport, why string, retry bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.shares[id]
	switch {
	case !ok:
		return nil, fmt.Sprintf("shard %s does not know ladder %s", l.n.id, id), true
	case s.refused != "":
		return nil, "refused the ladder: " + s.refused, false
	case s.steps[i] != nil:
		return s.steps[i], "", false
	case s.from > i:
		return nil, fmt.Sprintf("joined the ladder at step %d (saw it late)", s.from), false
	case s.stopped != "" && i > s.stopAt:
		return nil, fmt.Sprintf("stopped after step %d: %s", s.stopAt, s.stopped), false
	}
	return nil, fmt.Sprintf("step %d not final yet", i), true
}

// announcements lists what this shard knows: on shard 0 the ladders it
// coordinated (authoritative), elsewhere the ones it followed.
func (l *Ladder) announcements() []Announcement {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Announcement
	for _, id := range l.order {
		out = append(out, l.shares[id].ann)
	}
	if l.ann != nil {
		found := false
		for i := range out {
			if out[i].ID == l.ann.ID {
				out[i], found = *l.ann, true
			}
		}
		if !found {
			out = append(out, *l.ann)
		}
	}
	return out
}
