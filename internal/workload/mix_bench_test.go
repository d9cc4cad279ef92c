package workload

import (
	"testing"
)

// benchClasses are the classes whose prompts BenchmarkMixNext builds: the
// default class (synthetic, 128 tokens in, 128 out), and config/prefix.yaml's
// shared-prefix class "chat" (4 groups of a 1,000-token prefix, round robin,
// a 64-token suffix, 16 out) and its cold twin (a 1,000-token prefix of its
// own a request).
func benchClasses(b *testing.B) map[string]Class {
	b.Helper()
	spec := PrefixSpec{PrefixTokens: 1000, Groups: 4, Choice: GroupRoundRobin, SuffixTokens: 64}
	g, err := NewPrefixGen(spec, 1, 2)
	if err != nil {
		b.Fatal(err)
	}
	prefix := Class{Name: "chat", Weight: 1, Prompt: SharedSource(g), InputLen: Fixed{64}, OutputLen: Fixed{16}}
	cold := prefix
	cold.Name, cold.Prompt = "chat-cold", ColdSource(g.Twin(3, 0, 1))
	return map[string]Class{
		"default":   {Name: "default", Weight: 1, Prompt: Synthetic{}, InputLen: Fixed{128}, OutputLen: Fixed{128}},
		"prefix":    prefix,
		"cold-twin": cold,
	}
}

// BenchmarkMixNext is the cost of one request's draw and prompt: alone
// (single); with every P calling the same class's mix at once (parallel);
// and with 64 goroutines a P calling it (crowd), as the many streams of a
// probe do, more than there are Ps.
func BenchmarkMixNext(b *testing.B) {
	for _, name := range []string{"default", "prefix", "cold-twin"} {
		c := benchClasses(b)[name]
		b.Run(name+"/single", func(b *testing.B) {
			m, err := NewMix(1, []Class{c})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				_ = m.Next()
			}
		})
		for _, v := range []struct {
			name string
			per  int // goroutines a P
		}{{"parallel", 1}, {"crowd", 64}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				m, err := NewMix(1, []Class{c})
				if err != nil {
					b.Fatal(err)
				}
				b.ReportAllocs()
				b.SetParallelism(v.per)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						_ = m.Next()
					}
				})
			})
		}
	}
}
