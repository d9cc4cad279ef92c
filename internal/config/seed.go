package config

import "hash/fnv"

// SeedFor is the seed a target's streams use: the configured seed, or, when
// it is 0, one derived from the target's name (FNV-64a), so every target
// gets its own reproducible arrivals without configuring any.
func SeedFor(name string, seed int64) uint64 {
	if seed != 0 {
		return uint64(seed)
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(name))
	return h.Sum64()
}
