package config

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
)

// FlagKey is a command-line flag that overrides one configuration key.
type FlagKey struct {
	Flag string // without the leading "--"
	Key  string // e.g. "admin.listen"
	Help string // the key is appended in parentheses
	// Old is the flag's former name, still accepted as a deprecated alias
	// ("" = none): scripts written for it keep working.
	Old string
}

// FlagKeys are the flags RegisterFlags defines, each for one key; their
// defaults are the keys' defaults (Defaults). The names follow the
// Prometheus daemons' (--web.listen-address, --log.level, …) where one
// exists.
func FlagKeys() []FlagKey {
	return []FlagKey{
		{"web.listen-address", "admin.listen", "admin HTTP listen address", "listen"},
		{"web.config.file", "admin.web_config_file", "exporter-toolkit web config file for TLS/basic auth", "web-config-file"},
		{"web.enable-lifecycle", "admin.enable_lifecycle", "enable POST /-/reload", ""},
		{"log.level", "log.level", "log level: debug|info|warn|error", "log-level"},
		{"log.format", "log.format", "log format: auto (tint on a terminal, JSON otherwise)|logfmt|json|text", "log-format"},
		{"ledger-dir", "ledger.dir", "directory of rotating JSONL ledger files", ""},
		{"otel", "otel.enabled", "enable OpenTelemetry export", ""},
		{"drain-timeout", "drain.timeout", "graceful drain timeout", ""},
		{"max-buffered-bytes", "limits.max_buffered_bytes", "bound on event bytes buffered across all streams; a stream that would pass it ends stream_error/buffer_limit", ""},
	}
}

// RegisterFlags defines the flags of FlagKeys (--web.listen-address,
// --web.config.file, --web.enable-lifecycle, --log.level, --log.format,
// --ledger-dir, --otel, --drain-timeout and --max-buffered-bytes), each
// defaulting to its key's default, and each former name as a deprecated
// alias (DeprecatedFlags). Only flags given on the command line override.
func RegisterFlags(fs *pflag.FlagSet) {
	def := Defaults()
	for _, f := range FlagKeys() {
		v, ok := FieldAt(&def, f.Key)
		if !ok {
			panic("config: flag --" + f.Flag + " names no key: " + f.Key) // a programming error, caught by the tests
		}
		flagFor(fs, f.Flag, f.Help+" ("+f.Key+")", v, false)
		if f.Old != "" {
			flagFor(fs, f.Old, "deprecated: use --"+f.Flag, reflect.Zero(v.Type()), false) // no default shown: only a given flag counts
		}
	}
}

// DeprecatedFlags reports the deprecated aliases given on fs, each with
// the flag that replaces it ("listen" → "web.listen-address"), in FlagKeys
// order; an error names a flag given under both names.
func DeprecatedFlags(fs *pflag.FlagSet) (used [][2]string, err error) {
	for _, f := range FlagKeys() {
		if f.Old == "" {
			continue
		}
		o, n := fs.Lookup(f.Old), fs.Lookup(f.Flag)
		if o == nil || !o.Changed {
			continue
		}
		if n != nil && n.Changed {
			return nil, fmt.Errorf("--%s and --%s: the same setting (%s) given twice; keep --%s", f.Old, f.Flag, f.Key, f.Flag)
		}
		used = append(used, [2]string{f.Old, f.Flag})
	}
	return used, nil
}

// FieldAt returns the field at a configuration key ("admin.listen",
// "timeouts.total", "classes[0].output.value") of ptr, a pointer to a
// Config, a Target or any configuration struct: settable, so a flag can
// be bound to it. ok is false when the key names no field.
func FieldAt(ptr any, key string) (v reflect.Value, ok bool) {
	v = reflect.ValueOf(ptr)
	if v.Kind() != reflect.Pointer {
		return reflect.Value{}, false
	}
	v = v.Elem()
	for _, part := range strings.Split(key, ".") {
		name, index := part, -1
		if i := strings.IndexByte(part, '['); i >= 0 && strings.HasSuffix(part, "]") {
			n, err := strconv.Atoi(part[i+1 : len(part)-1])
			if err != nil {
				return reflect.Value{}, false
			}
			name, index = part[:i], n
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, false
		}
		f, ok := fieldByTag(v.Type(), name)
		if !ok {
			return reflect.Value{}, false
		}
		v = v.FieldByIndex(f.Index)
		if index >= 0 {
			if v.Kind() != reflect.Slice || index >= v.Len() {
				return reflect.Value{}, false
			}
			v = v.Index(index)
		}
	}
	return v, true
}
