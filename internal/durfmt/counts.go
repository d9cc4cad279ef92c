package durfmt

import (
	"fmt"
	"sort"
	"strings"
)

// Counts prints counts by name for people, most frequent first (ties by
// name), each as format (a %s for the name, a %d for the count) and
// joined by ", ": Counts(m, "%s ×%d") is "timeout ×3, status ×1". An
// empty map is "".
func Counts(m map[string]int, format string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf(format, k, m[k])
	}
	return strings.Join(parts, ", ")
}
