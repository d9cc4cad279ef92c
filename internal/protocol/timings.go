package protocol

import (
	"bytes"
	"encoding/json"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// Server timings. llama.cpp ends a stream with its own account of the
// request in a top-level `timings` object: on OpenAI chat in the chunk with
// the finish reason and again in the usage chunk, on OpenAI completions in
// the last chunk. timingsDecoder reads it beside whichever adapter decodes
// the stream, into rec.ServerTimings (the last one seen wins; the two chat
// copies are the same). vLLM, SGLang and TGI send no per-request timings
// in their streams (vLLM's usage holds token counts only).

// timingsKey is what a chunk that carries timings holds: the member name,
// quoted. A string value inside a JSON text can only hold it with its
// quotes escaped, so a chunk without it carries no timings member; a chunk
// with it (the rare content token "timings" as a whole string) is only
// decoded once more, for nothing.
var timingsKey = []byte(`"timings"`)

// timingsDecoder wraps a Decoder and records the server's timings.
type timingsDecoder struct {
	Decoder
	rec *ledger.Record
}

// chunkTimings is the one member read from a chunk: raw, so that a value
// that is not an object is seen (and refused) rather than skipped.
type chunkTimings struct {
	Timings json.RawMessage `json:"timings"`
}

func (d *timingsDecoder) Decode(name string, data []byte) (Event, error) {
	ev, err := d.Decoder.Decode(name, data)
	if err != nil || ev.Err != nil || !bytes.Contains(data, timingsKey) {
		return ev, err
	}
	if st, ok := parseTimings(data); ok {
		d.rec.ServerTimings = &st
	}
	return ev, nil
}

// parseTimings reads a chunk's top-level timings member: ok false when it
// has none (or is not a JSON object: the adapter judged the chunk); an
// Invalid result when the member is there but cannot be true (not an
// object, a value not a number, out of range: ledger.CheckServerTimings).
func parseTimings(data []byte) (ledger.ServerTimings, bool) {
	var c chunkTimings
	if json.Unmarshal(data, &c) != nil || len(c.Timings) == 0 || bytes.Equal(c.Timings, []byte("null")) {
		return ledger.ServerTimings{}, false
	}
	var raw ledger.RawServerTimings
	if c.Timings[0] != '{' || json.Unmarshal(c.Timings, &raw) != nil {
		return ledger.ServerTimings{Invalid: true}, true
	}
	return ledger.CheckServerTimings(raw), true
}
