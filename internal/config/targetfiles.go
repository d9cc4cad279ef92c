package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
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

// readBounded reads one target file, refusing one larger than
// maxTargetFileBytes.
func readBounded(path string) ([]byte, error) {
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
	return data, nil
}

// fingerprint sums the target files as read: the files each block's globs
// matched and each one's content (SHA-256) or why it could not be read.
type fingerprint struct{ h hash.Hash }

func newFingerprint() fingerprint { return fingerprint{sha256.New()} }

func (f fingerprint) block(i int, err error) { fmt.Fprintf(f.h, "block %d %v\n", i, err) }

func (f fingerprint) file(path string, data []byte, err error) {
	if err != nil {
		fmt.Fprintf(f.h, "%s\x00error %v\n", path, err)
		return
	}
	fmt.Fprintf(f.h, "%s\x00%x\n", path, sha256.Sum256(data))
}

func (f fingerprint) String() string { return hex.EncodeToString(f.h.Sum(nil)) }

// TargetFilesFingerprint sums what the configuration's target files are
// now, as the load that made c summed what it read (TargetFilesRead): any
// change (a file added, removed, rewritten, or no longer readable) changes
// it. "" when the configuration has no target_files.
func TargetFilesFingerprint(c *Config) string {
	if c == nil || len(c.TargetFiles) == 0 {
		return ""
	}
	fp := newFingerprint()
	for i, b := range c.TargetFiles {
		files, err := targetFileMatches(configDir(c.Path), b.Files)
		fp.block(i, err)
		for _, f := range files {
			data, err := readBounded(f)
			fp.file(f, data, err)
		}
	}
	return fp.String()
}

// TargetFilesRead is the fingerprint of the target files as this
// configuration's load read them ("" without target_files): the poller
// reloads when TargetFilesFingerprint differs from it.
func (c *Config) TargetFilesRead() string {
	if c == nil {
		return ""
	}
	return c.filesRead
}

// TargetFilesInterval is how often the target files are polled: the
// shortest refresh_interval of the blocks (0: no target_files).
func TargetFilesInterval(c *Config) time.Duration {
	var d time.Duration
	if c == nil {
		return 0
	}
	for _, b := range c.TargetFiles {
		if iv := b.Interval(); d == 0 || iv < d {
			d = iv
		}
	}
	return d
}

// TargetLabels is every target's constant labels, by name (nil for a
// target without), and how many targets came from files.
func TargetLabels(c *Config) (map[string]map[string]string, int) {
	out := make(map[string]map[string]string, len(c.Targets))
	n := 0
	for _, t := range c.Targets {
		out[t.Name] = t.Labels
		if t.FromFile != "" {
			n++
		}
	}
	return out, n
}
