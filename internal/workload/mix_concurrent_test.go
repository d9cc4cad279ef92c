package workload

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// determinismClasses are one class of every prompt source: synthetic
// (half cache busted), a prompt file, a dataset, a shared-prefix class
// choosing its group by zipf, and a cold twin, each source built afresh
// (no state shared between the mixes compared).
func determinismClasses(t *testing.T) []Class {
	t.Helper()
	pf, err := ParsePromptFile(strings.NewReader("alpha\nbeta\ngamma\n"), "p.txt")
	if err != nil {
		t.Fatal(err)
	}
	ds, err := ParseDataset(strings.NewReader(`{"messages":[{"role":"user","content":"q1"}]}`+"\n"+
		`{"messages":[{"role":"system","content":"s"},{"role":"user","content":"q2"}]}`), "d.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	g := mustPrefixGen(t, PrefixSpec{PrefixTokens: 16, Groups: 5, Choice: GroupZipf, ZipfS: 1.3, SuffixTokens: 8}, 11, 12)
	return []Class{
		{Name: "synthetic", Weight: 3, Prompt: Synthetic{}, InputLen: Uniform{1, 40}, OutputLen: Uniform{1, 9}, CacheBustFraction: 0.5},
		{Name: "file", Weight: 1, Prompt: pf, OutputLen: Fixed{4}, CacheBustFraction: 0.5},
		{Name: "dataset", Weight: 1, Prompt: ds},
		{Name: "shared", Weight: 2, Prompt: SharedSource(g), InputLen: Uniform{8, 20}, OutputLen: Fixed{2}},
		{Name: "cold", Weight: 2, Prompt: ColdSource(g.Twin(13, 1, 2)), InputLen: Uniform{8, 20}},
	}
}

// TestMixRequestByNumber: request n of a seeded mix is the same whatever
// order its numbers are taken in: called in turn, by 8 goroutines at once,
// or built in reverse order of number.
func TestMixRequestByNumber(t *testing.T) {
	const n = 600
	newMix := func() *Mix {
		m, err := NewMix(77, determinismClasses(t), WithRunNonce(5))
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	inTurn := make([]Request, n)
	m := newMix()
	for i := range inTurn {
		inTurn[i] = m.Next()
		if inTurn[i].Seq != uint64(i+1) {
			t.Fatalf("call %d numbered %d", i+1, inTurn[i].Seq)
		}
	}
	classes := map[string]bool{}
	for _, r := range inTurn {
		classes[r.Class] = true
	}
	if len(classes) != 5 {
		t.Fatalf("%d requests drew %d of the 5 classes: the comparison below covers too little", n, len(classes))
	}

	concurrent := make([]Request, n)
	m = newMix()
	var wg sync.WaitGroup
	var mu sync.Mutex
	for range 8 {
		wg.Go(func() {
			for range n / 8 {
				r := m.Next()
				mu.Lock()
				concurrent[r.Seq-1] = r
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	reversed := make([]Request, n)
	m = newMix()
	for i := n; i >= 1; i-- {
		reversed[i-1] = m.at(uint64(i))
	}
	for i := range inTurn {
		for _, other := range []struct {
			name string
			r    Request
		}{{"concurrent", concurrent[i]}, {"reversed", reversed[i]}} {
			if !reflect.DeepEqual(inTurn[i], other.r) {
				t.Fatalf("request %d (%s) differs when drawn %s", i+1, inTurn[i].Class, other.name)
			}
		}
	}
	other, err := NewMix(78, determinismClasses(t), WithRunNonce(5))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(other.Next(), inTurn[0]) && reflect.DeepEqual(other.Next(), inTurn[1]) {
		t.Error("another seed gave the same requests")
	}
}

// TestMixClassShares: many draws from concurrent callers give each class
// its weight's share within 6 standard deviations (the seed is fixed, and
// any seed passes with probability 1 - 2e-9), and consecutive request
// numbers are independent: two in a row share a class as often as
// Σ share² says (a per-request stream correlated with its neighbour's
// would show here).
func TestMixClassShares(t *testing.T) {
	tests := []struct {
		name    string
		weights []float64
	}{
		{"even", []float64{1, 1}},
		{"skewed", []float64{1, 2, 7}},
		{"rare", []float64{0.01, 0.99}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var classes []Class
			total := 0.0
			for i, w := range tt.weights {
				classes = append(classes, Class{Name: fmt.Sprint(i), Weight: w, Prompt: Synthetic{}, InputLen: Fixed{1}})
				total += w
			}
			m, err := NewMix(2026, classes)
			if err != nil {
				t.Fatal(err)
			}
			const n, callers = 100_000, 4
			got := make([]int, n)
			var wg sync.WaitGroup
			for range callers {
				wg.Go(func() {
					for range n / callers {
						r := m.Next()
						var c int
						_, _ = fmt.Sscan(r.Class, &c)
						got[r.Seq-1] = c // each Seq is written once
					}
				})
			}
			wg.Wait()
			counts := make([]int, len(tt.weights))
			same, sumSq := 0, 0.0
			for i, c := range got {
				counts[c]++
				if i > 0 && got[i-1] == c {
					same++
				}
			}
			for i, w := range tt.weights {
				p := w / total
				sumSq += p * p
				if sd := math.Sqrt(p * (1 - p) / n); math.Abs(float64(counts[i])/n-p) > 6*sd {
					t.Errorf("class %d: share %.5f, want %.5f ± %.5f", i, float64(counts[i])/n, p, 6*sd)
				}
			}
			// Pairs overlap, so their variance is at most 3× the binomial's.
			if sd := math.Sqrt(3 * sumSq * (1 - sumSq) / (n - 1)); math.Abs(float64(same)/(n-1)-sumSq) > 6*sd {
				t.Errorf("consecutive requests share a class %.5f of the time, want %.5f ± %.5f", float64(same)/(n-1), sumSq, 6*sd)
			}
		})
	}
}

// TestPrefixGenConcurrent: callers of one generator at once get distinct
// request numbers: every cold prefix and every suffix marker differs, and
// round robin still gives each group its share exactly.
func TestPrefixGenConcurrent(t *testing.T) {
	g := mustPrefixGen(t, PrefixSpec{PrefixTokens: 8, Groups: 4, Choice: GroupRoundRobin, SuffixTokens: 8}, 1, 2)
	const callers, each = 8, 250
	var mu sync.Mutex
	var cold, suffixes []string
	groups := make([]int, 4)
	var wg sync.WaitGroup
	for range callers {
		wg.Go(func() {
			for range each {
				s, c := g.Shared(), g.Cold()
				mu.Lock()
				groups[s.Group]++
				cold = append(cold, c.Messages[0].Content[:9])
				suffixes = append(suffixes, s.Messages[1].Content[:9], c.Messages[1].Content[:9])
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for name, heads := range map[string][]string{"cold prefix": cold, "suffix": suffixes} {
		sorted := slices.Sorted(slices.Values(heads))
		if len(slices.Compact(sorted)) != len(heads) {
			t.Errorf("%s markers repeat under concurrent calls", name)
		}
	}
	if want := []int{500, 500, 500, 500}; !reflect.DeepEqual(groups, want) {
		t.Errorf("round robin gave groups %v, want %v", groups, want)
	}
}
