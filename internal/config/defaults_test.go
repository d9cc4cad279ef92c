package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

var update = flag.Bool("update", false, "rewrite testdata/defaults.json from the loaded defaults")

// flatten turns decoded JSON into key → leaf value ("targets[0].timeouts.total").
func flatten(prefix string, v any, out map[string]any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			flatten(join(prefix, k), e, out)
		}
	case []any:
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", prefix, i), e, out)
		}
	default:
		out[prefix] = v
	}
}

func loadedDefaults(t *testing.T) map[string]any {
	t.Helper()
	c, err := LoadWith(Options{BuiltIn: []byte(minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	flat := map[string]any{}
	flatten("", m, flat)
	return flat
}

// TestDefaultsSnapshot: every key a minimal configuration loads keeps the
// value it loaded to when the defaults were untyped maps
// (testdata/defaults.json was written from those maps, before the typed
// defaults replaced them). New keys may appear; none may change or vanish.
func TestDefaultsSnapshot(t *testing.T) {
	path := filepath.Join("testdata", "defaults.json")
	got := loadedDefaults(t)
	if *update {
		b, err := json.MarshalIndent(got, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want map[string]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if len(keys) < 50 {
		t.Fatalf("snapshot holds only %d keys", len(keys))
	}
	for _, k := range keys {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: no longer loaded (was %v)", k, want[k])
			continue
		}
		if !reflect.DeepEqual(g, want[k]) {
			t.Errorf("%s: loads to %v, was %v", k, g, want[k])
		}
	}
}

// TestTypedDefaults: a minimal configuration loads to exactly the typed
// defaults (Defaults, DefaultTarget, DefaultClass) plus its own keys.
func TestTypedDefaults(t *testing.T) {
	c, err := LoadWith(Options{BuiltIn: []byte(minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	tg := DefaultTarget()
	tg.Name, tg.URL, tg.Model = "t1", "http://127.0.0.1:8000/v1", "m"
	want.Targets = []Target{tg}
	c.sources = nil
	if !reflect.DeepEqual(*c, want) {
		g, _ := json.Marshal(c)
		w, _ := json.Marshal(want)
		t.Errorf("loaded\n%s\nwant\n%s", g, w)
	}
	cl := DefaultClass()
	cl.Name = "default"
	if !reflect.DeepEqual(tg.Classes, []Class{cl}) {
		t.Errorf("default class list %+v, want DefaultClass named default", tg.Classes)
	}
	// A class entry leaves out what DefaultClass holds.
	c, err = LoadWith(Options{BuiltIn: []byte(minimal + "    classes: [{name: a}]\n"), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	cl.Name = "a"
	if got := c.Targets[0].Classes; !reflect.DeepEqual(got, []Class{cl}) {
		t.Errorf("class defaults: %+v, want %+v", got, cl)
	}
}

// TestFlagDefaults: every flag of RegisterFlags names a key, shows that
// key's default, and changes nothing when given at its default.
func TestFlagDefaults(t *testing.T) {
	plain, err := LoadWith(Options{BuiltIn: []byte(minimal), Environ: noEnv})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(plain)
	flat := loadedDefaults(t)
	for _, f := range FlagKeys() {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		RegisterFlags(fs)
		fl := fs.Lookup(f.Flag)
		if fl == nil {
			t.Fatalf("--%s not registered", f.Flag)
		}
		if !strings.HasSuffix(fl.Usage, "("+f.Key+")") {
			t.Errorf("--%s help %q does not name %s", f.Flag, fl.Usage, f.Key)
		}
		if _, ok := flat[f.Key]; !ok {
			t.Errorf("--%s: key %s is not loaded", f.Flag, f.Key)
		}
		if err := fs.Set(f.Flag, fl.DefValue); err != nil {
			t.Fatal(err)
		}
		c, err := LoadWith(Options{BuiltIn: []byte(minimal), Flags: fs, Environ: noEnv})
		if err != nil {
			t.Fatalf("--%s=%s: %v", f.Flag, fl.DefValue, err)
		}
		if got, _ := json.Marshal(c); string(got) != string(want) {
			t.Errorf("--%s at its default %q changes the configuration:\n%s\nwant\n%s", f.Flag, fl.DefValue, got, want)
		}
	}
}

// TestOneShotValid: the one-shot profiles pass the configuration's own
// rules as they are (the CLI's defaults are never a usage error).
func TestOneShotValid(t *testing.T) {
	for name, tg := range map[string]Target{"OneShot": OneShot(), "OneShotLadder": OneShotLadder()} {
		tg.URL = "http://127.0.0.1:8000/v1"
		c := Defaults()
		c.Targets = []Target{tg}
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if !OneShotLadder().Ladder.Enabled || OneShot().Ladder.Enabled || OneShot().MaxInFlight != 0 {
		t.Error("OneShotLadder runs a ladder, OneShot does not, and neither caps in-flight requests")
	}
}
