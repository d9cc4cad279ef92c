// Package sim is llmprobe's built-in inference-server simulator: a streaming
// HTTP server that speaks the OpenAI chat completions, completions and
// Responses APIs and the Anthropic Messages API closely enough that
// measurements against it mean something.
//
// The service model is simple and predictable. A request is first checked
// (auth, body, model), then admitted if fewer than AdmissionLimit requests are
// queued or running (otherwise it is rejected with RejectStatus and
// Retry-After). Admitted requests get their response headers at once and wait
// FIFO for one of Slots service slots. In a slot, the first output chunk is
// written TTFT after service starts, and each further chunk of k tokens
// (k = TokensPerChunk) k per-token times later. The slot is released after
// the last chunk, so with fixed TTFT t0, per-token time tt, output length L
// and one token per chunk, a slot serves one request every t0 + (L-1)·tt and
// the server's capacity is Slots / (t0 + (L-1)·tt) requests per second.
//
// Scheduled windows slow service by a factor or stall it: service work
// (prefill and token time) progresses at 1/factor speed inside a slowdown
// window and not at all inside a stall, so tokens stop flowing and no queued
// request starts its prefill until the stall ends.
//
// Pacing uses one real timer per stream; each chunk's time is computed from
// the previous chunk's planned time (not from when it was written), so pacing
// does not drift.
package sim
