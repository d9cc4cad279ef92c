package daemon

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/llmprobe/llmprobe/internal/ladderresult"
)

// identity is the target's identity once complete (a model seen and the
// first poll of its version source attempted), zero before: what a
// ladder belongs to (ladder.Config.Identity).
func (s *targetState) identity() ladderresult.Identity {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == "" || !s.versionKnown {
		return ladderresult.Identity{}
	}
	return ladderresult.Identity{Model: s.model, Version: s.version}
}

// polls reports whether the identity includes a version polled from GET {base}/models.
func (r *targetRun) polls() bool {
	return r.cfg.Identity.ModelsField != "" || r.cfg.Identity.ResponseHeader != ""
}

// observeIdentity merges a sighting (the model named in a response, or a
// polled version) into the target's identity and publishes it; a change
// after the first complete sighting is counted by the recorder and, with
// ladder.run_on_identity_change, starts a ladder at once.
func (r *targetRun) observeIdentity(d *Daemon, model string, version *string, polled bool) {
	m, v, ok := r.state.observeIdentity(model, version, polled)
	if !ok {
		return
	}
	prev := r.state.status.Identity()
	r.state.status.NoteIdentity(d.now(), m, v)
	if !d.rec.SetTargetInfo(r.name, m, v) {
		return
	}
	// Both identities, so that the line says what changed into what.
	d.log.Info("target identity changed", "target", r.name, "previous_model", prev.Model, "previous_version", prev.Version, "model", m, "version", v)
	if r.ladder != nil && r.cfg.Ladder.RunOnIdentityChange {
		select {
		case r.trigger <- "identity_change":
		default: // one is already due
		}
	}
}

// identityLoop polls GET {base}/models for the configured response header
// and models field, every identity.poll_every (Options.IdentityEvery when
// set). A failed poll keeps the version last seen.
func (r *targetRun) identityLoop(ctx context.Context, d *Daemon) {
	every := d.opts.IdentityEvery
	if every <= 0 {
		every = r.cfg.Identity.PollEvery.D()
	}
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if version, err := r.pollIdentity(ctx); err != nil {
			if ctx.Err() != nil {
				return
			}
			d.log.Warn("identity poll", "target", r.name, "err", r.client.Redactor().String(err.Error(), 200))
			r.observeIdentity(d, "", nil, true)
		} else {
			r.observeIdentity(d, "", &version, true)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// pollIdentity reads the version from GET {base}/models: the configured
// response header, else the configured field of the entry for the target's
// model (or of the only entry). Both are server text: cleaned by the one
// rule (sanitize) with the client's Redactor, so a header echoing the API
// key shows only the marker.
func (r *targetRun) pollIdentity(ctx context.Context) (version string, err error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	resp, err := r.client.Get(ctx, r.target, "/models")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("GET models: status %d", resp.StatusCode)
	}
	red := r.client.Redactor()
	if h := r.cfg.Identity.ResponseHeader; h != "" {
		version = red.String(resp.Header.Get(h), maxIdentityBytes)
	}
	var body struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body); err != nil {
		return "", fmt.Errorf("GET models: decode: %w", err)
	}
	for _, m := range body.Data {
		if id, _ := m["id"].(string); id == r.cfg.Model || len(body.Data) == 1 {
			if f := r.cfg.Identity.ModelsField; f != "" {
				if v, ok := m[f]; ok && version == "" {
					version = red.String(fmt.Sprint(v), maxIdentityBytes)
				}
			}
			break
		}
	}
	return version, nil
}

// maxIdentityBytes bounds an identity value (model or version).
const maxIdentityBytes = 128
