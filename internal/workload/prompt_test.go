package workload

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSyntheticLength(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	seen := map[string]bool{}
	for _, tokens := range []int{1, 10, 100, 1000, 4000} {
		txt := SyntheticText(r, tokens)
		target := tokens * CharsPerToken
		if len(txt) < target || len(txt) > target+20 {
			t.Errorf("%d tokens: %d chars, want %d..%d", tokens, len(txt), target, target+20)
		}
		seen[txt] = true
	}
	a, b := SyntheticText(r, 200), SyntheticText(r, 200)
	if a == b {
		t.Error("two synthetic prompts are identical")
	}
	distinct := map[string]bool{}
	for _, w := range strings.Fields(SyntheticText(r, 2000)) {
		distinct[strings.TrimSuffix(w, ".")] = true
	}
	if len(distinct) < 100 {
		t.Errorf("only %d distinct words in a long prompt", len(distinct))
	}
}

func TestParsePromptFile(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
		err        string
	}{
		{"one per line", "first prompt\r\nsecond prompt  \n\nthird\n", nil, ""},
		{"lines", "a\nb\nc\n", []string{"a", "b", "c"}, ""},
		{"blocks", "line one\nline two\n\n\nnext block\n\nlast\n", []string{"line one\nline two", "next block", "last"}, ""},
		{"leading and trailing blanks", "\n\na\nb\n\n", []string{"a", "b"}, ""},
		{"crlf", "x\r\ny\r\n", []string{"x", "y"}, ""},
		{"empty", "\n \n\t\n", nil, "p.txt: no prompts (empty file)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePromptFile(strings.NewReader(tt.body), "p.txt")
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != nil && strings.Join(p.prompts, "|") != strings.Join(tt.want, "|") {
				t.Errorf("prompts %q, want %q", p.prompts, tt.want)
			}
		})
	}
}

func TestParseDataset(t *testing.T) {
	const secret = "SECRET-PROMPT-TEXT"
	tests := []struct {
		name, body, err string
		n               int
	}{
		{"valid", `{"messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"id":7}` + "\n\n" +
			`{"messages":[{"role":"user","content":"again"}]}`, "", 2},
		{"bad json", `{"messages":[{"role":"user","content":"ok"}]}` + "\n" + `{"messages": [` + secret, "d.jsonl:2: not a JSON object", 0},
		{"missing messages", `{"prompt":"` + secret + `"}`, "d.jsonl:1: messages is missing or empty", 0},
		{"missing role", `{"messages":[{"content":"` + secret + `"}]}`, "d.jsonl:1: messages[0]: role is missing", 0},
		{"content parts", `{"messages":[{"role":"user","content":[{"type":"text","text":"` + secret + `"}]}]}`, "d.jsonl:1: messages[0]: content must be a string", 0},
		{"all empty", `{"messages":[{"role":"user","content":""}]}`, "d.jsonl:1: every message's content is empty", 0},
		{"wrong type", `{"messages":"` + secret + `"}`, "d.jsonl:1: not a JSON object", 0},
		{"empty file", "\n\n", "d.jsonl: no conversations (empty file)", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, err := ParseDataset(strings.NewReader(tt.body), "d.jsonl")
			if tt.err != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
					t.Fatalf("error %v, want prefix %q", err, tt.err)
				}
				if strings.Contains(err.Error(), secret) {
					t.Fatalf("error leaks prompt text: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Len() != tt.n {
				t.Fatalf("len %d want %d", d.Len(), tt.n)
			}
			r := rand.New(rand.NewPCG(1, 2))
			m := d.Messages(r, 0)
			m[0].Content = "mutated"
			for range 20 {
				for _, msg := range d.Messages(r, 0) {
					if msg.Content == "mutated" {
						t.Fatal("Messages must return a copy")
					}
				}
			}
		})
	}
}

func TestPromptSpecBuild(t *testing.T) {
	dir := t.TempDir()
	txt := filepath.Join(dir, "prompts.txt")
	jsonl := filepath.Join(dir, "chat.jsonl")
	badJSONL := filepath.Join(dir, "bad.jsonl")
	for p, body := range map[string]string{txt: "hello\nworld\n", jsonl: `{"messages":[{"role":"user","content":"hi"}]}` + "\n",
		badJSONL: "{}\n"} {
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		spec PromptSpec
		kind string
		err  string
	}{
		{PromptSpec{}, "synthetic", ""},
		{PromptSpec{Source: "synthetic", File: txt}, "", "classes[0].prompt: synthetic takes no file"},
		{PromptSpec{Source: "file", File: txt}, "file", ""},
		{PromptSpec{Source: "file"}, "", "classes[0].prompt: source file needs file"},
		{PromptSpec{Source: "file", File: filepath.Join(dir, "nope.txt")}, "", "nope.txt"},
		{PromptSpec{Source: "dataset", File: jsonl}, "dataset", ""},
		{PromptSpec{Source: "dataset", File: badJSONL}, "", "classes[0].prompt: " + badJSONL + ":1: messages is missing"},
		{PromptSpec{Source: "web"}, "", `unknown source "web"`},
	}
	for _, tt := range tests {
		src, err := tt.spec.Build("classes[0].prompt")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%+v: error %v, want %q", tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil || src.Kind() != tt.kind {
			t.Errorf("%+v: got %v, %v; want kind %s", tt.spec, src, err, tt.kind)
		}
	}
}
