package sim

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// maxSchemaDepth bounds the instance generator's recursion ($ref cycles,
// deep nesting).
const maxSchemaDepth = 32

// instance is the simplest instance of a JSON Schema (decoded with
// UseNumber), as a right model's answer: const, else the first of enum,
// else default, else by type: an object with its required properties, an
// array of minItems items, the empty (or minLength "a…") string, 0 (moved
// into minimum/maximum), false, null. $ref to the same document
// ("#/$defs/x"), allOf (merged), anyOf and oneOf (the first) are followed.
// Not honoured: pattern, uniqueItems, not, if/then/else, dependent schemas.
func instance(schema any) any { return instanceAt(schema, schema, 0) }

func instanceAt(root, s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > maxSchemaDepth {
		return nil // true, false or not a schema: null
	}
	if ref, ok := m["$ref"].(string); ok {
		if target := resolveRef(root, ref); target != nil {
			return instanceAt(root, target, depth+1)
		}
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := m["default"]; ok {
		return d
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		return instanceAt(root, mergeAllOf(root, m, all), depth+1)
	}
	for _, k := range []string{"anyOf", "oneOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			return instanceAt(root, alts[0], depth+1)
		}
	}
	switch schemaType(m) {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		req, _ := m["required"].([]any)
		for _, r := range req {
			if name, ok := r.(string); ok {
				out[name] = instanceAt(root, props[name], depth+1)
			}
		}
		return out
	case "array":
		return arrayInstance(root, m, depth)
	case "string":
		return stringInstance(m)
	case "integer":
		return numberInstance(m, true)
	case "number":
		return numberInstance(m, false)
	case "boolean":
		return false
	}
	return nil
}

// schemaType is the schema's type: the first non-null of a type list, or
// inferred from its keywords.
func schemaType(m map[string]any) string {
	switch t := m["type"].(type) {
	case string:
		return t
	case []any:
		for _, x := range t {
			if s, ok := x.(string); ok && s != "null" {
				return s
			}
		}
		return "null"
	}
	switch {
	case m["properties"] != nil || m["required"] != nil:
		return "object"
	case m["items"] != nil || m["prefixItems"] != nil:
		return "array"
	case m["minimum"] != nil || m["maximum"] != nil:
		return "number"
	case m["minLength"] != nil:
		return "string"
	}
	return "null"
}

// resolveRef follows a same-document JSON Pointer ("#", "#/$defs/x").
func resolveRef(root any, ref string) any {
	p, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	cur := root
	for _, tok := range strings.Split(strings.TrimPrefix(p, "/"), "/") {
		if tok == "" {
			continue
		}
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	return cur
}

// mergeAllOf merges allOf's subschemas into one: properties joined,
// required lists concatenated, other keywords the first seen.
func mergeAllOf(root any, m map[string]any, all []any) map[string]any {
	out := map[string]any{}
	props := map[string]any{}
	var req []any
	add := func(s map[string]any) {
		for k, v := range s {
			switch k {
			case "allOf":
			case "properties":
				if p, ok := v.(map[string]any); ok {
					for name, ps := range p {
						props[name] = ps
					}
				}
			case "required":
				if r, ok := v.([]any); ok {
					req = append(req, r...)
				}
			default:
				if _, seen := out[k]; !seen {
					out[k] = v
				}
			}
		}
	}
	add(m)
	for _, s := range all {
		if sm, ok := s.(map[string]any); ok {
			if ref, ok := sm["$ref"].(string); ok {
				if t, ok := resolveRef(root, ref).(map[string]any); ok {
					sm = t
				}
			}
			add(sm)
		}
	}
	if len(props) > 0 {
		out["properties"] = props
	}
	if len(req) > 0 {
		out["required"] = req
	}
	return out
}

func arrayInstance(root any, m map[string]any, depth int) any {
	out := []any{}
	prefix, _ := m["prefixItems"].([]any)
	for _, p := range prefix {
		out = append(out, instanceAt(root, p, depth+1))
	}
	n := int(num(m["minItems"], 0))
	for len(out) < n && len(out) < 1024 {
		out = append(out, instanceAt(root, m["items"], depth+1))
	}
	return out
}

func stringInstance(m map[string]any) any {
	switch m["format"] {
	case "date-time":
		return "1970-01-01T00:00:00Z"
	case "date":
		return "1970-01-01"
	case "time":
		return "00:00:00Z"
	case "email":
		return "a@example.com"
	case "uri", "url":
		return "https://example.com/"
	case "uuid":
		return "00000000-0000-0000-0000-000000000000"
	}
	return strings.Repeat("a", min(int(num(m["minLength"], 0)), 4096))
}

// numberInstance is 0 moved into [minimum, maximum] (an exclusive bound
// stepped over by 1), then up to a multiple of multipleOf.
func numberInstance(m map[string]any, integer bool) any {
	v := 0.0
	if lo := num(m["minimum"], math.Inf(-1)); v < lo {
		v = lo
	}
	if lo := num(m["exclusiveMinimum"], math.Inf(-1)); v <= lo {
		v = lo + 1
	}
	if hi := num(m["maximum"], math.Inf(1)); v > hi {
		v = hi
	}
	if hi := num(m["exclusiveMaximum"], math.Inf(1)); v >= hi {
		v = hi - 1
	}
	if step := num(m["multipleOf"], 0); step > 0 {
		v = math.Ceil(v/step) * step
	}
	if integer {
		v = math.Ceil(v)
		return json.Number(strconv.FormatFloat(v, 'f', -1, 64))
	}
	return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
}

// num reads a schema number (json.Number or float64), or def.
func num(v any, def float64) float64 {
	switch x := v.(type) {
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return f
		}
	case float64:
		return x
	}
	return def
}
