package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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

// reloader loads the configuration again, through the same layers as at
// start (file, environment, the flags given), and hands it to the daemon:
// on SIGHUP and on POST /-/reload alike. A configuration that does not
// load, validate or build is refused, the running one is kept, and the
// error is returned (POST /-/reload answers it) and logged.
type reloader struct {
	mu     sync.Mutex // one reload at a time
	load   func() (*config.Config, error)
	std    *stdLog        // the standard library's log: learns the new secrets
	level  *slog.LevelVar // log.level applies at once; log.format needs a restart
	log    *slog.Logger
	daemon *daemon.Daemon
	// loaded exports each load's outcome (llmprobe_config_last_reload_*);
	// nil: none.
	loaded *telemetry.ConfigReload
	// files exports the targets' constant labels and the target files'
	// changes; nil: none.
	files *telemetry.TargetFiles
	// current is the configuration running and fingerprint its target
	// files' (targetfiles.go), both under mu; refused is the fingerprint of
	// files whose reload was refused (not retried until they change).
	current     *config.Config
	fingerprint string
	refused     atomic.Value // string
}

// outcome records a reload that loaded (err nil) or was refused.
func (r *reloader) outcome(err error) {
	if r.loaded != nil {
		r.loaded.Set(err == nil, time.Now())
	}
}

// startWait bounds how long a reload waits for the daemon to start.
const startWait = 30 * time.Second

// reload reloads; trigger ("SIGHUP", "POST /-/reload") is logged. A reload
// asked for while the daemon is still starting waits for it (until ctx
// ends): a SIGHUP is never lost, nor a kill.
func (r *reloader) reload(ctx context.Context, trigger string) error {
	if r.daemon == nil {
		return errors.New("reload: the daemon is not running yet")
	}
	ctx, cancel := context.WithTimeout(ctx, startWait)
	defer cancel()
	select {
	case <-r.daemon.Started():
	case <-ctx.Done():
		return fmt.Errorf("reload: the daemon has not started: %w", ctx.Err())
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	nc, err := r.load()
	defer func() { r.outcome(err) }()
	if err != nil {
		r.log.Error("reload refused: the configuration does not load; the old one keeps running", "trigger", trigger, "err", err)
		return err
	}
	r.std.useConfig(nc) // before the new targets send anything
	if err = r.daemon.Reload(nc); err != nil {
		r.log.Error("reload refused; the old configuration keeps running", "trigger", trigger, "err", err)
		return err
	}
	if lv, err := logging.ParseLevel(nc.Log.Level); err == nil { // validated by config
		r.level.Set(lv)
	}
	r.log.Info("configuration reloaded", "trigger", trigger, "targets", len(nc.Targets))
	logWarnings(r.log, nc)
	if old := r.running(nc); old != nil {
		r.logTargetChanges(trigger, old, nc)
	}
	return nil
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
