package sim

import (
	"strconv"
)

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
	if g.toolCall() {
		b = appendFunctionCallItem(b, g, status)
	} else {
		b = appendMessageItem(b, g, status)
	}
	b = append(b, `],"incomplete_details":`...)
	if g.finishLength {
		b = append(b, `{"reason":"max_output_tokens"}`...)
	} else {
		b = append(b, `null`...)
	}
	b = append(b, `,"usage":{"input_tokens":`...)
	b = appendInt(b, g.promptTokens)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = appendInt(b, g.cachedTokens)
	b = append(b, `},"output_tokens":`...)
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
	b = g.appendContent(b, 0, g.doneC)
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
	if nc > 0 && g.toolCall() {
		return respToolChunk(b, g, nc)
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
		b = g.appendContent(b, g.doneC, nc)
		b = append(b, `","logprobs":[]}`+"\n\n"...)
	}
	return b
}

func (e responsesEmitter) finish(b []byte, g *gen) []byte {
	status := "completed"
	if g.finishLength {
		status = "incomplete"
	}
	switch {
	case g.phase == 2 && g.toolCall():
		b = respToolFinish(b, g, status)
	case g.phase == 1:
		b = e.closeReasoning(b, g)
	case g.phase == 2:
		b = respEvent(b, g, "response.output_text.done")
		b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
		b = append(b, `,"text":"`...)
		b = g.appendContent(b, 0, g.doneC)
		b = append(b, "\"}\n\n"...)
		b = respEvent(b, g, "response.content_part.done")
		b = e.itemRef(b, g, "msg_sim_", g.msgIndex())
		b = append(b, `,"part":{"type":"output_text","text":"`...)
		b = g.appendContent(b, 0, g.doneC)
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
