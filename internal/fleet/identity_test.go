package fleet

import (
	"strings"
	"testing"
)

func TestParseShard(t *testing.T) {
	tests := []struct {
		in      string
		want    Identity
		wantErr string
	}{
		{"2/3", Identity{2, 3}, ""},
		{" 0/1 ", Identity{0, 1}, ""},
		{"0/256", Identity{0, 256}, ""},
		{"3/3", Identity{}, "want 0 to 2"},
		{"0/0", Identity{}, "want 1 to 256"},
		{"0/257", Identity{}, "want 1 to 256"},
		{"-1/3", Identity{}, "want 0 to 2"},
		{"2", Identity{}, "INDEX/COUNT"},
		{"a/3", Identity{}, "two whole numbers"},
		{"", Identity{}, "INDEX/COUNT"},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("ParseShard(%q) = %v, %v; want an error with %q", tt.in, got, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}

func TestOrdinal(t *testing.T) {
	tests := []struct {
		host    string
		want    int
		wantErr bool
	}{
		{"llmprobe-2", 2, false},
		{"llmprobe-fleet-0", 0, false},
		{"llmprobe-12.llmprobe.default.svc.cluster.local", 12, false},
		{"llmprobe", 0, true},
		{"llmprobe-", 0, true},
		{"llmprobe-x", 0, true},
		{"llmprobe-+2", 0, true},
		{"", 0, true},
	}
	for _, tt := range tests {
		got, err := Ordinal(tt.host)
		if (err != nil) != tt.wantErr || (!tt.wantErr && got != tt.want) {
			t.Errorf("Ordinal(%q) = %d, %v; want %d (error %v)", tt.host, got, err, tt.want, tt.wantErr)
		}
		if err != nil && !strings.Contains(err.Error(), "fleet.shard") {
			t.Errorf("Ordinal(%q): %v does not say what to do", tt.host, err)
		}
	}
}

// TestCountSplitsExactly: a budget's shares are whole, differ by at most
// one, and add up to the budget.
func TestCountSplitsExactly(t *testing.T) {
	for _, total := range []int64{0, 1, 2, 3, 7, 100, 1001} {
		for shards := 1; shards <= 5; shards++ {
			var sum, lo, hi int64 = 0, total, 0
			for s := range shards {
				c := Identity{s, shards}.Count(total)
				sum += c
				lo, hi = min(lo, c), max(hi, c)
			}
			if sum != total || hi-lo > 1 {
				t.Errorf("total %d over %d shards: shares add to %d, spread %d..%d", total, shards, sum, lo, hi)
			}
		}
	}
	if r := (Identity{1, 4}).Rate(10); r != 2.5 {
		t.Errorf("rate share %g, want 2.5", r)
	}
}
