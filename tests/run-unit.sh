#!/bin/sh
# Runs Check runners given as arguments; each prints Check's summary line.
# Exit status: non-zero when any runner failed or none was given.
[ $# -gt 0 ] || { echo "run-unit: no test runners" >&2; exit 1; }
rc=0
for t in "$@"; do
	echo "--- $(basename "$t")"
	"$t" || { echo "--- $(basename "$t") FAILED (exit $?)"; rc=1; }
done
exit $rc
