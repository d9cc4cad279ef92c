#!/bin/sh
# Checks and unit-tests llmprobe's Prometheus rules with promtool: the shipped
# file (the default mixin configuration's output), then, when go is on PATH,
# the rules generated from the example configuration mixin/example.yaml.
# Usage: alerts/test.sh            (promtool from $PROMTOOL or PATH)
#        PROMTOOL=/path/to/promtool alerts/test.sh
set -eu
cd "$(dirname "$0")"
promtool="${PROMTOOL:-}"
if [ -z "$promtool" ]; then
	promtool="$(command -v promtool || true)"
fi
if [ -z "$promtool" ] || [ ! -x "$promtool" ]; then
	echo "alerts/test.sh: promtool not found: set PROMTOOL or put promtool on PATH" >&2
	exit 2
fi
"$promtool" --version 2>&1 | head -n 1
"$promtool" check rules llmprobe.rules.yml
"$promtool" test rules tests/*_test.yml
if ! command -v go >/dev/null 2>&1; then
	echo "alerts/test.sh: go not found: the example mixin configuration's rules were not tested" >&2
	exit 0
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
go run ../internal/dashgen/cmd/dashgen -config mixin/example.yaml -out "$tmp"
cp mixin/example_test.yml "$tmp/alerts/"
(cd "$tmp/alerts" && "$promtool" check rules llmprobe.rules.yml && "$promtool" test rules example_test.yml)
