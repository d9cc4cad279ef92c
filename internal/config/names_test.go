package config

import (
	"strings"
	"testing"
)

// TestValidName: the one name rule, at its edges; Validate applies it to a
// target's, a class's and the region's name alike.
func TestValidName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"vllm-a", true}, {"a", true}, {"0", true}, {"a.b_c-d", true}, {strings.Repeat("a", 63), true},
		{"", false}, {strings.Repeat("a", 64), false}, {"-a", false}, {".a", false}, {"_a", false},
		{"A", false}, {"a b", false}, {"a/b", false}, {"a:b", false}, {"http://x", false}, {"é", false}, {"a\n", false},
	} {
		if got := ValidName(tc.name); got != tc.ok {
			t.Errorf("ValidName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	c := Defaults()
	c.Region = "Bad Region"
	c.Targets = []Target{{Name: "Bad Name"}}
	c.Targets[0].Classes = []Class{{Name: "Bad Class"}}
	err := c.Validate()
	for _, key := range []string{"region", "targets[0].name", "targets[0].classes[0].name"} {
		if err == nil || !strings.Contains(err.Error(), key+": want "+NameRule) {
			t.Errorf("Validate: %v; want %s refused by the name rule", err, key)
		}
	}
}
