package sim

import "strconv"

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
	includeUsage bool
	continuous   bool   // vLLM continuous_usage_stats: cumulative usage in every chunk
	reasoning    int    // reasoning tokens this response will emit
	content      int    // content tokens this response will emit
	finishLength bool   // the cap cut the output
	doneR, doneC int    // reasoning / content tokens emitted so far
	seq          int    // Responses API sequence_number
	phase        int    // 0 nothing open, 1 reasoning open, 2 content open
	prefix       []byte // per-response chunk prefix (chat, completions)
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

// ---- OpenAI chat completions ----

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
	return append(b, g.model...)
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

type chatEmitter struct{}

func (chatEmitter) head(b []byte, g *gen) []byte {
	setOpenAIPrefix(g, "chatcmpl-sim-", "chat.completion.chunk")
	b = append(b, g.prefix...)
	b = append(b, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}`...)
	return endChunk(b, g, 0)
}

func (chatEmitter) chunk(b []byte, g *gen, nr, nc int) []byte {
	if nr > 0 {
		b = append(b, g.prefix...)
		b = append(b, `{"index":0,"delta":{"reasoning_content":"`...)
		b = appendTokens(b, g.doneR, nr)
		b = append(b, `"},"logprobs":null,"finish_reason":null}`...)
		b = endChunk(b, g, g.doneR+nr+g.doneC)
	}
	if nc > 0 {
		b = append(b, g.prefix...)
		b = append(b, `{"index":0,"delta":{"content":"`...)
		b = appendTokens(b, g.reasoning+g.doneC, nc)
		b = append(b, `"},"logprobs":null,"finish_reason":null}`...)
		b = endChunk(b, g, g.doneR+nr+g.doneC+nc)
	}
	return b
}

func appendFinishReason(b []byte, g *gen) []byte {
	if g.finishLength {
		return append(b, `"length"`...)
	}
	return append(b, `"stop"`...)
}

// appendOpenAIUsage appends the usage member; details adds the chat API's
// completion_tokens_details (the completions API has no reasoning).
func appendOpenAIUsage(b []byte, g *gen, details bool) []byte {
	c := g.completionTokens()
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"completion_tokens":`...)
	b = appendInt(b, c)
	b = append(b, `,"total_tokens":`...)
	b = appendInt(b, g.promptTokens+c)
	if details {
		b = append(b, `,"completion_tokens_details":{"reasoning_tokens":`...)
		b = appendInt(b, g.doneR)
		b = append(b, '}')
	}
	return append(b, '}')
}

func (chatEmitter) finish(b []byte, g *gen) []byte {
	return finishOpenAI(b, g, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`, true)
}

func (chatEmitter) body(b []byte, g *gen) []byte {
	b = appendOpenAIHead(b, g, "chatcmpl-sim-", "chat.completion")
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
	b = appendTokens(b, g.reasoning, g.doneC)
	b = append(b, '"')
	if g.doneR > 0 {
		b = append(b, `,"reasoning_content":"`...)
		b = appendTokens(b, 0, g.doneR)
		b = append(b, '"')
	}
	b = append(b, `},"logprobs":null,"finish_reason":`...)
	b = appendFinishReason(b, g)
	b = append(b, `}],`...)
	b = appendOpenAIUsage(b, g, true)
	return append(b, "}\n"...)
}

// ---- OpenAI completions ----

type completionsEmitter struct{}

func (completionsEmitter) head(b []byte, g *gen) []byte {
	setOpenAIPrefix(g, "cmpl-sim-", "text_completion")
	return b
}

func (completionsEmitter) chunk(b []byte, g *gen, _, nc int) []byte {
	if nc == 0 {
		return b
	}
	b = append(b, g.prefix...)
	b = append(b, `{"index":0,"text":"`...)
	b = appendTokens(b, g.doneC, nc)
	b = append(b, `","logprobs":null,"finish_reason":null}`...)
	return endChunk(b, g, g.doneC+nc)
}

func (completionsEmitter) finish(b []byte, g *gen) []byte {
	return finishOpenAI(b, g, `{"index":0,"text":"","logprobs":null,"finish_reason":`, false)
}

func (completionsEmitter) body(b []byte, g *gen) []byte {
	b = appendOpenAIHead(b, g, "cmpl-sim-", "text_completion")
	b = append(b, `,"choices":[{"index":0,"text":"`...)
	b = appendTokens(b, 0, g.doneC)
	b = append(b, `","logprobs":null,"finish_reason":`...)
	b = appendFinishReason(b, g)
	b = append(b, `}],`...)
	b = appendOpenAIUsage(b, g, false)
	return append(b, "}\n"...)
}

// ---- OpenAI Responses ----

type responsesEmitter struct{}

// respEvent starts a named Responses event with its type and sequence number.
func respEvent(b []byte, g *gen, name string) []byte {
	b = appendEventName(b, name)
	b = append(b, `{"type":"`...)
	b = append(b, name...)
	b = append(b, `","sequence_number":`...)
	b = appendInt(b, g.seq)
	g.seq++
	return b
}

// appendResponse appends the response object in its current state.
func appendResponse(b []byte, g *gen, status string, final bool) []byte {
	b = append(b, `{"id":"resp_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, g.created, 10)
	b = append(b, `,"status":"`...)
	b = append(b, status...)
	b = append(b, `","model":`...)
	b = append(b, g.model...)
	if !final {
		return append(b, `,"output":[],"usage":null}`...)
	}
	b = append(b, `,"output":[`...)
	if g.doneR > 0 {
		b = appendReasoningItem(b, g)
		b = append(b, ',')
	}
	b = appendMessageItem(b, g, status)
	b = append(b, `],"incomplete_details":`...)
	if g.finishLength {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `,"usage":{"input_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"input_tokens_details":{"cached_tokens":0},"output_tokens":`...)
	b = appendInt(b, g.completionTokens())
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":`...)
	b = appendInt(b, g.doneR)
	b = append(b, `},"total_tokens":`...)
	b = appendInt(b, g.promptTokens+g.completionTokens())
	return append(b, `}}`...)
}

func appendReasoningItem(b []byte, g *gen) []byte {
	b = append(b, `{"id":"rs_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":"`...)
	b = appendTokens(b, 0, g.doneR)
	return append(b, `"}]}`...)
}

func appendMessageItem(b []byte, g *gen, status string) []byte {
	b = append(b, `{"id":"msg_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","status":"`...)
	b = append(b, status...)
	b = append(b, `","role":"assistant","content":[{"type":"output_text","text":"`...)
	b = appendTokens(b, g.reasoning, g.doneC)
	return append(b, `","annotations":[]}]}`...)
}

func (g *gen) msgIndex() int {
	if g.reasoning > 0 {
		return 1
	}
	return 0
}

func (responsesEmitter) head(b []byte, g *gen) []byte {
	b = respEvent(b, g, "response.created")
	b = append(b, `,"response":`...)
	b = appendResponse(b, g, "in_progress", false)
	b = append(b, "}\n\n"...)
	b = respEvent(b, g, "response.in_progress")
	b = append(b, `,"response":`...)
	b = appendResponse(b, g, "in_progress", false)
	return append(b, "}\n\n"...)
}

func (e responsesEmitter) itemRef(b []byte, g *gen, kind string, index int) []byte {
	b = append(b, `,"item_id":"`...)
	b = append(b, kind...)
	b = append(b, g.id...)
	b = append(b, `","output_index":`...)
	b = appendInt(b, index)
	return append(b, `,"content_index":0`...)
}

func (e responsesEmitter) closeReasoning(b []byte, g *gen) []byte {
	b = respEvent(b, g, "response.reasoning_text.done")
	b = e.itemRef(b, g, "rs_sim_", 0)
	b = append(b, `,"text":"`...)
	b = appendTokens(b, 0, g.doneR)
	b = append(b, "\"}\n\n"...)
	b = respEvent(b, g, "response.output_item.done")
	b = append(b, `,"output_index":0,"item":`...)
	b = appendReasoningItem(b, g)
	return append(b, "}\n\n"...)
}

func (e responsesEmitter) chunk(b []byte, g *gen, nr, nc int) []byte {
	if nr > 0 {
		if g.phase == 0 {
			b = respEvent(b, g, "response.output_item.added")
			b = append(b, `,"output_index":0,"item":{"id":"rs_sim_`...)
			b = append(b, g.id...)
			b = append(b, `","type":"reasoning","summary":[],"content":[]}}`+"\n\n"...)
			g.phase = 1
		}
		b = respEvent(b, g, "response.reasoning_text.delta")
		b = e.itemRef(b, g, "rs_sim_", 0)
		b = append(b, `,"delta":"`...)
		b = appendTokens(b, g.doneR, nr)
		b = append(b, "\"}\n\n"...)
	}
	if nc > 0 {
		if g.phase < 2 {
			if g.phase == 1 {
				g.doneR += nr // the reasoning item is complete before content starts
				b = e.closeReasoning(b, g)
				g.doneR -= nr
			}
			b = respEvent(b, g, "response.output_item.added")
			b = append(b, `,"output_index":`...)
			b = appendInt(b, g.msgIndex())
			b = append(b, `,"item":{"id":"msg_sim_`...)
			b = append(b, g.id...)
			b = append(b, `","type":"message","status":"in_progress","role":"assistant","content":[]}}`+"\n\n"...)
			b = respEvent(b, g, "response.content_part.added")
			b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
			b = append(b, `,"part":{"type":"output_text","text":"","annotations":[]}}`+"\n\n"...)
			g.phase = 2
		}
		b = respEvent(b, g, "response.output_text.delta")
		b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
		b = append(b, `,"delta":"`...)
		b = appendTokens(b, g.reasoning+g.doneC, nc)
		b = append(b, `","logprobs":[]}`+"\n\n"...)
	}
	return b
}

func (e responsesEmitter) finish(b []byte, g *gen) []byte {
	status := "completed"
	if g.finishLength {
		status = "incomplete"
	}
	switch g.phase {
	case 1:
		b = e.closeReasoning(b, g)
	case 2:
		b = respEvent(b, g, "response.output_text.done")
		b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
		b = append(b, `,"text":"`...)
		b = appendTokens(b, g.reasoning, g.doneC)
		b = append(b, "\"}\n\n"...)
		b = respEvent(b, g, "response.content_part.done")
		b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
		b = append(b, `,"part":{"type":"output_text","text":"`...)
		b = appendTokens(b, g.reasoning, g.doneC)
		b = append(b, `","annotations":[]}}`+"\n\n"...)
		b = respEvent(b, g, "response.output_item.done")
		b = append(b, `,"output_index":`...)
		b = appendInt(b, g.msgIndex())
		b = append(b, `,"item":`...)
		b = appendMessageItem(b, g, status)
		b = append(b, "}\n\n"...)
	}
	b = respEvent(b, g, "response."+status)
	b = append(b, `,"response":`...)
	b = appendResponse(b, g, status, true)
	return append(b, "}\n\n"...)
}

func (responsesEmitter) body(b []byte, g *gen) []byte {
	status := "completed"
	if g.finishLength {
		status = "incomplete"
	}
	b = appendResponse(b, g, status, true)
	return append(b, '\n')
}

// ---- Anthropic Messages ----

type messagesEmitter struct{}

func (messagesEmitter) head(b []byte, g *gen) []byte {
	b = appendEventName(b, "message_start")
	b = append(b, `{"type":"message_start","message":{"id":"msg_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = append(b, g.model...)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"output_tokens":1}}}`+"\n\n"...)
	b = appendEventName(b, "ping")
	return append(b, `{"type":"ping"}`+"\n\n"...)
}

func blockEvent(b []byte, name string, index int) []byte {
	b = appendEventName(b, name)
	b = append(b, `{"type":"`...)
	b = append(b, name...)
	b = append(b, `","index":`...)
	return appendInt(b, index)
}

func (messagesEmitter) chunk(b []byte, g *gen, nr, nc int) []byte {
	if nr > 0 {
		if g.phase == 0 {
			b = blockEvent(b, "content_block_start", 0)
			b = append(b, `,"content_block":{"type":"thinking","thinking":""}}`+"\n\n"...)
			g.phase = 1
		}
		b = blockEvent(b, "content_block_delta", 0)
		b = append(b, `,"delta":{"type":"thinking_delta","thinking":"`...)
		b = appendTokens(b, g.doneR, nr)
		b = append(b, "\"}}\n\n"...)
	}
	if nc > 0 {
		if g.phase < 2 {
			if g.phase == 1 {
				b = closeThinking(b)
			}
			b = blockEvent(b, "content_block_start", g.msgIndex())
			b = append(b, `,"content_block":{"type":"text","text":""}}`+"\n\n"...)
			g.phase = 2
		}
		b = blockEvent(b, "content_block_delta", g.msgIndex())
		b = append(b, `,"delta":{"type":"text_delta","text":"`...)
		b = appendTokens(b, g.reasoning+g.doneC, nc)
		b = append(b, "\"}}\n\n"...)
	}
	return b
}

// closeThinking signs and closes the thinking block (index 0).
func closeThinking(b []byte) []byte {
	b = blockEvent(b, "content_block_delta", 0)
	b = append(b, `,"delta":{"type":"signature_delta","signature":"c2lt"}}`+"\n\n"...)
	b = blockEvent(b, "content_block_stop", 0)
	return append(b, "}\n\n"...)
}

func appendStopReason(b []byte, g *gen) []byte {
	if g.finishLength {
		return append(b, `"max_tokens"`...)
	}
	return append(b, `"end_turn"`...)
}

func (messagesEmitter) finish(b []byte, g *gen) []byte {
	switch g.phase {
	case 1:
		b = closeThinking(b)
	case 2:
		b = blockEvent(b, "content_block_stop", g.msgIndex())
		b = append(b, "}\n\n"...)
	}
	b = appendEventName(b, "message_delta")
	b = append(b, `{"type":"message_delta","delta":{"stop_reason":`...)
	b = appendStopReason(b, g)
	b = append(b, `,"stop_sequence":null},"usage":{"output_tokens":`...)
	b = appendInt(b, g.completionTokens())
	b = append(b, "}}\n\n"...)
	b = appendEventName(b, "message_stop")
	return append(b, `{"type":"message_stop"}`+"\n\n"...)
}

func (messagesEmitter) body(b []byte, g *gen) []byte {
	b = append(b, `{"id":"msg_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = append(b, g.model...)
	b = append(b, `,"content":[`...)
	if g.doneR > 0 {
		b = append(b, `{"type":"thinking","thinking":"`...)
		b = appendTokens(b, 0, g.doneR)
		b = append(b, `","signature":"c2lt"},`...)
	}
	b = append(b, `{"type":"text","text":"`...)
	b = appendTokens(b, g.reasoning, g.doneC)
	b = append(b, `"}],"stop_reason":`...)
	b = appendStopReason(b, g)
	b = append(b, `,"stop_sequence":null,"usage":{"input_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, g.completionTokens())
	return append(b, "}}\n"...)
}
