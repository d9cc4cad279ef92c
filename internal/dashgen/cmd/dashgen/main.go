// Command dashgen writes llmprobe's generated dashboards and rule files under
// a directory (see package dashgen): the shipped files, or those of a
// deployment's mixin configuration.
//
//	dashgen -root .                        # the shipped files (go generate)
//	dashgen -config mixin.yaml -out DIR    # a team's own rules and dashboards
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
	root := flag.String("root", ".", "directory to write the generated files under (the repository root for the shipped files)")
	flag.StringVar(root, "out", ".", "same as -root")
	config := flag.String("config", "", "mixin configuration file (YAML or JSON: runbook_url_pattern, selector, severity, extra_labels; see alerts/README.md); empty: the shipped defaults")
	flag.Parse()
	if err := run(*config, *root); err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
}

func run(config, root string) error {
	o := dashgen.DefaultRuleOptions()
	if config != "" {
		m, err := dashgen.LoadMixin(config)
		if err != nil {
			return err
		}
		o.Mixin = m
	}
	files, err := dashgen.FilesFor(o)
	if err != nil {
		return err
	}
	return write(files, root)
}

func write(files map[string][]byte, root string) error {
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
