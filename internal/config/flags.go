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
}

// FlagKeys are the flags RegisterFlags defines, each for one key; their
// defaults are the keys' defaults (Defaults).
func FlagKeys() []FlagKey {
	return []FlagKey{
		{"listen", "admin.listen", "admin HTTP listen address"},
		{"web-config-file", "admin.web_config_file", "exporter-toolkit web config file for TLS/basic auth"},
		{"log-level", "log.level", "log level: debug|info|warn|error"},
		{"log-format", "log.format", "log format: auto|text|json"},
		{"ledger-dir", "ledger.dir", "directory of rotating JSONL ledger files"},
		{"otel", "otel.enabled", "enable OpenTelemetry export"},
		{"drain-timeout", "drain.timeout", "graceful drain timeout"},
		{"max-buffered-bytes", "limits.max_buffered_bytes", "bound on event bytes buffered across all streams; a stream that would pass it ends stream_error/buffer_limit"},
	}
}

// RegisterFlags defines the flags of FlagKeys: --listen, --web-config-file,
// --log-level, --log-format, --ledger-dir, --otel, --drain-timeout and
// --max-buffered-bytes, each defaulting to its key's default. Only flags
// given on the command line override.
func RegisterFlags(fs *pflag.FlagSet) {
	def := Defaults()
	for _, f := range FlagKeys() {
		v, ok := FieldAt(&def, f.Key)
		if !ok {
			panic("config: flag --" + f.Flag + " names no key: " + f.Key) // a programming error, caught by the tests
		}
		help := f.Help + " (" + f.Key + ")"
		switch x := v.Interface().(type) {
		case Duration:
			fs.String(f.Flag, x.String(), help)
		case string:
			fs.String(f.Flag, x, help)
		case bool:
			fs.Bool(f.Flag, x, help)
		case int:
			fs.Int(f.Flag, x, help)
		case int64:
			fs.Int64(f.Flag, x, help)
		case float64:
			fs.Float64(f.Flag, x, help)
		default:
			panic(fmt.Sprintf("config: flag --%s: unsupported type %T", f.Flag, x))
		}
	}
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
