package sim

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

const ms = time.Millisecond

func TestTimelineAdvance(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		windows []Window
		t, work time.Duration
		want    time.Duration
	}{
		{"no windows", nil, 5 * ms, 10 * ms, 15 * ms},
		{"before a stall", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 0, 20 * ms, 20 * ms},
		{"ends exactly at stall start", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 90 * ms, 10 * ms, 100 * ms},
		{"across a stall", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 90 * ms, 20 * ms, 160 * ms},
		{"starts inside a stall", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 120 * ms, 10 * ms, 160 * ms},
		{"zero work inside a stall waits it out", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 120 * ms, 0, 150 * ms},
		{"after windows", []Window{{Start: 100 * ms, Duration: 50 * ms, Stall: true}}, 200 * ms, 10 * ms, 210 * ms},
		{"inside a slowdown", []Window{{Start: 0, Duration: time.Second, Factor: 4}}, 10 * ms, 10 * ms, 50 * ms},
		{"across a slowdown's end", []Window{{Start: 0, Duration: 100 * ms, Factor: 2}}, 80 * ms, 20 * ms, 110 * ms},
		{"overlap: stall wins", []Window{{Start: 0, Duration: 100 * ms, Factor: 2}, {Start: 50 * ms, Duration: 20 * ms, Stall: true}}, 40 * ms, 10 * ms, 80 * ms}, // 5ms of work by 50, stall to 70, 5ms at half speed
		{"absolute window", []Window{{At: start.Add(time.Second), Duration: time.Second, Stall: true}}, 990 * ms, 20 * ms, 2010 * ms},
		{"absolute window in the past", []Window{{At: start.Add(-time.Hour), Duration: time.Second, Stall: true}}, 0, 20 * ms, 20 * ms},
		{"speed-up factor", []Window{{Start: 0, Duration: time.Second, Factor: 0.5}}, 0, 20 * ms, 10 * ms},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTimeline(tc.windows, start)
			if got := tl.advance(tc.t, tc.work); got != tc.want {
				t.Fatalf("advance(%v, %v) = %v, want %v", tc.t, tc.work, got, tc.want)
			}
		})
	}
}

func TestTimelineRate(t *testing.T) {
	tl := newTimeline([]Window{{Start: 10 * ms, Duration: 10 * ms, Factor: 2}, {Start: 30 * ms, Duration: 10 * ms, Stall: true}}, time.Now())
	for _, c := range []struct {
		at   time.Duration
		want float64
	}{{0, 1}, {15 * ms, 0.5}, {25 * ms, 1}, {35 * ms, 0}, {40 * ms, 1}} {
		if got := tl.rateAt(c.at); got != c.want {
			t.Errorf("rateAt(%v) = %v, want %v", c.at, got, c.want)
		}
	}
}

func TestParseWindows(t *testing.T) {
	at := time.Date(2026, 11, 29, 19, 0, 0, 0, time.UTC)
	tests := []struct {
		in      string
		slow    bool
		want    Window
		wantErr string
	}{
		{in: "10s+5s", want: Window{Start: 10 * time.Second, Duration: 5 * time.Second, Stall: true}},
		{in: "0s+250ms", want: Window{Duration: 250 * ms, Stall: true}},
		{in: "2026-11-29T19:00:00Z+5s", want: Window{At: at, Duration: 5 * time.Second, Stall: true}},
		{in: "20s+10s*4", slow: true, want: Window{Start: 20 * time.Second, Duration: 10 * time.Second, Factor: 4}},
		{in: "2026-11-29T19:00:00+00:00+1m*1.5", slow: true, want: Window{At: at, Duration: time.Minute, Factor: 1.5}},
		{in: "10s", wantErr: "START+DURATION"},
		{in: "10s+0s", wantErr: "duration must be > 0"},
		{in: "x+5s", wantErr: "neither a duration"},
		{in: "10s+5s*2", wantErr: "START+DURATION"},
		{in: "20s+10s", slow: true, wantErr: "FACTOR"},
		{in: "20s+10s*0", slow: true, wantErr: "factor must be"},
		{in: "20s+10s*abc", slow: true, wantErr: "factor"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			parse := ParseStall
			if tc.slow {
				parse = ParseSlowdown
			}
			got, err := parse(tc.in)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !got.At.Equal(tc.want.At) || got.Start != tc.want.Start || got.Duration != tc.want.Duration ||
				got.Factor != tc.want.Factor || got.Stall != tc.want.Stall {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			again, err := parse(got.String())
			if err != nil || again.String() != got.String() {
				t.Fatalf("String %q does not round-trip: %v", got.String(), err)
			}
		})
	}
}

func TestParseDists(t *testing.T) {
	tests := []struct {
		in      string
		dur     bool
		want    Dist
		wantErr bool
	}{
		{in: "50ms", dur: true, want: FixedDist(0.05)},
		{in: "fixed:1s", dur: true, want: FixedDist(1)},
		{in: "uniform:20ms-80ms", dur: true, want: UniformDist(0.02, 0.08)},
		{in: "exp:50ms", dur: true, want: ExponentialDist(0.05)},
		{in: "lognormal:median=50ms,sigma=0.5", dur: true, want: LognormalDist(0.05, 0.5)},
		{in: "64", want: FixedDist(64)},
		{in: "uniform:32-96", want: UniformDist(32, 96)},
		{in: "exponential:64", want: ExponentialDist(64)},
		{in: "lognormal:56,0.5", want: LognormalDist(56, 0.5)},
		{in: "uniform:96-32", wantErr: true},
		{in: "exp:0", wantErr: true},
		{in: "-3", wantErr: true},
		{in: "gamma:3", wantErr: true},
		{in: "lognormal:50ms", dur: true, wantErr: true},
		{in: "50", dur: true, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			parse := ParseCountDist
			if tc.dur {
				parse = ParseDurationDist
			}
			got, err := parse(tc.in)
			if tc.wantErr {
				if err == nil || !strings.Contains(err.Error(), tc.in) {
					t.Fatalf("err %v, want an error naming %q", err, tc.in)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDistStatistics(t *testing.T) {
	tests := []struct {
		d          Dist
		mean, p50  float64
		minV, maxV float64
	}{
		{FixedDist(3), 3, 3, 3, 3},
		{UniformDist(10, 30), 20, 20, 10, 30},
		{ExponentialDist(5), 5, 5 * math.Ln2, 0, math.Inf(1)},
		{LognormalDist(50, 0.5), 50 * math.Exp(0.125), 50, 0, math.Inf(1)},
	}
	for _, tc := range tests {
		t.Run(string(tc.d.Kind), func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 9))
			const n = 40000
			xs := make([]float64, n)
			sum := 0.0
			for i := range xs {
				xs[i] = tc.d.Sample(r)
				sum += xs[i]
				if xs[i] < tc.minV || xs[i] > tc.maxV {
					t.Fatalf("sample %v outside [%v, %v]", xs[i], tc.minV, tc.maxV)
				}
			}
			mean := sum / n
			if math.Abs(mean-tc.mean) > 0.03*tc.mean {
				t.Errorf("mean %v, want %v", mean, tc.mean)
			}
			if math.Abs(tc.d.Mean()-tc.mean) > 1e-9 {
				t.Errorf("Mean() %v, want %v", tc.d.Mean(), tc.mean)
			}
			below := 0
			for _, x := range xs {
				if x <= tc.p50 {
					below++
				}
			}
			if frac := float64(below) / n; tc.d.Kind != Fixed && math.Abs(frac-0.5) > 0.02 {
				t.Errorf("%v of samples below the median %v", frac, tc.p50)
			}
			// Same seed, same draws.
			r2 := rand.New(rand.NewPCG(7, 9))
			if x := tc.d.Sample(r2); x != xs[0] {
				t.Errorf("not reproducible: %v then %v", xs[0], x)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
	tests := []struct {
		name string
		mut  func(*Config)
		key  string
	}{
		{"slots", func(c *Config) { c.Slots = 0 }, "slots"},
		{"admission below slots", func(c *Config) { c.AdmissionLimit = c.Slots - 1 }, "admission_limit"},
		{"reject status", func(c *Config) { c.RejectStatus = 500 }, "reject_status"},
		{"retry after", func(c *Config) { c.RetryAfter = -time.Second }, "retry_after"},
		{"ttft", func(c *Config) { c.TTFT = LognormalDist(0, 1) }, "ttft"},
		{"token time", func(c *Config) { c.TokenTime = Dist{Kind: "gamma"} }, "token_time"},
		{"output", func(c *Config) { c.OutputTokens = UniformDist(5, 1) }, "output_tokens"},
		{"reasoning", func(c *Config) { c.ReasoningTokens = FixedDist(math.NaN()) }, "reasoning_tokens"},
		{"tokens per chunk", func(c *Config) { c.TokensPerChunk = 0 }, "tokens_per_chunk"},
		{"window", func(c *Config) { c.Windows = []Window{{Duration: time.Second}} }, "windows[0]"},
		{"model", func(c *Config) { c.Models = []string{"a", ""} }, "models[1]"},
		{"body", func(c *Config) { c.MaxBodyBytes = 0 }, "max_body_bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mut(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), "sim config "+tc.key+":") {
				t.Fatalf("err %v, want one naming %s", err, tc.key)
			}
			if _, err := New(c); err == nil {
				t.Fatal("New accepted an invalid config")
			}
		})
	}
}

func TestDefaultCapacity(t *testing.T) {
	c := DefaultConfig()
	// 64 slots / (50ms·e^(0.125) + 63·10ms) ≈ 93 req/s.
	want := 64 / (0.05*math.Exp(0.125) + 63*0.01)
	if got := c.Capacity(); math.Abs(got-want) > 0.01 {
		t.Fatalf("default capacity %v, want %v", got, want)
	}
	c.TokensPerChunk = 4 // first chunk carries 4 tokens: t0 + 60·tt
	if got, want := c.ServiceTime(), time.Duration((0.05*math.Exp(0.125)+0.6)*float64(time.Second)); got-want > time.Microsecond || want-got > time.Microsecond {
		t.Fatalf("service time %v, want %v", got, want)
	}
}
