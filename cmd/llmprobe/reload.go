package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/spf13/pflag"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/daemon"
	"github.com/llmprobe/llmprobe/internal/logging"
	"github.com/llmprobe/llmprobe/internal/telemetry"
)

// configFileFlags defines --config.file and its deprecated alias --config
// on fs, and returns where the file's path is: after parsing, the value of
// whichever was given (deprecatedFlags refuses both).
func configFileFlags(fs *pflag.FlagSet, help string) *string {
	path := fs.String("config.file", "", help)
	fs.Var((*aliasOf)(path), "config", "deprecated: use --config.file")
	return path
}

// aliasOf is a string flag that sets another flag's variable.
type aliasOf string

func (a *aliasOf) String() string     { return "" }
func (a *aliasOf) Set(s string) error { *a = aliasOf(s); return nil }
func (a *aliasOf) Type() string       { return "string" }

// deprecatedFlags reports the deprecated aliases given on fs ("config" →
// "config.file", and config.DeprecatedFlags), as a usage error when a
// setting is given under both of its names.
func deprecatedFlags(fs *pflag.FlagSet) ([][2]string, error) {
	var used [][2]string
	if o := fs.Lookup("config"); o != nil && o.Changed {
		if fs.Lookup("config.file").Changed {
			return nil, badFlag("--config and --config.file: the same setting given twice; keep --config.file")
		}
		used = append(used, [2]string{"config", "config.file"})
	}
	more, err := config.DeprecatedFlags(fs)
	if err != nil {
		return nil, usageError{err}
	}
	return append(used, more...), nil
}

// reloader is what the command adds to the daemon's one reload path
// (daemon.Reload: SIGHUP, POST /-/reload and the target files' poller
// alike): its reloaders, applied to each configuration the daemon's
// targets took, and the poller's state. The configuration is loaded
// through the same layers as at start (file, environment, the flags
// given) by the daemon's Options.Load.
type reloader struct {
	level *slog.LevelVar // log.level applies at once; log.format needs a restart
	log   *slog.Logger
	// files exports the targets' constant labels and the target files'
	// changes; nil: none.
	files *telemetry.TargetFiles
	// reload is the daemon's one reload path (daemon.Reload).
	reload func(ctx context.Context, trigger string) error
	// current is the configuration running and fingerprint its target
	// files' (targetfiles.go), both under mu; refused is the fingerprint of
	// files whose reload was refused (not retried until they change).
	mu          sync.Mutex
	current     *config.Config
	fingerprint string
	refused     atomic.Value // string
}

// reloaders are the parts of the command a reload applies a new
// configuration to, in order, once the daemon's targets took it.
func (r *reloader) reloaders() []daemon.Reloader {
	return []daemon.Reloader{
		{Name: "log.level", Apply: func(c *config.Config) error {
			lv, err := logging.ParseLevel(c.Log.Level) // validated by config
			if err == nil {
				r.level.Set(lv)
			}
			return err
		}},
		{Name: "warnings", Apply: func(c *config.Config) error { logWarnings(r.log, c); return nil }},
		{Name: "target_files", Apply: func(c *config.Config) error {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.running(c)
			return nil
		}},
	}
}

// onSignal reloads on every SIGHUP until ctx ends (hup nil: never).
func (r *reloader) onSignal(ctx context.Context, hup <-chan os.Signal) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			_ = r.reload(ctx, "SIGHUP") // logged
		}
	}
}

// asFlagError makes a configuration error that names a flag of the command
// line a usage error (exit 2): a bad flag value is a bad flag, whichever
// layer finds it.
func asFlagError(err error) error {
	var es config.Errors
	if errors.As(err, &es) {
		for _, e := range es {
			if strings.HasPrefix(e.Source, "flag --") {
				return usageError{err}
			}
		}
	}
	return err
}
