package sim

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
	if nc > 0 && g.toolCall() {
		return chatToolChunk(b, g, nc)
	}
	if nc > 0 {
		b = append(b, g.prefix...)
		b = append(b, `{"index":0,"delta":{"content":"`...)
		b = g.appendContent(b, g.doneC, nc)
		b = append(b, `"},"logprobs":null,"finish_reason":null}`...)
		b = endChunk(b, g, g.doneR+nr+g.doneC+nc)
	}
	return b
}

func (chatEmitter) finish(b []byte, g *gen) []byte {
	return finishOpenAI(b, g, `{"index":0,"delta":{},"logprobs":null,"finish_reason":`, true)
}

func (chatEmitter) body(b []byte, g *gen) []byte {
	b = appendOpenAIHead(b, g, "chatcmpl-sim-", "chat.completion")
	b = append(b, `,"choices":[{"index":0,"message":`...)
	if g.toolCall() {
		b = chatToolMessage(b, g)
	} else {
		b = append(b, `{"role":"assistant","content":"`...)
		b = g.appendContent(b, 0, g.doneC)
		b = append(b, '"')
		if g.doneR > 0 {
			b = append(b, `,"reasoning_content":"`...)
			b = appendTokens(b, 0, g.doneR)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, `,"logprobs":null,"finish_reason":`...)
	b = appendFinishReason(b, g)
	b = append(b, `}],`...)
	b = appendOpenAIUsage(b, g, true)
	return append(b, "}\n"...)
}
