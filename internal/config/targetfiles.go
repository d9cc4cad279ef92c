package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	yamlv3 "go.yaml.in/yaml/v3"
)

// TargetFiles is one target_files block: Prometheus file_sd files whose
// entries become targets through a template (target_templates).
type TargetFiles struct {
	// Files are globs (filepath.Match, as file_sd_configs' files), relative
	// to the configuration file's directory; a name ending .json is read as
	// JSON, .yml or .yaml as YAML.
	Files []string `koanf:"files" json:"files"`
	// Template names the target_templates entry each target is built from;
	// "" when there is exactly one template.
	Template string `koanf:"template" json:"template,omitempty"`
	// RefreshInterval is how often the files are polled for a change
	// (file_sd's refresh_interval); a change reloads the configuration.
	RefreshInterval Duration `koanf:"refresh_interval" json:"refresh_interval"`
}

// DefaultRefreshInterval is file_sd's own default.
const DefaultRefreshInterval = Duration(5 * time.Minute)

// MaxFileTargets bounds the targets one configuration takes from files.
const MaxFileTargets = 10000

// maxTargetFileBytes bounds one file_sd file.
const maxTargetFileBytes = 16 << 20

// TargetGroup is one entry of a file_sd file: Prometheus' targetgroup
// format, {"targets": [...], "labels": {...}}. Here each target is a URL.
type TargetGroup struct {
	Targets []string          `json:"targets" yaml:"targets"`
	Labels  map[string]string `json:"labels" yaml:"labels"`
}

// DecodeTargetFile reads a file_sd file's entries, strictly (an unknown
// key is an error, as in Prometheus), by its extension: .json, .yml or
// .yaml. Errors name the file and the entry.
func DecodeTargetFile(path string, data []byte) ([]TargetGroup, error) {
	var groups []TargetGroup
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".json":
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&groups); err != nil {
			return nil, fmt.Errorf("%s: cannot parse JSON: %w", path, err)
		}
		if _, err := dec.Token(); err != io.EOF {
			return nil, fmt.Errorf("%s: cannot parse JSON: text after the list", path)
		}
	case ".yml", ".yaml":
		dec := yamlv3.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&groups); err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s: cannot parse YAML: %w", path, err)
		}
	default:
		return nil, fmt.Errorf("%s: want a .json, .yml or .yaml file, got %q", path, ext)
	}
	for i, g := range groups {
		if len(g.Targets) == 0 {
			return nil, fmt.Errorf("%s: entry %d: no targets", path, i)
		}
		for j, u := range g.Targets {
			if strings.TrimSpace(u) == "" {
				return nil, fmt.Errorf("%s: entry %d: targets[%d] is empty", path, i, j)
			}
		}
	}
	return groups, nil
}

// fileTarget is where a target read from a file came from, for errors.
type fileTarget struct {
	file         string
	entry, index int
}

// key names the target in errors: "entry 3 targets[1]".
func (f fileTarget) key() string { return fmt.Sprintf("entry %d targets[%d]", f.entry, f.index) }

// targetFileMatches expands the globs of a block relative to dir, sorted and
// without duplicates. A glob that matches nothing is no error (file_sd's
// rule: the file may not have been written yet).
func targetFileMatches(dir string, globs []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for _, g := range globs {
		if !filepath.IsAbs(g) {
			g = filepath.Join(dir, g)
		}
		m, err := filepath.Glob(g)
		if err != nil {
			return nil, fmt.Errorf("glob %q: %w", g, err)
		}
		for _, p := range m {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// readTargetFile reads and decodes one file, bounded in size.
func readTargetFile(path string) ([]TargetGroup, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxTargetFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxTargetFileBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxTargetFileBytes)
	}
	return DecodeTargetFile(path, data)
}
