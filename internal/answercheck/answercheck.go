// Package answercheck describes and judges answer canaries: requests whose
// answer is known in advance (arithmetic, copying, counting, a fixed JSON
// shape, a tool call, a stop sequence, a length, the model's name), sent
// continuously so that a target that is fast and answers 200 but answers
// wrong is seen (docs/checks.md).
//
// The package owns the closed sets a check result is made of (Kind, Result,
// Reason), the Answer a protocol client assembles from a stream, and the
// Verdict it is judged to. It imports nothing of the project: the
// configuration, the protocol client, the ledger, telemetry and the status
// page all read these types from here.
package answercheck

// Kind is what a check proves.
type Kind string

// The check kinds (docs/checks.md).
const (
	KindExpect   Kind = "expect"    // the text: exact, a regular expression, a number within a tolerance, one of a set
	KindJSON     Kind = "json"      // the answer is JSON that validates against a JSON Schema
	KindToolCall Kind = "tool_call" // the expected tool is called with arguments valid against its schema
	KindStop     Kind = "stop"      // a stop sequence is honoured
	KindLength   Kind = "length"    // max_tokens is honoured
	KindModel    Kind = "model"     // the answering model (and system fingerprint) is the expected one
)

// Kinds lists every kind, in documentation order.
func Kinds() []Kind {
	return []Kind{KindExpect, KindJSON, KindToolCall, KindStop, KindLength, KindModel}
}

// Result is a check run's result.
type Result string

// The results. A request that did not end ok (any outcome but ok) is
// NotJudged: its failure is counted by availability, not by correctness.
const (
	Pass      Result = "pass"
	Fail      Result = "fail"
	NotJudged Result = "not_judged"
)

// Results lists every result.
func Results() []Result { return []Result{Pass, Fail, NotJudged} }

// Reason says why a check failed; it is empty unless the Result is Fail.
// The set is closed: it is a label value.
type Reason string

// The failure reasons.
const (
	Mismatch      Reason = "mismatch"       // the text is not the expected one
	InvalidJSON   Reason = "invalid_json"   // the answer does not parse as JSON
	Schema        Reason = "schema"         // it parses but does not validate against the schema
	NoToolCall    Reason = "no_tool_call"   // tools were offered and required, no tool was called
	WrongTool     Reason = "wrong_tool"     // a tool other than the expected one was called
	BadArguments  Reason = "bad_arguments"  // the tool's arguments are not JSON or do not validate against its schema
	StopIgnored   Reason = "stop_ignored"   // the text contains the stop sequence
	LengthIgnored Reason = "length_ignored" // the answer is not cut exactly at max_tokens with finish reason length
	WrongModel    Reason = "wrong_model"    // the model or system fingerprint is not the expected one
)

// Reasons lists every failure reason.
func Reasons() []Reason {
	return []Reason{Mismatch, InvalidJSON, Schema, NoToolCall, WrongTool, BadArguments, StopIgnored, LengthIgnored, WrongModel}
}

// MaxAnswerBytes bounds the answer text a client keeps for judging; a
// longer answer is judged on its first MaxAnswerBytes (Answer.Truncated).
const MaxAnswerBytes = 64 << 10

// MaxExcerptBytes bounds the sanitised excerpt a ledger record may keep
// (record_answers: excerpt).
const MaxExcerptBytes = 256

// Answer is what the server answered, assembled from the stream by the
// protocol client. It is server text: it lives only until it is judged and
// hashed, and never reaches a label, a log line or a page.
type Answer struct {
	Text              string     // visible content, at most MaxAnswerBytes
	Truncated         bool       // Text stopped at MaxAnswerBytes
	ToolCalls         []ToolCall // tool calls, in order
	FinishReason      string     // the server's finish/stop reason as sent
	Model             string     // the model the server says answered
	SystemFingerprint string     // OpenAI's system_fingerprint, when sent
	OutputTokens      int        // the server's usage, when OutputTokensKnown
	OutputTokensKnown bool
}

// ToolCall is one tool call in an answer: its name and its arguments as
// sent (a JSON text).
type ToolCall struct {
	Name      string
	Arguments string
}

// Verdict is a judged answer.
type Verdict struct {
	Result Result
	Reason Reason // empty unless Result is Fail
}
