package fleet

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/llmprobe/llmprobe/internal/quantile"
	"github.com/llmprobe/llmprobe/internal/sanitize"
)

// Handler serves the fleet endpoints (GET, JSON), to be mounted on the
// admin server at /fleet/:
//
//	/fleet/v1/shard                       ShardInfo
//	/fleet/v1/ladders                     View: the fleet ladders this shard knows
//	/fleet/v1/ladders/{id}/steps          this shard's final results of each step of ladder id
//	/fleet/v1/ladders/{id}/steps/{step}   one StepReport (404 while it may still come, 409 when it will not)
//	/fleet/v1/ladders/{id}/live           the LiveReport of the step this shard is offering now (404 between steps)
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+PathShard, func(w http.ResponseWriter, _ *http.Request) {
		n.mu.Lock()
		info := n.info
		n.mu.Unlock()
		writeJSON(w, http.StatusOK, info)
	})
	mux.HandleFunc("GET "+PathLadders, func(w http.ResponseWriter, _ *http.Request) {
		v := View{Identity: n.id, Instance: n.info.Instance, Ladders: []Announcement{}}
		for _, l := range n.all() {
			v.Ladders = append(v.Ladders, l.announcements()...)
		}
		writeJSON(w, http.StatusOK, v)
	})
	mux.HandleFunc("GET "+PathLadders+"/{id}/steps", func(w http.ResponseWriter, r *http.Request) {
		id, l := n.ladderAt(w, r)
		if l == nil {
			return
		}
		out := []*StepReport{}
		for i := 1; i <= len(l.cfg.Steps); i++ {
			if rep, _, _ := l.report(id, i); rep != nil {
				out = append(out, rep)
			}
		}
		writeJSON(w, http.StatusOK, map[string]any{"ladder": id, "steps": out})
	})
	mux.HandleFunc("GET "+PathLadders+"/{id}/steps/{step}", func(w http.ResponseWriter, r *http.Request) {
		id, l := n.ladderAt(w, r)
		if l == nil {
			return
		}
		i, err := strconv.Atoi(r.PathValue("step"))
		if err != nil || i < 1 || i > len(l.cfg.Steps) {
			writeError(w, http.StatusBadRequest, "step must be 1 to "+strconv.Itoa(len(l.cfg.Steps)))
			return
		}
		rep, why, retry := l.report(id, i)
		switch {
		case rep != nil:
			writeJSON(w, http.StatusOK, rep)
		case retry:
			writeError(w, http.StatusNotFound, why)
		default:
			writeError(w, http.StatusConflict, why)
		}
	})
	mux.HandleFunc("GET "+PathLadders+"/{id}/live", func(w http.ResponseWriter, r *http.Request) {
		id, l := n.ladderAt(w, r)
		if l == nil {
			return
		}
		rep, ok := l.live(id)
		if !ok {
			writeError(w, http.StatusNotFound, "no step of "+id+" is running here")
			return
		}
		writeJSON(w, http.StatusOK, rep)
	})
	return mux
}

// all is every registered ladder.
func (n *Node) all() []*Ladder {
	n.mu.Lock()
	defer n.mu.Unlock()
	out := make([]*Ladder, 0, len(n.ladders))
	for _, t := range n.targetsLocked() {
		out = append(out, n.ladders[t])
	}
	return out
}

// ladderAt is the path's ladder id and the ladder holding it; nil (and a
// 404 written to w) when none does.
func (n *Node) ladderAt(w http.ResponseWriter, r *http.Request) (string, *Ladder) {
	id := r.PathValue("id")
	l := n.byLadder(id)
	if l == nil {
		writeError(w, http.StatusNotFound, "unknown ladder "+sanitize.String(id, 100))
	}
	return id, l
}

// byLadder is the ladder holding ladder id (a shard's share, or shard 0's
// coordination), or nil.
func (n *Node) byLadder(id string) *Ladder {
	for _, l := range n.all() {
		l.mu.Lock()
		_, ok := l.shares[id]
		if l.ann != nil && l.ann.ID == id {
			ok = true
		}
		l.mu.Unlock()
		if ok {
			return l
		}
	}
	return nil
}

// live is this shard's step of ladder id in progress, or, between steps,
// the last step it offered as it ended (so that a step its own rule
// stopped early still tells the coordinator why before the window ends).
func (l *Ladder) live(id string) (*LiveReport, bool) {
	l.mu.Lock()
	cur := l.current
	var last *StepReport
	if s, ok := l.shares[id]; ok {
		for _, r := range s.steps {
			if last == nil || r.Step > last.Step {
				last = r
			}
		}
	}
	l.mu.Unlock()
	if cur != id {
		if last == nil {
			return nil, false
		}
		all := last.All
		all.TTFT, all.E2E, all.DispatchLag = quantile.Sketch{}, quantile.Sketch{}, quantile.Sketch{}
		return &LiveReport{Ladder: id, Shard: l.n.id.Shard, Step: last.Step, Planned: last.All.Planned + last.Pending,
			Finished: last.All.Planned, All: all, AbortReason: last.AbortReason}, true
	}
	lv, ok := l.runner.Live()
	if !ok {
		return nil, false
	}
	return &LiveReport{Ladder: id, Shard: l.n.id.Shard, Step: lv.Step, Planned: lv.Planned, Finished: lv.Finished, All: lv.All,
		TTFTJudged: lv.TTFTJudged, TTFTOver: lv.TTFTOver, TTFTWaiting: lv.TTFTWaiting, AbortReason: lv.AbortReason}, true
}

// Follow offers this shard's share of every fleet ladder the coordinator
// announces for the target, one at a time, until ctx ends (shards other
// than 0).
func (l *Ladder) Follow(ctx context.Context) {
	for {
		a, _, ok, next := l.n.coordinatorView(l.cfg.Target, "")
		if ok && a.State == StateRunning && !l.known(a.ID) {
			id := a.ID
			l.runShare(ctx, a, func() (Announcement, time.Time, bool, <-chan struct{}) {
				return l.n.coordinatorView(l.cfg.Target, id)
			})
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-next:
		}
	}
}

// known reports whether this shard already took part in ladder id.
func (l *Ladder) known(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.shares[id]
	return ok
}

func sanitizeReason(s string) string { return sanitize.String(s, maxReasonBytes) }

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"error": msg})
}
