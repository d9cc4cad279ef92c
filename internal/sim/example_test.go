package sim_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/sim"
)

// show posts body to the simulator and prints the reply.
func show(path, body string, reasoning int) {
	cfg := sim.DefaultConfig()
	cfg.TTFT = sim.FixedDist(0)
	cfg.TokenTime = sim.FixedDist(0)
	cfg.OutputTokens = sim.FixedDist(2)
	cfg.ReasoningTokens = sim.FixedDist(float64(reasoning))
	cfg.Now = func() time.Time { return time.Unix(1764400000, 0) } // fixed "created"
	s, err := sim.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	base, closeFn, err := s.Start("")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer closeFn()
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	fmt.Print(string(b))
}

func Example_chatStream() {
	show("/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"Hello there!"}]}`, 0)
	// Output:
	// data: {"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764400000,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764400000,"model":"m","choices":[{"index":0,"delta":{"content":" lorem"},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764400000,"model":"m","choices":[{"index":0,"delta":{"content":" ipsum"},"logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764400000,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"stop"}]}
	//
	// data: {"id":"chatcmpl-sim-1","object":"chat.completion.chunk","created":1764400000,"model":"m","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":0}}}
	//
	// data: [DONE]
}

func Example_completionsStream() {
	show("/completions", `{"model":"m","stream":true,"max_tokens":1,"prompt":"Hello there!"}`, 0)
	// Output:
	// data: {"id":"cmpl-sim-1","object":"text_completion","created":1764400000,"model":"m","choices":[{"index":0,"text":" lorem","logprobs":null,"finish_reason":null}]}
	//
	// data: {"id":"cmpl-sim-1","object":"text_completion","created":1764400000,"model":"m","choices":[{"index":0,"text":"","logprobs":null,"finish_reason":"length"}]}
	//
	// data: [DONE]
}

func Example_responsesStream() {
	show("/responses", `{"model":"m","stream":true,"input":"Hello there!"}`, 1)
	// Output:
	// event: response.created
	// data: {"type":"response.created","sequence_number":0,"response":{"id":"resp_sim_1","object":"response","created_at":1764400000,"status":"in_progress","model":"m","output":[],"usage":null}}
	//
	// event: response.in_progress
	// data: {"type":"response.in_progress","sequence_number":1,"response":{"id":"resp_sim_1","object":"response","created_at":1764400000,"status":"in_progress","model":"m","output":[],"usage":null}}
	//
	// event: response.output_item.added
	// data: {"type":"response.output_item.added","sequence_number":2,"output_index":0,"item":{"id":"rs_sim_1","type":"reasoning","summary":[],"content":[]}}
	//
	// event: response.reasoning_text.delta
	// data: {"type":"response.reasoning_text.delta","sequence_number":3,"item_id":"rs_sim_1","output_index":0,"content_index":0,"delta":" lorem"}
	//
	// event: response.reasoning_text.done
	// data: {"type":"response.reasoning_text.done","sequence_number":4,"item_id":"rs_sim_1","output_index":0,"content_index":0,"text":" lorem"}
	//
	// event: response.output_item.done
	// data: {"type":"response.output_item.done","sequence_number":5,"output_index":0,"item":{"id":"rs_sim_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":" lorem"}]}}
	//
	// event: response.output_item.added
	// data: {"type":"response.output_item.added","sequence_number":6,"output_index":1,"item":{"id":"msg_sim_1","type":"message","status":"in_progress","role":"assistant","content":[]}}
	//
	// event: response.content_part.added
	// data: {"type":"response.content_part.added","sequence_number":7,"item_id":"msg_sim_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}}
	//
	// event: response.output_text.delta
	// data: {"type":"response.output_text.delta","sequence_number":8,"item_id":"msg_sim_1","output_index":1,"content_index":0,"delta":" ipsum","logprobs":[]}
	//
	// event: response.output_text.delta
	// data: {"type":"response.output_text.delta","sequence_number":9,"item_id":"msg_sim_1","output_index":1,"content_index":0,"delta":" dolor","logprobs":[]}
	//
	// event: response.output_text.done
	// data: {"type":"response.output_text.done","sequence_number":10,"item_id":"msg_sim_1","output_index":1,"content_index":0,"text":" ipsum dolor"}
	//
	// event: response.content_part.done
	// data: {"type":"response.content_part.done","sequence_number":11,"item_id":"msg_sim_1","output_index":1,"content_index":0,"part":{"type":"output_text","text":" ipsum dolor","annotations":[]}}
	//
	// event: response.output_item.done
	// data: {"type":"response.output_item.done","sequence_number":12,"output_index":1,"item":{"id":"msg_sim_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":" ipsum dolor","annotations":[]}]}}
	//
	// event: response.completed
	// data: {"type":"response.completed","sequence_number":13,"response":{"id":"resp_sim_1","object":"response","created_at":1764400000,"status":"completed","model":"m","output":[{"id":"rs_sim_1","type":"reasoning","summary":[],"content":[{"type":"reasoning_text","text":" lorem"}]},{"id":"msg_sim_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":" ipsum dolor","annotations":[]}]}],"incomplete_details":null,"usage":{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":3,"output_tokens_details":{"reasoning_tokens":1},"total_tokens":6}}}
}

func Example_messagesStream() {
	show("/messages", `{"model":"m","stream":true,"max_tokens":100,"messages":[{"role":"user","content":"Hello there!"}]}`, 1)
	// Output:
	// event: message_start
	// data: {"type":"message_start","message":{"id":"msg_sim_1","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":3,"cache_read_input_tokens":0,"output_tokens":1}}}
	//
	// event: ping
	// data: {"type":"ping"}
	//
	// event: content_block_start
	// data: {"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" lorem"}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"c2lt"}}
	//
	// event: content_block_stop
	// data: {"type":"content_block_stop","index":0}
	//
	// event: content_block_start
	// data: {"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" ipsum"}}
	//
	// event: content_block_delta
	// data: {"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" dolor"}}
	//
	// event: content_block_stop
	// data: {"type":"content_block_stop","index":1}
	//
	// event: message_delta
	// data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":3}}
	//
	// event: message_stop
	// data: {"type":"message_stop"}
}
