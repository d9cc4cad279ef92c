package telemetry

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// A histVec holds the histSeries of one latency histogram, one per label
// values (nativehist.go has the series and why they are not client_golang's).

// histOpts shape a histVec.
type histOpts struct {
	name, help string
	labels     []string
	classic    []float64 // classic upper bounds (+Inf implied); nil: native buckets only
	exemplars  int       // native exemplars kept; 0 or less: none
	maxBuckets int       // most native buckets before the resolution is halved
	minReset   time.Duration
}

// histVec is a vector of histSeries, one per label values. Its methods are
// safe for concurrent use.
type histVec struct {
	desc *prometheus.Desc
	o    histOpts
	now  func() time.Time // time.Now; tests replace it

	mu       sync.RWMutex
	children map[string]*histSeries // by label values joined with 0xff
}

func newHistVec(o histOpts) *histVec {
	return &histVec{
		desc:     prometheus.NewDesc(o.name, o.help, o.labels, nil),
		o:        o,
		now:      time.Now,
		children: make(map[string]*histSeries),
	}
}

// Describe and Collect make a histVec a prometheus.Collector.
func (v *histVec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

func (v *histVec) Collect(ch chan<- prometheus.Metric) {
	v.mu.RLock()
	defer v.mu.RUnlock()
	for _, s := range v.children {
		ch <- s
	}
}

// GetMetricWithLabelValues returns the series of the label values (in the
// order of the vector's label names), creating it the first time; a wrong
// count or a value that is not UTF-8 is an error.
func (v *histVec) GetMetricWithLabelValues(lvs ...string) (*histSeries, error) {
	if len(lvs) != len(v.o.labels) {
		return nil, fmt.Errorf("%s: %d label values for %d labels %q", v.o.name, len(lvs), len(v.o.labels), v.o.labels)
	}
	for _, l := range lvs {
		if !utf8.ValidString(l) {
			return nil, fmt.Errorf("%s: label value %q is not valid UTF-8", v.o.name, l)
		}
	}
	key := strings.Join(lvs, "\xff")
	v.mu.RLock()
	s := v.children[key]
	v.mu.RUnlock()
	if s != nil {
		return s, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if s = v.children[key]; s != nil {
		return s, nil
	}
	s = &histSeries{vec: v, values: slices.Clone(lvs), labels: prometheus.MakeLabelPairs(v.desc, lvs)}
	s.reset(v.now())
	if len(v.o.classic) > 0 || v.o.exemplars > 0 {
		s.classic = make([]uint64, len(v.o.classic)+1)
		s.classicEx = make([]*dto.Exemplar, len(v.o.classic)+1)
	}
	v.children[key] = s
	return s, nil
}

// WithLabelValues is GetMetricWithLabelValues that panics on an error, as
// client_golang's.
func (v *histVec) WithLabelValues(lvs ...string) *histSeries {
	s, err := v.GetMetricWithLabelValues(lvs...)
	if err != nil {
		panic(err)
	}
	return s
}

// DeletePartialMatch deletes every series whose labels include all of
// labels, and returns how many it deleted.
func (v *histVec) DeletePartialMatch(labels prometheus.Labels) int {
	idx := make(map[int]string, len(labels))
	for name, val := range labels {
		i := slices.Index(v.o.labels, name)
		if i < 0 {
			return 0
		}
		idx[i] = val
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	n := 0
	for key, s := range v.children {
		match := true
		for i, val := range idx {
			if s.values[i] != val {
				match = false
				break
			}
		}
		if match {
			delete(v.children, key)
			n++
		}
	}
	return n
}
