package config

import "testing"

func TestSeedFor(t *testing.T) {
	if SeedFor("a", 42) != 42 {
		t.Fatal("a configured seed is not used as is")
	}
	first, again := SeedFor("a", 0), SeedFor("a", 0)
	if first != again || first == SeedFor("b", 0) || first == 0 {
		t.Fatal("derived seeds must be stable per name and differ between names")
	}
}
