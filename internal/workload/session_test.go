package workload

import (
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

func newConvs(t *testing.T, seed uint64) *Conversations {
	t.Helper()
	c := Class{Name: "chat", Weight: 1, Prompt: Synthetic{}, InputLen: Fixed{N: 20}, OutputLen: Fixed{N: 8}}
	m, err := NewMix(seed, []Class{c}, WithRunNonce(1))
	if err != nil {
		t.Fatal(err)
	}
	cs, err := NewConversations(seed, c, m)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// A session's turns re-send its history (each earlier message, a made-up
// reply of the reported length after each) plus a new user message; a
// retry gets the same request; the whole is a pure function of the seed;
// End drops the state.
func TestConversations(t *testing.T) {
	run := func(seed uint64) [][]string {
		cs := newConvs(t, seed)
		var out [][]string
		for turn := 1; turn <= 3; turn++ {
			p := cs.Turn(7, turn)
			if again := cs.Turn(7, turn); !reflect.DeepEqual(again, p) {
				t.Fatalf("turn %d: a retry got another request", turn)
			}
			if len(p.Messages) != 2*turn-1 || p.MaxTokens != 8 {
				t.Fatalf("turn %d: %d messages, max tokens %d", turn, len(p.Messages), p.MaxTokens)
			}
			var texts []string
			for _, m := range p.Messages {
				texts = append(texts, m.Role+":"+m.Content)
			}
			if turn > 1 {
				prev := out[len(out)-1]
				if !reflect.DeepEqual(texts[:len(prev)], prev) {
					t.Fatalf("turn %d does not re-send turn %d's messages", turn, turn-1)
				}
				reply := p.Messages[len(p.Messages)-2]
				if reply.Role != "assistant" || len(reply.Content) < 30*CharsPerToken || len(reply.Content) > 30*CharsPerToken+16 {
					t.Fatalf("turn %d: made-up reply %q is not the 30 tokens reported", turn, reply.Content)
				}
			}
			cs.Replied(7, 30)
			out = append(out, texts)
		}
		if cs.Live() != 1 {
			t.Fatalf("%d live sessions", cs.Live())
		}
		cs.End(7)
		if cs.Live() != 0 {
			t.Fatal("End kept the state")
		}
		return out
	}
	a, b, c := run(1), run(1), run(2)
	if !reflect.DeepEqual(a, b) {
		t.Error("the same seed gave another conversation")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("another seed gave the same conversation")
	}
}

// A history at the bound grows by a word per message, never by the drawn
// lengths.
func TestConversationsBounded(t *testing.T) {
	cs := newConvs(t, 1)
	cs.max = 200
	for turn := 1; turn <= 20; turn++ {
		cs.Turn(1, turn)
		cs.Replied(1, 1000)
	}
	p := cs.Turn(1, 21)
	n := 0
	for _, m := range p.Messages {
		n += len(m.Content)
	}
	if n > cs.max+20*64 {
		t.Errorf("history of %d bytes past the bound %d + 64 per turn", n, cs.max)
	}
	if !strings.Contains(p.Messages[0].Content, " ") {
		t.Error("first message lost")
	}
}

// Sessions run at once (under -race: each builds its turns under its own
// lock) make the same set of conversations as sessions run in turn: a
// session's first request and its later turns' stream are numbered
// together when it begins, so which session gets which conversation may
// change with the order they begin in, never the conversations.
func TestConversationsConcurrent(t *testing.T) {
	const sessions, turns = 64, 3
	transcript := func(cs *Conversations, session uint64) string {
		var b strings.Builder
		for turn := 1; turn <= turns; turn++ {
			p := cs.Turn(session, turn)
			if again := cs.Turn(session, turn); !reflect.DeepEqual(again, p) {
				t.Errorf("session %d turn %d: a retry got another request", session, turn)
			}
			cs.Replied(session, 5)
			if turn == turns {
				for _, m := range p.Messages {
					b.WriteString(m.Role + ":" + m.Content + "\n")
				}
			}
		}
		cs.End(session)
		return b.String()
	}
	cs := newConvs(t, 9)
	var inTurn []string
	for s := range uint64(sessions) {
		inTurn = append(inTurn, transcript(cs, s))
	}
	cs = newConvs(t, 9)
	concurrent := make([]string, sessions)
	var wg sync.WaitGroup
	for s := range uint64(sessions) {
		wg.Go(func() { concurrent[s] = transcript(cs, 1000+s) })
	}
	wg.Wait()
	if cs.Live() != 0 {
		t.Errorf("%d sessions still hold state after End", cs.Live())
	}
	slices.Sort(inTurn)
	slices.Sort(concurrent)
	if !reflect.DeepEqual(inTurn, concurrent) {
		t.Error("sessions run at once made other conversations than sessions run in turn")
	}
}
