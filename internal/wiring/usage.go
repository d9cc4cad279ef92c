package wiring

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/llmprobe/llmprobe/internal/config"
	"github.com/llmprobe/llmprobe/internal/workload"
)

// TemplateTokens is what a chat template adds to each message of a request
// beyond its text, and once more to prime the reply, in tokens: role
// markers, separators, the assistant's generation prompt. OpenAI counts 3
// a message and 3 to prime; Llama 3's template 5 a message (4 of header, 1
// end of turn), 1 to begin and 4 to prime. 3 a message and 3 a request is
// the lowest of them: the daily spend below is a lower bound.
const TemplateTokens = 3

// usageSamples is how many requests of each class the estimate draws.
const usageSamples = 256

// DailyUsage is what a target's configuration is expected to spend in a
// day, as its budget counts it: requests sent, and prompt + completion
// tokens with every max_tokens counted in full. It is a lower bound in
// every other way: retries, ladders run on start or on an identity change,
// and /probe scrapes are not counted.
type DailyUsage struct {
	Requests float64 // a day's requests: the baseline's and the scheduled ladders'
	Tokens   float64 // a day's tokens
	// PerRequest is the mean request's tokens, split into its prompt (the
	// text's estimate, CharsPerToken characters a token), the chat
	// template's overhead and max_tokens.
	Prompt, Template, Output float64
	// Unbounded is true when a class sends no max_tokens: its output is
	// then not counted.
	Unbounded bool
	// BaselineRate and LadderRuns say where the requests come from.
	BaselineRate, LadderRuns float64
}

// PerRequest is the mean request's tokens.
func (u DailyUsage) PerRequest() float64 { return u.Prompt + u.Template + u.Output }

// ExpectedUsage estimates target t's daily spend (targets[index]) by
// drawing requests from its own classes, as its plan will: prefixes,
// prompt files, datasets and sessions included.
func ExpectedUsage(t config.Target, index int) (DailyUsage, error) {
	classes, err := Classes(t, index)
	if err != nil {
		return DailyUsage{}, err
	}
	var u DailyUsage
	shares := workload.Weights(classes).Split(1) // each class's share of the arrivals
	requestsPerArrival := 0.0
	for i, c := range classes {
		m, err := Mix(t, c, MixIndex(t, i))
		if err != nil {
			return DailyUsage{}, err
		}
		share := shares[i]
		turns := float64(max(configClass(t, c.Name).Session.Turns, 1))
		var prompt, template, output float64
		for range usageSamples {
			p := m.Next().Params
			bound := float64(workload.UsageBound(p))
			output += float64(max(p.MaxTokens, 0))
			prompt += bound - float64(max(p.MaxTokens, 0))
			template += float64(TemplateTokens * (max(len(p.Messages), 1) + 1))
			u.Unbounded = u.Unbounded || p.MaxTokens <= 0
		}
		prompt, template, output = prompt/usageSamples, template/usageSamples, output/usageSamples
		// Turn k of a session re-sends the k−1 turns before it (each its
		// user message and the reply): its prompt is k prompts and k−1
		// outputs, its template k+(k−1) messages.
		var sp, st float64
		for k := 1.0; k <= turns; k++ {
			sp += k*prompt + (k-1)*output
			st += template + (2*k-2)*TemplateTokens
		}
		u.Prompt += share * sp
		u.Template += share * st
		u.Output += share * turns * output
		requestsPerArrival += share * turns
	}
	day := (24 * time.Hour).Seconds()
	if t.Baseline.Enabled {
		u.BaselineRate = t.Baseline.Rate
	}
	arrivals := u.BaselineRate * day
	if l := t.Ladder; l.Enabled {
		switch {
		case l.Schedule.Every > 0:
			u.LadderRuns = day / l.Schedule.Every.D().Seconds()
		case l.Schedule.Daily != "":
			u.LadderRuns = 1
		}
		sum := 0.0
		for _, r := range l.Steps {
			sum += r
		}
		arrivals += u.LadderRuns * sum * l.StepDuration.D().Seconds()
	}
	// Per arrival: requestsPerArrival requests, and the sums above are per
	// arrival too.
	u.Requests = arrivals * requestsPerArrival
	u.Tokens = arrivals * u.PerRequest()
	if requestsPerArrival > 0 {
		u.Prompt, u.Template, u.Output = u.Prompt/requestsPerArrival, u.Template/requestsPerArrival, u.Output/requestsPerArrival
	}
	return u, nil
}

// runsOut is when, spending daily evenly from midnight, budget runs out:
// "hour 20.4 (20:25 America/New_York)".
func runsOut(budget, daily float64, zone string) string {
	h := 24 * budget / daily
	return fmt.Sprintf("hour %.1f (%02d:%02d %s)", h, int(h), int(math.Mod(h*60, 60)), zone)
}

// sources says where a day's requests come from.
func (u DailyUsage) sources() string {
	var parts []string
	if u.BaselineRate > 0 {
		parts = append(parts, fmt.Sprintf("baseline.rate %g req/s × 86,400 s", u.BaselineRate))
	}
	if u.LadderRuns > 0 {
		parts = append(parts, fmt.Sprintf("%.3g scheduled ladders", u.LadderRuns))
	}
	return strings.Join(parts, " + ")
}

func unbounded(b bool) string {
	if b {
		return ", a class without max_tokens not counted"
	}
	return ""
}

// count writes n rounded, with thousands separators: 235,008.
func count(n float64) string {
	s := fmt.Sprintf("%.0f", n)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}
