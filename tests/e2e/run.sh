#!/bin/bash
# Runs the end-to-end scenarios (every tests/e2e/*/run.sh, or the ones named as arguments), each
# in its own process, prints each scenario's table and then one summary. Exits non-zero when a
# scenario failed, crashed, timed out or printed no result line.
#
#   tests/e2e/run.sh [SCENARIO...]
#   E2E_REQUIRE_ROUTER=1   a skipped "with pgmrouterd" variant counts as a failure
#   E2E_TIMEOUT=S          per-scenario limit in seconds (default 300)
#   E2E_RETRIES=N          a failed scenario runs again up to N times (default 1; 0: never).
#                          The scenarios' checks carry statistical tolerances and share two
#                          CPUs with everything else; a scenario that fails and then passes
#                          is reported as FLAKY with its first run's failed checks, so an
#                          intermittent fault stays visible without failing the whole suite.
#   ROUTER_CMD=...         the router daemon command (default build/pgmrouterd)
cd "$(dirname "$0")" || exit 1
E2E_DIR=$(pwd)
# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. ../lab/lib.sh

if [ "$(id -u)" != 0 ]; then
	echo "e2e: needs root (network namespaces)" >&2
	exit 1
fi
for p in pgm-send pgm-recv zmq-pub zmq-sub; do
	if [ ! -x "../../build/peers/$p" ]; then
		echo "e2e: build/peers/$p missing; run make tools" >&2
		exit 1
	fi
done

if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	scenarios=()
	# A scenario with a file `manual` runs only when named (the file says why).
	for f in */run.sh; do
		[ -e "${f%/run.sh}/manual" ] || scenarios+=("${f%/run.sh}")
	done
fi

logdir=$(mktemp -d -t pl-e2e-logs.XXXXXX) || exit 1
trap 'rm -rf "$logdir"' EXIT
limit=${E2E_TIMEOUT:-300}
retries=${E2E_RETRIES:-1}
summary=()
flaky=()
failed=0
start=$(date +%s)
# The lab ids of every case run (lab_init); other work may run labs of its own meanwhile.
export LAB_IDS_FILE="$logdir/ids"
: >"$LAB_IDS_FILE"

for s in "${scenarios[@]}"; do
	if [ ! -x "$E2E_DIR/$s/run.sh" ]; then
		echo "e2e: no scenario $s" >&2
		summary+=("$s|missing|-|-|-|-")
		failed=1
		continue
	fi
	attempt=1
	first=""
	while :; do
		# Own session, so a timeout ends the scenario's trap handler cleanly (TERM, then KILL).
		# A scenario with more cases may ask for more time (a file `timeout`, seconds).
		timeout -k 20 "$(cat "$E2E_DIR/$s/timeout" 2>/dev/null || echo "$limit")" "$E2E_DIR/$s/run.sh" 2>&1 | tee "$logdir/$s.log"
		rc=${PIPESTATUS[0]}
		line=$(grep '^E2E-RESULT ' "$logdir/$s.log" | tail -n 1)
		if [ "$rc" = 0 ] || [ "$attempt" -gt "$retries" ]; then
			# Passed after failing: FLAKY in the summary, with the first failure's checks.
			[ "$rc" != 0 ] || [ -z "$first" ] || flaky+=("$s: $first")
			break
		fi
		if [ -z "$first" ]; then
			first=$(grep -E '^--- FAILED|packet errors:' "$logdir/$s.log" | head -n 5 | paste -sd ';' -)
			first=${first:-exit $rc${line:+, $line}}
		fi
		echo "!!! e2e: $s failed (exit $rc); running it again (E2E_RETRIES=$retries)"
		attempt=$((attempt + 1))
	done
	get() { echo "$line" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
	if [ -z "$line" ]; then
		summary+=("$s|no result (exit $rc)|-|-|-|-")
		failed=1
	else
		summary+=("$s|$(get without)|$(get with)|$(get checks)|$(get failed)|$(get seconds)")
		[ "$rc" = 0 ] || failed=1
	fi
	echo
done

left=$(lab_leftovers "$LAB_IDS_FILE")
echo "=== e2e summary"
printf "%-16s %-22s %-10s %7s %7s %8s\n" scenario "without pgmrouterd" "with" checks failed seconds
for row in "${summary[@]}"; do
	IFS='|' read -r name wo wi ch fa se <<<"$row"
	printf "%-16s %-22s %-10s %7s %7s %8s\n" "$name" "$wo" "$wi" "$ch" "$fa" "$se"
done
if printf '%s\n' "${summary[@]}" | grep -q '|skipped|'; then
	echo "!!! the 'with pgmrouterd' variants were SKIPPED: no daemon binary;" \
		"router assist was not tested"
fi
if [ ${#flaky[@]} -gt 0 ]; then
	# One line each, for make check's last lines (tests/run-checks.sh)
	printf '!!! e2e: FLAKY (failed, then passed when run again): %s\n' "${flaky[@]}"
fi
if [ -n "$left" ]; then
	echo "!!! e2e: the runs left namespaces behind:"
	awk '{ print "    " $0 }' <<<"$left"
	failed=1
fi
echo "=== e2e: $([ $failed = 0 ] && echo passed || echo FAILED) in $(($(date +%s) - start)) s"
exit $failed
