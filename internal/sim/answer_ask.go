package sim

import (
	"bytes"
	"encoding/json"
)

// decodeSchema decodes a JSON Schema keeping numbers exact; nil if raw is
// not a JSON object or boolean.
func decodeSchema(raw []byte) any {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	switch v.(type) {
	case map[string]any, bool:
		return v
	}
	return nil
}

// requestSchema is the schema the request asks its answer to match:
// llama.cpp's native json_schema field, response_format
// {type: json_schema, json_schema: {schema}} (chat), text {format: {type:
// json_schema, schema}} (Responses), or a schema member of response_format
// (llama.cpp). asked reports JSON asked for without a schema
// (json_object).
func requestSchema(format, native json.RawMessage) (schema any, asked bool) {
	if len(native) > 0 {
		if s := decodeSchema(native); s != nil {
			return s, true
		}
	}
	if len(format) == 0 {
		return nil, false
	}
	var f struct {
		Type       string          `json:"type"`
		Schema     json.RawMessage `json:"schema"`
		JSONSchema *struct {
			Schema json.RawMessage `json:"schema"`
		} `json:"json_schema"`
		Format *struct { // Responses: text.format
			Type   string          `json:"type"`
			Schema json.RawMessage `json:"schema"`
		} `json:"format"`
	}
	if json.Unmarshal(format, &f) != nil {
		return nil, false
	}
	typ, raw := f.Type, f.Schema
	if f.JSONSchema != nil {
		raw = f.JSONSchema.Schema
	}
	if f.Format != nil {
		typ, raw = f.Format.Type, f.Format.Schema
	}
	if len(raw) > 0 {
		if s := decodeSchema(raw); s != nil {
			return s, true
		}
	}
	return nil, typ == "json_schema" || typ == "json_object"
}

// promptSchema is the schema a prompt carries after "matching this JSON
// Schema:" (any case), or nil.
func promptSchema(p []byte) any {
	i := indexFold(p, schemaMarker)
	if i < 0 {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(p[i+len(schemaMarker):]))
	d.UseNumber()
	var v map[string]any
	if d.Decode(&v) != nil {
		return nil
	}
	return v
}

// indexFold is the index of sub (ASCII, lower case) in b, ignoring case;
// -1 if absent.
func indexFold(b []byte, sub string) int {
	first, upper := sub[0], sub[0]-'a'+'A'
	for i := 0; i+len(sub) <= len(b); i++ {
		if c := b[i]; c != first && c != upper {
			continue
		}
		if hasPrefixFold(b[i:], sub) {
			return i
		}
	}
	return -1
}

// offeredTool is one tool in any API's shape: OpenAI chat {type, function:
// {name, parameters}}, Responses {type, name, parameters}, Anthropic
// {name, input_schema}.
type offeredTool struct {
	Name        string          `json:"name"`
	Parameters  json.RawMessage `json:"parameters"`
	InputSchema json.RawMessage `json:"input_schema"`
	Function    *struct {
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"function"`
}

func (t offeredTool) name() string {
	if t.Function != nil {
		return t.Function.Name
	}
	return t.Name
}

func (t offeredTool) schema() json.RawMessage {
	switch {
	case t.Function != nil:
		return t.Function.Parameters
	case len(t.InputSchema) > 0:
		return t.InputSchema
	}
	return t.Parameters
}

// chooseTool is the call a right model makes: the tool tool_choice names,
// else the first offered; none when tool_choice is "none" (or
// {"type":"none"}) or no tool is offered. Its arguments are an instance of
// the tool's parameters schema.
func chooseTool(rawTools, rawChoice json.RawMessage) (toolCall, bool) {
	var tools []offeredTool
	if json.Unmarshal(rawTools, &tools) != nil {
		return toolCall{}, false
	}
	named, none := toolChoice(rawChoice)
	if none {
		return toolCall{}, false
	}
	for _, t := range tools {
		if n := t.name(); n != "" && (named == "" || n == named) {
			args := map[string]any{}
			var v any = args
			if s := decodeSchema(t.schema()); s != nil {
				v = instance(s)
			}
			b, err := json.Marshal(v)
			if err != nil {
				b = []byte("{}")
			}
			return toolCall{name: n, args: string(b)}, true
		}
	}
	return toolCall{}, false
}

// toolChoice reads tool_choice in any API's shape: "none" | "auto" |
// "required" (OpenAI), {type: function, function: {name}} (chat), {type:
// function, name} (Responses), {type: tool, name} | {type: any | auto |
// none} (Anthropic).
func toolChoice(raw json.RawMessage) (named string, none bool) {
	if len(raw) == 0 {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return "", s == "none"
	}
	var o struct {
		Type     string `json:"type"`
		Name     string `json:"name"`
		Function *struct {
			Name string `json:"name"`
		} `json:"function"`
	}
	if json.Unmarshal(raw, &o) != nil {
		return "", false
	}
	if o.Function != nil {
		return o.Function.Name, false
	}
	return o.Name, o.Type == "none"
}
