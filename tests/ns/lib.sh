# shellcheck shell=bash
# Variables set here are read by the tests that source this file:
# shellcheck disable=SC2034
#
# Shared helpers for the namespace tests (tests/ns/*.sh; bash; sourced, not run), on top of the
# lab (tests/lab/lib.sh), which makes the namespaces and links, starts and tracks the processes,
# waits, starts pgmrouterd and removes everything on exit, even on failure. What is the tests'
# own is here: their small topologies, the dp-harness helpers and the check/finish reporting.
#
# Every test is one lab run, tagged "ns": its namespaces are pl-ns-xxxxxx-NAME, its files are in
# LAB_DIR (LAB_KEEP=1 keeps them, to look into a failure; LAB_TAG_PREFIX keeps parallel runs
# apart). Nodes are made with lab_host and lab_router, joined by plain veth links (lab_link).
#
# The standard topology (topo_router):
#
#   src (s0 198.18.1.2) --- (up0 198.18.1.1) rtr (d1 198.18.2.1) --- (dn 198.18.2.2) r1
#                                               (d2 198.18.3.1) --- (dn 198.18.3.2) r2
#
# with smcroute in rtr forwarding (198.18.1.2, 239.192.0.1) from up0 to d1 and d2.

set -u

NS_TEST=${NS_TEST:-$(basename "$0" .sh)}
NS_FAILS=0
NS_CHECKS=0
GROUP=239.192.0.1
SRC_ADDR=198.18.1.2

log() { echo "[$NS_TEST] $*"; }

# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"
HARNESS=${HARNESS:-"$LAB_PEERS/dp-harness"}
lab_init ns
[ "${LAB_VERBOSE:-0}" = 1 ] && log "lab run $LAB_ID"

# check DESCRIPTION COMMAND...: counts a failure when COMMAND fails.
check() {
	local desc
	desc=$1
	shift
	NS_CHECKS=$((NS_CHECKS + 1))
	if "$@"; then
		log "ok   $desc"
	else
		log "FAIL $desc"
		NS_FAILS=$((NS_FAILS + 1))
	fi
}

# finish: the test's exit status.
finish() {
	if [ "$NS_FAILS" -gt 0 ]; then
		log "$NS_FAILS of $NS_CHECKS checks failed"
		exit 1
	fi
	log "all $NS_CHECKS checks passed"
	exit 0
}

# need PROGRAM...: ends the test when one of the programs is not built.
need() {
	local b
	for b in "$@"; do
		[ -x "$b" ] || {
			log "missing $b (run make)"
			exit 1
		}
	done
}

# ended PID SECONDS: true when the process (started with lab_spawn) ended within SECONDS,
# whatever its exit status (lab_wait_pid, which kills it at the limit).
ended() {
	lab_wait_pid "$1" "$2"
	[ $? != 124 ]
}

# count_lines FILE PATTERN: lines of FILE matching the extended regular expression.
count_lines() {
	grep -Ec -- "$2" "$1" 2>/dev/null || true
}

topo_router() {
	lab_host src
	lab_router rtr
	lab_host r1
	lab_host r2
	lab_link src s0 198.18.1.2/24 rtr up0 198.18.1.1/24
	lab_link rtr d1 198.18.2.1/24 r1 dn 198.18.2.2/24
	lab_link rtr d2 198.18.3.1/24 r2 dn 198.18.3.2/24
	lab_route src default 198.18.1.1
	lab_route r1 default 198.18.2.1
	lab_route r2 default 198.18.3.1
	# smcroute's (S,G) route, in the kernel before the test sends anything (lab_smcroute_start
	# waits for it).
	lab_mroute rtr up0 "$SRC_ADDR" "$GROUP" d1 d2
	lab_smcroute_start rtr
}

# start_consumer OUTFILE ARGS...: dp-harness consume in rtr, waiting until its queue is bound
# (and its rules installed when --if is given). CONSUMER_PID.
start_consumer() {
	local out=$1
	shift
	lab_spawn_ready rtr "$out" "$LAB_DIR/consumer.ready" "$HARNESS" consume \
		--ready "$LAB_DIR/consumer.ready" "$@" || return 1
	CONSUMER_PID=$LAB_PID
}

# start_sniffer NAME IF OUTFILE [ARGS...]: dp-harness sniff in namespace NAME on IF.
start_sniffer() {
	local sn=$1 sif=$2 sout=$3 ready
	shift 3
	ready="$LAB_DIR/sniff-$sn-$sif.ready"
	lab_spawn_ready "$sn" "$sout" "$ready" "$HARNESS" sniff --if "$sif" --ready "$ready" "$@"
}

# start_receiver_sniffers: start_sniffer on dn of r1 and of r2 (topo_router), into
# $LAB_DIR/r1.sniff and $LAB_DIR/r2.sniff; ends the test when one does not start.
start_receiver_sniffers() {
	start_sniffer r1 dn "$LAB_DIR/r1.sniff" || exit 1
	start_sniffer r2 dn "$LAB_DIR/r2.sniff" || exit 1
}

# send NAME ARGS...: dp-harness send in namespace NAME.
send() {
	local sn=$1
	shift
	lab_exec "$sn" "$HARNESS" send "$@" >/dev/null
}

# The kernel's counters of queue Q in namespace NAME: "total dropped user_dropped id_sequence".
queue_counters() {
	lab_exec "$1" cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null |
		awk -v q="$2" '$1 == q { print $3, $6, $7, $8 }'
}

# Rules as iptables-save prints them, without comments and counters.
saved_rules() {
	lab_exec "$1" iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
}

# The interception rules of ours in namespace NAME, whichever backend holds them
# (dataplane/rules.h): the nftables table ip pgmrouter, or the PGMROUTER chains of iptables;
# lab_router_rules lists them, one line each, counters zeroed.
# our_backend NAME: nftables, iptables, or nothing.
our_backend() {
	if lab_exec "$1" nft list table ip pgmrouter >/dev/null 2>&1; then
		echo nftables
	elif lab_exec "$1" iptables-save -t mangle 2>/dev/null | grep -q '^:PGMROUTER-'; then
		echo iptables
	fi
}
# our_queue_rules NAME: our queue rules only.
our_queue_rules() { lab_router_rules "$1" | grep -E 'queue num|NFQUEUE'; }
# our_if_rules NAME IF: how many of our queue rules name interface IF.
our_if_rules() { our_queue_rules "$1" | grep -cE -- "(-[io] $2 |ifname \"$2\" )"; }
# rules_per_if NAME: queue rules per interface of the backend in use: nftables one per hook
# (prerouting, input); iptables per encapsulation (IP, UDP): prerouting 3 (by type, multicast
# NAK/NNAK, too short) and input 2 (by type, too short).
rules_per_if() {
	case $(our_backend "$1") in
	nftables) echo 2 ;;
	iptables) echo 10 ;;
	*) echo 0 ;;
	esac
}
# rules_any_if NAME: queue rules naming no interface (multicast SPM and RDATA at prerouting, which
# the daemon replicates): nftables one per type and encapsulation, iptables one per encapsulation.
rules_any_if() {
	case $(our_backend "$1") in
	nftables) echo 4 ;;
	iptables) echo 2 ;;
	*) echo 0 ;;
	esac
}
# our_entries NAME: how many hooks enter our rules: base chains of our table, or jumps to our
# chains from the built-in ones (both 2 when installed once: prerouting, input).
our_entries() {
	case $(our_backend "$1") in
	nftables) lab_router_rules "$1" | grep -c 'type filter hook' ;;
	iptables) saved_rules "$1" | grep -c '^-A [A-Z]* -j PGMROUTER-' ;;
	*) echo 0 ;;
	esac
}
# our_matches NAME HOOK: packets our queue rules at HOOK (prerouting, input) matched.
our_matches() {
	case $(our_backend "$1") in
	nftables)
		for c in "queue-$2" "pgm-$2" "udp-$2"; do
			lab_exec "$1" nft list chain ip pgmrouter "$c" 2>/dev/null
		done | awk '/queue num/ { for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) }
				END { print s + 0 }'
		;;
	iptables)
		local c
		case $2 in prerouting) c=PRE ;; input) c=IN ;; *) c=FWD ;; esac
		lab_exec "$1" iptables -t mangle -vnxL "PGMROUTER-$c" | awk '/NFQUEUE/ { s += $1 } END { print s + 0 }'
		;;
	*) echo 0 ;;
	esac
}
