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
lab_suite security 300 "$@"
