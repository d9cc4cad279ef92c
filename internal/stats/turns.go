package stats

import (
	"slices"

	"github.com/llmprobe/llmprobe/internal/ledger"
	"github.com/llmprobe/llmprobe/internal/quantile"
)

// MaxTurnRows bounds the per-turn figures: turns above it are folded into
// the last row (config bounds a session's turns lower).
const MaxTurnRows = 64

// turnSampleCap is how many exact samples each turn's TTFT keeps before it
// becomes a histogram (the figures stay bounded however long the run).
const turnSampleCap = 1 << 14

// TurnFigures are the figures of one turn index over a cohort's sessions
// (docs/figures.md#per-turn-figures-sessions): every record of that turn, retries counted
// as attempts like everywhere else.
type TurnFigures struct {
	Turn int `json:"turn"`
	// Planned counts the turn's first attempts: one per session that
	// started in the window (a turn after a failed one is planned and
	// recorded unsent/session_aborted).
	Planned int `json:"planned"`
	OK      int `json:"ok"`
	// Failed counts sent attempts that did not end ok (rejected, errors,
	// timeouts, cancelled, censored).
	Failed int `json:"failed"`
	// Unsent counts attempts never sent; Aborted those of them unsent
	// because an earlier turn of their session failed.
	Unsent  int `json:"unsent"`
	Aborted int `json:"aborted"`
	// TTFT is from the turn's own planned time (the previous turn's end +
	// think time; turn 1: the session's planned start), ok only.
	TTFT quantile.Percentiles `json:"-"`
	// CachedReported counts the turn's ok records whose server reported a
	// cached prompt token count (ledger.Record.CachedOfPrompt: its usage,
	// or llama.cpp's timings), and CachedTokens/PromptTokens sum those
	// records' cached and prompt tokens.
	CachedReported int `json:"cached_reported"`
	CachedTokens   int `json:"cached_tokens"`
	PromptTokens   int `json:"prompt_tokens"`
}

// CachedFraction is the share of prompt tokens the server said it read
// from its cache, over the ok records that reported a count; ok false when
// none did.
func (t TurnFigures) CachedFraction() (float64, bool) {
	if t.CachedReported == 0 || t.PromptTokens == 0 {
		return 0, false
	}
	return float64(t.CachedTokens) / float64(t.PromptTokens), true
}

// turnAcc folds session records by turn.
type turnAcc struct {
	rows map[int]*turnRow
	// later counts the first attempts of turns ≥ 2: planned by their
	// sessions, not by the open-loop schedule, so kept out of the rate the
	// generator is judged on.
	laterDispatched, laterUnsent, laterClientCap int
}

type turnRow struct {
	f    TurnFigures
	ttft *quantile.Dist
}

// add folds one in-window record; records outside sessions are ignored.
func (t *turnAcc) add(r *ledger.Record) {
	if r.Turn < 1 {
		return
	}
	retry := r.IsRetry()
	if r.LaterTurn() && !retry {
		switch {
		case r.Sent():
			t.laterDispatched++
		case r.Reason == ledger.ReasonClientCap:
			t.laterUnsent++
			t.laterClientCap++
		default:
			t.laterUnsent++
		}
	}
	if t.rows == nil {
		t.rows = map[int]*turnRow{}
	}
	k := min(r.Turn, MaxTurnRows)
	row := t.rows[k]
	if row == nil {
		row = &turnRow{f: TurnFigures{Turn: k}, ttft: quantile.NewDist(turnSampleCap)}
		t.rows[k] = row
	}
	f := &row.f
	if !retry {
		f.Planned++
	}
	switch {
	case r.Outcome == ledger.OK:
		f.OK++
		row.ttft.AddIf(r.TTFT())
		if n, prompt, ok := cachedOfPrompt(r); ok {
			f.CachedReported++
			f.CachedTokens += n
			f.PromptTokens += prompt
		}
	case r.Outcome == ledger.Unsent || !r.Sent():
		f.Unsent++
		if r.Reason == ledger.ReasonSessionAborted {
			f.Aborted++
		}
	default:
		f.Failed++
	}
}

// figures are the rows in turn order (nil outside sessions).
func (t *turnAcc) figures() []TurnFigures {
	if len(t.rows) == 0 {
		return nil
	}
	out := make([]TurnFigures, 0, len(t.rows))
	for _, row := range t.rows {
		f := row.f
		f.TTFT = row.ttft.Percentiles()
		out = append(out, f)
	}
	slices.SortFunc(out, func(a, b TurnFigures) int { return a.Turn - b.Turn })
	return out
}
