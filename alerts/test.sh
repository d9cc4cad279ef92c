#!/bin/sh
# Checks and unit-tests llmprobe's Prometheus rules with promtool.
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
