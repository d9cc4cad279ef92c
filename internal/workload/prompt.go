package workload

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"

	"github.com/llmprobe/llmprobe/internal/protocol"
)

// CharsPerToken is the synthetic generator's assumption: about four
// characters of English text per token, the usual rule of thumb for BPE
// tokenizers. Real token counts vary by tokenizer (the server's usage, when
// reported, gives the truth).
const CharsPerToken = 4

// PromptSource yields the messages of one request.
type PromptSource interface {
	// Messages returns one prompt. Sources that generate text aim at
	// inputTokens; sources that hold fixed prompts ignore it.
	Messages(r *rand.Rand, inputTokens int) []protocol.Message
	// Kind names the source ("synthetic", "file", "dataset"), never its text.
	Kind() string
	// NeedsInputLength reports whether Messages uses inputTokens.
	NeedsInputLength() bool
}

// Synthetic generates prompts of a target length from random words.
type Synthetic struct{}

// Kind implements PromptSource.
func (Synthetic) Kind() string { return "synthetic" }

// NeedsInputLength implements PromptSource.
func (Synthetic) NeedsInputLength() bool { return true }

// Messages implements PromptSource: one user message of about
// inputTokens × CharsPerToken characters (at least one word), random words
// separated by spaces, with a sentence break every few words.
func (Synthetic) Messages(r *rand.Rand, inputTokens int) []protocol.Message {
	return []protocol.Message{{Role: "user", Content: SyntheticText(r, inputTokens)}}
}

// SyntheticText returns about tokens × CharsPerToken characters of words.
func SyntheticText(r *rand.Rand, tokens int) string {
	target := max(tokens, 1) * CharsPerToken
	var b strings.Builder
	b.Grow(target + 16)
	writeWords(&b, r, target)
	return b.String()
}

// writeWords writes at least target characters of words to b (at least
// one word), a sentence break every 12 words: at most a word and a break
// (12 bytes) more than target.
func writeWords(b *strings.Builder, r *rand.Rand, target int) {
	start := b.Len()
	for n := 0; b.Len()-start < target || n == 0; n++ {
		if n > 0 {
			if n%12 == 0 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		b.WriteString(words[r.IntN(len(words))])
	}
}

// PromptFile holds prompts read from a text file.
type PromptFile struct {
	prompts []string
}

// Kind implements PromptSource.
func (*PromptFile) Kind() string { return "file" }

// NeedsInputLength implements PromptSource.
func (*PromptFile) NeedsInputLength() bool { return false }

// Len returns the number of prompts.
func (p *PromptFile) Len() int { return len(p.prompts) }

// Messages implements PromptSource: one prompt chosen uniformly, as a user
// message.
func (p *PromptFile) Messages(r *rand.Rand, _ int) []protocol.Message {
	return []protocol.Message{{Role: "user", Content: p.prompts[r.IntN(len(p.prompts))]}}
}

// LoadPromptFile reads prompts from path (see ParsePromptFile).
func LoadPromptFile(path string) (*PromptFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("prompt file: %w", err)
	}
	return ParsePromptFile(bytes.NewReader(b), path)
}

// ParsePromptFile reads prompts from r. When the text has a blank line
// between two non-blank lines, prompts are the blocks of consecutive
// non-blank lines (joined with "\n"); otherwise each non-blank line is one
// prompt. Trailing whitespace and CRLF line ends are trimmed. name is used in
// errors.
func ParsePromptFile(r io.Reader, name string) (*PromptFile, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxLine)
	var lines []string
	for sc.Scan() {
		lines = append(lines, strings.TrimRight(sc.Text(), " \t\r"))
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, len(lines)+1, scanErr(err))
	}
	paragraphs := false
	seen := false
	for i, l := range lines {
		if l != "" {
			seen = true
			continue
		}
		if seen && i+1 < len(lines) && hasContent(lines[i+1:]) {
			paragraphs = true
			break
		}
	}
	p := &PromptFile{}
	var block []string
	flush := func() {
		if len(block) > 0 {
			p.prompts = append(p.prompts, strings.Join(block, "\n"))
			block = nil
		}
	}
	for _, l := range lines {
		switch {
		case l == "":
			flush()
		case paragraphs:
			block = append(block, l)
		default:
			p.prompts = append(p.prompts, l)
		}
	}
	flush()
	if len(p.prompts) == 0 {
		return nil, fmt.Errorf("%s: no prompts (empty file)", name)
	}
	return p, nil
}

func hasContent(lines []string) bool {
	for _, l := range lines {
		if l != "" {
			return true
		}
	}
	return false
}

// Dataset holds conversations read from a JSONL file.
type Dataset struct {
	convs [][]protocol.Message
}

// Kind implements PromptSource.
func (*Dataset) Kind() string { return "dataset" }

// NeedsInputLength implements PromptSource.
func (*Dataset) NeedsInputLength() bool { return false }

// Len returns the number of conversations.
func (d *Dataset) Len() int { return len(d.convs) }

// Messages implements PromptSource: one conversation chosen uniformly (a
// copy: callers may modify it).
func (d *Dataset) Messages(r *rand.Rand, _ int) []protocol.Message {
	c := d.convs[r.IntN(len(d.convs))]
	return append([]protocol.Message(nil), c...)
}

// LoadDataset reads a JSONL dataset from path (see ParseDataset).
func LoadDataset(path string) (*Dataset, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	defer f.Close()
	return ParseDataset(f, path)
}

// ParseDataset reads one JSON object per line, each with a non-empty
// "messages" array of {"role": string, "content": string}; other fields are
// ignored and blank lines skipped. Errors name "name:line" and never quote
// the line's text.
func ParseDataset(r io.Reader, name string) (*Dataset, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	d := &Dataset{}
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		var row struct {
			Messages []struct {
				Role    *string         `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(raw, &row); err != nil {
			return nil, fmt.Errorf("%s:%d: not a JSON object with a messages array: %w", name, line, jsonErr(err))
		}
		if len(row.Messages) == 0 {
			return nil, fmt.Errorf("%s:%d: messages is missing or empty", name, line)
		}
		conv := make([]protocol.Message, 0, len(row.Messages))
		hasText := false
		for i, m := range row.Messages {
			if m.Role == nil || *m.Role == "" {
				return nil, fmt.Errorf("%s:%d: messages[%d]: role is missing", name, line, i)
			}
			var content string
			if err := json.Unmarshal(m.Content, &content); err != nil {
				return nil, fmt.Errorf("%s:%d: messages[%d]: content must be a string", name, line, i)
			}
			hasText = hasText || content != ""
			conv = append(conv, protocol.Message{Role: *m.Role, Content: content})
		}
		if !hasText {
			return nil, fmt.Errorf("%s:%d: every message's content is empty", name, line)
		}
		d.convs = append(d.convs, conv)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, scanErr(err))
	}
	if len(d.convs) == 0 {
		return nil, fmt.Errorf("%s: no conversations (empty file)", name)
	}
	return d, nil
}

// jsonErr keeps only the kind of a JSON error (syntax errors can quote input).
func jsonErr(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON at byte %d", se.Offset)
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("field %q has the wrong type", te.Field)
	}
	return errors.New("invalid JSON")
}

// PromptSpec is a prompt source as configuration describes it: the
// configuration's classes[].prompt is one (config.Class), read and checked
// by Build. Its content never reaches logs.
//
//	synthetic: no fields
//	file:      File (text, one prompt per line or blank-line-separated blocks)
//	dataset:   File (JSONL of {"messages": [...]})
type PromptSpec struct {
	Source string `koanf:"source" json:"source"`
	File   string `koanf:"file" json:"file,omitempty"`
}

// Build validates the spec and loads its file. key names the spec in
// configuration (e.g. "classes[0].prompt") and prefixes every error.
func (s PromptSpec) Build(key string) (PromptSource, error) {
	var (
		src PromptSource
		err error
	)
	switch strings.ToLower(s.Source) {
	case "", "synthetic":
		if s.File != "" {
			return nil, fmt.Errorf("%s: synthetic takes no file", key)
		}
		return Synthetic{}, nil
	case "file":
		if s.File == "" {
			return nil, fmt.Errorf("%s: source file needs file", key)
		}
		src, err = LoadPromptFile(s.File)
	case "dataset", "jsonl":
		if s.File == "" {
			return nil, fmt.Errorf("%s: source dataset needs file", key)
		}
		src, err = LoadDataset(s.File)
	default:
		return nil, fmt.Errorf("%s: unknown source %q (want synthetic, file or dataset)", key, s.Source)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	return src, nil
}
