package wiring

import (
	"context"
	"fmt"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/dispatch"
	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/protocol"
	"github.com/llmprobe/llmprobe/internal/schedule"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// sessionSeedStep offsets a class's session streams (think times and later
// turns) from its other streams.
const sessionSeedStep = 15485863

// classSession is a session class's conversation state and its dispatch
// description; nil for a class without a session.
type classSession struct {
	convs *workload.Conversations
	spec  dispatch.Session
}

// configClass is the target's class named name (the zero Class, without a
// session, for a class the configuration does not list).
func configClass(t config.Target, name string) config.Class {
	for _, c := range t.Classes {
		if c.Name == name {
			return c
		}
	}
	return config.Class{}
}

// sessionThink is a session's think time: none when unset.
func sessionThink(s config.Session) (schedule.ThinkSpec, error) {
	if s.Think == "" {
		return schedule.ThinkSpec{Kind: schedule.ThinkConstant}, nil
	}
	return schedule.ParseThink(s.Think)
}

// newClassSession builds class i's session (nil, nil when it has none).
func newClassSession(t config.Target, c config.Class, wc workload.Class, m *workload.Mix, i int) (*classSession, error) {
	if !c.Session.Enabled() {
		return nil, nil
	}
	think, err := sessionThink(c.Session)
	if err != nil {
		return nil, fmt.Errorf("classes[%d].session.think: %w", i, err)
	}
	seed := Seed(t) + uint64(i)*sessionSeedStep
	convs, err := workload.NewConversations(seed, wc, m)
	if err != nil {
		return nil, fmt.Errorf("classes[%d]: %w", i, err)
	}
	return &classSession{convs: convs, spec: dispatch.Session{Turns: c.Session.Turns, Think: think, Seed: seed, End: convs.End}}, nil
}

// sessionParams draws a session class's requests: a turn (a record with a
// Turn) from its conversation, anything else (a ladder's or a closed
// loop's request, which are not sessions) from its mix.
func sessionParams(t config.Target, cs *classSession, mix func(*ledger.Record) protocol.Params) func(*ledger.Record) protocol.Params {
	model, deltas := t.Model, t.UsageDeltas
	return func(rec *ledger.Record) protocol.Params {
		if rec.Turn < 1 {
			return mix(rec)
		}
		prm := cs.convs.Turn(rec.Session, rec.Turn)
		prm.Model = model
		prm.UsageDeltas = deltas
		return prm
	}
}

// replied tells a session how long the reply to its turn was (the next
// turn makes up a reply of that length): the server's completion tokens,
// else its content events.
func (cs *classSession) replied(e dispatch.Exec) dispatch.Exec {
	return func(ctx context.Context, rec *ledger.Record, dispatched func()) ledger.Result {
		res := e(ctx, rec, dispatched)
		if rec.Turn >= 1 && res.Outcome == ledger.OK {
			n := rec.ContentEvents
			if rec.Usage.Known {
				n = rec.Usage.Completion
			}
			cs.convs.Replied(rec.Session, n)
		}
		return res
	}
}

// Session is class i's session, or nil when it has none: set it on the
// class's open-loop stream (BaselinePlan and Probe do).
func (p *Plan) Session(i int) *dispatch.Session {
	if p.sessions[i] == nil {
		return nil
	}
	s := p.sessions[i].spec
	return &s
}

// LiveSessions is the number of class i's sessions holding conversation
// state (0 for a class without sessions).
func (p *Plan) LiveSessions(i int) int {
	if p.sessions[i] == nil {
		return 0
	}
	return p.sessions[i].convs.Live()
}
