package sim

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
	b = g.appendContent(b, g.doneC, nc)
	b = append(b, `","logprobs":null,"finish_reason":null}`...)
	return endChunk(b, g, g.doneC+nc)
}

func (completionsEmitter) finish(b []byte, g *gen) []byte {
	return finishOpenAI(b, g, `{"index":0,"text":"","logprobs":null,"finish_reason":`, false)
}

func (completionsEmitter) body(b []byte, g *gen) []byte {
	b = appendOpenAIHead(b, g, "cmpl-sim-", "text_completion")
	b = append(b, `,"choices":[{"index":0,"text":"`...)
	b = g.appendContent(b, 0, g.doneC)
	b = append(b, `","logprobs":null,"finish_reason":`...)
	b = appendFinishReason(b, g)
	b = append(b, `}],`...)
	b = appendOpenAIUsage(b, g, false)
	return append(b, "}\n"...)
}
