package dashgen

import (
	"sort"
	"strings"
)

// DefaultVariables are the values Substitute uses for the dashboards'
// variables when testing queries: every job (Grafana's "All" expands to the
// jobs that scrape a prober; any job here), every target and class, baseline traffic
// planned outside ladders (the dashboards' defaults), and a rate interval of
// one minute (at least four 15 s scrapes).
func DefaultVariables() map[string]string {
	return map[string]string{
		"datasource":      "prometheus",
		"job":             ".+",
		"target":          ".*",
		"class":           ".*",
		"traffic":         "baseline",
		"during":          "none",
		"__rate_interval": "1m",
		"__interval":      "30s",
		"__range":         "1h",
	}
}

// Substitute replaces Grafana variables ($name, ${name}, [[name]]) in expr
// with vars; unknown variables are left as they are.
func Substitute(expr string, vars map[string]string) string {
	names := make([]string, 0, len(vars))
	for n := range vars {
		names = append(names, n)
	}
	// Longest first, so $__rate_interval is not taken for a variable named
	// $__rate.
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) > len(names[j])
		}
		return names[i] < names[j]
	})
	pairs := make([]string, 0, 6*len(names))
	for _, n := range names {
		pairs = append(pairs, "${"+n+"}", vars[n], "[["+n+"]]", vars[n])
	}
	for _, n := range names {
		pairs = append(pairs, "$"+n, vars[n])
	}
	return strings.NewReplacer(pairs...).Replace(expr)
}
