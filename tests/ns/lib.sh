# Shared helpers for the namespace tests (bash; sourced, not run). Every test creates its own network
# namespaces, named "pd-<test>-<pid>-<role>", and deletes them on exit, even on failure.
#
# The standard topology (topo_router):
#
#   src (s0 198.18.1.2) --- (up0 198.18.1.1) rtr (d1 198.18.2.1) --- (dn 198.18.2.2) r1
#                                               (d2 198.18.3.1) --- (dn 198.18.3.2) r2
#
# with smcroute in rtr forwarding (198.18.1.2, 239.192.0.1) from up0 to d1 and d2.

set -u

NS_TEST=${NS_TEST:-$(basename "$0" .sh)}
NS_PFX="${NS_PREFIX:-pd}-${NS_TEST}-$$" # NS_PREFIX: parallel runs apart
NS_TMP=$(mktemp -d)
NS_FAILS=0
NS_CHECKS=0
NS_PIDS=""
NS_LIST=""
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HARNESS=${HARNESS:-"$ROOT/build/peers/dp-harness"}
GROUP=239.192.0.1
SRC_ADDR=198.18.1.2

ns_cleanup() {
	for p in $NS_PIDS; do
		kill "$p" 2>/dev/null
	done
	for p in $NS_PIDS; do
		wait "$p" 2>/dev/null
	done
	for n in $NS_LIST; do
		ip netns del "$n" 2>/dev/null
	done
	rm -rf "$NS_TMP"
}
trap ns_cleanup EXIT
trap 'exit 130' INT TERM

log() { echo "[$NS_TEST] $*"; }

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

need_root() {
	if [ "$(id -u)" != 0 ]; then
		log "needs root"
		exit 1
	fi
	[ -x "$HARNESS" ] || { log "missing $HARNESS (run make)"; exit 1; }
}

# ns NAME: the full name of a namespace of this test.
ns() { echo "${NS_PFX}-$1"; }

# nsx NAME CMD...: runs CMD inside namespace NAME.
nsx() {
	local n
	n=$(ns "$1")
	shift
	ip netns exec "$n" "$@"
}

ns_add() {
	local n
	n=$(ns "$1")
	ip netns add "$n" || { log "cannot create namespace $n"; exit 1; }
	NS_LIST="$NS_LIST $n"
	ip -n "$n" link set lo up
	# Namespaces start from the kernel's defaults; make the relevant ones explicit.
	ip netns exec "$n" sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
}

# veth NS_A IF_A ADDR_A NS_B IF_B ADDR_B (addresses with prefix length, or "-")
veth() {
	ip link add "$2" netns "$(ns "$1")" type veth peer name "$5" netns "$(ns "$4")" || exit 1
	[ "$3" = - ] || ip -n "$(ns "$1")" addr add "$3" dev "$2"
	[ "$6" = - ] || ip -n "$(ns "$4")" addr add "$6" dev "$5"
	ip -n "$(ns "$1")" link set "$2" up
	ip -n "$(ns "$4")" link set "$5" up
}

# bg NAME OUTFILE CMD...: runs CMD in namespace NAME in the background; remembers its pid in
# BG_PID and kills it at exit.
bg() {
	local n out
	n=$(ns "$1")
	out=$2
	shift 2
	ip netns exec "$n" "$@" >"$out" 2>&1 &
	BG_PID=$!
	NS_PIDS="$NS_PIDS $BG_PID"
}

# wait_for SECONDS COMMAND...: polls COMMAND every 0.1 s until it succeeds or time runs out.
wait_for() {
	local limit i
	limit=$(($1 * 10))
	shift
	i=0
	while [ $i -lt $limit ]; do
		"$@" 2>/dev/null && return 0
		sleep 0.1
		i=$((i + 1))
	done
	return 1
}

# wait_exit PID SECONDS: waits for a background process to end by itself.
wait_exit() {
	wait_for "$2" sh -c "! kill -0 $1 2>/dev/null" || return 1
	wait "$1" 2>/dev/null
	return 0
}

# count_lines FILE PATTERN: lines of FILE matching the extended regular expression.
count_lines() {
	grep -Ec -- "$2" "$1" 2>/dev/null || true
}

topo_router() {
	ns_add src
	ns_add rtr
	ns_add r1
	ns_add r2
	veth src s0 198.18.1.2/24 rtr up0 198.18.1.1/24
	veth rtr d1 198.18.2.1/24 r1 dn 198.18.2.2/24
	veth rtr d2 198.18.3.1/24 r2 dn 198.18.3.2/24
	nsx rtr sysctl -qw net.ipv4.ip_forward=1
	nsx src ip route add default via 198.18.1.1
	nsx r1 ip route add default via 198.18.2.1
	nsx r2 ip route add default via 198.18.3.1
	cat >"$NS_TMP/smcroute.conf" <<EOF
phyint up0 enable
phyint d1 enable
phyint d2 enable
mroute from up0 source $SRC_ADDR group $GROUP to d1 d2
EOF
	bg rtr "$NS_TMP/smcroute.log" smcrouted -n -N -f "$NS_TMP/smcroute.conf" \
		-P "$NS_TMP/smcroute.pid" -u "$NS_TMP/smcroute.sock" -l info
	# The (S,G) entry is in the kernel's cache once smcroute has installed it.
	if ! wait_for 10 sh -c "ip netns exec $(ns rtr) cat /proc/net/ip_mr_cache | grep -q ."; then
		log "smcroute did not install the multicast route"
		cat "$NS_TMP/smcroute.log"
		exit 1
	fi
}

# start_consumer OUTFILE ARGS...: dp-harness consume in rtr, waiting until its queue is bound
# (and its rules installed when --if is given).
start_consumer() {
	local out
	out=$1
	shift
	rm -f "$NS_TMP/consumer.ready"
	bg rtr "$out" "$HARNESS" consume --ready "$NS_TMP/consumer.ready" "$@"
	CONSUMER_PID=$BG_PID
	if ! wait_for 10 test -e "$NS_TMP/consumer.ready"; then
		log "consumer did not start:"
		cat "$out"
		return 1
	fi
}

# start_sniffer NAME IF OUTFILE [ARGS...]: dp-harness sniff in namespace NAME on IF.
start_sniffer() {
	local sn sif sout
	sn=$1
	sif=$2
	sout=$3
	shift 3
	rm -f "$NS_TMP/sniff-$sn-$sif.ready"
	bg "$sn" "$sout" "$HARNESS" sniff --if "$sif" --ready "$NS_TMP/sniff-$sn-$sif.ready" "$@"
	wait_for 10 test -e "$NS_TMP/sniff-$sn-$sif.ready"
}

# start_receiver_sniffers: start_sniffer on dn of r1 and of r2 (topo_router), into
# $NS_TMP/r1.sniff and $NS_TMP/r2.sniff; ends the test when one does not start.
start_receiver_sniffers() {
	start_sniffer r1 dn "$NS_TMP/r1.sniff" || exit 1
	start_sniffer r2 dn "$NS_TMP/r2.sniff" || exit 1
}

# send NAME ARGS...: dp-harness send in namespace NAME.
send() {
	local sn
	sn=$1
	shift
	nsx "$sn" "$HARNESS" send "$@" >/dev/null
}

# The kernel's counters of queue Q in namespace NAME: "total dropped user_dropped id_sequence".
queue_counters() {
	nsx "$1" cat /proc/net/netfilter/nfnetlink_queue 2>/dev/null |
		awk -v q="$2" '$1 == q { print $3, $6, $7, $8 }'
}

# Rules as iptables-save prints them, without comments and counters.
saved_rules() {
	nsx "$1" iptables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'
}

# The interception rules of ours in namespace NAME, whichever backend holds them
# (dataplane/rules.h): the nftables table ip pgmrouter, or the PGMROUTER chains of iptables.
# our_backend NAME: nftables, iptables, or nothing.
our_backend() {
	if nsx "$1" nft list table ip pgmrouter >/dev/null 2>&1; then
		echo nftables
	elif nsx "$1" iptables-save -t mangle 2>/dev/null | grep -q '^:PGMROUTER-'; then
		echo iptables
	fi
}
# our_rules_in NAME: our rules, one line each, counters zeroed (the table as nft lists it, or
# the iptables-save lines naming our chains); nothing when there are none.
our_rules_in() {
	case $(our_backend "$1") in
	nftables)
		nsx "$1" nft list table ip pgmrouter 2>/dev/null | grep -v '^#' |
			sed 's/counter packets [0-9]* bytes [0-9]*/counter/'
		;;
	iptables) saved_rules "$1" | grep 'PGMROUTER' ;;
	esac
}
# our_queue_rules NAME: our queue rules only.
our_queue_rules() { our_rules_in "$1" | grep -E 'queue num|NFQUEUE'; }
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
	nftables) our_rules_in "$1" | grep -c 'type filter hook' ;;
	iptables) saved_rules "$1" | grep -c '^-A [A-Z]* -j PGMROUTER-' ;;
	*) echo 0 ;;
	esac
}
# our_matches NAME HOOK: packets our queue rules at HOOK (prerouting, input) matched.
our_matches() {
	case $(our_backend "$1") in
	nftables)
		for c in "queue-$2" "pgm-$2" "udp-$2"; do
			nsx "$1" nft list chain ip pgmrouter "$c" 2>/dev/null
		done | awk '/queue num/ { for (i = 1; i < NF; i++) if ($i == "packets") s += $(i + 1) }
				END { print s + 0 }'
		;;
	iptables)
		local c
		case $2 in prerouting) c=PRE ;; input) c=IN ;; *) c=FWD ;; esac
		nsx "$1" iptables -t mangle -vnxL "PGMROUTER-$c" | awk '/NFQUEUE/ { s += $1 } END { print s + 0 }'
		;;
	*) echo 0 ;;
	esac
}
