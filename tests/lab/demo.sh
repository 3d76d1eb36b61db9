#!/bin/bash
# The pgmrouter demo (make demo) and lab (make lab), in network namespaces.
#
#   tests/lab/demo.sh [--seconds S] [--rate N] [--hosts N] [--delay MS]
#       Builds the tree topology (source, core router, two edge routers, four receiver LANs),
#       puts the source MS milliseconds away (default 100: everything it sends is delayed, as
#       across a WAN), drops 5 % of the ODATA into LAN a and 3 % into trunk t2, streams OpenPGM
#       for S seconds (default 20) without router assist, then again with pgmrouterd in every
#       router; shows what the routers say (show ip pgm router state, traffic, dataplane) and
#       the two runs side by side, and removes everything.
#   tests/lab/demo.sh --interactive [--hosts N] [--delay MS]
#       Builds the same topology with pgmrouterd in every router, starts a slow endless stream
#       (50 messages/s, up to an hour), leaves it all running and opens a pgmrouter session on
#       e1 (when run from a terminal); prints how to tear it down.
#   tests/lab/demo.sh --teardown ID
#       Removes a lab left running by --interactive.
#
#   s1 ─ src ─ core ─┬─ t1 ─ e1 ─┬─ a: a1 a2 ...   (5 % ODATA loss into a)
#                    │           └─ b: b1 b2 ...
#                    └─ t2 ─ e2 ─┬─ c: c1 c2 ...   (3 % ODATA loss into t2, so c and d)
#   (LANs are bridges)           └─ d: d1 d2 ...
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

GROUP=239.192.0.30
SECONDS_TO_RUN=20
RATE=250
HOSTS=2
DELAY_MS=100
MODE=demo
TEARDOWN_ID=""

usage() {
	sed -n '2,/^here=/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
	exit "${1:-0}"
}

while [ $# -gt 0 ]; do
	case $1 in
	--interactive) MODE=interactive ;;
	--teardown)
		MODE=teardown
		TEARDOWN_ID=${2:-}
		shift
		;;
	--seconds)
		SECONDS_TO_RUN=${2:-}
		shift
		;;
	--rate)
		RATE=${2:-}
		shift
		;;
	--hosts)
		HOSTS=${2:-}
		shift
		;;
	--delay)
		DELAY_MS=${2:-}
		shift
		;;
	-h | --help) usage 0 ;;
	*) usage 1 ;;
	esac
	shift
done
for v in "$SECONDS_TO_RUN" "$RATE" "$HOSTS" "$DELAY_MS"; do
	case $v in '' | *[!0-9]*) usage 1 ;; esac
done
if [ "$HOSTS" -lt 1 ] || [ "$HOSTS" -gt 8 ]; then
	lab_die "--hosts must be 1..8"
fi
if [ "$SECONDS_TO_RUN" -lt 5 ] || [ "$RATE" -lt 10 ] || [ "$RATE" -gt 2000 ] ||
	[ "$DELAY_MS" -gt 1000 ]; then
	lab_die "--seconds must be >= 5, --rate 10..2000 and --delay 0..1000"
fi

if [ "$MODE" = teardown ]; then
	[ "$(id -u)" = 0 ] || lab_die "needs root"
	lab_teardown_id "$TEARDOWN_ID"
	echo "removed lab $TEARDOWN_ID"
	exit 0
fi
[ -x "$LAB_PEERS/pgm-send" ] || lab_die "build the peers first (make tools)"
lab_router_available || lab_die "$(lab_router_cmd) is not built (make)"
[ -x "$(lab_cli_cmd)" ] || lab_die "$(lab_cli_cmd) is not built (make)"

build() {
	lab_init "$1"
	lab_groups "$GROUP"
	lab_topo_tree "$HOSTS"
	lab_topo_loss a 0.05 odata
	lab_topo_loss t2 0.03 odata
	if [ "$DELAY_MS" -gt 0 ]; then
		lab_delay s1 "$DELAY_MS" || lab_die "cannot delay the source"
	fi
}

# The startup config every router gets: router assist on each of its interfaces, PGM over UDP
# on the ports the lab's peers use, every timer at its default.
demo_config() {
	local router=$1 ifname
	cat <<EOF
! pgmrouterd startup config for $router (tests/lab/demo.sh)
hostname $router
ip pgm router udp-encapsulation ports 3055 5555
EOF
	awk -v n="$router" '$1 == n { print $2 }' "$LAB_DIR/links" | while read -r ifname; do
		printf 'interface %s\n ip pgm router\n' "$ifname"
	done
	echo "end"
}

routers_up() {
	local r
	for r in $TOPO_ROUTERS; do
		demo_config "$r" >"$LAB_DIR/pgmrouterd.$r.conf"
		lab_router_start "$r" "$LAB_DIR/pgmrouterd.$r.conf" || return 1
	done
}

# cli ROUTER COMMAND: one command through a pgmrouter session, shown as typed.
cli() {
	echo "$1# $2"
	lab_router_cli "$1" "$2" 2>&1 | sed 's/^/  /'
}

# progress_line SECONDS: one status line from the receivers' latest progress reports.
progress_line() {
	local r n min="" max=0 line
	for r in $TOPO_RECEIVERS; do
		line=$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" 2>/dev/null | tail -n 1)
		n=$(lab_kv messages "$line")
		n=${n:-0}
		if [ -z "$min" ] || [ "$n" -lt "$min" ]; then min=$n; fi
		if [ "$n" -gt "$max" ]; then max=$n; fi
	done
	printf "  %3ss  delivered %s..%s of %s per receiver\n" "$1" "$min" "$max" "$COUNT"
}

# stream VARIANT: one run; results land in RES.
declare -A RES
stream() {
	local variant=$1 r pids=() spid start elapsed limit lan alive shown=0
	COUNT=$((RATE * SECONDS_TO_RUN))
	limit=$((SECONDS_TO_RUN + 40))
	for lan in $TOPO_LANS; do lab_counts_reset "$lan"; done
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" \
			-n "$(lab_addr "$r" eth0);$GROUP" -c "$COUNT" -T "$limit" --progress 1000
		pids+=("$LAB_PID")
	done
	for r in $TOPO_RECEIVERS; do
		lab_wait_file_line 10 "$LAB_DIR/$r.out" '^event=ready' || lab_die "$r did not start"
	done
	lab_spawn s1 "$LAB_DIR/s1.out" "$LAB_PEERS/pgm-send" -n "$TOPO_SOURCE_ADDR;$GROUP" \
		-c "$COUNT" -r "$RATE" -b 5 -T "$limit"
	spid=$LAB_PID
	start=$(date +%s)
	while :; do
		sleep 1
		elapsed=$(($(date +%s) - start))
		alive=0
		for r in "${pids[@]}"; do
			kill -0 "$r" 2>/dev/null && ! _lab_is_zombie "$r" && alive=1
		done
		[ "$alive" = 0 ] && break
		[ $((elapsed % 5)) = 0 ] && progress_line "$elapsed"
		# Halfway through, what e1 knows right now: the session and its open repairs.
		if [ "$variant" = with ] && [ "$shown" = 0 ] && [ "$elapsed" -ge $((SECONDS_TO_RUN / 2)) ]; then
			shown=1
			echo
			cli e1 "show ip pgm router state"
			echo
		fi
		[ "$elapsed" -gt "$limit" ] && break
	done
	for r in "${pids[@]}"; do lab_wait_pid "$r" 5 >/dev/null; done
	lab_stop "$spid"
	for r in $TOPO_RECEIVERS; do
		RES["$variant|$r"]=$(lab_result "$LAB_DIR/$r.out")
	done
	for lan in $TOPO_LANS; do RES["$variant|seg|$lan"]=$(lab_counts "$lan"); done
	RES["$variant|drop|a"]=$(lab_topo_loss_dropped a)
	RES["$variant|drop|t2"]=$(lab_topo_loss_dropped t2)
	RES["$variant|seconds"]=$(($(date +%s) - start))
}

# seg VARIANT LAN TYPE: a packet count of one run.
seg() { lab_kv "$3" "${RES["$1|seg|$2"]:-}"; }

complete() {
	local v=$1 r ok=0
	for r in $TOPO_RECEIVERS; do
		[ "$(lab_kv result "${RES["$v|$r"]:-}")" = ok ] && ok=$((ok + 1))
	done
	echo "$ok/$(echo "$TOPO_RECEIVERS" | wc -w)"
}

row() { printf "  %-44s %-18s %s\n" "$1" "$2" "$3"; }

report() {
	local lan
	echo
	echo "The two runs side by side (packets counted on each segment):"
	row "" "without" "with pgmrouterd"
	row "receivers complete (every message, in order)" "$(complete without)" "$(complete with)"
	row "ODATA lost into a / into t2" \
		"${RES[without|drop|a]} / ${RES[without|drop|t2]}" "${RES[with|drop|a]} / ${RES[with|drop|t2]}"
	row "NAKs reaching the source" "$(seg without src nak)" "$(seg with src nak)"
	row "NCFs on a (who confirms: source, e1)" "$(seg without a ncf)" "$(seg with a ncf)"
	row "repairs (RDATA) sent by the source" "$(seg without src rdata)" "$(seg with src rdata)"
	for lan in t1 t2 a b c d; do
		row "repairs on $lan$([ "$lan" = b ] && echo " (lost nothing)")" \
			"$(seg without "$lan" rdata)" "$(seg with "$lan" rdata)"
	done
	echo
	echo "Without router assist every repair and every NCF crosses every branch, b included."
	echo "With pgmrouterd each router confirms NAKs itself and sends repairs only where they"
	echo "were asked for. Options: tests/lab/demo.sh --help"
}

if [ "$MODE" = interactive ]; then
	build lab
	routers_up || lab_die "pgmrouterd did not start"
	COUNT=180000
	for r in $TOPO_RECEIVERS; do
		lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" \
			-n "$(lab_addr "$r" eth0);$GROUP" -c "$COUNT" -T 3700 --progress 5000
	done
	for r in $TOPO_RECEIVERS; do
		lab_wait_file_line 10 "$LAB_DIR/$r.out" '^event=ready' || lab_die "$r did not start"
	done
	lab_spawn s1 "$LAB_DIR/s1.out" "$LAB_PEERS/pgm-send" -n "$TOPO_SOURCE_ADDR;$GROUP" \
		-c "$COUNT" -r 50 -T 3700
	# From here on the lab outlives this script.
	trap - EXIT INT TERM
	session="ip netns exec $(lab_ns e1) $(lab_cli_cmd) -s $(lab_router_sock e1)"
	teardown="$here/demo.sh --teardown $LAB_ID"
	lab_topo_describe
	cat <<EOF

The lab $LAB_ID is running: pgmrouterd in core, e1 and e2, one OpenPGM stream (group
$GROUP, 50 messages/s, for up to an hour) from s1 to every receiver, 5 % ODATA loss into
LAN a, 3 % into trunk t2, s1 ${DELAY_MS} ms away.

  router CLI (e1):        $session
                          (core, e2: the same with their names)
  enter a node:           ip netns exec $(lab_ns core) bash     (also s1, e1, e2, a1, ...)
  packets on a segment:   ip netns exec $(lab_lan_ns a) nft list counters table bridge pl_count
  capture on a segment:   ip netns exec $(lab_lan_ns t1) tshark -i br0 -f 'ip proto 113'
  receiver progress:      tail -f $LAB_DIR/a1.out
  files (configs, logs):  $LAB_DIR

  tear it all down:       $teardown
EOF
	if [ -t 0 ] && [ -t 1 ]; then
		echo
		echo "Opening a pgmrouter session on e1 (try: show ip pgm router state; 'exit' leaves it,"
		echo "the lab keeps running)."
		$session
		echo
		echo "The lab $LAB_ID is still running. Tear it down with: $teardown"
	fi
	exit 0
fi

cat <<EOF
pgmrouter demo: PGM router assist (RFC 3208) with real OpenPGM peers, in network namespaces

  s1 ─ src ─ core ─┬─ t1 ─ e1 ─┬─ a (5 % of the ODATA lost on the way in)
                   │           └─ b
                   └─ t2 ─ e2 ─┬─ c (3 % lost on the way into t2, so c and d)
                               └─ d
  $HOSTS receivers per LAN; $((RATE * SECONDS_TO_RUN)) messages at $RATE/s from s1, twice; s1 is
  ${DELAY_MS} ms away from the rest (what it sends is delayed, as across a WAN).

1. Without router assist: the routers only forward multicast.
EOF
build demo
stream without
lab_cleanup
echo
echo "2. With pgmrouterd in core, e1 and e2 (router assist on every interface)."
build demo
routers_up || lab_die "pgmrouterd did not start"
stream with
echo
cli e1 "show ip pgm router traffic"
cli e1 "show ip pgm router dataplane"
for r in $TOPO_ROUTERS; do
	if ! lab_router_running "$r"; then
		echo "!!! pgmrouterd in $r died; the end of its log:"
		tail -n 20 "$LAB_DIR/pgmrouterd.$r.log" | sed 's/^/    /'
	fi
done
lab_cleanup
report
n=$(echo "$TOPO_RECEIVERS" | wc -w)
[ "$(complete with)" = "$n/$n" ]
