package protocol

import (
	"strconv"
	"unicode/utf8"
)

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
