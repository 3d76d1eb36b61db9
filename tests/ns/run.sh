#!/bin/sh
# Runs every namespace test (tests/ns/*.sh but this runner and the helpers lib*.sh), one at a
# time, and prints a summary. Exit status: non-zero when any test failed. Needs root.
#   tests/ns/run.sh [TEST-NAME...]
cd "$(dirname "$0")" || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "ns-test: the namespace tests need root" >&2
	exit 1
fi
if [ $# -gt 0 ]; then
	tests=""
	for t in "$@"; do
		tests="$tests ${t%.sh}.sh"
	done
else
	tests=$(ls ./*.sh | grep -v -e '/run\.sh$' -e '/lib[^/]*\.sh$')
fi
passed=0
failed=""
for t in $tests; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	if timeout 300 bash "$t"; then
		passed=$((passed + 1))
		echo "=== ns: $name passed ($(($(date +%s) - start)) s)"
	else
		failed="$failed $name"
		echo "=== ns: $name FAILED ($(($(date +%s) - start)) s)"
	fi
done
total=$(echo $tests | wc -w)
echo "=== ns: $passed of $total tests passed"
if [ -n "$failed" ]; then
	echo "=== ns: FAILED:$failed"
	exit 1
fi
exit 0
