package wiring

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmprobe/llmprobe/internal/config"
)

// A dataset that is missing or malformed is refused at load time, before
// any traffic, with the key, the file and the line.
func TestPromptFilesCheckedAtLoad(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.jsonl")
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(good, []byte(`{"messages":[{"role":"user","content":"hi"}]}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(`{"messages":[{"role":"user","content":"hi"}]}`+"\n{not json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := func(source, file string) []byte {
		return []byte("targets:\n  - name: t\n    url: http://127.0.0.1:1/v1\n    model: m\n    classes:\n      - name: c\n        prompt: {source: " +
			source + ", file: " + file + "}\n")
	}
	for _, tc := range []struct {
		name, source, file string
		want               []string // substrings of the error; none = valid
	}{
		{"dataset ok", "dataset", good, nil},
		{"dataset malformed", "dataset", bad, []string{"targets[0].classes[0].prompt.file", "bad.jsonl", ":2"}},
		{"dataset missing", "dataset", filepath.Join(dir, "nope.jsonl"), []string{"targets[0].classes[0].prompt.file", "nope.jsonl"}},
		{"file missing", "file", filepath.Join(dir, "nope.txt"), []string{"targets[0].classes[0].prompt.file", "nope.txt"}},
		{"unknown source", "web", good, []string{"targets[0].classes[0].prompt.source"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(config.Options{BuiltIn: cfg(tc.source, tc.file), Environ: noEnv})
			if tc.want == nil {
				if err != nil {
					t.Fatalf("valid config refused: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("bad prompt source accepted")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not name %q", err, w)
				}
			}
		})
	}
}
