package main

import (
	"context"
	"fmt"

	"github.com/llmprobe/llmprobe/internal/admin"
	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/wiring"
)

// runValidate checks each configuration file given, as arguments (as
// `promtool check config FILE…`) or with --config.file, by the rules of
// run: every problem of a file in one pass, each with file:line:column
// where the file has the key. It exits 1 when any file is not valid.
func runValidate(_ context.Context, e env, args []string) error {
	fs := newFlagSet("validate", e)
	path := configFileFlags(fs, "YAML config file to check (or give the files as arguments)")
	if err := parseOnly(fs, args); err != nil {
		return err
	}
	deprecated, err := deprecatedFlags(fs)
	if err != nil {
		return err
	}
	for _, d := range deprecated {
		fmt.Fprintf(e.stderr, "llmprobe validate: --%s is deprecated; use --%s\n", d[0], d[1])
	}
	files := fs.Args()
	if *path != "" {
		files = append([]string{*path}, files...)
	}
	if len(files) == 0 {
		return badFlag("a config file is required: llmprobe validate FILE… (or --config.file FILE)")
	}
	bad := 0
	for _, f := range files {
		cfg, err := wiring.Load(config.Options{Path: f, Checks: []config.Check{checkWebConfig}})
		if err != nil {
			bad++
			fmt.Fprintln(e.stderr, err)
			continue
		}
		fmt.Fprintf(e.stdout, "%s: valid (%d targets)\n", f, len(cfg.Targets))
	}
	if bad > 0 {
		return fmt.Errorf("%d of %d files not valid", bad, len(files))
	}
	return nil
}

// checkWebConfig checks admin.web_config_file (exporter-toolkit's own
// check, with its certificate and key files), which the daemon reads only
// when its admin server starts, as one more problem of the same pass.
func checkWebConfig(c *config.Config, add func(key, format string, args ...any)) {
	if err := admin.ValidateWebConfig(c.Admin.WebConfigFile); err != nil {
		add("admin.web_config_file", "%v", err)
	}
}
