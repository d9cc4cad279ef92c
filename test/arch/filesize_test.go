package arch

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxFileLines is the most lines a non-test Go file may have: a file holds
// one job, and past this size it usually holds several.
const maxFileLines = 450

// largeFiles may exceed maxFileLines, each with the reason it is one
// cohesive thing (paths from the repository root, slash-separated). An
// entry whose file is back under the limit fails the test, so the list
// cannot rot.
var largeFiles = map[string]string{}

// repoRoot is the repository root relative to this package's directory.
const repoRoot = "../.."

func TestNoLargeFiles(t *testing.T) {
	seen := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != repoRoot && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(repoRoot, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		n := bytes.Count(b, []byte("\n"))
		if _, ok := largeFiles[rel]; ok {
			seen[rel] = true
			if n <= maxFileLines {
				t.Errorf("%s has %d lines, within the limit of %d: delete its largeFiles entry", rel, n, maxFileLines)
			}
			return nil
		}
		if n > maxFileLines {
			t.Errorf("%s has %d lines, over the limit of %d: split it by job, or add it to largeFiles with the reason it is one cohesive thing", rel, n, maxFileLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rel := range largeFiles {
		if !seen[rel] {
			t.Errorf("largeFiles lists %s, which does not exist: delete the entry", rel)
		}
	}
}
