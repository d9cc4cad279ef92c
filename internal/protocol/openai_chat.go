package protocol

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmprobe/llmprobe/internal/ledger"
)

// OpenAIChat is the OpenAI chat completions API (POST {base}/chat/completions
// with stream: true), as served by OpenAI, vLLM, SGLang, TGI and most
// gateways. Visible content is choices[].delta.content; reasoning is
// delta.reasoning_content (vLLM, DeepSeek) or delta.reasoning (OpenRouter,
// newer vLLM); usage arrives in a final usage-only chunk
// (stream_options.include_usage); the stream ends with data: [DONE].
type OpenAIChat struct{}

// Name implements Adapter.
func (OpenAIChat) Name() string { return APIOpenAIChat }

// NewRequest implements Adapter. When Params has no Messages, the Prompt is
// sent as one user message.
func (OpenAIChat) NewRequest(ctx context.Context, base string, p Params) (*http.Request, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// Never echo the base URL: it may carry credentials.
		return nil, errors.New("openai-chat: base URL must be an absolute http(s) URL")
	}
	msgs := p.Messages
	if len(msgs) == 0 {
		msgs = []Message{{Role: "user", Content: p.Prompt}}
	}
	body := appendChatRequest(make([]byte, 0, chatRequestSize(p.Model, msgs)), p.Model, msgs, p.MaxTokens, p.UsageDeltas)
	// The URL is set as parsed: formatting it for NewRequest to parse again
	// would cost a second parse per request.
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "", bytes.NewReader(body))
	if err != nil {
		return nil, errors.New("openai-chat: cannot build the request")
	}
	req.URL = u.JoinPath("chat/completions")
	if !strings.HasPrefix(req.URL.Path, "/") { // a base with no path
		req.URL.Path = "/" + req.URL.Path
		if req.URL.RawPath != "" {
			req.URL.RawPath = "/" + req.URL.RawPath
		}
	}
	if h := req.URL.Host; strings.HasSuffix(h, ":") && len(h)-1 > strings.LastIndexByte(h, ']') {
		req.URL.Host = h[:len(h)-1] // an empty port, as NewRequest normalises it
	}
	req.Host = req.URL.Host
	req.Header["Content-Type"] = []string{"application/json"}
	req.Header["Accept"] = []string{"text/event-stream"}
	return req, nil
}

// appendChatRequest appends the request body, written without reflection:
// {"model","messages","max_tokens","stream":true,"stream_options"} in the
// bytes json.Marshal gives for them (the tests hold the reference struct).
func appendChatRequest(b []byte, model string, msgs []Message, maxTokens int, usageDeltas bool) []byte {
	b = append(b, '{')
	if model != "" {
		b = append(b, `"model":`...)
		b = appendJSONString(b, model)
		b = append(b, ',')
	}
	b = append(b, `"messages":`...)
	if msgs == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, m := range msgs {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"role":`...)
			b = appendJSONString(b, m.Role)
			b = append(b, `,"content":`...)
			b = appendJSONString(b, m.Content)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if maxTokens != 0 {
		b = append(b, `,"max_tokens":`...)
		b = strconv.AppendInt(b, int64(maxTokens), 10)
	}
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true`...)
	if usageDeltas {
		b = append(b, `,"continuous_usage_stats":true`...)
	}
	return append(b, "}}"...)
}

// chatRequestSize is a capacity that holds a request body without growing
// in the common case (no escapes).
func chatRequestSize(model string, msgs []Message) int {
	n := 128 + len(model)
	for _, m := range msgs {
		n += 32 + len(m.Role) + len(m.Content)
	}
	return n
}

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: HTML-safe (<, >, & escaped), invalid UTF-8 as U+FFFD, U+2028
// and U+2029 escaped.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// NewDecoder implements Adapter.
func (OpenAIChat) NewDecoder() Decoder { return &chatDecoder{} }

// chatChoice is one choice of a chunk. Content fields are only tested for
// being non-empty strings, never copied.
type chatChoice struct {
	Delta struct {
		Content          jsonNonEmpty `json:"content"`
		ReasoningContent jsonNonEmpty `json:"reasoning_content"`
		Reasoning        jsonNonEmpty `json:"reasoning"`
	} `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type chatChunk struct {
	Model   jsonOnce        `json:"model"`
	Choices []chatChoice    `json:"choices"`
	Usage   *openAIUsage    `json:"usage"`
	Error   json.RawMessage `json:"error"`
}

// jsonNonEmpty decodes to whether a JSON value is a non-empty string,
// without unquoting or copying it.
type jsonNonEmpty bool

func (p *jsonNonEmpty) UnmarshalJSON(b []byte) error {
	*p = len(b) > 2 && b[0] == '"'
	return nil
}

// jsonOnce decodes a string only while want is set (the model name is
// needed once per stream, not once per chunk).
type jsonOnce struct {
	want bool
	v    string
}

func (o *jsonOnce) UnmarshalJSON(b []byte) error {
	if !o.want || len(b) == 0 || b[0] != '"' {
		return nil
	}
	return json.Unmarshal(b, &o.v)
}

type chatDecoder struct {
	chunk    chatChunk // reused: its Choices array survives between chunks
	model    bool      // a model name was seen
	done     bool
	deltas   usageDeltas
	slowOnly bool // tests: always decode with encoding/json (the reference)
}

// Decode implements Decoder. A chunk whose delta carries only a role, or an
// empty content string, is not content. Chunks are read by a single-pass
// scanner specialised to the chunk shape (chatScan); whatever it is not sure
// about (invalid JSON, type mismatches, escaped or case-folded keys,
// duplicate keys, deep nesting) is decoded again by encoding/json, which
// decides. The scanner therefore only ever answers for valid JSON it reads
// exactly as encoding/json does.
func (d *chatDecoder) Decode(name string, data []byte) (Event, error) {
	data = bytes.TrimSpace(data)
	if d.done {
		return Event{}, decodeErr(APIOpenAIChat, ledger.ReasonDataAfterDone, "event after [DONE]")
	}
	if len(data) == 0 {
		return Event{}, nil
	}
	if bytes.Equal(data, doneMarker) {
		d.done = true
		return Event{Done: true}, nil
	}
	if data[0] != '{' {
		return Event{}, decodeErr(APIOpenAIChat, ledger.ReasonMalformed, "chunk is not a JSON object")
	}
	var f chatFields
	sc := chatScan{b: data}
	if d.slowOnly || !sc.chunk(&f, !d.model) {
		f = chatFields{}
		if err := d.slow(data, &f); err != nil {
			return Event{}, err
		}
	}
	if se := jsonErrorMember(f.errRaw); se != nil {
		return Event{Err: se}, nil
	}
	if name == "error" {
		return Event{Err: &ServerError{Type: "error"}}, nil
	}
	ev := Event{Model: f.model, Content: f.content, Reasoning: f.reasoning, FinishReason: f.finish}
	if ev.Model != "" {
		d.model = true
	}
	if f.usage {
		ev.Usage = usageOf(f.prompt, f.completion, f.reasoningTokens)
	}
	ev.Tokens = d.deltas.tokens(ev.Content, ev.Usage)
	return ev, nil
}

// chatFields is what a chunk says, whichever path read it.
type chatFields struct {
	errRaw             []byte // the raw "error" member, nil when absent
	model              string // only while the decoder still wants it
	content, reasoning bool
	finish             string // first non-empty finish_reason
	usage              bool
	prompt, completion int
	reasoningTokens    int
}

// slow decodes a chunk with encoding/json (the reference reading).
func (d *chatDecoder) slow(data []byte, f *chatFields) error {
	c := &d.chunk
	clear(c.Choices[:cap(c.Choices)]) // stale fields must not survive into this chunk
	*c = chatChunk{Choices: c.Choices[:0], Model: jsonOnce{want: !d.model}}
	if err := json.Unmarshal(data, c); err != nil {
		return jsonDecodeErr(APIOpenAIChat, "chunk", err)
	}
	f.errRaw = c.Error
	f.model = c.Model.v
	if u := c.Usage; u != nil {
		f.usage, f.prompt, f.completion = true, u.PromptTokens, u.CompletionTokens
		if u.CompletionTokensDetails != nil {
			f.reasoningTokens = u.CompletionTokensDetails.ReasoningTokens
		}
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		f.content = f.content || bool(ch.Delta.Content)
		f.reasoning = f.reasoning || bool(ch.Delta.ReasoningContent) || bool(ch.Delta.Reasoning)
		if ch.FinishReason != nil && *ch.FinishReason != "" && f.finish == "" {
			f.finish = *ch.FinishReason // server text: the Client cleans it
		}
	}
	return nil
}

// chatScan reads one chat chunk in a single pass without reflection or
// allocation. Every method returns false when the input is not valid JSON
// or is anything the scanner does not read exactly as encoding/json would;
// the caller then falls back to encoding/json.
type chatScan struct {
	b     []byte
	i     int
	depth int
}

// maxScanDepth is the deepest nesting the scanner reads; deeper chunks go to
// encoding/json.
const maxScanDepth = 32

func (s *chatScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *chatScan) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// open consumes the opening bracket c of an object or array.
func (s *chatScan) open(c byte) bool {
	if s.peek() != c || s.depth >= maxScanDepth {
		return false
	}
	s.i++
	s.depth++
	return true
}

// more reports whether another member or element follows in the object or
// array closed by end, consuming the separating comma or the closing bracket.
func (s *chatScan) more(end byte, first *bool) (more, ok bool) {
	s.ws()
	c := s.peek()
	if c == end {
		s.i++
		s.depth--
		return false, true
	}
	if !*first {
		if c != ',' {
			return false, false
		}
		s.i++
		s.ws()
	}
	*first = false
	return true, true
}

// key reads a member name and its colon. plain is false when the name has
// escapes or non-ASCII bytes; upper when it has upper-case letters:
// encoding/json might then match it to a field case-insensitively.
func (s *chatScan) key() (k []byte, plain, upper, ok bool) {
	k, esc, ok := s.str()
	if !ok {
		return nil, false, false, false
	}
	s.ws()
	if s.peek() != ':' {
		return nil, false, false, false
	}
	s.i++
	s.ws()
	plain = !esc
	for _, c := range k {
		if c >= 0x80 {
			plain = false
			break
		}
		if 'A' <= c && c <= 'Z' {
			upper = true
		}
	}
	return k, plain, upper, true
}

// foldsTo reports whether the ASCII name k, lower-cased, is one of names.
func foldsTo(k []byte, names []string) bool {
	var buf [32]byte
	if len(k) > len(buf) {
		return false // longer than any field name
	}
	low := buf[:len(k)]
	for i, c := range k {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		low[i] = c
	}
	return slices.Index(names, string(low)) >= 0
}

// str reads a string and returns its raw contents (between the quotes) and
// whether they hold escapes.
func (s *chatScan) str() (raw []byte, esc, ok bool) {
	b := s.b
	if s.peek() != '"' {
		return nil, false, false
	}
	start := s.i + 1
	for j := start; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s.i = j + 1
			return b[start:j], esc, true
		case c == '\\':
			esc = true
			j++
			if j >= len(b) {
				return nil, false, false
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(b) || !isHex(b[j+1]) || !isHex(b[j+2]) || !isHex(b[j+3]) || !isHex(b[j+4]) {
					return nil, false, false
				}
				j += 4
			default:
				return nil, false, false
			}
		case c < 0x20:
			return nil, false, false
		}
	}
	return nil, false, false
}

// text reads a string encoding/json would decode to the same bytes: no
// escapes, valid UTF-8.
func (s *chatScan) text() ([]byte, bool) {
	raw, esc, ok := s.str()
	return raw, ok && !esc && utf8.Valid(raw)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// num reads a number; integer reports whether it is a plain integer
// literal (no fraction or exponent).
func (s *chatScan) num() (raw []byte, integer, ok bool) {
	b, j := s.b, s.i
	if j < len(b) && b[j] == '-' {
		j++
	}
	switch {
	case j >= len(b):
		return nil, false, false
	case b[j] == '0':
		j++
	case '1' <= b[j] && b[j] <= '9':
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		return nil, false, false
	}
	integer = true
	if j < len(b) && b[j] == '.' {
		integer = false
		j++
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		integer = false
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) || !isDigit(b[j]) {
			return nil, false, false
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	raw = b[s.i:j]
	s.i = j
	return raw, integer, true
}

func (s *chatScan) lit(word string) bool {
	if len(s.b)-s.i < len(word) || string(s.b[s.i:s.i+len(word)]) != word {
		return false
	}
	s.i += len(word)
	return true
}

// null reads a null if one is next.
func (s *chatScan) null() bool { return s.peek() == 'n' && s.lit("null") }

// skip reads and discards any value.
func (s *chatScan) skip() bool {
	switch s.peek() {
	case '"':
		_, _, ok := s.str()
		return ok
	case '{':
		return s.seq('{', func() bool {
			_, _, _, ok := s.key()
			return ok && s.skip()
		})
	case '[':
		return s.seq('[', s.skip)
	case 't':
		return s.lit("true")
	case 'f':
		return s.lit("false")
	case 'n':
		return s.lit("null")
	}
	_, _, ok := s.num()
	return ok
}

// seq reads an array ('[') or an object ('{'), calling elem for each
// element or member; elem must read it whole (a member: its key and value).
func (s *chatScan) seq(open byte, elem func() bool) bool {
	if !s.open(open) {
		return false
	}
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	for first := true; ; {
		more, ok := s.more(end, &first)
		if !ok || !more {
			return ok
		}
		if !elem() {
			return false
		}
	}
}

// int reads an integer field: null leaves it as it is; anything but a plain
// integer that fits is left to encoding/json.
func (s *chatScan) int(v *int) bool {
	if s.null() {
		return true
	}
	raw, integer, ok := s.num()
	if !ok || !integer {
		return false
	}
	n, err := strconv.ParseInt(string(raw), 10, strconv.IntSize)
	if err != nil {
		return false
	}
	*v = int(n)
	return true
}

// members reads an object member by member: field is called with each
// plain known-or-unknown name, positioned at its value, and must read the
// value; a name seen twice or one that is not plain ends the scan.
func (s *chatScan) members(names []string, field func(i int) bool) bool {
	if s.null() {
		return true
	}
	var seen uint32
	return s.seq('{', func() bool {
		k, plain, upper, ok := s.key()
		if !ok || !plain {
			return false
		}
		i := slices.Index(names, string(k))
		if i < 0 && upper && foldsTo(k, names) {
			return false // encoding/json would match it case-insensitively
		}
		if i < 0 {
			return s.skip()
		}
		if seen&(1<<i) != 0 {
			return false
		}
		seen |= 1 << i
		return field(i)
	})
}

var (
	chatTopNames     = []string{"model", "choices", "usage", "error"}
	chatChoiceNames  = []string{"delta", "finish_reason"}
	chatDeltaNames   = []string{"content", "reasoning_content", "reasoning"}
	chatUsageNames   = []string{"prompt_tokens", "completion_tokens", "completion_tokens_details"}
	chatDetailsNames = []string{"reasoning_tokens"}
)

// chunk reads a whole chunk (nothing but white space may follow it) into f;
// the model name only when wantModel.
func (s *chatScan) chunk(f *chatFields, wantModel bool) bool {
	if s.peek() != '{' || !s.members(chatTopNames, func(i int) bool { return s.top(i, f, wantModel) }) {
		return false
	}
	s.ws()
	return s.i == len(s.b)
}

func (s *chatScan) top(i int, f *chatFields, wantModel bool) bool {
	switch i {
	case 0: // model
		if s.peek() != '"' || !wantModel {
			return s.skip()
		}
		raw, ok := s.text()
		if ok {
			f.model = string(raw)
		}
		return ok
	case 1: // choices
		if s.null() {
			return true
		}
		return s.seq('[', func() bool {
			return s.members(chatChoiceNames, func(i int) bool { return s.choice(i, f) })
		})
	case 2: // usage
		if s.peek() == '{' {
			f.usage = true
		}
		return s.members(chatUsageNames, func(i int) bool {
			switch i {
			case 0:
				return s.int(&f.prompt)
			case 1:
				return s.int(&f.completion)
			}
			return s.members(chatDetailsNames, func(int) bool { return s.int(&f.reasoningTokens) })
		})
	}
	// error: kept raw, as json.RawMessage keeps it
	start := s.i
	if !s.skip() {
		return false
	}
	f.errRaw = s.b[start:s.i]
	return true
}

func (s *chatScan) choice(i int, f *chatFields) bool {
	if i == 0 { // delta
		return s.members(chatDeltaNames, func(i int) bool {
			if s.peek() != '"' {
				return s.skip()
			}
			raw, _, ok := s.str()
			if ok && len(raw) > 0 {
				if i == 0 {
					f.content = true
				} else {
					f.reasoning = true
				}
			}
			return ok
		})
	}
	// finish_reason
	if s.null() {
		return true
	}
	raw, ok := s.text()
	if ok && len(raw) > 0 && f.finish == "" {
		f.finish = finishString(raw)
	}
	return ok
}

// finishString returns a finish reason as a string without allocating for
// the common ones (the Client cleans it, as every server string).
func finishString(b []byte) string {
	switch string(b) {
	case "stop":
		return "stop"
	case "length":
		return "length"
	case "tool_calls":
		return "tool_calls"
	case "content_filter":
		return "content_filter"
	}
	return string(b)
}

// jsonErrorMember reads an OpenAI-style error member ({"error": {"type",
// "code"}} or {"error": "text"}); nil when absent or null. Only the type
// and code are kept: messages may echo the prompt.
func jsonErrorMember(raw json.RawMessage) *ServerError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	var obj struct {
		Type json.RawMessage `json:"type"`
		Code json.RawMessage `json:"code"`
	}
	se := &ServerError{Type: "error"}
	if err := json.Unmarshal(raw, &obj); err == nil {
		if t := jsonLabel(obj.Type); t != "" {
			se.Type = t
		}
		se.Code = jsonLabel(obj.Code)
	}
	return se
}

// jsonLabel turns a JSON string or integer into a label (server text: the
// Client cleans it).
func jsonLabel(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n int64
		if err := json.Unmarshal(raw, &n); err != nil {
			return ""
		}
		return strconv.FormatInt(n, 10)
	}
	return s
}
