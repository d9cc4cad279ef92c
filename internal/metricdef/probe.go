package metricdef

// Names of the /probe endpoint's metrics (docs/probe-endpoint.md): one
// probe's result, in a registry of its own. With a burst, the worst
// request decides.
const (
	ProbeSuccess    = "probe_success"
	ProbeDuration   = "probe_duration_seconds"
	ProbeRequests   = "probe_llm_requests"
	ProbeOutcome    = "probe_llm_outcome"
	ProbeTTFT       = "probe_llm_time_to_first_token_seconds"
	ProbeE2E        = "probe_llm_e2e_seconds"
	ProbeTokens     = "probe_llm_output_tokens"
	ProbeInterChunk = "probe_llm_inter_chunk_seconds"
	ProbeLag        = "probe_llm_dispatch_lag_seconds"
)

// Spec is a metric's name, variable labels and help.
type Spec struct {
	Name   string
	Labels []string
	Help   string
}

// Probe lists the /probe endpoint's metrics, in the order it answers them.
var Probe = []Spec{
	{Name: ProbeSuccess, Help: "1 when every request of the probe ended ok, else 0."},
	{Name: ProbeDuration, Help: "How long the probe took, from the scrape's arrival to its last request's end, in seconds."},
	{Name: ProbeRequests, Help: "Requests the probe planned: the module's burst.requests (each has one outcome in probe_llm_outcome)."},
	{Name: ProbeOutcome, Labels: []string{"outcome", "reason"},
		Help: "Requests of the probe that ended with each outcome and reason: the whole closed set, 0 for those not reached."},
	{Name: ProbeTTFT, Help: "Time to first token from the planned send (the record's TTFT boundary), in seconds: the largest among the probe's ok requests; absent when none reached one."},
	{Name: ProbeE2E, Help: "End to end from the planned send to the stream's end, in seconds: the largest among the probe's ok requests; absent when none was ok."},
	{Name: ProbeTokens, Help: "Output tokens the server reported (usage), summed over the probe's ok requests; absent when it reported none."},
	{Name: ProbeLag, Help: "Dispatch lag (sent minus planned), in seconds: the largest among the probe's sent requests; absent when none was sent."},
	{Name: ProbeInterChunk, Help: "Gaps between consecutive content events of the probe's ok requests, in seconds (each request's first gaps, up to the client's bound): nearest-rank quantiles, 1 the largest gap; count 0 when there were none."},
}

// ProbeSpec returns the /probe metric of name; it panics on a name not in
// Probe (a programming error every /probe test catches).
func ProbeSpec(name string) Spec {
	for _, s := range Probe {
		if s.Name == name {
			return s
		}
	}
	panic("metricdef: no /probe metric " + name)
}
