package answercheck

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// MaxMaxTokens bounds a check's max_tokens: a canary's answer is short.
const MaxMaxTokens = 4096

// Bounds on what a check may configure.
const (
	maxSchemaBytes = 64 << 10 // a JSON Schema, as JSON
	maxStopSeqs    = 4        // OpenAI takes at most 4 stop sequences
	maxTools       = 16
)

// compiled is what Validate prepares for Judge and for the request.
type compiled struct {
	regex      *regexp.Regexp     // expect.regex, or round_trip.expect.regex
	schema     *jsonschema.Schema // json.schema or json.schema_file
	schemaJSON json.RawMessage    // the same schema, as sent
	tools      []compiledTool     // tool_call.tools, in order
}

type compiledTool struct {
	schema     *jsonschema.Schema
	schemaJSON json.RawMessage
}

// Validate checks the check as configured, with a schema_file read as
// given (relative to the working directory): see ValidateIn.
func (c *Check) Validate() error { return c.ValidateIn("") }

// ValidateIn checks the check as configured and compiles its regular
// expressions and JSON Schemas once, for Judge and for the request. A
// relative json.schema_file is read relative to dir (the configuration
// file's directory; "" is the working directory). Errors name the key that
// is wrong, relative to the check (e.g. `expect.regex: ...`,
// `json.schema: ...`); the caller prefixes the check's place in its file.
func (c *Check) ValidateIn(dir string) error {
	if c.Name == "" {
		return errors.New("name: required")
	}
	if err := c.validateRequest(); err != nil {
		return err
	}
	n := 0
	for _, set := range []bool{c.Expect != nil, c.JSON != nil, c.Tool != nil, c.Stop != nil, c.Length != nil, c.Model != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("a check has exactly one of expect, json, tool_call, stop, length, model (it has %d)", n)
	}
	cc := &compiled{}
	var err error
	switch c.Kind() {
	case KindExpect:
		cc.regex, err = c.Expect.compile("expect")
	case KindJSON:
		err = c.JSON.compile(dir, cc)
	case KindToolCall:
		err = c.Tool.compile(cc)
	case KindStop:
		err = c.Stop.validate()
	case KindModel:
		if c.Model.Name == "" && c.Model.SystemFingerprint == "" {
			err = errors.New("model: name or system_fingerprint required")
		}
	}
	if err != nil {
		return err
	}
	c.compiled = cc
	return nil
}

func (c *Check) validateRequest() error {
	switch {
	case c.Prompt != "" && len(c.Messages) > 0:
		return errors.New("prompt and messages: set one, not both")
	case c.Prompt == "" && len(c.Messages) == 0:
		return errors.New("prompt: required (or messages)")
	case c.MaxTokens < 0 || c.MaxTokens > MaxMaxTokens:
		return fmt.Errorf("max_tokens: %d is out of range [1, %d] (0 is %d)", c.MaxTokens, MaxMaxTokens, DefaultMaxTokens)
	}
	for i, m := range c.Messages {
		switch m.Role {
		case "system", "user", "assistant":
		default:
			return fmt.Errorf("messages[%d].role: %q is not one of system, user, assistant", i, m.Role)
		}
		if m.Content == "" {
			return fmt.Errorf("messages[%d].content: required", i)
		}
	}
	if n := len(c.Messages); n > 0 && c.Messages[n-1].Role != "user" {
		return fmt.Errorf("messages[%d].role: the last message is the user's", n-1)
	}
	return nil
}

// compile checks an expect and compiles its regular expression; key is its
// place in the check (expect, tool_call.round_trip.expect).
func (e *Expect) compile(key string) (*regexp.Regexp, error) {
	n := 0
	if e.Text != "" {
		n++
	}
	if e.Regex != "" {
		n++
	}
	if e.Number != nil {
		n++
	}
	if len(e.OneOf) > 0 {
		n++
	}
	if n != 1 {
		return nil, fmt.Errorf("%s: exactly one of text, regex, number, one_of (it has %d)", key, n)
	}
	switch e.Case {
	case "", "sensitive", "insensitive":
	default:
		return nil, fmt.Errorf("%s.case: %q is not sensitive or insensitive", key, e.Case)
	}
	switch e.Whitespace {
	case "", "trim", "collapse", "exact":
	default:
		return nil, fmt.Errorf("%s.whitespace: %q is not trim, collapse or exact", key, e.Whitespace)
	}
	if e.Tolerance != 0 && e.Number == nil {
		return nil, fmt.Errorf("%s.tolerance: only with number", key)
	}
	if e.Tolerance < 0 || math.IsNaN(e.Tolerance) || math.IsInf(e.Tolerance, 0) {
		return nil, fmt.Errorf("%s.tolerance: must be a finite number ≥ 0", key)
	}
	if e.Number != nil && (math.IsNaN(*e.Number) || math.IsInf(*e.Number, 0)) {
		return nil, fmt.Errorf("%s.number: must be finite", key)
	}
	for i, s := range e.OneOf {
		if s == "" {
			return nil, fmt.Errorf("%s.one_of[%d]: empty", key, i)
		}
	}
	if e.Regex == "" {
		return nil, nil
	}
	src := e.Regex
	if e.Case == "insensitive" {
		src = "(?i)" + src
	}
	re, err := regexp.Compile(src)
	if err != nil {
		return nil, fmt.Errorf("%s.regex: %w", key, err)
	}
	return re, nil
}

func (j *JSONCheck) compile(dir string, cc *compiled) error {
	switch j.Send {
	case "", "response_format", "json_object", "native", "prompt":
	default:
		return fmt.Errorf("json.send: %q is not response_format, json_object, native or prompt", j.Send)
	}
	switch {
	case j.Schema != nil && j.SchemaFile != "":
		return errors.New("json: schema and schema_file: set one, not both")
	case j.Schema == nil && j.SchemaFile == "":
		return errors.New("json.schema: required (or schema_file)")
	}
	var raw []byte
	key := "json.schema"
	if j.SchemaFile != "" {
		key = "json.schema_file"
		p := j.SchemaFile
		if !filepath.IsAbs(p) && dir != "" {
			p = filepath.Join(dir, p)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		if len(b) > maxSchemaBytes {
			return fmt.Errorf("%s: larger than %d bytes", key, maxSchemaBytes)
		}
		raw = b
	} else {
		b, err := json.Marshal(j.Schema)
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		raw = b
	}
	sch, canon, err := compileSchema(raw)
	if err != nil {
		return fmt.Errorf("%s: %w", key, err)
	}
	cc.schema, cc.schemaJSON = sch, canon
	return nil
}

// toolName is the name rule the tool APIs share (OpenAI's, the strictest).
var toolName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

func (t *ToolCheck) compile(cc *compiled) error {
	if len(t.Tools) == 0 {
		return errors.New("tool_call.tools: at least one tool")
	}
	if len(t.Tools) > maxTools {
		return fmt.Errorf("tool_call.tools: at most %d tools", maxTools)
	}
	switch t.Choice {
	case "", "required", "auto", "named":
	default:
		return fmt.Errorf("tool_call.choice: %q is not required, auto or named", t.Choice)
	}
	found := false
	for i, tl := range t.Tools {
		key := fmt.Sprintf("tool_call.tools[%d]", i)
		if !toolName.MatchString(tl.Name) {
			return fmt.Errorf("%s.name: %q is not 1-64 letters, digits, _ or -", key, tl.Name)
		}
		for _, o := range t.Tools[:i] {
			if o.Name == tl.Name {
				return fmt.Errorf("%s.name: %q offered twice", key, tl.Name)
			}
		}
		found = found || tl.Name == t.Expect
		params := tl.Parameters
		if params == nil {
			return fmt.Errorf("%s.parameters: required (a JSON Schema; {type: object} for none)", key)
		}
		b, err := json.Marshal(params)
		if err != nil {
			return fmt.Errorf("%s.parameters: %w", key, err)
		}
		sch, canon, err := compileSchema(b)
		if err != nil {
			return fmt.Errorf("%s.parameters: %w", key, err)
		}
		cc.tools = append(cc.tools, compiledTool{schema: sch, schemaJSON: canon})
	}
	if t.Expect == "" {
		return errors.New("tool_call.expect: required (the tool that must be called)")
	}
	if !found {
		return fmt.Errorf("tool_call.expect: %q is not among the tools", t.Expect)
	}
	if rt := t.RoundTrip; rt != nil {
		if rt.Result == "" {
			return errors.New("tool_call.round_trip.result: required")
		}
		if _, err := json.Marshal(rt.Arguments); err != nil {
			return fmt.Errorf("tool_call.round_trip.arguments: %w", err)
		}
		re, err := rt.Expect.compile("tool_call.round_trip.expect")
		if err != nil {
			return err
		}
		cc.regex = re
	}
	return nil
}

func (s *StopCheck) validate() error {
	if len(s.Sequences) == 0 {
		return errors.New("stop.sequences: at least one")
	}
	if len(s.Sequences) > maxStopSeqs {
		return fmt.Errorf("stop.sequences: at most %d (the OpenAI limit)", maxStopSeqs)
	}
	for i, q := range s.Sequences {
		if q == "" {
			return fmt.Errorf("stop.sequences[%d]: empty", i)
		}
	}
	return nil
}

// compileSchema compiles a JSON Schema (draft 2020-12 unless it says
// otherwise) with no loader: a $ref may point inside the schema only, never
// to a file or the network. It returns the schema as compact JSON, as sent
// in requests.
func compileSchema(raw []byte) (*jsonschema.Schema, json.RawMessage, error) {
	if len(raw) > maxSchemaBytes {
		return nil, nil, fmt.Errorf("larger than %d bytes", maxSchemaBytes)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, nil, fmt.Errorf("not JSON: %w", err)
	}
	if _, ok := doc.(map[string]any); !ok {
		if _, ok := doc.(bool); !ok {
			return nil, nil, errors.New("a JSON Schema is an object (or a boolean)")
		}
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(jsonschema.SchemeURLLoader{})
	const loc = "check.json"
	if err := comp.AddResource(loc, doc); err != nil {
		return nil, nil, oneLine(err)
	}
	sch, err := comp.Compile(loc)
	if err != nil {
		return nil, nil, oneLine(err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, nil, err
	}
	return sch, buf.Bytes(), nil
}

// oneLine keeps an error to its first line (the library's errors can list
// a tree).
func oneLine(err error) error {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return errors.New(strings.TrimSpace(s))
}

// ready returns the compiled forms: Validate's, or, for a check that was
// not validated (a programming error, or a copy made before), compiled now
// without keeping them (Judge stays safe for concurrent use).
func (c *Check) ready() (*compiled, error) {
	if c.compiled != nil {
		return c.compiled, nil
	}
	cp := *c
	if err := cp.Validate(); err != nil {
		return nil, err
	}
	return cp.compiled, nil
}

// SchemaJSON returns a json check's schema as compact JSON (what a request
// sends), or nil.
func (c *Check) SchemaJSON() json.RawMessage {
	cc, err := c.ready()
	if err != nil || cc.schemaJSON == nil {
		return nil
	}
	return cc.schemaJSON
}

// ToolParameters returns the JSON Schema of tool i's parameters as compact
// JSON (what a request sends), or nil.
func (c *Check) ToolParameters(i int) json.RawMessage {
	cc, err := c.ready()
	if err != nil || i < 0 || i >= len(cc.tools) {
		return nil
	}
	return cc.tools[i].schemaJSON
}

// EffectiveMaxTokens is the max_tokens a check sends.
func (c *Check) EffectiveMaxTokens() int {
	if c.MaxTokens > 0 {
		return c.MaxTokens
	}
	return DefaultMaxTokens
}
