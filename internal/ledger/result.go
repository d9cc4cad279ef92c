package ledger

// Result is how one request ended, as the executor (the protocol client)
// classifies it; the dispatcher finishes the record with it. It lives here,
// below both, so the protocol client and the dispatcher share it without
// importing each other.
type Result struct {
	Outcome Outcome
	Reason  Reason
	Err     string // short, sanitised: never a URL, key, prompt or body
}
