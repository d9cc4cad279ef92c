package dashgen

// Metrics are the metric names of llmprobe's telemetry contract that the
// dashboards and rules may read (histograms by their native name; the
// classic series add _bucket, _sum and _count). The list is the telemetry
// catalog's names (telemetry.Metrics, docs/metrics.md), written here so
// that dashgen imports nothing of the prober; TestMetricsAreTheCatalog
// keeps the two equal.
var Metrics = []string{
	"llmprobe_time_to_first_token_seconds",
	"llmprobe_inter_chunk_latency_seconds",
	"llmprobe_time_per_output_token_seconds",
	"llmprobe_request_duration_seconds",
	"llmprobe_dispatch_lag_seconds",
	"llmprobe_session_turn_time_to_first_token_seconds",
	"llmprobe_session_turns_total",
	"llmprobe_http_phase_seconds",
	"llmprobe_http_connections_total",
	"llmprobe_http_connection_info",
	"llmprobe_requests_planned_total",
	"llmprobe_requests_dispatched_total",
	"llmprobe_requests_total",
	"llmprobe_requests_good_total",
	"llmprobe_answer_checks_total",
	"llmprobe_tokens_total",
	"llmprobe_cached_prompt_tokens_total",
	"llmprobe_cache_reported_prompt_tokens_total",
	"llmprobe_target_identity_changes_total",
	"llmprobe_telemetry_dropped_total",
	"llmprobe_in_flight_requests",
	"llmprobe_oldest_in_flight_seconds",
	"llmprobe_dispatch_lag_max_seconds",
	"llmprobe_arrival_rate_requests_per_second",
	"llmprobe_generator_valid",
	"llmprobe_generator_invalid_cause",
	"llmprobe_capacity_requests_per_second",
	"llmprobe_ladder_knee_requests_per_second",
	"llmprobe_ladder_identity_info",
	"llmprobe_ladder_last_run_timestamp_seconds",
	"llmprobe_ladder_step_offered_rate_requests_per_second",
	"llmprobe_ladder_step_ttft_p95_seconds",
	"llmprobe_ladder_step_goodput_requests_per_second",
	"llmprobe_ladder_step_saturated",
	"llmprobe_budget_remaining_tokens",
	"llmprobe_budget_remaining_requests",
	"llmprobe_slo_ttft_seconds",
	"llmprobe_build_info",
	"llmprobe_target_info",
	"llmprobe_fleet_info",
	"llmprobe_ledger_records_written_total",
	"llmprobe_ledger_records_dropped_total",
	"llmprobe_ledger_write_errors_total",
	"llmprobe_ledger_rotations_total",
	"llmprobe_host_cpu_busy_seconds_total",
	"llmprobe_host_cpu_steal_seconds_total",
	"llmprobe_host_cpus",
	"llmprobe_host_cpu_pressure_waiting_seconds_total",
	"llmprobe_cgroup_cpu_pressure_waiting_seconds_total",
	"llmprobe_cgroup_cpu_periods_total",
	"llmprobe_cgroup_cpu_throttled_periods_total",
	"llmprobe_cgroup_cpu_throttled_seconds_total",
	"llmprobe_cgroup_cpu_quota_cpus",
	"llmprobe_run_queue_wait_seconds_total",
	"llmprobe_buffered_streams_total",
	"llmprobe_tls_leaf_cert_expiry_timestamp_seconds",
	"llmprobe_tls_earliest_cert_expiry_timestamp_seconds",
	"llmprobe_tls_last_chain_expiry_timestamp_seconds",
	"llmprobe_probe_refused_total",
	"llmprobe_config_last_reload_successful",
	"llmprobe_config_last_reload_success_timestamp_seconds",
	"llmprobe_target_files_changes_total",
	"llmprobe_target_files_targets",
	"llmprobe_target_labels",
	"llmprobe_ladders_running",
	"llmprobe_ladders_waiting",
}

// ScrapeMetrics are the series Prometheus itself writes for the llmprobe job.
var ScrapeMetrics = []string{"up", "scrape_duration_seconds"}

// HostMetrics are the prober process's own health series (client_golang's
// Go and process collectors): Go scheduler latency (a classic histogram)
// and CPU time, which tell a starved prober host from a slow target.
var HostMetrics = []string{"go_sched_latencies_seconds", "process_cpu_seconds_total"}
