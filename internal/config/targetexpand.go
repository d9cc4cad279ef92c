package config

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// fileOrigins maps the index of each target taken from a file (in the
// expanded targets list) to where it came from.
type fileOrigins map[int]fileTarget

// expansion is what expandTargetFiles did: where each target came from,
// the fingerprint of the files read, and whether a file could not be read
// or decoded.
type expansion struct {
	origins fileOrigins
	read    string
	failed  bool
}

// expandTargetFiles reads every target_files block's files and appends one
// raw target per URL to raw's targets, each a copy of its template with the
// URL, the name (the name label, else derived from the URL), the model (the
// model label, else the template's) and the other labels. Problems with a
// block or a file are added to el; a template with structural problems is
// not expanded (the walk of target_templates reports them, once).
func expandTargetFiles(raw map[string]any, dir string, el *errorList) expansion {
	blocks, _ := raw["target_files"].([]any)
	if len(blocks) == 0 {
		return expansion{}
	}
	failed := false
	fp := newFingerprint()
	templates := checkTemplates(el, raw)
	allTemplates, _ := raw["target_templates"].(map[string]any)
	targets, _ := raw["targets"].([]any)
	origins := fileOrigins{}
	for i, b := range blocks {
		bm, _ := b.(map[string]any)
		p := fmt.Sprintf("target_files[%d]", i)
		tmpl, ok := blockTemplate(el, p, bm, templates, allTemplates)
		if !ok {
			continue
		}
		globs, _ := bm["files"].([]any)
		var gs []string
		for _, g := range globs {
			if s, ok := g.(string); ok {
				gs = append(gs, s)
			}
		}
		if len(gs) == 0 {
			el.add(p+".files", "want at least one glob (e.g. \"targets/*.json\")")
			continue
		}
		files, err := targetFileMatches(dir, gs)
		fp.block(i, err)
		if err != nil {
			el.add(p+".files", "%v", err)
			continue
		}
		for _, f := range files {
			data, err := readBounded(f)
			fp.file(f, data, err)
			var groups []TargetGroup
			if err == nil {
				groups, err = DecodeTargetFile(f, data)
			}
			if err != nil {
				el.errs = append(el.errs, FieldError{Source: f, Msg: strings.TrimPrefix(err.Error(), f+": ")})
				failed = true
				continue
			}
			for e, g := range groups {
				for j, u := range g.Targets {
					if len(origins) >= MaxFileTargets {
						el.add(p, "more than %d targets from files", MaxFileTargets)
						raw["targets"] = targets
						return expansion{origins, fp.String(), failed}
					}
					origins[len(targets)] = fileTarget{file: f, entry: e, index: j}
					targets = append(targets, fileTargetRaw(tmpl, u, g.Labels))
				}
			}
		}
	}
	raw["targets"] = targets
	return expansion{origins, fp.String(), failed}
}

// checkTemplates checks every template as a target block without name and
// url (reported once, here), and returns those that are fit to expand.
func checkTemplates(el *errorList, raw map[string]any) map[string]any {
	all, _ := raw["target_templates"].(map[string]any)
	fit := map[string]any{}
	for _, n := range sortedKeys(all) {
		tm, ok := all[n].(map[string]any)
		if !ok {
			continue // the walk of the configuration reports it
		}
		p := "target_templates." + n
		before := len(el.errs)
		walk(el, p, deepCopy(tm), reflect.TypeOf(Target{}))
		if _, has := tm["name"]; has {
			el.add(p+".name", "a template holds no name: each target's is its name label or comes from its URL")
		}
		if _, has := tm["url"]; has {
			el.add(p+".url", "a template holds no url: each target's is in its file's targets")
		}
		if len(el.errs) == before {
			fit[n] = tm
		}
	}
	return fit
}

// blockTemplate returns the raw template a block names (or the only one
// there is), reporting a name that is none; a template with problems of its
// own (reported by checkTemplates) is not used.
func blockTemplate(el *errorList, p string, bm, fit, all map[string]any) (map[string]any, bool) {
	name, _ := bm["template"].(string)
	if name == "" {
		if len(all) != 1 {
			el.add(p+".template", "required: target_templates holds %d templates, not one", len(all))
			return nil, false
		}
		name = sortedKeys(all)[0]
	}
	if _, ok := all[name]; !ok {
		el.add(p+".template", "no template %q in target_templates", name)
		return nil, false
	}
	tm, ok := fit[name].(map[string]any)
	return tm, ok
}

// fileTargetRaw is one target from a file: a copy of the template with the
// URL, name, model and constant labels.
func fileTargetRaw(tmpl map[string]any, url string, labels map[string]string) map[string]any {
	t := deepCopy(tmpl).(map[string]any)
	t["url"] = url
	t["name"] = DeriveName(url)
	consts := map[string]any{}
	for k, v := range labels {
		switch k {
		case "name":
			t["name"] = v
		case "model":
			t["model"] = v
		default:
			consts[k] = v
		}
	}
	if len(consts) > 0 {
		t["labels"] = consts
	}
	return t
}

var notName = regexp.MustCompile(`[^a-z0-9_.-]+`)

// DeriveName makes a target name from a URL without a name label: its host,
// port and path, lowercased, every run of other characters one "-", cut to
// the name rule's 63 characters ("http://10.0.0.5:8000/v1" →
// "10.0.0.5-8000-v1"). ValidName still decides.
func DeriveName(url string) string {
	s := strings.ToLower(url)
	if i := strings.Index(s, "://"); i >= 0 {
		s = s[i+3:]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:] // never a credential in a name
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	s = strings.Trim(notName.ReplaceAllString(s, "-"), "-._")
	if len(s) > 63 {
		s = strings.TrimRight(s[:63], "-._")
	}
	return s
}

// mark records in each decoded target taken from a file which file.
func (x expansion) mark(c *Config) {
	for i, ft := range x.origins {
		if i < len(c.Targets) {
			c.Targets[i].FromFile = ft.file
		}
	}
}

var targetIndex = regexp.MustCompile(`^targets\[(\d+)\]`)

// placeFileErrors renames every error on a target taken from a file after
// that file and entry ("targets/a.json: entry 3 targets[1].baseline.rate"),
// and folds the copies of one problem a template gave every target into
// the first, counting the others. When a file could not be read, "at
// least one target is required" is its consequence, not news: left out.
func (x expansion) placeFileErrors(es Errors) Errors {
	o := x.origins
	if x.failed {
		es = slices.DeleteFunc(slices.Clone(es), func(e FieldError) bool {
			return e.Key == "targets" && strings.HasPrefix(e.Msg, "at least one target")
		})
	}
	if len(o) == 0 {
		return es
	}
	type fold struct{ file, rest, msg string }
	first := map[fold]int{}
	more := map[int]int{}
	var out Errors
	for _, e := range es {
		m := targetIndex.FindStringSubmatch(e.Key)
		var n int
		if m == nil || sscan(m[1], &n) != nil {
			out = append(out, e)
			continue
		}
		ft, ok := o[n]
		if !ok {
			out = append(out, e)
			continue
		}
		rest := e.Key[len(m[0]):]
		k := fold{ft.file, rest, e.Msg}
		if i, seen := first[k]; seen && !strings.HasPrefix(rest, ".name") && !strings.HasPrefix(rest, ".url") {
			more[i]++
			continue
		}
		first[k] = len(out)
		out = append(out, FieldError{Source: ft.file, Key: ft.key() + rest, Msg: e.Msg})
	}
	for i, n := range more {
		out[i].Msg += fmt.Sprintf(" (and %d more targets of this file)", n)
	}
	return out
}

func sscan(s string, n *int) error { _, err := fmt.Sscan(s, n); return err }

// configDir is the directory target_files globs are relative to.
func configDir(path string) string {
	if path == "" {
		return "."
	}
	return filepath.Dir(path)
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
