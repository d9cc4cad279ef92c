package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/pflag"
)

// helpGroup is one titled group of a command's flags in its --help.
type helpGroup struct {
	title string
	flags []string // names without "--", in the order shown
}

// helpPage is what `llmprobe <command> --help` prints around the flags:
// a synopsis, the groups, and examples (a comment line, then the command).
type helpPage struct {
	usage    string // after "usage: llmprobe "
	groups   []helpGroup
	examples [][2]string // {what it does, command line}
}

// targetGroups are the flag groups `probe` and `ladder` share.
var targetGroups = []helpGroup{
	{"Target", []string{"url", "model", "api", "api-key-env", "api-key-file", "header", "header-env",
		"tls-ca-file", "tls-cert-file", "tls-key-file", "tls-insecure-skip-verify", "http1", "idle-conn-timeout", "usage-deltas", "ttft-boundary", "server-metrics",
		"server-metrics-flavour", "server-metric"}},
	{"Timeouts and limits", []string{"timeout-connect", "timeout-headers", "timeout-first-content", "timeout-idle", "timeout-total",
		"max-in-flight", "max-event-bytes", "max-buffered-bytes"}},
}

// simGroup is the built-in simulator's group of `probe` and `ladder`.
var simGroup = helpGroup{"Built-in simulator (without --url)", []string{"sim-slots", "sim-admission", "sim-stall", "sim-slowdown"}}

// helpPages are the --help pages of the commands, by name.
var helpPages = map[string]helpPage{
	"probe": {
		usage: "probe [flags]",
		groups: append(append([]helpGroup{}, targetGroups...),
			helpGroup{"Load (open loop unless --closed-loop-users)", []string{"rate", "max-rate", "duration", "arrival", "burstiness", "seed", "drain",
				"max-tokens", "prompt-tokens", "spin", "closed-loop-users", "think-time", "session-turns", "session-think"}},
			helpGroup{"Prefix cache (a shared-prefix class and its cold twin)", []string{"prefix-tokens", "prefix-groups", "prefix-choice", "cold-twin-weight"}},
			helpGroup{"Gates and verdict", []string{"slo-ttft", "slo-tpot", "slo-e2e", "good-fraction", "max-lag-p99", "rate-tolerance"}},
			helpGroup{"Retries and cancellation injection", []string{"retries", "backoff", "max-backoff", "backoff-jitter", "cancel-fraction", "cancel-after"}},
			helpGroup{"Answer checks (the probe's requests are the checks, in rotation)", []string{"checks", "record-answers"}},
			helpGroup{"Output", []string{"json", "html", "ledger"}},
			simGroup),
		examples: [][2]string{
			{"5 req/s for 10 s against the built-in simulator", "llmprobe probe"},
			{"the prefix-cache speedup of a shared 1,000-token system prompt", "llmprobe probe --url http://127.0.0.1:8000/v1 --model my-model --prefix-tokens 1000 --prompt-tokens 64"},
			{"a vLLM server, 2 req/s for a minute, with a TTFT gate and a ledger", "llmprobe probe --url http://127.0.0.1:8000/v1 --model my-model --rate 2 --duration 1m --slo-ttft 500ms --ledger run.jsonl"},
			{"a hosted API whose key is in $OPENAI_API_KEY, JSON report", "llmprobe probe --url https://api.openai.com/v1 --model gpt-4o-mini --api-key-env OPENAI_API_KEY --json"},
			{"the shipped answer checks against the built-in simulator (exit 8 when an answer is wrong)", "llmprobe probe --checks config/checks.yaml --rate 2 --duration 10s"},
		},
	},
	"ladder": {
		usage: "ladder [flags]",
		groups: append(append([]helpGroup{}, targetGroups...),
			helpGroup{"Steps", []string{"steps", "step-duration", "gap", "max-rate", "arrival", "burstiness", "seed", "max-tokens", "prompt-tokens", "spin"}},
			helpGroup{"Gates and verdict", []string{"slo-ttft", "slo-e2e", "good-fraction", "knee-factor", "max-lag-p99", "rate-tolerance"}},
			helpGroup{"Abort and stop", []string{"abort-error-fraction", "abort-rejection-fraction", "abort-ttft-gate-multiple", "stop-at", "on-invalid"}},
			helpGroup{"Output", []string{"name", "json", "history", "svg", "html"}},
			simGroup),
		examples: [][2]string{
			{"the default ladder (1, 2, 4 … 32 req/s) against the built-in simulator", "llmprobe ladder"},
			{"a vLLM server, stop at the knee, keep an HTML report", "llmprobe ladder --url http://127.0.0.1:8000/v1 --model my-model --steps 1,2,4,8,16 --stop-at knee --html ladder.html"},
		},
	},
	"run": {
		usage: "run [flags]",
		groups: []helpGroup{
			{"Configuration", []string{"config.file"}},
			{"Admin HTTP server", []string{"web.listen-address", "web.config.file", "web.enable-lifecycle"}},
			{"Logging", []string{"log.level", "log.format"}},
			{"Daemon", []string{"ledger-dir", "otel", "drain-timeout", "max-buffered-bytes"}},
			{"Fleet", []string{"shard"}},
			{"Deprecated aliases (still accepted; each logs a warning once)", []string{"config", "listen", "web-config-file", "log-level", "log-format"}},
		},
		examples: [][2]string{
			{"probe the built-in simulator; status page on http://127.0.0.1:9464", "llmprobe run"},
			{"a configuration file, logfmt logs, POST /-/reload enabled", "llmprobe run --config.file config.yaml --log.format logfmt --web.enable-lifecycle"},
			{"reload the configuration (or send SIGHUP)", "curl -X POST http://127.0.0.1:9464/-/reload"},
			{"shard 2 of a fleet of 3 (peers in the file's fleet.peers)", "llmprobe run --config.file fleet.yaml --shard 2/3"},
		},
	},
	"sim": {
		usage: "sim [flags]",
		groups: []helpGroup{
			{"Server", []string{"listen", "model", "api-key-env", "deploy-version", "seed"}},
			{"Capacity and admission", []string{"slots", "admission", "reject-status", "retry-after", "error-fraction"}},
			{"Timing", []string{"ttft", "token-time", "output-tokens", "reasoning-tokens", "tokens-per-chunk"}},
			{"Prefix cache", []string{"prefill-per-token", "prefix-cache", "prefix-cache-blocks", "prefix-cache-block-tokens"}},
			{"Faults", []string{"stall", "slowdown", "wrong-answers"}},
		},
		examples: [][2]string{
			{"the simulator on 127.0.0.1:8000", "llmprobe sim"},
			{"4 slots, a 10 s stall after 30 s", "llmprobe sim --slots 4 --stall 30s+10s"},
			{"turn the prefix cache off live (a deploy that lost it)", "curl -X POST http://127.0.0.1:8000/admin/state -d '{\"prefix_cache\":false}'"},
		},
	},
	"validate": {
		usage: "validate FILE… | validate --config.file FILE",
		groups: []helpGroup{
			{"Configuration", []string{"config.file", "fleet.shards"}},
			{"Deprecated aliases (still accepted, with a warning)", []string{"config"}},
		},
		examples: [][2]string{
			{"check daemon configurations (every problem, with file:line:column)", "llmprobe validate config/vllm.yaml config/simulator.yaml"},
			{"the same with the flag of run", "llmprobe validate --config.file config/vllm.yaml"},
			{"a fleet's file as each of its 3 shards reads it (LLMPROBE_FLEET__SHARDS=3 in the pods)", "llmprobe validate --fleet.shards 3 deploy/kubernetes/fleet/config.yaml"},
		},
	},
	"version": {
		usage:    "version",
		examples: [][2]string{{"version, revision, branch, Go version and build date", "llmprobe version"}},
	},
}

// ungrouped is the title of the flags no group of a page names (a test
// keeps it empty).
const ungrouped = "Other flags"

// writeHelp prints a command's --help: synopsis, summary, its flags in
// their groups, and examples.
func writeHelp(w io.Writer, name string, fs *pflag.FlagSet) {
	page := helpPages[name]
	fmt.Fprintf(w, "usage: llmprobe %s\n\n", page.usage)
	for _, c := range commands() {
		if c.name == name {
			fmt.Fprintf(w, "%s%s.\n", strings.ToUpper(c.summary[:1]), c.summary[1:])
		}
	}
	for _, g := range flagGroups(page, fs) {
		set := pflag.NewFlagSet(name, pflag.ContinueOnError)
		set.SortFlags = false
		for _, f := range g.flags {
			set.AddFlag(fs.Lookup(f))
		}
		fmt.Fprintf(w, "\n%s:\n%s", g.title, set.FlagUsagesWrapped(0))
	}
	if len(page.examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, x := range page.examples {
			fmt.Fprintf(w, "  # %s\n  %s\n", x[0], x[1])
		}
	}
	fmt.Fprintln(w, "\n'llmprobe --help' lists the commands and the exit codes; --version prints the build.")
}

// flagGroups returns the page's groups that have flags defined on fs, and
// last, under ungrouped, every flag of fs no group names.
func flagGroups(page helpPage, fs *pflag.FlagSet) []helpGroup {
	var out []helpGroup
	named := map[string]bool{}
	for _, g := range page.groups {
		var have []string
		for _, f := range g.flags {
			if fs.Lookup(f) != nil && !named[f] {
				have = append(have, f)
				named[f] = true
			}
		}
		if len(have) > 0 {
			out = append(out, helpGroup{g.title, have})
		}
	}
	var rest []string
	fs.VisitAll(func(f *pflag.Flag) {
		if !named[f.Name] && !f.Hidden {
			rest = append(rest, f.Name)
		}
	})
	if len(rest) > 0 {
		out = append(out, helpGroup{ungrouped, rest})
	}
	return out
}

// usage is `llmprobe --help`: the commands, examples and the exit codes.
func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: llmprobe <command> [flags]\n       llmprobe --version\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-9s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'llmprobe <command> --help' (or 'llmprobe help <command>') for a command's flags.\n\nexit codes:")
	for _, c := range exitCodes {
		fmt.Fprintf(w, "  %d  %s\n", c.code, c.meaning)
	}
	fmt.Fprintln(w, "\nExamples:")
	for _, x := range [][2]string{
		{"a one-shot probe of the built-in simulator", "llmprobe probe"},
		{"a rate ladder: capacity and knee", "llmprobe ladder --url http://127.0.0.1:8000/v1 --model my-model"},
		{"the daemon with a configuration file", "llmprobe run --config.file config.yaml"},
	} {
		fmt.Fprintf(w, "  # %s\n  %s\n", x[0], x[1])
	}
}
