package daemon

import (
	"sync"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// router fans finished records out to per-target sinks that come and go
// with reloads (the ledger's own sink list is fixed at construction).
type router struct {
	mu    sync.RWMutex
	sinks map[string]ledger.Sink
}

func newRouter() *router { return &router{sinks: map[string]ledger.Sink{}} }

func (rt *router) add(target string, s ledger.Sink) {
	rt.mu.Lock()
	rt.sinks[target] = s
	rt.mu.Unlock()
}

// remove unhooks a target's sink (after a reload removed the target and its
// last in-flight request finished).
func (rt *router) remove(target string) {
	rt.mu.Lock()
	delete(rt.sinks, target)
	rt.mu.Unlock()
}

// Record implements ledger.Sink.
func (rt *router) Record(rec *ledger.Record) {
	rt.mu.RLock()
	s := rt.sinks[rec.Target]
	rt.mu.RUnlock()
	if s != nil {
		s.Record(rec)
	}
}
