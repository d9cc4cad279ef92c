package protocol

import (
	"bytes"
	"encoding/json"
	"strconv"
)

// maxServerMessage bounds the server's message text read from an error
// object (the record keeps far less: see Client.inBandText).
const maxServerMessage = 1024

// jsonErrorMember reads an OpenAI-style error member ({"error": {"type",
// "code", "message"}} or {"error": "text"}); nil when absent or null.
func jsonErrorMember(raw json.RawMessage) *ServerError {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil
	}
	se := &ServerError{Type: "error"}
	if raw[0] == '"' {
		se.Message = jsonMessage(raw)
		return se
	}
	readErrorFields(raw, se)
	return se
}

// errorObject reads the payload of an error in any form (an `event: error`,
// an `error:` field line, a Responses or Anthropic error event): an object
// with an error member is read as that member, any other object as the
// error itself (llama.cpp's `error: {"code":500,"message":…,"type":…}`),
// and anything that is not JSON is a message of type "error". It never
// returns nil.
func errorObject(data []byte) *ServerError {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var obj struct {
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(data, &obj) == nil {
			if se := jsonErrorMember(obj.Error); se != nil {
				return se
			}
			se := &ServerError{Type: "error"}
			readErrorFields(data, se)
			return se
		}
	}
	return &ServerError{Type: "error", Message: string(data[:min(len(data), maxServerMessage)])}
}

// readErrorFields sets type, code and message from an error object; members
// that are absent or of another kind are left as they are.
func readErrorFields(raw []byte, se *ServerError) {
	var obj struct {
		Type    json.RawMessage `json:"type"`
		Code    json.RawMessage `json:"code"`
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return
	}
	if t := jsonLabel(obj.Type); t != "" {
		se.Type = t
	}
	se.Code = jsonLabel(obj.Code)
	se.Message = jsonMessage(obj.Message)
}

// jsonMessage returns a JSON string's value, at most maxServerMessage bytes
// of it; "" for anything else.
func jsonMessage(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s[:min(len(s), maxServerMessage)]
}

// inBandText is the record's error text for an in-band error: the type and
// code, then the server's own message, each cleaned by the one sanitiser,
// within the record's bound on error text.
func (c *Client) inBandText(se *ServerError) string {
	msg := "in-band error" + c.labels(se)
	if se.Message == "" {
		return msg
	}
	room := maxErrorText - len(msg) - len(": ")
	if room < 8 {
		return msg
	}
	if m := c.red.String(se.Message, room); m != "" {
		msg += ": " + m
	}
	return msg
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
