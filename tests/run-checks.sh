#!/bin/sh
# Runs every test stage of `make check` in order, even after a failure, and prints one summary.
# The exit status is non-zero when any stage failed.
cd "$(dirname "$0")/.." || exit 1
stages="layers unit unit-asan fuzz-smoke cli-test deb-test ns-test security-test e2e-test soak-smoke bench-smoke"
failed=""
for s in $stages; do
	echo "=== check: $s"
	start=$(date +%s)
	if make --no-print-directory "$s"; then
		echo "=== check: $s passed ($(($(date +%s) - start)) s)"
	else
		echo "=== check: $s FAILED ($(($(date +%s) - start)) s)"
		failed="$failed $s"
	fi
done
if [ -n "$failed" ]; then
	echo "=== check: FAILED:$failed"
	exit 1
fi
echo "=== check: all stages passed"
