package daemon

import (
	"context"
	"fmt"
	"net/http"
	"os"

	"github.com/llmprobe/llmprobe/internal/fleet"
	"github.com/llmprobe/llmprobe/internal/ladder"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// hostname is the host's name for fleet.shard "auto": $HOSTNAME (a
// Kubernetes pod's name), else the kernel's.
func hostname() (string, error) {
	if h := os.Getenv("HOSTNAME"); h != "" {
		return h, nil
	}
	return os.Hostname()
}

// initFleet places the daemon in its fleet (fleet.shard of fleet.shards;
// --shard sets both): its node, and the scope of the ladder
// figures it publishes (llmprobe_fleet_info). A prober alone is shard 0 of
// 1 and nothing changes for it.
func (d *Daemon) initFleet(o Options) error {
	h := o.Hostname
	if h == nil {
		h = hostname
	}
	id, peers, err := wiring.Fleet(o.Config, h)
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	var cli *http.Client
	if id.InFleet() {
		if cli, err = wiring.FleetClient(o.Config); err != nil {
			return fmt.Errorf("daemon: %w", err)
		}
	}
	node, err := fleet.NewNode(fleet.NodeOptions{Identity: id, Peers: peers, Client: cli, Logger: d.log, Now: d.now})
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	d.node = node
	d.rec.SetFleet(id.Shard, id.Shards)
	if id.InFleet() {
		d.log.Info("fleet member", "shard", id.Shard, "shards", id.Shards, "coordinator", id.Coordinator())
	}
	return nil
}

// startFleet polls the coordinator (on a shard other than 0) until the
// returned stop is called.
func (d *Daemon) startFleet() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.node.Run(ctx)
	}()
	return func() {
		cancel()
		<-done
		d.node.CloseIdleConnections()
	}
}

// withFleet mounts the fleet endpoints (/fleet/v1/…) beside the admin
// routes.
func (d *Daemon) withFleet(h http.Handler) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/fleet/", d.node.Handler())
	mux.Handle("/", h)
	return mux
}

// fleetLadder builds the target's fleet ladder around its share runner
// (whose steps are 1/shards of the fleet's): nil for a prober alone. On a
// shard other than 0 the share marks the ladder's span (baseline arrivals
// during="ladder"); on shard 0 the ladder loop already marks it around
// the whole coordination (ladderLoop), so the share does not again.
func (r *targetRun) fleetLadder(d *Daemon, share *ladder.Runner, fleetSteps []float64) (*fleet.Ladder, error) {
	id := d.node.Identity()
	if !id.InFleet() {
		return nil, nil
	}
	o := fleet.LadderOptions{Steps: fleetSteps, Runner: share, LedgerNow: d.led.Now}
	if !id.Coordinator() {
		o.Begin = func() { r.state.ladderSpan.begin(d.led.Now()) }
		o.End = func() {
			r.state.ladderSpan.end(d.led.Now(), r.baselineSettle())
			r.setLaddering("")
			for _, c := range r.classes {
				d.rec.SetArrivalRate(r.name, c.Name, ledger.TrafficLadder, 0)
			}
		}
	}
	return d.node.NewLadder(o)
}

// runLadder runs one ladder: this prober's own, or, on a fleet's shard 0,
// the fleet's (announced to every shard, merged and judged here).
func (r *targetRun) runLadder(ctx context.Context, trigger string) (ladder.Result, error) {
	if r.fleet == nil {
		return r.ladder.Run(ctx, trigger)
	}
	res, err := r.fleet.Coordinate(ctx, trigger)
	return res.Result, err
}

// followLoop offers this shard's share of every fleet ladder shard 0
// announces, until ctx ends (shards other than 0: their own timetable,
// start and identity triggers are shard 0's to act on).
func (r *targetRun) followLoop(ctx context.Context) { r.fleet.Follow(ctx) }
