#!/bin/bash
# Runs every namespace test (tests/ns/*.sh but this runner and the helpers lib*.sh), one at a
# time, and prints a summary. Exit status: non-zero when any test failed or left a namespace
# behind. Needs root.
#   tests/ns/run.sh [TEST-NAME...]
cd "$(dirname "$0")" || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "ns-test: the namespace tests need root" >&2
	exit 1
fi
# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. ../lab/lib.sh
tests=()
if [ $# -gt 0 ]; then
	for t in "$@"; do tests+=("${t%.sh}.sh"); done
else
	for t in ./*.sh; do
		case $t in ./run.sh | ./lib*.sh) ;; *) tests+=("$t") ;; esac
	done
fi
# The lab ids of every test (lab_init); other work may run labs of its own meanwhile.
LAB_IDS_FILE=$(mktemp -t pl-ns-ids.XXXXXX) || exit 1
export LAB_IDS_FILE
trap 'rm -f "$LAB_IDS_FILE"' EXIT
passed=0
failed=""
for t in "${tests[@]}"; do
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
echo "=== ns: $passed of ${#tests[@]} tests passed"
if ! lab_leftovers "$LAB_IDS_FILE"; then
	echo "=== ns: the tests left namespaces behind"
	failed="$failed (leftovers)"
fi
if [ -n "$failed" ]; then
	echo "=== ns: FAILED:$failed"
	exit 1
fi
exit 0
