package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// NodeOptions configure a Node.
type NodeOptions struct {
	Identity Identity
	Peers    Peers
	// Client speaks to the peers; nil is a client of its own.
	Client *http.Client
	Logger *slog.Logger
	Now    func() time.Time // wall clock; nil = time.Now
}

// Node is this prober's membership of its fleet: its identity, its peers,
// the fleet ladders of its targets (one Ladder per target) and, on a shard
// other than 0, the coordinator's ladder state it polls. Its Handler serves
// the fleet endpoints.
type Node struct {
	id   Identity
	info ShardInfo
	dir  *directory
	cli  *http.Client
	log  *slog.Logger
	now  func() time.Time

	mu      sync.Mutex
	ladders map[string]*Ladder
	view    View      // the coordinator's, last read (shards other than 0)
	viewAt  time.Time // when it was read (zero: never)
	viewErr string    // why the last read failed ("" when it did not)
	// viewRefused is why announcements of the last state read were
	// ignored (logged when it changes).
	viewRefused string
	changed     chan struct{}
}

// NewNode checks the identity and returns a node.
func NewNode(o NodeOptions) (*Node, error) {
	if err := o.Identity.Check(); err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	if o.Identity.InFleet() && len(o.Peers.URLs) == 0 && o.Peers.DNS == "" {
		return nil, fmt.Errorf("fleet: shard %s has no peers (fleet.peers)", o.Identity)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Client == nil {
		o.Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: 30 * time.Second}}
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	n := &Node{
		id: o.Identity, cli: o.Client, log: o.Logger, now: o.Now,
		info:    ShardInfo{Identity: o.Identity, Instance: hex.EncodeToString(b[:])},
		ladders: map[string]*Ladder{}, changed: make(chan struct{}),
	}
	n.dir = &directory{peers: o.Peers, self: n.info, client: o.Client, at: map[int]string{}, conflict: map[int]string{}}
	return n, nil
}

// Identity is this prober's place in the fleet.
func (n *Node) Identity() Identity { return n.id }

// Instance is this process's random id (ShardInfo.Instance).
func (n *Node) Instance() string { return n.info.Instance }

// Run polls the coordinator's ladder state every PollEvery until ctx ends
// (on shard 0, and alone, it returns at once).
func (n *Node) Run(ctx context.Context) {
	if !n.id.InFleet() || n.id.Coordinator() {
		return
	}
	t := time.NewTicker(PollEvery)
	defer t.Stop()
	for {
		n.poll(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// CloseIdleConnections closes the connections to the peers kept for reuse
// (at shutdown).
func (n *Node) CloseIdleConnections() { n.cli.CloseIdleConnections() }

// poll reads the coordinator's ladder state once.
func (n *Node) poll(ctx context.Context) {
	var v View
	at, why := n.dir.locate(ctx, []int{0})
	err := fmt.Errorf("coordinator (shard 0) %s", why[0])
	if u, ok := at[0]; ok {
		err = getJSON(ctx, n.cli, u+PathLadders, PollEvery, 8<<20, &v)
		if err == nil && (v.Shard != 0 || v.Shards != n.id.Shards) {
			err = fmt.Errorf("%s answered as shard %s, not 0/%d", u, v.Identity, n.id.Shards)
		}
		if err != nil {
			n.dir.forget(0)
		}
	}
	var refused []string
	if err == nil {
		refused = checkView(&v)
	}
	n.mu.Lock()
	if err == nil {
		if r := strings.Join(refused, "; "); r != n.viewRefused {
			n.viewRefused = r
			if r != "" {
				n.log.Warn("fleet: the coordinator's ladder state holds announcements this shard ignores", "why", sanitizeReason(r))
			}
		}
		n.view, n.viewAt, n.viewErr = v, n.now(), ""
	} else {
		n.viewErr = err.Error()
	}
	close(n.changed)
	n.changed = make(chan struct{})
	n.mu.Unlock()
}

// maxIDBytes bounds a fleet ladder id: a target name (at most 63 bytes), a
// dash and a Unix time in milliseconds.
const maxIDBytes = 100

// checkView keeps, of the coordinator's ladder state v, the announcements
// a shard may act on, their texts cleaned: every byte from a peer is
// hostile until checked. An announcement whose id is not the one
// Coordinate makes of its target and start (ids name URL paths and log
// lines), or whose state is unknown, is dropped, and why is returned; the
// abort reason (logged, the runner's abort reason, a share's stop reason
// served back to the coordinator), the trigger and the fingerprint (quoted
// when a shard refuses the ladder) are cleaned and bounded.
func checkView(v *View) (refused []string) {
	kept := v.Ladders[:0]
	for _, a := range v.Ladders {
		id := a.Target + "-" + strconv.FormatInt(a.Start.UnixMilli(), 10)
		switch {
		case len(a.ID) > maxIDBytes || a.ID != id:
			refused = append(refused, fmt.Sprintf("ladder id %q is not its target and start (%s)", sanitize.String(a.ID, 100), sanitize.String(id, 100)))
			continue
		case !slices.Contains([]string{StateRunning, StateStopped, StateAborted, StateDone}, a.State):
			refused = append(refused, fmt.Sprintf("ladder %s: unknown state %q", a.ID, sanitize.String(a.State, 40)))
			continue
		}
		a.Reason = sanitizeReason(a.Reason)
		a.Trigger = sanitize.String(a.Trigger, 40)
		a.Fingerprint = sanitize.String(a.Fingerprint, 32)
		kept = append(kept, a)
	}
	v.Ladders = kept
	return refused
}

// coordinatorView returns the coordinator's announcement of ladder id (or,
// with id "", its latest for target), when it was read, and a channel
// closed at the next read.
func (n *Node) coordinatorView(target, id string) (a Announcement, at time.Time, ok bool, next <-chan struct{}) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, x := range n.view.Ladders {
		if x.Target == target && (id == "" || x.ID == id) && (!ok || x.Start.After(a.Start)) {
			a, ok = x, true
		}
	}
	return a, n.viewAt, ok, n.changed
}

// add registers a target's fleet ladder (replacing one of a previous
// configuration).
func (n *Node) add(l *Ladder) {
	n.mu.Lock()
	n.ladders[l.cfg.Target] = l
	n.info.Targets = n.targetsLocked()
	n.mu.Unlock()
}

// remove unregisters l (if it is still the target's).
func (n *Node) remove(l *Ladder) {
	n.mu.Lock()
	if n.ladders[l.cfg.Target] == l {
		delete(n.ladders, l.cfg.Target)
	}
	n.info.Targets = n.targetsLocked()
	n.mu.Unlock()
}

func (n *Node) targetsLocked() []string {
	out := make([]string, 0, len(n.ladders))
	for t := range n.ladders {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// Status is the fleet as this prober sees it, for the status page.
type Status struct {
	Identity Identity
	Instance string
	// Coordinator is where shard 0 was found ("" on shard 0 or when not
	// found); CoordinatorState says how its state was last read.
	Coordinator      string
	CoordinatorState string
}

// Status describes the node for the status page.
func (n *Node) Status() Status {
	s := Status{Identity: n.id, Instance: n.info.Instance}
	if !n.id.InFleet() || n.id.Coordinator() {
		return s
	}
	n.dir.mu.Lock()
	s.Coordinator = n.dir.at[0]
	n.dir.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.viewErr != "":
		s.CoordinatorState = "unreachable: " + n.viewErr
	case n.viewAt.IsZero():
		s.CoordinatorState = "not read yet"
	default:
		s.CoordinatorState = fmt.Sprintf("read %s ago", n.now().Sub(n.viewAt).Round(100*time.Millisecond))
	}
	return s
}
