package sim

type messagesEmitter struct{}

func (messagesEmitter) head(b []byte, g *gen) []byte {
	b = appendEventName(b, "message_start")
	b = append(b, `{"type":"message_start","message":{"id":"msg_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"message","role":"assistant","model":`...)
	b = append(b, g.model...)
	b = append(b, `,"content":[],"stop_reason":null,"stop_sequence":null,"usage":`...)
	b = appendAnthropicInput(b, g)
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
	if nc > 0 && g.toolCall() {
		return messagesToolChunk(b, g, nc)
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
		b = g.appendContent(b, g.doneC, nc)
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

// appendStopReason appends stop_reason and stop_sequence.
func appendStopReason(b []byte, g *gen) []byte {
	switch {
	case g.finishLength:
		b = append(b, `"max_tokens"`...)
	case g.toolCall():
		b = append(b, `"tool_use"`...)
	case g.ans != nil && g.ans.stopSeq != "":
		b = append(b, `"stop_sequence","stop_sequence":`...)
		return appendJSONString(b, g.ans.stopSeq)
	default:
		b = append(b, `"end_turn"`...)
	}
	return append(b, `,"stop_sequence":null`...)
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
	b = append(b, `},"usage":{"output_tokens":`...)
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
	if g.toolCall() {
		b = messagesToolBlock(b, g)
	} else {
		b = append(b, `{"type":"text","text":"`...)
		b = g.appendContent(b, 0, g.doneC)
		b = append(b, `"}`...)
	}
	b = append(b, `],"stop_reason":`...)
	b = appendStopReason(b, g)
	b = append(b, `,"usage":`...)
	b = appendAnthropicInput(b, g)
	b = append(b, `,"output_tokens":`...)
	b = appendInt(b, g.completionTokens())
	return append(b, "}}\n"...)
}

// appendAnthropicInput opens a usage object with its input counts: as the
// Messages API counts them, input_tokens excludes the prompt tokens read
// from the cache, which are cache_read_input_tokens.
func appendAnthropicInput(b []byte, g *gen) []byte {
	b = append(b, `{"input_tokens":`...)
	b = appendInt(b, g.promptTokens-g.cachedTokens)
	b = append(b, `,"cache_read_input_tokens":`...)
	return appendInt(b, g.cachedTokens)
}
