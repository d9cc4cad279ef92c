package ledger

import "github.com/llmprobe/llmprobe/internal/answercheck"

// CheckRecord is an answer canary's result on the request that ran it
// (docs/checks.md). The answer itself is never kept: only its hash, and a
// sanitised excerpt of at most answercheck.MaxExcerptBytes when the class
// asks for it (record_answers: excerpt).
type CheckRecord struct {
	Name   string             `json:"name"`
	Kind   answercheck.Kind   `json:"kind"`
	Result answercheck.Result `json:"result"`
	Reason answercheck.Reason `json:"reason,omitempty"` // set only when Result is fail
	// AnswerSHA256 is the hex SHA-256 of the answer's text (tool calls
	// appended as name and arguments), when an answer was judged.
	AnswerSHA256 string `json:"answer_sha256,omitempty"`
	// Excerpt is the answer's first bytes, cleaned by the one sanitiser, at
	// most answercheck.MaxExcerptBytes; only with record_answers: excerpt.
	Excerpt string `json:"excerpt,omitempty"`
}
