#!/bin/sh
# What each fuzzer's corpus reaches: tests/fuzz/coverage.sh BIN... (make fuzz-coverage).
#
# BIN are the fuzzers built with clang's source-based coverage (build/fuzzcov/bin/NAME). Each
# replays, once per input (libFuzzer -runs=0), what its seed mode writes, its committed seeds
# (tests/fuzz/corpus/NAME/) and the corpus its last `make fuzz` grew (build/fuzz/corpus/NAME/,
# kept by run.sh), FUZZ_CORPUS_DIR in place of build/fuzz/corpus when set. Then llvm-cov counts
# the lines and functions reached over the whole library (every object of libpgmrouter.a, so
# each target has the same denominator), per target and per source folder, without the
# fuzzers' oracle (tests/fuzz/coverage-ignore.txt). The tables are printed and kept with the
# profiles in build/fuzzcov/report/.
set -u
if [ $# -lt 1 ]; then
	echo "usage: $0 BIN..." >&2
	exit 2
fi
root=$(cd "$(dirname "$0")/../.." && pwd)
grown=${FUZZ_CORPUS_DIR:-$root/build/fuzz/corpus}
out="$root/build/fuzzcov/report"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pgm-fuzzcov.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
profdata=$(command -v llvm-profdata || command -v llvm-profdata-14)
cov=$(command -v llvm-cov || command -v llvm-cov-14)
if [ -z "$profdata" ] || [ -z "$cov" ]; then
	echo "fuzz-coverage: llvm-profdata and llvm-cov are needed (package llvm-14)" >&2
	exit 1
fi
rm -rf "$out"
mkdir -p "$out"
pcaps=$(ls "$root"/tests/fixtures/*.pcap 2>/dev/null | tr '\n' ' ')
# Every object of the library: the denominator of every target.
objects=$(find "$root/build/fuzzcov" -path "$root/build/fuzzcov/bin" -prune -o -name '*.o' -print |
	sort | sed 's/^/-object=/' | tr '\n' ' ')
ignore=$(sed -n 's/^src://p' "$root/tests/fuzz/coverage-ignore.txt" | tr '\n' ' ')

rc=0
for bin in "$@"; do
	name=$(basename "$bin")
	corpus="$tmp/$name"
	mkdir -p "$corpus"
	# the seed mode's inputs (its own coverage is not counted: it writes and exits)
	if ! LLVM_PROFILE_FILE="$tmp/seed.profraw" PGM_FUZZ_SEED_DIR="$corpus" \
		PGM_FUZZ_SEED_PCAPS="$pcaps" "$bin" >"$tmp/$name.seed.log" 2>&1; then
		echo "fuzz-coverage: $name: seeding failed" >&2
		cat "$tmp/$name.seed.log" >&2
		rc=1
		continue
	fi
	cp "$root/tests/fuzz/corpus/$name/"* "$corpus/" 2>/dev/null
	[ -d "$grown/$name" ] && cp "$grown/$name/"* "$corpus/" 2>/dev/null
	inputs=$(ls "$corpus" | wc -l)
	case $name in fuzz_pcap) max_len=16384 ;; *) max_len=4096 ;; esac
	if ! LLVM_PROFILE_FILE="$out/$name.profraw" "$bin" -runs=0 -max_len=$max_len \
		"$corpus" >"$out/$name.log" 2>&1; then
		echo "fuzz-coverage: $name: the replay failed (build/fuzzcov/report/$name.log)" >&2
		tail -n 5 "$out/$name.log" >&2
		rc=1
		continue
	fi
	"$profdata" merge -sparse "$out/$name.profraw" -o "$out/$name.profdata" || {
		rc=1
		continue
	}
	# shellcheck disable=SC2086 # one option a word
	"$cov" export -summary-only -instr-profile="$out/$name.profdata" $objects \
		>"$out/$name.json" 2>"$out/$name.cov.log" || {
		echo "fuzz-coverage: $name: llvm-cov failed" >&2
		tail -n 5 "$out/$name.cov.log" >&2
		rc=1
		continue
	}
	echo "$name $inputs" >>"$out/inputs"
done
[ -s "$out/inputs" ] || exit 1
# all targets together: what any of them reaches
"$profdata" merge -sparse "$out"/*.profdata -o "$tmp/all.profdata" || rc=1
# shellcheck disable=SC2086 # one option a word
"$cov" export -summary-only -instr-profile="$tmp/all.profdata" $objects >"$out/all.json" \
	2>/dev/null || rc=1
# shellcheck disable=SC2086 # one file a word
python3 "$root/tests/fuzz/coverage.py" "$root" "$out" $ignore | tee "$out/coverage.md"
exit $rc
