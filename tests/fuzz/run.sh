#!/bin/sh
# Runs libFuzzer binaries: tests/fuzz/run.sh SECONDS BIN...
#
# Each binary's corpus starts in a temporary directory from its committed seeds
# (tests/fuzz/corpus/NAME/) and what its seed mode writes (PGM_FUZZ_SEED_DIR: fuzz_parse writes
# sample packets of every type and family plus the datagrams of tests/fixtures/*.pcap), then it
# fuzzes for SECONDS (-max_total_time). Prints per binary the executions, executions per second
# and libFuzzer's coverage (cov: edges, ft: features). Exits non-zero if any binary crashed,
# leaked, timed out or could not seed; the failing input is kept in build/fuzz/artifacts/.
# The corpus a run ends with (seeds and what it grew) is kept in build/fuzz/corpus/NAME/, in
# place of the previous run's, for tests/fuzz/coverage.sh to replay (make fuzz-coverage).
set -u
if [ $# -lt 2 ]; then
	echo "usage: $0 SECONDS BIN..." >&2
	exit 2
fi
seconds=$1
shift
root=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgm-fuzz.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
artifacts="$root/build/fuzz/artifacts"
mkdir -p "$artifacts"
pcaps=$(ls "$root"/tests/fixtures/*.pcap 2>/dev/null | tr '\n' ' ')

rc=0
for bin in "$@"; do
	name=$(basename "$bin")
	corpus="$tmp/$name/corpus"
	mkdir -p "$corpus" "$tmp/$name/crash"
	if ! PGM_FUZZ_SEED_DIR="$corpus" PGM_FUZZ_SEED_PCAPS="$pcaps" "$bin" >"$tmp/$name/seed.log" 2>&1; then
		echo "fuzz: $name: seeding failed:"
		cat "$tmp/$name/seed.log"
		rc=1
		continue
	fi
	if [ -d "$root/tests/fuzz/corpus/$name" ]; then
		cp "$root/tests/fuzz/corpus/$name/"* "$corpus/" 2>/dev/null
	fi
	seeds=$(ls "$corpus" | wc -l)
	# whole captures are larger than packets and command lines
	case $name in fuzz_pcap) max_len=16384 ;; *) max_len=4096 ;; esac
	# libFuzzer's entropic schedule updates a 4 MB table of feature frequencies for every
	# feature an input hits: 66 % of fuzz_cp's time, 40 % of fuzz_pcap's and fuzz_cli's
	# (tests/fuzz/README); they run the plain schedule, three and 1.7 times as many inputs.
	# fuzz_config too: 28 % of its replays (tests/fuzz/README).
	case $name in fuzz_cp | fuzz_pcap | fuzz_cli | fuzz_config) schedule=-entropic=0 ;; *) schedule= ;; esac
	# ASan's quarantine of 16 MB instead of 256: an input's allocations stay in it (fuzz_cp's are
	# under 1 MB), so a use after free within the input is still caught, and what is allocated
	# next comes from memory already touched and cached instead of fresh pages.
	ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16} \
	"$bin" $schedule -max_total_time="$seconds" -max_len=$max_len -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 -artifact_prefix="$tmp/$name/crash/" "$corpus" \
		>"$tmp/$name/fuzz.log" 2>&1
	status=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/$name/fuzz.log" | tail -n 1)
	speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$tmp/$name/fuzz.log" | tail -n 1)
	cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$tmp/$name/fuzz.log" | tail -n 1)
	if [ $status -ne 0 ] || [ -n "$(ls "$tmp/$name/crash")" ]; then
		echo "fuzz: $name: FAILED (exit $status) after ${execs:-?} executions"
		grep -E 'ERROR|invariant|SUMMARY|Test unit written' "$tmp/$name/fuzz.log" | head -n 20
		cp "$tmp/$name/crash/"* "$artifacts/" 2>/dev/null
		echo "fuzz: $name: failing inputs copied to $artifacts"
		rc=1
	else
		rm -rf "$root/build/fuzz/corpus/$name"
		mkdir -p "$root/build/fuzz/corpus"
		cp -r "$corpus" "$root/build/fuzz/corpus/$name"
		echo "fuzz: $name: ${execs:-?} executions in ${seconds} s (${speed:-?}/s) without a" \
			"crash ($seeds seeds, ${cov:-cov: ?})"
	fi
done
exit $rc
