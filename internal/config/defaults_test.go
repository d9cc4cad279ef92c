package config

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"testing"
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
