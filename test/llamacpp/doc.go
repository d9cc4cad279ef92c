// Package llamacpp runs llmprobe against a real inference engine:
// llama.cpp's llama-server serving a tiny random-weight model, started with
// the engine folder's start.sh on a free 127.0.0.1 port in 18000-19999.
//
// TestProbeAPIs drives the built `llmprobe probe` through the four streaming
// APIs and checks it request by request against what the server says of
// itself: every request ends ok (or stream_error/in_band_error carrying the
// server's message, sanitised), the completion tokens of the ledger add up
// to the increase of llamacpp:tokens_predicted_total, and the client's TTFT
// from dispatch and TPOT agree with the server's own per-request timings
// within the tolerances stated in the test (and in docs/protocols.md).
// TestProbeInBandErrors forces llama.cpp's in-band error (a lone byte token
// that is not UTF-8) on every other request and checks its classification
// and the token rule for such requests. TestDaemonPhases runs `llmprobe run`
// against the server through normal service, SIGSTOP, SIGCONT, a kill and a
// restart on the same port, and checks each phase is classified as it was
// and that no /metrics counter ever goes down. TestPrefixCacheSpeedup sends
// shared-prefix prompts and their cold twins (workload.PrefixGen) through
// the client and checks the cached prompt tokens the server reports (warm:
// at least 90% of the prompt; cold: the template header at most) and that
// warm requests start sooner. TestProbeChecksLlamaCpp runs `probe --checks`
// with each target of config/checks-llamacpp.yaml against the server started
// with --jinja and checks issue 29's four outcomes: native json_schema on
// completions passes, chat json_object fails invalid_json, chat
// response_format json_schema is http_error and not judged, chat tools with
// tool_choice required fail no_tool_call.
//
// The engine folder is <repository root>/../shared/engines/llama.cpp
// (overridden by LLMPROBE_LLAMACPP_DIR). Without its llama-server the tests
// skip, naming the path; with LLMPROBE_LLAMACPP_REQUIRED=1 (set by .ci/run
// when the binary exists) they fail instead. They are skipped under -short.
package llamacpp
