// Package metricdef is the one source of llmprobe's metric names: the
// llmprobe_* series of its telemetry contract (docs/metrics.md) and the
// probe_* series the /probe endpoint answers with, with their help. The
// telemetry catalog builds its collectors from these names (with their
// types, units, labels and help), the /probe handler its answer, and
// dashgen checks every series its dashboards and rules read against
// Prober. A new metric's name is written here once. A leaf: it imports
// nothing of the project.
package metricdef

// Names of the llmprobe_* metrics (histograms by their native name; the
// classic series add _bucket, _sum and _count).
const (
	TTFT                = "llmprobe_time_to_first_token_seconds"
	Chunk               = "llmprobe_inter_chunk_latency_seconds"
	TPOT                = "llmprobe_time_per_output_token_seconds"
	Duration            = "llmprobe_request_duration_seconds"
	Lag                 = "llmprobe_dispatch_lag_seconds"
	TurnTTFT            = "llmprobe_session_turn_time_to_first_token_seconds"
	Turns               = "llmprobe_session_turns_total"
	HTTPPhase           = "llmprobe_http_phase_seconds"
	HTTPConns           = "llmprobe_http_connections_total"
	HTTPConnInfo        = "llmprobe_http_connection_info"
	Planned             = "llmprobe_requests_planned_total"
	Dispatched          = "llmprobe_requests_dispatched_total"
	Requests            = "llmprobe_requests_total"
	Good                = "llmprobe_requests_good_total"
	Tokens              = "llmprobe_tokens_total"
	CachedPrompt        = "llmprobe_cached_prompt_tokens_total"
	CacheReported       = "llmprobe_cache_reported_prompt_tokens_total"
	IdentityChanges     = "llmprobe_target_identity_changes_total"
	AnswerChecks        = "llmprobe_answer_checks_total"
	Dropped             = "llmprobe_telemetry_dropped_total"
	InFlight            = "llmprobe_in_flight_requests"
	Oldest              = "llmprobe_oldest_in_flight_seconds"
	LagMax              = "llmprobe_dispatch_lag_max_seconds"
	ArrivalRate         = "llmprobe_arrival_rate_requests_per_second"
	GeneratorValid      = "llmprobe_generator_valid"
	InvalidCause        = "llmprobe_generator_invalid_cause"
	Capacity            = "llmprobe_capacity_requests_per_second"
	Knee                = "llmprobe_ladder_knee_requests_per_second"
	LadderIdentity      = "llmprobe_ladder_identity_info"
	LadderLast          = "llmprobe_ladder_last_run_timestamp_seconds"
	StepRate            = "llmprobe_ladder_step_offered_rate_requests_per_second"
	StepTTFT            = "llmprobe_ladder_step_ttft_p95_seconds"
	StepGoodput         = "llmprobe_ladder_step_goodput_requests_per_second"
	StepSaturated       = "llmprobe_ladder_step_saturated"
	BudgetTokens        = "llmprobe_budget_remaining_tokens"
	BudgetRequests      = "llmprobe_budget_remaining_requests"
	SLOTTFT             = "llmprobe_slo_ttft_seconds"
	BuildInfo           = "llmprobe_build_info"
	TargetInfo          = "llmprobe_target_info"
	FleetInfo           = "llmprobe_fleet_info"
	LedgerWritten       = "llmprobe_ledger_records_written_total"
	LedgerDropped       = "llmprobe_ledger_records_dropped_total"
	LedgerWriteErrs     = "llmprobe_ledger_write_errors_total"
	LedgerRotations     = "llmprobe_ledger_rotations_total"
	HostBusy            = "llmprobe_host_cpu_busy_seconds_total"
	HostSteal           = "llmprobe_host_cpu_steal_seconds_total"
	HostCPUs            = "llmprobe_host_cpus"
	HostPressure        = "llmprobe_host_cpu_pressure_waiting_seconds_total"
	CgroupPressure      = "llmprobe_cgroup_cpu_pressure_waiting_seconds_total"
	CgroupPeriods       = "llmprobe_cgroup_cpu_periods_total"
	CgroupThrottled     = "llmprobe_cgroup_cpu_throttled_periods_total"
	CgroupThrottledSecs = "llmprobe_cgroup_cpu_throttled_seconds_total"
	CgroupQuota         = "llmprobe_cgroup_cpu_quota_cpus"
	RunQueueWait        = "llmprobe_run_queue_wait_seconds_total"
	Buffered            = "llmprobe_buffered_streams_total"
	LeafExpiry          = "llmprobe_tls_leaf_cert_expiry_timestamp_seconds"
	EarliestCert        = "llmprobe_tls_earliest_cert_expiry_timestamp_seconds"
	LastChainCert       = "llmprobe_tls_last_chain_expiry_timestamp_seconds"
	ProbeRefused        = "llmprobe_probe_refused_total"
	ReloadOK            = "llmprobe_config_last_reload_successful"
	ReloadTime          = "llmprobe_config_last_reload_success_timestamp_seconds"
	TargetFileChanges   = "llmprobe_target_files_changes_total"
	TargetFileTargets   = "llmprobe_target_files_targets"
	TargetLabels        = "llmprobe_target_labels"
	LaddersRunning      = "llmprobe_ladders_running"
	LaddersWaiting      = "llmprobe_ladders_waiting"
)

// Prober lists every llmprobe_* metric name: the telemetry catalog has
// exactly these (telemetry's TestCatalogIsMetricdef), and the dashboards
// and rules may read only these and the series Prometheus and
// client_golang write.
var Prober = []string{
	TTFT,
	Chunk,
	TPOT,
	Duration,
	Lag,
	TurnTTFT,
	Turns,
	HTTPPhase,
	HTTPConns,
	HTTPConnInfo,
	Planned,
	Dispatched,
	Requests,
	Good,
	Tokens,
	CachedPrompt,
	CacheReported,
	IdentityChanges,
	AnswerChecks,
	Dropped,
	InFlight,
	Oldest,
	LagMax,
	ArrivalRate,
	GeneratorValid,
	InvalidCause,
	Capacity,
	Knee,
	LadderIdentity,
	LadderLast,
	StepRate,
	StepTTFT,
	StepGoodput,
	StepSaturated,
	BudgetTokens,
	BudgetRequests,
	SLOTTFT,
	BuildInfo,
	TargetInfo,
	FleetInfo,
	LedgerWritten,
	LedgerDropped,
	LedgerWriteErrs,
	LedgerRotations,
	HostBusy,
	HostSteal,
	HostCPUs,
	HostPressure,
	CgroupPressure,
	CgroupPeriods,
	CgroupThrottled,
	CgroupThrottledSecs,
	CgroupQuota,
	RunQueueWait,
	Buffered,
	LeafExpiry,
	EarliestCert,
	LastChainCert,
	ProbeRefused,
	ReloadOK,
	ReloadTime,
	TargetFileChanges,
	TargetFileTargets,
	TargetLabels,
	LaddersRunning,
	LaddersWaiting,
}
