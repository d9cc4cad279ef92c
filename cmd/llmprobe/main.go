// Command llmprobe probes LLM inference endpoints open-loop and reports the
// truth about their latency and capacity.
//
//	llmprobe probe      one-shot probe, human or JSON report (default target: the built-in simulator)
//	llmprobe run        the daemon: continuous probing, ladders, Prometheus and OTLP telemetry
//	llmprobe ladder     one-shot rate ladder: step table, knee and capacity
//	llmprobe sim        the built-in OpenAI/Anthropic-compatible streaming simulator
//	llmprobe validate   check a daemon config file and exit
//	llmprobe version    print the version (also llmprobe --version)
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"
)

// env is what a subcommand may touch: no globals.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
	// hard is cancelled by a second interrupt: drains stop waiting.
	hard context.Context
	// hup delivers SIGHUP to `run`, which reloads its configuration on it;
	// nil: never (tests, and every other command, for which SIGHUP is an
	// interrupt).
	hup <-chan os.Signal
	// std is the standard library's log output (net/http's own messages),
	// cleaned by the one rule: commands register the secrets it redacts.
	// nil: not installed (tests).
	std *stdLog
}

type command struct {
	name, summary string
	run           func(ctx context.Context, e env, args []string) error
}

func commands() []command {
	return []command{
		{"probe", "one-shot open-loop (or closed-loop) probe with a report", runProbe},
		{"run", "the daemon: baseline probing, scheduled ladders, /metrics and OTLP", runDaemon},
		{"ladder", "one-shot rate ladder: step table, knee and capacity", runLadder},
		{"sim", "serve the built-in streaming LLM simulator", runSim},
		{"validate", "validate a daemon config file", runValidate},
		{"version", "print the version, revision, branch, Go version and build date", runVersion},
	}
}

func main() {
	// The first SIGINT/SIGTERM ends the run gracefully (arrivals stop, in-flight
	// requests drain up to their deadline); a second one cancels the drain
	// (what is still in flight is recorded cancelled/interrupted). SIGHUP
	// reloads `run`'s configuration and is an interrupt like SIGINT for every
	// other command: a closed terminal never loses what was measured. Both
	// are caught from the first instruction, so none of them kills the
	// process half way.
	soft, stopSoft := context.WithCancel(context.Background())
	hard, stopHard := context.WithCancel(context.Background())
	interrupts, reloads := signalsFor(os.Args[1:])
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, interrupts...)
	var hup chan os.Signal
	if reloads {
		hup = make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
	}
	go func() {
		<-sigs
		stopSoft()
		<-sigs
		stopHard()
	}()
	// The standard library logs some server text itself (net/http quotes
	// bytes a target sent on an idle connection): never unsanitised.
	std := &stdLog{w: os.Stderr}
	log.SetOutput(std)
	e := env{stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, hard: hard, hup: hup, std: std}
	code := run(soft, e, os.Args[1:])
	stopSoft()
	stopHard()
	os.Exit(code)
}

// signalsFor returns the signals that interrupt the command args name and
// whether SIGHUP reloads it instead (`run`).
func signalsFor(args []string) (interrupts []os.Signal, reloads bool) {
	if len(args) > 0 && args[0] == "run" {
		return []os.Signal{os.Interrupt, syscall.SIGTERM}, true
	}
	return []os.Signal{os.Interrupt, syscall.SIGTERM, syscall.SIGHUP}, false
}

// run executes one subcommand and returns the process exit code.
func run(ctx context.Context, e env, args []string) int {
	if e.hard == nil {
		e.hard = context.Background()
	}
	if e.getenv == nil {
		e.getenv = os.Getenv
	}
	switch {
	case len(args) == 0:
		usage(e.stderr) // a usage error: nothing was asked
		return exitUsage
	case len(args) == 2 && args[0] == "help":
		return run(ctx, e, []string{args[1], "--help"})
	case args[0] == "-h" || args[0] == "--help" || args[0] == "help":
		usage(e.stdout)
		return exitOK
	case args[0] == "--version":
		args = append([]string{"version"}, args[1:]...)
	}
	for _, c := range commands() {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, e, args[1:])
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, pflag.ErrHelp):
			return exitOK
		case errors.Is(err, errVersion):
			currentBuild().print(e.stdout, "llmprobe")
			return exitOK
		case errors.As(err, new(usageError)):
			fmt.Fprintf(e.stderr, "llmprobe %s: %v\n", c.name, err)
			return exitUsage
		default:
			fmt.Fprintf(e.stderr, "llmprobe %s: %v\n", c.name, err)
			return exitCodeOf(err)
		}
	}
	fmt.Fprintf(e.stderr, "llmprobe: unknown command %q\n\n", args[0])
	usage(e.stderr)
	return exitUsage
}

// usageError is a bad flag or argument: exit code 2, message names the flag.
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func badFlag(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// parseFlags parses args into fs, turning pflag's errors into usage errors.
func parseFlags(fs *pflag.FlagSet, args []string) error {
	if err := parseOnly(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badFlag("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// parseOnly parses args into fs, arguments allowed: pflag's errors become
// usage errors, and --version asks for the build (errVersion).
func parseOnly(fs *pflag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		if err.Error() == "unknown flag: --api-key" && fs.Lookup("api-key-env") != nil {
			// pflag names the flag only, never a value given with it.
			file := ""
			if fs.Lookup("api-key-file") != nil {
				file = ", or in a file named with --api-key-file"
			}
			return badFlag("%v: the API key is never a flag value (it would sit in the shell history and the process list); put it in an environment variable and name it with --api-key-env VAR%s", err, file)
		}
		return usageError{err}
	}
	if f := fs.Lookup(versionFlag); f != nil && f.Changed {
		return errVersion
	}
	return nil
}

// versionFlag is on every command and means one thing: print the build
// (as `llmprobe version`) and exit 0.
const versionFlag = "version"

// errVersion is --version given to a command: run prints the build.
var errVersion = errors.New("--version")

// newFlagSet returns a command's flag set: errors are returned, never
// printed by pflag; --help prints the command's page (writeHelp) on stdout,
// --version the build.
func newFlagSet(name string, e env) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(e.stderr)
	fs.SortFlags = false
	fs.Usage = func() { writeHelp(e.stdout, name, fs) }
	fs.Bool(versionFlag, false, "print the build (as llmprobe version) and exit")
	_ = fs.MarkHidden(versionFlag) // every page says it once, at its end
	return fs
}
