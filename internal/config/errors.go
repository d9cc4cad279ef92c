package config

import (
	"fmt"
	"strings"
)

// FieldError is one problem with one key.
type FieldError struct {
	Source string // the file, "env LLMPROBE_…", "flag --…" or "defaults"
	Key    string // e.g. targets[0].timeouts.total
	Msg    string
	// Line and Column (1-based) place the key in Source when Source is the
	// YAML file and the key (or its nearest ancestor) is written there; 0
	// otherwise.
	Line, Column int
}

func (e FieldError) Error() string {
	var b strings.Builder
	if e.Source != "" {
		b.WriteString(e.Source)
		if e.Line > 0 {
			fmt.Fprintf(&b, ":%d:%d", e.Line, e.Column)
		}
		b.WriteString(": ")
	}
	if e.Key != "" {
		b.WriteString(e.Key)
		b.WriteString(": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found, reported together, one per line.
type Errors []FieldError

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errorList collects field errors, naming each key's source.
type errorList struct {
	src  func(key string) string
	errs Errors
	// fleetHinted: the hint of an unsized fleet was given (once a pass).
	fleetHinted bool
}

func (l *errorList) add(key, format string, args ...any) {
	msg := format
	if len(args) > 0 {
		msg = sprintf(format, args...)
	}
	l.errs = append(l.errs, FieldError{Source: l.src(key), Key: key, Msg: msg})
}

func (l *errorList) err() error {
	if len(l.errs) == 0 {
		return nil
	}
	return l.errs
}

// coveredBy reports whether key, or a key within or above it, already has an error.
func coveredBy(key string, es Errors) bool {
	for _, e := range es {
		if e.Key == key || strings.HasPrefix(e.Key, key+".") || strings.HasPrefix(key, e.Key+".") || strings.HasPrefix(e.Key, key+"[") {
			return true
		}
	}
	return false
}

func kindName(v any) string {
	switch v.(type) {
	case string:
		return "a string" // never echo a value: it may be a misplaced secret
	case map[string]any:
		return "a mapping"
	case []any:
		return "a list"
	default:
		return fmt.Sprintf("%T %v", v, v)
	}
}
