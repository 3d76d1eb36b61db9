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
lab_suite ns 300 "$@"
