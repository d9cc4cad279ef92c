package telemetry

// cardinalityDoc ends docs/metrics.md (metricsDoc): how many series a
// target costs and why, and the classic-bucket switch. The formula's terms
// are checked on a live /metrics by test/bench's TestCardinality.
const cardinalityDoc = `
## Cardinality

A series exists only for traffic that can happen, and is created at zero when it must be there
before the first request (a rate, a ratio or an alert reads it), else when it first occurs:

- **(traffic, during) pairs.** A target's baseline gives ` + "`traffic=\"baseline\", during=\"none\"`" + `
  series for each class; only a target with ` + "`ladder.enabled`" + ` also gets
  ` + "`during=\"ladder\"`" + ` baseline series and ` + "`traffic=\"ladder\"`" + ` series. ` + "`/probe`" + `
  creates its ` + "`traffic=\"probe\"`" + ` series on its first request.
- **Outcomes, not reasons.** ` + "`llmprobe_requests_total`" + ` is created with one series per
  outcome (9) for each pair, at the outcome's first reason in the ledger's order (` + "`ok/stop`" + `,
  ` + "`rejected/status_429`" + `, …), but ` + "`unsent`" + ` at ` + "`client_cap`" + `, the pair
  LLMProbeGeneratorInvalid names. The shipped rules and panels aggregate at the outcome level (all
  outcomes, ` + "`outcome=\"ok\"`" + `, ` + "`outcome=\"unsent\"`" + `), so every one of them has a series, and a
  rate of 0, from the start. Any other reason's series is created when that reason first occurs;
  ` + "`increase()`" + ` over a window holding its creation does not see that first request (Prometheus
  cannot tell it from a counter that started before the scrape), so a bad-event count can miss one
  request per (target, class, reason) over the life of the process: a lower bound by at most that.
  A Prometheus that ingests client_golang's created timestamps as zeros (a feature flag in 3.x,
  protobuf scrapes) misses none.
- **Native histograms only**, unless ` + "`telemetry.classic_histograms`" + ` (below).

Series per target, as Prometheus 3 stores them with ` + "`scrape_native_histograms: true`" + ` (a
native histogram is one series; with classic buckets exposed and
` + "`always_scrape_classic_histograms: true`" + `, a histogram adds a series per finite bucket, ` + "`+Inf`" + `,
` + "`_sum`" + ` and ` + "`_count`" + `):

| Term | Series | Which |
|---|---:|---|
| each (class, traffic, during) pair | 21 | 7 counters (planned, dispatched, good, tokens ×2, cached and cache-reported prompt tokens), 9 outcomes, 5 native histograms (TTFT, inter-chunk, TPOT, duration, dispatch lag) |
| … with ` + "`telemetry.classic_histograms`" + ` kept | +100 | 85 finite buckets (18 + 16 + 16 + 19 + 16) + 5 × (` + "`+Inf`" + `, ` + "`_sum`" + `, ` + "`_count`" + `) |
| pairs per class | 1 or 3 | 1 without a ladder; 3 with one (baseline none and ladder, ladder ladder) |
| each class | 2 | scheduled arrival rate (baseline), TTFT gate (when set) |
| each target | 12 | in flight, oldest in flight, generator valid, lag max, 5 invalid causes, target info, identity changes, buffered streams |
| the connection path, each target | 8 | ` + "`llmprobe_http_phase_seconds`" + ` for connect, write, processing, first byte and first content, the connections counter (new, reused) and the connection info; +1 for ` + "`resolve`" + ` (a host name) and +1 for ` + "`tls`" + ` (HTTPS); each phase created on its first observation |
| constant labels (` + "`labels`" + `, file_sd) on any target | +1 | ` + "`llmprobe_target_labels`" + ` on every target, none when no target has labels |
| each limited budget | 1 | ` + "`budget.tokens_per_day`, `budget.requests_per_day`" + ` |
| each turn of a session class | 2 | turns ended (` + "`outcome=\"ok\"`" + `) and the turn's TTFT; +21 with classic buckets kept; +1 for each other outcome a turn ended with |
| each check of a canary class (at most 32 a class) | 2 + 1 to 4 | ` + "`llmprobe_answer_checks_total`" + ` at ` + "`pass`" + ` and ` + "`not_judged`" + `, and ` + "`fail`" + ` with each reason its kind can give (expect, stop, length, model 1; json 2; tool_call 4), created at zero when the class starts (InitChecks); +1 for any other reason that occurs |
| once a ladder ran, each class | 3 + 4 × steps | capacity, knee, ladder arrival rate, and four per-step gauges; +1 per target (last run) |
| each other (pair, reason) that occurred | 1 | at most 30 per pair (the closed set of reasons (ledger.Reasons) less the 9 created) |
| the target's API | 0 | not a label (OpenTelemetry attributes only) |
| server metrics (` + "`server_metrics.url`" + `) | 0 | read into ladder steps and the status page, never exported as ` + "`llmprobe_*`" + ` series |

So a target of C classes, K pairs per class (1 or 3), B limited budgets and session classes of
T₁, T₂, … turns has, once every class has had an ok request and before any ladder ran,

    S = C × (K × (21 + 100·classic) + 2) + 12 + 8 + B + Σᵢ Tᵢ × (2 + 21·classic)

series, plus the ladder and reason terms above. TestCardinality (` + "`test/bench`" + `) starts
` + "`llmprobe run`" + ` against the simulator with three configurations and checks each target's
count on the live ` + "`/metrics`" + ` against S:

| Configuration | S per target |
|---|---:|
| 2 classes, no ladder, native only (2 targets) | 66 |
| 3 classes, a ladder, classic buckets kept (1 target) | 1,115 |
| 2 classes, one a 3-turn session, both budgets, no ladder (3 targets, 3 APIs, server metrics on) | 74 |

Before this rule every (outcome, reason) pair of every (traffic, during) pair was created at
start, ladder ones included, with classic buckets always: a target of 2 classes without a ladder
had 891 series in the text exposition (921 in a Prometheus keeping native and classic series).
Beside the targets' series a prober has a fixed set of its own (build, fleet and reload info, the
drop, ledger, host and cgroup counters, the Go and process collectors): about 80 lines of the
text exposition, whatever the number of targets.

## Classic buckets

` + "`telemetry.classic_histograms`" + ` (default ` + "`false`" + `; read at start) exposes the classic buckets
above beside the native ones on every latency histogram. Off by default because:

- The shipped recording rules, alerts and dashboards read the native histograms only
  (` + "`histogram_quantile`, `histogram_count`" + ` over the native series), so a Prometheus that runs
  them must scrape native histograms: in Prometheus 3.x that is ` + "`scrape_native_histograms: true`" + `
  (the setting is ` + "`false`" + ` by default; from 3.9 the old ` + "`native-histograms`" + ` feature flag does
  nothing, and Prometheus 4 is to make it ` + "`true`" + ` by default).
- Such a Prometheus stores the native histogram and drops the classic buckets exposed beside it
  unless ` + "`always_scrape_classic_histograms: true`" + ` (also ` + "`false`" + ` by default);
  ` + "`convert_classic_histograms_to_nhcb`" + ` does not apply to a histogram that has native buckets.
  With the defaults, the classic buckets are bytes scraped and thrown away: 100 of a pair's 121
  series, most of the exposition.
- Without them a scrape is about a third of the size: at 1,000 targets about 9 MB of protobuf
  and 0.55–0.82 s of CPU a scrape on two cores ([scale](scale.md#many-targets-on-one-prober)).

Turn it on for a consumer that reads only classic histograms: a Prometheus left at
` + "`scrape_native_histograms: false`" + ` (it then gets, of each latency histogram, only ` + "`_count`" + `, ` + "`_sum`" + `
and one ` + "`+Inf`" + ` bucket, and no quantile), Prometheus 2 without the feature flag, or a remote
store without native histograms; and for the overview dashboard's classic-bucket TTFT heatmap,
which is empty otherwise.

## Exemplars

Each latency histogram of a response — TTFT, inter-chunk, TPOT, request duration and a
session's turn TTFT — carries exemplars: ` + "`" + `request_id` + "`" + ` (the ledger record, findable in
` + "`" + `/debug/requests` + "`" + ` and the JSONL ledger) and ` + "`" + `trace_id` + "`" + ` when tracing is on. A Prometheus stores
them with ` + "`" + `--enable-feature=exemplar-storage` + "`" + `, and Grafana draws them on the overview's TTFT
heatmap. The dispatch lag carries none: it measures the prober, not a response worth opening.

` + "`" + `telemetry.exemplars` + "`" + ` (default ` + "`" + `4` + "`" + `, 0–32, ` + "`" + `0` + "`" + ` for none; read at start) is how many each native
histogram keeps between two scrapes. client_golang keeps the latest it is offered but spreads
them over the histogram's values, so a slow request's exemplar survives a run of fast ones; with
classic buckets on, each classic bucket keeps its latest as well. Why 4, not client_golang's 10:

- A baseline of 0.2 req/s makes about 1.5 observations a class between two 15 s scrapes, so 4
  still offers each one for a few scrapes: a Prometheus that misses one scrape loses none.
  During a ladder step, 4 a histogram a scrape is more than a heatmap can show.
- Exemplars were most of a scrape at many targets: a protobuf exemplar (two labels and a
  timestamp) is about 80 bytes, against 2–3 bytes a native bucket. At 1,000 targets of two
  classes, 10 on each of the ten class histograms were 100,000 exemplars a scrape: about 5 MB
  of the 13 MB, and the CPU to encode and compress them each time
  ([scale](scale.md#scrapes-and-their-encoding)). Now there are at most 32,000.
- A Prometheus keeps 100,000 exemplars in all by default (` + "`" + `storage.exemplars.max_exemplars` + "`" + `),
  under one scrape's worth at the old count.

Set it higher for a few targets whose slow requests you follow one by one, or to ` + "`" + `0` + "`" + ` when
nothing reads exemplars.
`
