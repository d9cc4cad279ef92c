package config

import (
	"os"
	"sort"
	"strconv"
	"strings"

	yamlv3 "go.yaml.in/yaml/v3"
)

// placeErrors sets the Line and Column of every error whose source is the
// YAML file at path, from the file's node tree (koanf flattens the YAML and
// keeps no positions). A key absent from the file (a required one) is
// placed at its nearest ancestor that is written there; an error whose key
// shares nothing with the file keeps no position.
func placeErrors(path string, es Errors) {
	data, err := os.ReadFile(path)
	if err != nil {
		return
	}
	var doc yamlv3.Node
	if yamlv3.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
		return
	}
	for i := range es {
		if es[i].Source != path || es[i].Line != 0 || es[i].Key == "" {
			continue
		}
		if n := nodeAt(doc.Content[0], es[i].Key); n != nil {
			es[i].Line, es[i].Column = n.Line, n.Column
		}
	}
}

// nodeAt finds the node of key (targets[0].timeouts.total) under root: the
// key's own node for a mapping entry, the element for a list index; the
// deepest one found when the key goes further than the file; nil when not
// even its first part is there. Map keys may hold dots (header names): the
// longest written key that matches is taken.
func nodeAt(root *yamlv3.Node, key string) *yamlv3.Node {
	var best *yamlv3.Node
	n, rest := root, key
	for rest != "" {
		for n.Kind == yamlv3.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		switch {
		case strings.HasPrefix(rest, "["):
			j := strings.IndexByte(rest, ']')
			if j < 0 || n.Kind != yamlv3.SequenceNode {
				return best
			}
			i, err := strconv.Atoi(rest[1:j])
			if err != nil || i < 0 || i >= len(n.Content) {
				return best
			}
			n = n.Content[i]
			best = n
			rest = strings.TrimPrefix(rest[j+1:], ".")
		case n.Kind == yamlv3.MappingNode:
			k := matchKey(n, rest)
			if k < 0 {
				return best
			}
			best = n.Content[k]
			rest = strings.TrimPrefix(rest[len(n.Content[k].Value):], ".")
			n = n.Content[k+1]
		default:
			return best
		}
	}
	return best
}

// matchKey returns the index in m.Content of the longest key that starts
// path and ends at a part boundary, or -1.
func matchKey(m *yamlv3.Node, path string) int {
	found, length := -1, -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		k := m.Content[i].Value
		if !strings.HasPrefix(path, k) || len(k) <= length {
			continue
		}
		if r := path[len(k):]; r == "" || r[0] == '.' || r[0] == '[' {
			found, length = i, len(k)
		}
	}
	return found
}

// placed is es with positions in the file at path ("" = none), those in
// the file first, in the file's order, then the others as found.
func placed(path string, es Errors) Errors {
	if path == "" {
		return es
	}
	placeErrors(path, es)
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Line == 0 || b.Line == 0 {
			return a.Line != 0 && b.Line == 0
		}
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	return es
}

// pruneErrors removes from raw every value an error was reported on and
// puts the defaults back in their place, so the rest of the configuration
// still decodes and its own problems (and the domain checks') are reported
// in the same pass; problems on the removed keys are not reported twice
// (coveredBy).
func pruneErrors(raw map[string]any, es Errors) {
	for _, e := range es {
		if e.Key != "" {
			removeKey(raw, e.Key)
		}
	}
	fillDefaults(raw, asMap(Defaults()))
	injectTargetDefaults(raw)
	injectProbeDefaults(raw)
}

// removeKey deletes key (targets[0].timeouts.total) from raw; a list
// element becomes nil (its siblings keep their index).
func removeKey(raw map[string]any, key string) {
	var cur any = raw
	rest := key
	for rest != "" {
		switch x := cur.(type) {
		case map[string]any:
			k := longestKey(x, rest)
			if k == "" {
				return
			}
			r := rest[len(k):]
			if r == "" {
				delete(x, k)
				return
			}
			cur, rest = x[k], strings.TrimPrefix(r, ".")
		case []any:
			j := strings.IndexByte(rest, ']')
			if !strings.HasPrefix(rest, "[") || j < 0 {
				return
			}
			i, err := strconv.Atoi(rest[1:j])
			if err != nil || i < 0 || i >= len(x) {
				return
			}
			if rest = strings.TrimPrefix(rest[j+1:], "."); rest == "" {
				x[i] = nil
				return
			}
			cur = x[i]
		default:
			return
		}
	}
}

// longestKey is the longest key of m that starts path at a part boundary.
func longestKey(m map[string]any, path string) string {
	best := ""
	for k := range m {
		if len(k) > len(best) && strings.HasPrefix(path, k) {
			if r := path[len(k):]; r == "" || r[0] == '.' || r[0] == '[' {
				best = k
			}
		}
	}
	return best
}
