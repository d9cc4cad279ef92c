// Package workload describes what llmprobe sends: workload classes, each a
// prompt source, an input-length and an output-length distribution (the
// output length is sent as max_tokens / max_output_tokens), a weight in the
// mix, its own latency gates and a cache-busting fraction. A seeded Mix picks
// a class per arrival by weight and builds the protocol.Params to send.
//
// Prompt sources: a built-in synthetic generator that hits a target token
// length at about CharsPerToken characters per token with words drawn at
// random (so a prefix cache cannot serve it); a text file of prompts (one per
// line, or blocks separated by blank lines); a JSONL dataset of chat
// messages. Length distributions: fixed, uniform, normal (truncated at 1),
// lognormal, and empirical (resampling observed lengths from a file).
//
// Prompt text never leaves this package except inside protocol.Params: no
// error, String method or log line carries it.
package workload
