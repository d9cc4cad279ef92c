// Command dashgen writes llmprobe's generated dashboards and rule files under
// a repository root (see package dashgen).
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/llmprobe/llmprobe/internal/dashgen"
)

func main() {
	root := flag.String("root", ".", "repository root to write the generated files under")
	flag.Parse()
	if err := write(*root); err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
}

func write(root string) error {
	files, err := dashgen.Files()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := filepath.Join(root, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("creating directory for %s: %w", p, err)
		}
		if err := os.WriteFile(p, files[n], 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", p, err)
		}
	}
	return nil
}
