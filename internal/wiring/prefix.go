package wiring

import (
	"fmt"
	"strings"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// Shared-prefix classes (docs/workloads.md#shared-prefix-classes): a class
// with prefix.tokens draws its prompts from a workload.PrefixGen, and its
// cold twin, the class "<name>-cold", from a Twin of it. Twins follow the
// configured classes, in their order, so a configured class keeps its
// index (and its seeds) whatever twins there are.

// prefixSeedStep offsets the seed of class i's shared prefixes (the group
// prefixes are a function of it alone: a restarted prober sends the same).
const prefixSeedStep = 15485863

// PrefixSpec is a shared-prefix class's spec, with its defaults (groups 1,
// round_robin, zipf_s DefaultZipfS); the suffix length is the class's
// input distribution, drawn per request, so SuffixTokens is its least.
func PrefixSpec(p config.Prefix) workload.PrefixSpec {
	s := workload.PrefixSpec{PrefixTokens: p.Tokens, Groups: p.Groups, Choice: workload.GroupChoice(p.Choice),
		ZipfS: p.ZipfS, SuffixTokens: workload.MinPrefixPartTokens}
	if s.Groups == 0 {
		s.Groups = 1
	}
	if s.Choice == "" {
		s.Choice = workload.GroupRoundRobin
	}
	if s.ZipfS == 0 {
		s.ZipfS = config.DefaultZipfS
	}
	return s
}

// checkPrefix checks a shared-prefix class's ranges and group choice by
// workload's rule, each error at its key.
func checkPrefix(add func(key, format string, args ...any), p string, cl config.Class) {
	if !cl.HasPrefix() {
		return
	}
	err := PrefixSpec(cl.Prefix).Validate()
	if err == nil {
		return
	}
	msg, key := err.Error(), p+".prefix"
	for _, k := range []struct{ prefix, key string }{
		{"prefix_tokens", "tokens"}, {"groups", "groups"}, {"zipf_s", "zipf_s"}, {"group choice", "choice"},
	} {
		if strings.HasPrefix(msg, k.prefix) {
			key += "." + k.key
			break
		}
	}
	add(key, "%s", msg)
}

// IsColdTwin reports whether class i of the target's classes (as Classes
// returns them) is a generated cold twin.
func IsColdTwin(t config.Target, i int) bool { return i >= len(t.Classes) }

// MixIndex is the index whose mix seed class i draws its lengths from: its
// own, or, for a cold twin, its class's, so that a class and its twin draw
// identical length sequences.
func MixIndex(t config.Target, i int) int {
	if i < len(t.Classes) {
		return i
	}
	k := i - len(t.Classes)
	for j, c := range t.Classes {
		if c.HasPrefix() {
			if k == 0 {
				return j
			}
			k--
		}
	}
	return i
}

// PrefixPairs maps each shared-prefix class of the target to its cold twin.
func PrefixPairs(t config.Target) map[string]string {
	var m map[string]string
	for _, c := range t.Classes {
		if c.HasPrefix() {
			if m == nil {
				m = map[string]string{}
			}
			m[c.Name] = config.ColdTwinName(c.Name)
		}
	}
	return m
}

// withColdTwins gives each shared-prefix class of classes (converted from
// t.Classes, in order) its prompt source and appends its cold twin: same
// lengths, gates and output, weight cold_twin.weight or the class's, drawn
// from a Twin of the class's generator in its own lane. One run nonce,
// random per call, keeps this run's cold prefixes apart from the last's.
func withColdTwins(t config.Target, classes []workload.Class) ([]workload.Class, error) {
	lanes := len(PrefixPairs(t))
	if lanes == 0 {
		return classes, nil
	}
	nonce, err := workload.RunNonce()
	if err != nil {
		return nil, err
	}
	lane := 0
	out := classes
	for i, c := range t.Classes {
		if !c.HasPrefix() {
			continue
		}
		seed := Seed(t) + uint64(i)*prefixSeedStep
		g, err := workload.NewPrefixGen(PrefixSpec(c.Prefix), seed, nonce)
		if err != nil {
			return nil, fmt.Errorf("classes[%d].prefix: %w", i, err)
		}
		out[i].Prompt = workload.SharedSource(g)
		twin := out[i]
		twin.Name = config.ColdTwinName(c.Name)
		if c.ColdTwin.Weight > 0 {
			twin.Weight = c.ColdTwin.Weight
		}
		twin.Prompt = workload.ColdSource(g.Twin(seed^0x6a09e667f3bcc909, lane, lanes))
		out = append(out, twin)
		lane++
	}
	return out, nil
}
