#!/bin/bash
# Runs every test stage of `make check` in order, even after a failure, and prints one summary.
# The exit status is non-zero when any stage failed. A failed stage's failure lines are repeated
# after the summary, so the end of the output (all a CI excerpt may keep) says what failed.
cd "$(dirname "$0")/.." || exit 1
stages="layers unit unit-asan fuzz-smoke cli-test deb-test ns-test security-test e2e-test soak-smoke bench-smoke"
logs=$(mktemp -d -t pl-check-logs.XXXXXX) || exit 1
trap 'rm -rf "$logs"' EXIT
failed=""
for s in $stages; do
	echo "=== check: $s"
	start=$(date +%s)
	make --no-print-directory "$s" 2>&1 | tee "$logs/$s.log"
	if [ "${PIPESTATUS[0]}" = 0 ]; then
		echo "=== check: $s passed ($(($(date +%s) - start)) s)"
	else
		echo "=== check: $s FAILED ($(($(date +%s) - start)) s)"
		failed="$failed $s"
	fi
done
# Passed on a second run: named at the end whatever the outcome (tests/e2e/run.sh, E2E_RETRIES).
grep -h '^!!! e2e: FLAKY' "$logs"/*.log | head -n 20
if [ -z "$failed" ]; then
	echo "=== check: all stages passed"
	exit 0
fi
for s in $failed; do
	echo "=== check: $s: its failure lines (at most 40)"
	grep -E 'FAIL|not ok|!!!|no result|[Ee]rror|ERROR|Segmentation|Sanitizer|timed out|Assertion' \
		"$logs/$s.log" | tail -n 40 | sed 's/^/    /'
done
echo "=== check: FAILED:$failed"
exit 1
