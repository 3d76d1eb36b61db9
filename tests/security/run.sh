#!/bin/bash
# The attack suite: runs every script of tests/security (each a threat, see README) against a
# live pgmrouterd in namespaces, one at a time, each bounded in time, and prints a summary.
# Exit status: non-zero when any script failed or left a namespace behind. Needs root.
#   tests/security/run.sh [NAME...]
cd "$(dirname "$0")" || exit 1
if [ "$(id -u)" != 0 ]; then
	echo "security-test: the attack suite needs root" >&2
	exit 1
fi
# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. ../lab/lib.sh
tests=()
if [ $# -gt 0 ]; then
	for t in "$@"; do tests+=("./${t%.sh}.sh"); done
else
	for t in ./*.sh; do
		case $t in ./run.sh | ./lib*.sh) ;; *) tests+=("$t") ;; esac
	done
fi
[ ${#tests[@]} -le 20 ] || {
	echo "security-test: more than 20 scripts" >&2
	exit 1
}
LAB_IDS_FILE=$(mktemp -t pl-sec-ids.XXXXXX) || exit 1
export LAB_IDS_FILE
trap 'rm -f "$LAB_IDS_FILE"' EXIT
passed=0
failed=""
for t in "${tests[@]}"; do
	name=$(basename "$t" .sh)
	start=$(date +%s)
	# each script cleans up on exit, INT and TERM (lab_cleanup); timeout sends TERM
	if timeout 240 bash "$t"; then
		passed=$((passed + 1))
		echo "=== security: $name passed ($(($(date +%s) - start)) s)"
	else
		failed="$failed $name"
		echo "=== security: $name FAILED ($(($(date +%s) - start)) s)"
	fi
done
echo "=== security: $passed of ${#tests[@]} scripts passed"
if ! lab_leftovers "$LAB_IDS_FILE"; then
	echo "=== security: the scripts left namespaces behind"
	failed="$failed (leftovers)"
fi
if [ -n "$failed" ]; then
	echo "=== security: FAILED:$failed"
	exit 1
fi
exit 0
