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
// where the file has the key. It exits 1 when any file is not valid; a
// valid file's warnings (config.Warnings) are printed, and do not fail it.
// It also refuses what run starts but that cannot work through a day
// (wiring.Lints: a target that sends nothing, a budget spent before the day
// ends), which run only logs.
// --fleet.shards checks a fleet's file as each of its shards sees it.
func runValidate(_ context.Context, e env, args []string) error {
	fs := newFlagSet("validate", e)
	path := configFileFlags(fs, "YAML config file to check (or give the files as arguments)")
	shards := fs.Int("fleet.shards", 0, "check as one shard of a fleet of N (fleet.shards, as LLMPROBE_FLEET__SHARDS sets it in each pod): rates, ladder steps and budgets are split N ways, and the limits are per shard (0: as the file and the environment say)")
	if err := parseOnly(fs, args); err != nil {
		return err
	}
	var overrides map[string]any
	if *shards != 0 {
		if *shards < 1 || *shards > config.MaxShards {
			return badFlag("--fleet.shards %d: want 1 to %d", *shards, config.MaxShards)
		}
		overrides = map[string]any{"fleet.shards": *shards}
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
		// run's rules, and the lints: what would start but cannot work
		// through a day (run only warns of them).
		cfg, err := wiring.Load(config.Options{Path: f, Checks: append([]config.Check{checkWebConfig}, wiring.Lints()...),
			Overrides: overrides, OverridesFrom: "flag --fleet.shards"})
		if err != nil {
			bad++
			fmt.Fprintln(e.stderr, err)
			continue
		}
		for _, w := range cfg.Warnings() {
			fmt.Fprintf(e.stderr, "warning: %v\n", w)
		}
		fleet := ""
		if n := cfg.Fleet.Shards; n > 1 {
			fleet = fmt.Sprintf(", each of %d shards", n)
		}
		fmt.Fprintf(e.stdout, "%s: valid (%d targets%s)\n", f, len(cfg.Targets), fleet)
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
