package protocol

import (
	"github.com/llmprobe/llmprobe/internal/answercheck"
	"github.com/llmprobe/llmprobe/internal/ledger"
)

// judge sets rec.Check for a check request: judged only when the request
// ended ok (any other outcome is not_judged: availability counts it), the
// answer's hash whenever it was judged, and a sanitised excerpt of at most
// answercheck.MaxExcerptBytes only with Params.RecordExcerpt. The answer
// itself goes nowhere else: not into the error text, a log or a label.
func (c *Client) judge(p Params, rec *ledger.Record, res ledger.Result, dec *checkDecoder) {
	cr := &ledger.CheckRecord{Name: p.Check.Name, Kind: p.Check.Kind(), Result: answercheck.NotJudged}
	rec.Check = cr
	if res.Outcome != ledger.OK || dec == nil {
		return
	}
	a := dec.answer(rec)
	v := p.Check.Judge(a)
	cr.Result, cr.Reason = v.Result, v.Reason
	if v.Result == answercheck.NotJudged {
		return
	}
	cr.AnswerSHA256 = answercheck.AnswerSHA256(a)
	if p.RecordExcerpt {
		cr.Excerpt = c.red.String(excerptOf(a), answercheck.MaxExcerptBytes)
	}
}

// excerptOf is what an excerpt shows of an answer: its text, then its
// tool calls as name(arguments), cut well before it is cleaned.
func excerptOf(a answercheck.Answer) string {
	s := a.Text
	for _, tc := range a.ToolCalls {
		if len(s) >= 4*answercheck.MaxExcerptBytes {
			break
		}
		if s != "" {
			s += " "
		}
		s += tc.Name + "(" + cutBytes(tc.Arguments, 4*answercheck.MaxExcerptBytes) + ")"
	}
	return cutBytes(s, 4*answercheck.MaxExcerptBytes)
}
