package config

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/providers/env/v2"
	"github.com/knadh/koanf/providers/file"
	"github.com/knadh/koanf/providers/posflag"
	"github.com/knadh/koanf/v2"
	"github.com/spf13/pflag"
	yamlv3 "go.yaml.in/yaml/v3"
)

// EnvPrefix starts every configuration environment variable.
const EnvPrefix = "LLMPROBE_"

// Options are the inputs of LoadWith.
type Options struct {
	Path    string          // YAML file; "" = defaults, environment and flags only
	Flags   *pflag.FlagSet  // parsed flags (RegisterFlags); nil = none
	Environ func() []string // environment; nil = os.Environ
	// BuiltIn is YAML loaded over the defaults and under the file, named
	// "built-in" in errors: e.g. the in-process simulator target that
	// `llmprobe run` probes when no config file is given.
	BuiltIn []byte
	// Checks run after the built-in rules, on the decoded configuration,
	// and report into the same list (see Check).
	Checks []Check
	// Overrides are keys (dotted: "fleet.shards") set over every other
	// layer, before validation, by a command-line option that is not one
	// key's flag (run's --shard sets two); OverridesFrom (required with
	// them) names it in errors ("flag --shard").
	Overrides     map[string]any
	OverridesFrom string
}

// Load reads defaults, the YAML file at path, LLMPROBE_ environment variables
// and the changed flags of fs (any may be absent), then validates. Every
// problem is returned together as Errors.
func Load(path string, fs *pflag.FlagSet) (*Config, error) {
	return LoadWith(Options{Path: path, Flags: fs})
}

// LoadWith is Load with an injectable environment: the layers merged in
// order (defaults, the built-in or file YAML, the environment, the flags,
// the overrides), then decoded and validated together.
func LoadWith(o Options) (*Config, error) {
	environ := o.Environ
	if environ == nil {
		environ = os.Environ
	}
	l := &layers{k: koanf.New("."), sources: map[string]string{}}
	if err := l.add("defaults", confmap.Provider(asMap(Defaults()), ""), nil); err != nil {
		return nil, fmt.Errorf("config: defaults: %w", err)
	}
	fileSrc, err := l.yaml(o)
	if err != nil {
		return nil, err
	}
	envErrs, err := l.env(environ)
	if err != nil {
		return nil, err
	}
	if o.Flags != nil {
		if err := l.flags(o.Flags); err != nil {
			return nil, err
		}
	}
	if len(o.Overrides) > 0 {
		if err := l.add(o.OverridesFrom, confmap.Provider(o.Overrides, "."), nil); err != nil {
			return nil, fmt.Errorf("config: %s: %w", o.OverridesFrom, err)
		}
	}
	return l.build(o, fileSrc, envErrs)
}

// layers merges the configuration's sources in order and remembers which
// source set each key, for errors to name it ("env LLMPROBE_…", "flag
// --rate", the file).
type layers struct {
	k       *koanf.Koanf
	sources map[string]string
}

// add merges one source over the layers below it.
func (l *layers) add(name string, p koanf.Provider, pa koanf.Parser) error {
	lk := koanf.New(".")
	if err := lk.Load(p, pa); err != nil {
		return err
	}
	for _, key := range lk.Keys() {
		l.sources[key] = name
	}
	return l.k.Merge(lk)
}

// yaml merges the built-in YAML, then the file at o.Path, and returns the
// name errors give the file's keys ("config" when there is neither).
func (l *layers) yaml(o Options) (string, error) {
	fileSrc := "config"
	if len(o.BuiltIn) > 0 {
		m, err := yaml.Parser().Unmarshal(o.BuiltIn)
		if err != nil {
			return "", Errors{{Source: "built-in", Msg: fmt.Sprintf("cannot parse YAML: %v", err)}}
		}
		if err := l.add("built-in", confmap.Provider(m, ""), nil); err != nil {
			return "", fmt.Errorf("config: built-in: %w", err)
		}
		fileSrc = "built-in"
	}
	if o.Path != "" {
		fileSrc = o.Path
		if _, err := os.Stat(o.Path); err != nil {
			return "", Errors{{Source: o.Path, Msg: fmt.Sprintf("cannot read config file: %v", unwrapPath(err))}}
		}
		if err := l.add(o.Path, file.Provider(o.Path), yaml.Parser()); err != nil {
			return "", Errors{{Source: o.Path, Msg: fmt.Sprintf("cannot parse YAML: %v", err)}}
		}
	}
	return fileSrc, nil
}

// env merges the LLMPROBE_ variables that name a key (a double
// underscore for each dot); a variable that sets targets is an error,
// returned with the others of the load.
func (l *layers) env(environ func() []string) (Errors, error) {
	var envErrs Errors
	envNames := map[string]string{}
	ep := env.Provider(".", env.Opt{
		Prefix:      EnvPrefix,
		EnvironFunc: environ,
		TransformFunc: func(name, val string) (string, any) {
			rest := strings.TrimPrefix(name, EnvPrefix)
			if !strings.Contains(rest, "__") {
				return "", nil // not a configuration variable (e.g. an API key named LLMPROBE_KEY)
			}
			key := strings.ToLower(strings.ReplaceAll(rest, "__", "."))
			if key == "targets" || strings.HasPrefix(key, "targets.") {
				envErrs = append(envErrs, FieldError{Source: "env " + name, Key: key,
					Msg: "targets cannot be set from the environment; put them in the config file"})
				return "", nil
			}
			envNames[key] = "env " + name
			return key, val
		},
	})
	if err := l.add("env", ep, nil); err != nil {
		return nil, fmt.Errorf("config: environment: %w", err)
	}
	for key, n := range envNames {
		l.sources[key] = n
	}
	return envErrs, nil
}

// flags merges the flags of fs that were changed and bind a key
// (FlagKeys, old names included).
func (l *layers) flags(fs *pflag.FlagSet) error {
	fk := map[string]string{}
	for _, f := range FlagKeys() {
		fk[f.Flag] = f.Key
		if f.Old != "" {
			fk[f.Old] = f.Key
		}
	}
	names := map[string]string{}
	fp := posflag.ProviderWithFlag(fs, ".", nil, func(f *pflag.Flag) (string, any) {
		key, ok := fk[f.Name]
		if !ok || !f.Changed {
			return "", nil
		}
		names[key] = "flag --" + f.Name
		return key, posflag.FlagVal(fs, f)
	})
	if err := l.add("flags", fp, nil); err != nil {
		return fmt.Errorf("config: flags: %w", err)
	}
	for key, n := range names {
		l.sources[key] = n
	}
	return nil
}

// build decodes the merged layers into a Config and validates it: the
// structural walk (every typed value parsed once, on its key), then the
// semantic checks and the target files', every problem returned together
// (a key reported once), placed in its file.
func (l *layers) build(o Options, fileSrc string, envErrs Errors) (*Config, error) {
	c := &Config{Path: o.Path, sources: l.sources}
	raw := l.k.Raw()
	el := &errorList{src: func(key string) string { return c.sourceOf(key, fileSrc) }}
	files := expandTargetFiles(raw, configDir(o.Path), el)
	c.filesRead = files.read
	written := timeoutsWritten(raw)
	injectTargetDefaults(raw)
	injectProbeDefaults(raw)
	normalizeFleet(raw)

	el.errs = append(el.errs, envErrs...)
	walk(el, "", raw, reflect.TypeOf(Config{}))
	structural := len(el.errs) > 0
	if structural {
		pruneErrors(raw, el.errs) // the rest still decodes, and is checked in this pass
	}
	if err := decode(raw, c, !structural); err != nil {
		if structural {
			return nil, placed(o.Path, el.errs)
		}
		return nil, Errors{{Source: fileSrc, Msg: err.Error()}}
	}
	written.fit(c)
	files.mark(c)
	// Report semantic problems too, except on keys already reported.
	var ve Errors
	if err := c.validate(fileSrc, o.Checks); err != nil && !errors.As(err, &ve) {
		return nil, err
	}
	tf := &errorList{src: func(key string) string { return c.sourceOf(key, fileSrc) }}
	c.validateTargetFiles(tf)
	ve = append(ve, tf.errs...)
	for _, e := range ve {
		if !coveredBy(e.Key, el.errs) {
			el.errs = append(el.errs, e)
		}
	}
	if len(el.errs) > 0 {
		return nil, placed(o.Path, files.placeFileErrors(el.errs))
	}
	return c, nil
}

func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// fromEnv converts an environment string for a field of type t: numbers
// and booleans are read as YAML scalars; anything else stays a string.
func fromEnv(s string, t reflect.Type) any {
	switch t.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int32, reflect.Int64, reflect.Float64:
		if isTextValue(t) {
			return s
		}
		return scalar(s)
	}
	return s
}

func fieldByTag(t reflect.Type, tag string) (reflect.StructField, bool) {
	for _, f := range keyFields(t) {
		if keyOf(f) == tag {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

// keyFields are the fields of struct type t that are configuration keys,
// those of an embedded struct (koanf:",squash", such as Client) included
// with their whole index path (reflect.Value.FieldByIndex).
func keyFields(t reflect.Type) []reflect.StructField {
	var out []reflect.StructField
	for _, f := range reflect.VisibleFields(t) {
		if k := keyOf(f); k != "" && k != "-" && f.IsExported() {
			out = append(out, f)
		}
	}
	return out
}

// keyOf is a field's key (its koanf tag's name).
func keyOf(f reflect.StructField) string { return strings.Split(f.Tag.Get("koanf"), ",")[0] }

// scalar reads a value as a YAML scalar, so "5" is a number and "true" a
// boolean; anything else stays a string.
func scalar(v string) any {
	var x any
	if err := yamlv3.Unmarshal([]byte(v), &x); err != nil {
		return v
	}
	switch x.(type) {
	case int, float64, bool, string:
		return x
	default:
		return v
	}
}

func injectTargetDefaults(raw map[string]any) {
	ts, ok := raw["targets"].([]any)
	if !ok {
		return
	}
	for _, t := range ts {
		tm, ok := t.(map[string]any)
		if !ok {
			continue
		}
		fillDefaults(tm, targetDefaults())
		cs, present := tm["classes"]
		if !present || cs == nil {
			tm["classes"] = defaultClasses()
			cs = tm["classes"]
		}
		if list, ok := cs.([]any); ok {
			for _, c := range list {
				if cm, ok := c.(map[string]any); ok {
					fillDefaults(cm, classDefaults())
				}
			}
		}
	}
}

func decode(raw map[string]any, c *Config, errorUnused bool) error {
	d, err := mapstructure.NewDecoder(&mapstructure.DecoderConfig{
		TagName:     "koanf",
		Result:      c,
		ErrorUnused: errorUnused,
		DecodeHook:  mapstructure.TextUnmarshallerHookFunc(),
	})
	if err != nil {
		return fmt.Errorf("config: decoder: %w", err)
	}
	if err := d.Decode(raw); err != nil {
		return fmt.Errorf("config: decode: %w", err)
	}
	return nil
}

// Source names where key's value came from: the file, "built-in", "env
// LLMPROBE_…", "flag --…", or "defaults".
func (c *Config) Source(key string) string {
	fallback := c.Path
	if fallback == "" {
		fallback = "config"
	}
	return c.sourceOf(key, fallback)
}

// sourceOf names the layer that set key (a path like targets[0].url).
func (c *Config) sourceOf(key, fallback string) string {
	if c == nil || c.sources == nil {
		return fallback
	}
	k := key
	if i := strings.IndexByte(k, '['); i >= 0 {
		k = k[:i]
	}
	for k != "" {
		if s, ok := c.sources[k]; ok {
			if s == "env" || s == "flags" {
				return fallback
			}
			return s
		}
		i := strings.LastIndexByte(k, '.')
		if i < 0 {
			break
		}
		k = k[:i]
	}
	return fallback
}

func sprintf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
