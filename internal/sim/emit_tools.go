package sim

// Tool calls in each API's shape (a library answer that calls a tool: its
// tokens are the arguments JSON, streamed in pieces). The completions API
// has no tools.

func (g *gen) toolCall() bool { return g.ans != nil && g.ans.tool }

// appendArgs appends the arguments streamed so far (doneC tokens),
// JSON-escaped.
func (g *gen) appendArgs(b []byte) []byte { return g.appendContent(b, 0, g.doneC) }

// ---- OpenAI chat: delta.tool_calls, finish_reason tool_calls ----

func chatToolChunk(b []byte, g *gen, nc int) []byte {
	b = append(b, g.prefix...)
	b = append(b, `{"index":0,"delta":{"tool_calls":[{"index":0,`...)
	if g.doneC == 0 {
		b = append(b, `"id":"call_sim_`...)
		b = append(b, g.id...)
		b = append(b, `","type":"function","function":{"name":`...)
		b = append(b, g.ans.name...)
		b = append(b, `,"arguments":"`...)
	} else {
		b = append(b, `"function":{"arguments":"`...)
	}
	b = g.appendContent(b, g.doneC, nc)
	b = append(b, `"}}]},"logprobs":null,"finish_reason":null}`...)
	return endChunk(b, g, g.doneC+nc)
}

// chatToolMessage is the non-streaming message of a tool call.
func chatToolMessage(b []byte, g *gen) []byte {
	b = append(b, `{"role":"assistant","content":null,"tool_calls":[{"id":"call_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"function","function":{"name":`...)
	b = append(b, g.ans.name...)
	b = append(b, `,"arguments":"`...)
	b = g.appendArgs(b)
	return append(b, `"}}]}`...)
}

// ---- OpenAI Responses: a function_call output item ----

func appendFunctionCallItem(b []byte, g *gen, status string) []byte {
	b = append(b, `{"id":"fc_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","type":"function_call","status":"`...)
	b = append(b, status...)
	b = append(b, `","call_id":"call_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","name":`...)
	b = append(b, g.ans.name...)
	b = append(b, `,"arguments":"`...)
	if status != "in_progress" {
		b = g.appendArgs(b)
	}
	return append(b, `"}`...)
}

func respToolRef(b []byte, g *gen) []byte {
	b = append(b, `,"item_id":"fc_sim_`...)
	b = append(b, g.id...)
	return append(b, `","output_index":0`...)
}

func respToolChunk(b []byte, g *gen, nc int) []byte {
	if g.phase < 2 {
		b = respEvent(b, g, "response.output_item.added")
		b = append(b, `,"output_index":0,"item":`...)
		b = appendFunctionCallItem(b, g, "in_progress")
		b = append(b, "}\n\n"...)
		g.phase = 2
	}
	b = respEvent(b, g, "response.function_call_arguments.delta")
	b = respToolRef(b, g)
	b = append(b, `,"delta":"`...)
	b = g.appendContent(b, g.doneC, nc)
	return append(b, "\"}\n\n"...)
}

func respToolFinish(b []byte, g *gen, status string) []byte {
	b = respEvent(b, g, "response.function_call_arguments.done")
	b = respToolRef(b, g)
	b = append(b, `,"name":`...)
	b = append(b, g.ans.name...)
	b = append(b, `,"arguments":"`...)
	b = g.appendArgs(b)
	b = append(b, "\"}\n\n"...)
	b = respEvent(b, g, "response.output_item.done")
	b = append(b, `,"output_index":0,"item":`...)
	b = appendFunctionCallItem(b, g, status)
	return append(b, "}\n\n"...)
}

// ---- Anthropic Messages: a tool_use block, input_json_delta ----

func messagesToolChunk(b []byte, g *gen, nc int) []byte {
	if g.phase < 2 {
		b = blockEvent(b, "content_block_start", 0)
		b = append(b, `,"content_block":{"type":"tool_use","id":"toolu_sim_`...)
		b = append(b, g.id...)
		b = append(b, `","name":`...)
		b = append(b, g.ans.name...)
		b = append(b, `,"input":{}}}`+"\n\n"...)
		g.phase = 2
	}
	b = blockEvent(b, "content_block_delta", 0)
	b = append(b, `,"delta":{"type":"input_json_delta","partial_json":"`...)
	b = g.appendContent(b, g.doneC, nc)
	return append(b, "\"}}\n\n"...)
}

// messagesToolBlock is the non-streaming tool_use block: its input is the
// arguments object, or {} when the cap cut them.
func messagesToolBlock(b []byte, g *gen) []byte {
	b = append(b, `{"type":"tool_use","id":"toolu_sim_`...)
	b = append(b, g.id...)
	b = append(b, `","name":`...)
	b = append(b, g.ans.name...)
	b = append(b, `,"input":`...)
	if g.finishLength {
		return append(b, `{}}`...)
	}
	b = append(b, g.ans.raw...)
	return append(b, '}')
}
