#!/bin/sh
# Starts a throwaway Prometheus (native histograms on, llmprobe's rules loaded,
# OTLP receiver enabled) scraping an llmprobe admin address on 127.0.0.1.
#
# Usage:
#   test/e2e/prometheus.sh ADMIN_ADDR [-- COMMAND ...]
#
#   ADMIN_ADDR  host:port of llmprobe's /metrics (e.g. 127.0.0.1:9464)
#   COMMAND     run with LLMPROBE_PROMETHEUS_URL set, then stop Prometheus and
#               exit with COMMAND's status. Without COMMAND, Prometheus keeps
#               running in the foreground until interrupted.
#
# Environment:
#   PROMETHEUS       prometheus binary (default: PATH, then ~/.cache/llmprobe/bin/prometheus)
#   PROMETHEUS_PORT  listen port on 127.0.0.1 (default 9090)
#
# Example (look at llmprobe's metrics and rules in a throwaway Prometheus):
#   llmprobe sim --listen 127.0.0.1:8000 &
#   llmprobe run --config.file config/simulator.yaml &   # admin.listen: 127.0.0.1:9464
#   test/e2e/prometheus.sh 127.0.0.1:9464
# The automated version of this (every dashboard query run against a real
# Prometheus) is test/integration, which .ci/run runs.
set -eu

if [ $# -lt 1 ]; then
	sed -n '2,20p' "$0" >&2
	exit 2
fi
target="$1"
shift
if [ $# -gt 0 ] && [ "$1" = "--" ]; then
	shift
fi

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
prom="${PROMETHEUS:-}"
if [ -z "$prom" ]; then
	prom="$(command -v prometheus || true)"
fi
if [ -z "$prom" ] && [ -x "${HOME:-/root}/.cache/llmprobe/bin/prometheus" ]; then
	prom="${HOME:-/root}/.cache/llmprobe/bin/prometheus"
fi
if [ -z "$prom" ]; then
	echo "prometheus.sh: prometheus not found: set PROMETHEUS or put it on PATH" >&2
	exit 2
fi
port="${PROMETHEUS_PORT:-9090}"
url="http://127.0.0.1:$port"

work="$(mktemp -d "${TMPDIR:-/tmp}/llmprobe-prom.XXXXXX")"
sed -e "s|@TARGET@|$target|" -e "s|@RULES@|$root/alerts/llmprobe.rules.yml|" \
	"$here/prometheus.yml.tmpl" >"$work/prometheus.yml"

"$prom" \
	--config.file="$work/prometheus.yml" \
	--storage.tsdb.path="$work/data" \
	--web.listen-address="127.0.0.1:$port" \
	--web.enable-otlp-receiver \
	--log.level=warn \
	>"$work/prometheus.log" 2>&1 &
pid=$!
cleanup() {
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT INT TERM

i=0
until curl -fsS "$url/-/ready" >/dev/null 2>&1; do
	i=$((i + 1))
	if [ "$i" -gt 60 ] || ! kill -0 "$pid" 2>/dev/null; then
		echo "prometheus.sh: Prometheus did not become ready; log:" >&2
		cat "$work/prometheus.log" >&2
		exit 1
	fi
	sleep 1
done
echo "prometheus.sh: Prometheus $url (pid $pid) scraping $target" >&2

if [ $# -eq 0 ]; then
	wait "$pid"
	exit $?
fi
status=0
LLMPROBE_PROMETHEUS_URL="$url" "$@" || status=$?
exit "$status"
