#!/bin/sh
# The folders are layers (README, Layout): a file may include headers of its own folder and of
# the folders listed for it below, nothing else. Prints every include that breaks this and exits
# non-zero when there is one.
cd "$(dirname "$0")/.." || exit 1

# folder: the folders it may include, lowest first
allowed() {
	case $1 in
	dataplane/wire) echo "" ;;
	router/lib) echo "" ;;
	cli) echo "" ;;
	control) echo "dataplane/wire" ;;
	dataplane) echo "dataplane/wire" ;;
	cli/client) echo "cli" ;;
	router/assist) echo "dataplane/wire dataplane control router/lib" ;;
	router/vty) echo "dataplane/wire dataplane control router/lib cli router/assist" ;;
	router/snmp) echo "dataplane/wire dataplane control router/lib cli router/assist router/vty" ;;
	router) echo "dataplane/wire dataplane control router/lib cli router/assist router/vty router/snmp" ;;
	*) echo "?" ;;
	esac
}

bad=0
for f in $(find dataplane control cli router -name '*.[ch]' | sort); do
	dir=${f%/*}
	ok=$(allowed "$dir")
	if [ "$ok" = "?" ]; then
		echo "$f: folder $dir is in no layer (tests/layers.sh)"
		bad=1
		continue
	fi
	grep -n '^#include "' "$f" | while IFS= read -r line; do
		inc=${line#*#include \"}
		inc=${inc%%\"*}
		idir=${inc%/*}
		[ "$idir" = "$dir" ] && continue
		case " $ok " in
		*" $idir "*) ;;
		*) echo "$f:${line%%:*}: includes $inc: $dir may not include $idir" ;;
		esac
	done
done >"${TMPDIR:-/tmp}/layers.$$"
if [ -s "${TMPDIR:-/tmp}/layers.$$" ] || [ $bad = 1 ]; then
	cat "${TMPDIR:-/tmp}/layers.$$"
	rm -f "${TMPDIR:-/tmp}/layers.$$"
	echo "layers: FAILED"
	exit 1
fi
rm -f "${TMPDIR:-/tmp}/layers.$$"
echo "layers: every include follows the layering"
