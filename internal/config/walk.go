package config

import (
	"encoding"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/sanitize"
)

var (
	durationType      = reflect.TypeOf(Duration(0))
	goDurationType    = reflect.TypeOf(time.Duration(0))
	textUnmarshalerTy = reflect.TypeOf((*encoding.TextUnmarshaler)(nil)).Elem()
)

// isTextValue reports whether t is a value that parses itself from its
// text (a Duration, an arrival process, a stop rule): its owner's
// UnmarshalText reads and checks it, once, as it is loaded. A
// time.Duration in a value owner's struct (stats.Gates) is one too: read
// by Duration's rule (textValue).
func isTextValue(t reflect.Type) bool {
	return t == goDurationType || t.Kind() != reflect.Struct && reflect.PointerTo(t).Implements(textUnmarshalerTy)
}

// textValue is a new value of text type t to parse into (isTextValue),
// and its value once parsed: a time.Duration is parsed as a Duration.
func textValue(t reflect.Type) (encoding.TextUnmarshaler, func() any) {
	if t == goDurationType {
		d := new(Duration)
		return d, func() any { return d.D() }
	}
	p := reflect.New(t)
	return p.Interface().(encoding.TextUnmarshaler), func() any { return p.Elem().Interface() }
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// walk checks raw against the struct type t: unknown keys and value
// kinds, collecting every problem with its path, and returns v as it is to
// be decoded. Environment values arrive as strings; walk converts those
// meant as numbers or booleans in place. A value that parses itself (a
// Duration, an arrival process, a stop rule: isTextValue) is parsed here,
// once, by its own UnmarshalText: an error is placed on its key, and the
// parsed value replaces its text, so decoding only assigns it.
func walk(el *errorList, path string, v any, t reflect.Type) any {
	if v == nil {
		return nil
	}
	if m, ok := v.(map[string]any); ok && t.Kind() == reflect.Struct {
		for k, x := range m {
			if s, isStr := x.(string); isStr && strings.HasPrefix(el.src(join(path, k)), "env ") {
				if f, ok := fieldByTag(t, k); ok {
					m[k] = fromEnv(s, f.Type)
				}
			}
		}
	}
	if isTextValue(t) {
		s, ok := v.(string)
		switch {
		case !ok && (t == durationType || t == goDurationType):
			el.add(path, "want a duration string like \"10s\", got %v", v)
		case !ok:
			el.add(path, "want a string, got %s", kindName(v))
		default:
			u, parsed := textValue(t)
			if err := u.UnmarshalText([]byte(s)); err != nil {
				el.add(path, "%v", err)
				return v
			}
			return parsed()
		}
		return v
	}
	switch t.Kind() {
	case reflect.Struct:
		m, ok := v.(map[string]any)
		if !ok {
			el.add(path, "want a mapping, got %s", kindName(v))
			return v
		}
		fields := map[string]reflect.StructField{}
		for _, f := range keyFields(t) {
			fields[keyOf(f)] = f
		}
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		sort.Strings(keys)
		for _, key := range keys {
			f, ok := fields[key]
			if !ok {
				if sanitize.SecretName(key) {
					el.add(join(path, key), "unknown key: literal secrets are not accepted; use api_key_env, api_key_file or header_env")
				} else {
					el.add(join(path, key), "unknown key")
				}
				continue
			}
			m[key] = walk(el, join(path, key), m[key], f.Type)
		}
	case reflect.Slice:
		s, ok := v.([]any)
		if !ok {
			el.add(path, "want a list, got %s", kindName(v))
			return v
		}
		for i, e := range s {
			s[i] = walk(el, fmt.Sprintf("%s[%d]", path, i), e, t.Elem())
		}
	case reflect.Pointer: // an optional section (a check's expect, json, …)
		return walk(el, path, v, t.Elem())
	case reflect.Map:
		m, ok := v.(map[string]any)
		if !ok {
			el.add(path, "want a mapping, got %s", kindName(v))
			return v
		}
		for key, e := range m {
			m[key] = walk(el, join(path, key), e, t.Elem())
		}
	case reflect.String:
		if _, ok := v.(string); !ok {
			el.add(path, "want a string, got %s", kindName(v))
		}
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			el.add(path, "want true or false, got %s", kindName(v))
		}
	case reflect.Int, reflect.Int64, reflect.Int32:
		switch n := v.(type) {
		case int, int64, int32, uint64:
		case float64:
			if n != float64(int64(n)) {
				el.add(path, "want a whole number, got %v", n)
			}
		default:
			el.add(path, "want a whole number, got %s", kindName(v))
		}
	case reflect.Float64:
		switch v.(type) {
		case int, int64, int32, uint64, float64:
		default:
			el.add(path, "want a number, got %s", kindName(v))
		}
	}
	return v
}
