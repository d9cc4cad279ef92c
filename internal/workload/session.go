package workload

import (
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// Multi-turn sessions (docs/workloads.md#sessions). A session's first turn
// is the class's ordinary request (its prompt source, input length and
// cache busting, drawn from the class's Mix); each later turn re-sends the
// whole history — every message sent so far and, after each, an assistant
// reply — plus a new user message of a length drawn from the class's input
// distribution (synthetic words). The assistant replies are not the
// server's: the client keeps no response text, so each reply is made up,
// synthetic words of the length the server reported (its completion
// tokens, else its content events), the same text in every later turn of
// the session. A server caching its own generated tokens (vLLM) therefore
// reuses the history up to the end of the previous user message, not the
// previous reply: the reuse a real client would get is understated by
// about one reply per turn.

// MaxHistoryBytes bounds the text one live session holds. A history at the
// bound grows by one word of reply and one word of user message per turn
// (at most about 64 bytes), so it stays within MaxHistoryBytes + 64 × turns.
const MaxHistoryBytes = 1 << 20

// Conversations holds the live sessions of one class: their history, a
// random stream of their own (a session's later turns are a pure function
// of the seed and the order in which sessions began), and the length of
// the last reply. State is dropped with End. Safe for concurrent use: the
// sessions share a lock only to find their state, begin (numbering the
// session and its first request in the class's mix) and end; each turn's
// text is built under its session's own lock.
type Conversations struct {
	mix   *Mix
	class Class
	seed  uint64
	max   int // history bound in bytes

	mu    sync.Mutex
	begun uint64
	live  map[uint64]*conversation
}

type conversation struct {
	mu    sync.Mutex // held while a turn is built or a reply noted
	rng   *rand.Rand
	msgs  []protocol.Message // what the last turn sent
	bytes int
	turn  int // the last turn built
	last  protocol.Params
	reply int // the last turn's reply, in tokens (0: none reported)
}

// NewConversations returns the session state of c, whose first turns draw
// from mix (the class's own).
func NewConversations(seed uint64, c Class, mix *Mix) (*Conversations, error) {
	if mix == nil {
		return nil, fmt.Errorf("workload: class %s: sessions need the class's mix", c.Name)
	}
	if c.InputLen == nil {
		return nil, fmt.Errorf("workload: class %s: sessions need an input length distribution (the later user messages)", c.Name)
	}
	return &Conversations{mix: mix, class: c, seed: seed, max: MaxHistoryBytes, live: map[uint64]*conversation{}}, nil
}

// Live is the number of sessions holding state.
func (cs *Conversations) Live() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.live)
}

// Turn builds turn turn (1-based) of session. Asked again for the turn it
// last built (a retry), it returns the same request. Model is left for the
// caller to set.
func (cs *Conversations) Turn(session uint64, turn int) protocol.Params {
	if cv := cs.find(session); cv != nil {
		cv.mu.Lock()
		if cv.turn == turn {
			defer cv.mu.Unlock()
			return cv.last
		}
		if turn > 1 {
			defer cv.mu.Unlock()
			return cs.later(cv, turn)
		}
		cv.mu.Unlock()
	}
	return cs.begin(session)
}

// find is session's state, or nil.
func (cs *Conversations) find(session uint64) *conversation {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.live[session]
}

// begin starts session over: its first turn is the class's next request
// from the mix, numbered (with the session) under the lock, built after.
func (cs *Conversations) begin(session uint64) protocol.Params {
	cs.mu.Lock()
	cs.begun++
	cv := &conversation{rng: rand.New(rand.NewPCG(cs.seed, cs.begun^0x73657373696f6e)), turn: 1}
	n := cs.mix.reserve()
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cs.live[session] = cv
	cs.mu.Unlock()
	first := cs.mix.at(n).Params
	cv.last = first
	cv.msgs = append(cv.msgs, first.Messages...)
	for _, m := range cv.msgs {
		cv.bytes += len(m.Content)
	}
	return first
}

// later builds turn turn (≥ 2) of cv, whose lock the caller holds.
func (cs *Conversations) later(cv *conversation, turn int) protocol.Params {
	full := cv.bytes >= cs.max
	reply, user := cv.reply, cs.class.InputLen.Sample(cv.rng)
	if full {
		reply, user = 1, 1
	}
	a := protocol.Message{Role: "assistant", Content: SyntheticText(cv.rng, max(reply, 1))}
	u := protocol.Message{Role: "user", Content: SyntheticText(cv.rng, user)}
	cv.msgs = append(cv.msgs, a, u)
	cv.bytes += len(a.Content) + len(u.Content)
	p := protocol.Params{Messages: cv.msgs[:len(cv.msgs):len(cv.msgs)]}
	if cs.class.OutputLen != nil {
		p.MaxTokens = cs.class.OutputLen.Sample(cv.rng)
	}
	cv.turn, cv.last, cv.reply = turn, p, 0
	return p
}

// Replied tells the session how long the reply to its last turn was, in
// tokens (the server's completion tokens, else its content events; 0 when
// unknown: the next turn's made-up reply is then one word).
func (cs *Conversations) Replied(session uint64, tokens int) {
	if cv := cs.find(session); cv != nil {
		cv.mu.Lock()
		defer cv.mu.Unlock()
		cv.reply = min(max(tokens, 0), cs.max/CharsPerToken)
	}
}

// End drops a session's state.
func (cs *Conversations) End(session uint64) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	delete(cs.live, session)
}
