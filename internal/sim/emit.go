package sim

import (
	"encoding/json"
	"strconv"
)

// words are the simulated tokens; token i of a response is words[i%len].
// None needs JSON escaping.
var words = [...]string{
	" lorem", " ipsum", " dolor", " sit", " amet", " consectetur", " adipiscing", " elit",
	" sed", " do", " eiusmod", " tempor", " incididunt", " ut", " labore", " magna",
}

// appendTokens appends the text of tokens [first, first+n).
func appendTokens(b []byte, first, n int) []byte {
	for i := first; i < first+n; i++ {
		b = append(b, words[i%len(words)]...)
	}
	return b
}

// gen is the state of one generation, shared by the API emitters.
type gen struct {
	id           string // response id suffix, unique per server
	model        []byte // the requested model name, JSON-quoted
	created      int64  // unix seconds
	promptTokens int
	cachedTokens int // of promptTokens, reused from the prefix cache
	includeUsage bool
	continuous   bool    // vLLM continuous_usage_stats: cumulative usage in every chunk
	reasoning    int     // reasoning tokens this response will emit
	content      int     // content tokens this response will emit
	finishLength bool    // the cap cut the output
	doneR, doneC int     // reasoning / content tokens emitted so far
	seq          int     // Responses API sequence_number
	phase        int     // 0 nothing open, 1 reasoning open, 2 content open
	prefix       []byte  // per-response chunk prefix (chat, completions)
	ans          *answer // a library answer (answer.go); nil: the filler
	fingerprint  string  // the chat API's system_fingerprint ("": none)
}

func (g *gen) completionTokens() int { return g.doneR + g.doneC }

// emitter writes one API's events. Streaming methods append complete SSE
// events to b; body appends the non-streaming JSON reply.
type emitter interface {
	head(b []byte, g *gen) []byte              // at admission, before service
	chunk(b []byte, g *gen, nr, nc int) []byte // nr reasoning + nc content tokens; g.done* not yet updated
	finish(b []byte, g *gen) []byte            // after the last token
	body(b []byte, g *gen) []byte              // whole non-streaming reply
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s)
	return append(b, q...)
}

func appendInt(b []byte, n int) []byte { return strconv.AppendInt(b, int64(n), 10) }

func appendEventName(b []byte, name string) []byte {
	b = append(b, "event: "...)
	b = append(b, name...)
	return append(b, "\ndata: "...)
}

// endChunk closes a chat/completions chunk whose choices array is open,
// adding cumulative usage when continuous usage was asked for.
func endChunk(b []byte, g *gen, completion int) []byte {
	b = append(b, ']')
	if g.continuous {
		b = append(b, `,"usage":{"prompt_tokens":`...)
		b = appendInt(b, g.promptTokens)
		b = append(b, `,"total_tokens":`...)
		b = appendInt(b, g.promptTokens+completion)
		b = append(b, `,"completion_tokens":`...)
		b = appendInt(b, completion)
		b = append(b, '}')
	}
	return append(b, "}\n\n"...)
}

// ---- Shared by the OpenAI chat and completions emitters ----

// appendOpenAIHead opens a chat/completions object: id, object, created
// and model.
func appendOpenAIHead(b []byte, g *gen, idPrefix, object string) []byte {
	b = append(b, `{"id":"`...)
	b = append(b, idPrefix...)
	b = append(b, g.id...)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"model":`...)
	b = append(b, g.model...)
	if g.fingerprint != "" {
		b = append(b, `,"system_fingerprint":"`...)
		b = append(b, g.fingerprint...)
		b = append(b, '"')
	}
	return b
}

// setOpenAIPrefix sets g.prefix: the start of every chunk of a
// chat/completions stream, up to its open choices array.
func setOpenAIPrefix(g *gen, idPrefix, object string) {
	g.prefix = append(appendOpenAIHead([]byte("data: "), g, idPrefix, object), `,"choices":[`...)
}

// finishOpenAI ends a chat/completions stream: the choice carrying the
// finish reason (choice is its JSON up to "finish_reason":), the usage chunk
// when it was asked for, then [DONE].
func finishOpenAI(b []byte, g *gen, choice string, details bool) []byte {
	b = append(b, g.prefix...)
	b = append(b, choice...)
	b = appendFinishReason(b, g)
	b = append(b, '}')
	b = endChunk(b, g, g.completionTokens())
	if g.includeUsage {
		b = append(b, g.prefix...)
		b = append(b, `],`...)
		b = appendOpenAIUsage(b, g, details)
		b = append(b, "}\n\n"...)
	}
	return append(b, "data: [DONE]\n\n"...)
}

func appendFinishReason(b []byte, g *gen) []byte {
	switch {
	case g.finishLength:
		return append(b, `"length"`...)
	case g.ans != nil && g.ans.tool:
		return append(b, `"tool_calls"`...)
	}
	return append(b, `"stop"`...)
}

// appendOpenAIUsage appends the usage member, with the prompt tokens reused
// from the prefix cache in prompt_tokens_details.cached_tokens (as vLLM
// sends it with --enable-prompt-tokens-details); details adds the chat
// API's completion_tokens_details (the completions API has no reasoning).
func appendOpenAIUsage(b []byte, g *gen, details bool) []byte {
	c := g.completionTokens()
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, c)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, g.promptTokens+c)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, g.cachedTokens)
	b = append(b, '}')
	if details {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, g.doneR)
		b = append(b, '}')
	}
	return append(b, '}')
}
