#!/bin/bash
# The pgmrouter demo (make demo) and lab (make lab), in network namespaces.
#
#   tests/lab/demo.sh [--seconds S] [--rate N] [--hosts N]
#       Builds the tree topology (source, core router, two edge routers, four receiver LANs),
#       drops 5 % of the ODATA into LAN a and 3 % into trunk t2, streams OpenPGM for S seconds
#       (default 20) without router assist and, when build/pgmrouterd exists, again with it;
#       prints delivery per receiver and the packets per segment (RDATA per branch), side by
#       side, and removes everything.
#   tests/lab/demo.sh --interactive [--hosts N]
#       Builds the same topology, starts a slow endless stream (50 messages/s, up to an hour) and
#       leaves it all running; prints how to enter it and how to tear it down.
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
	-h | --help) usage 0 ;;
	*) usage 1 ;;
	esac
	shift
done
for v in "$SECONDS_TO_RUN" "$RATE" "$HOSTS"; do
	case $v in '' | *[!0-9]*) usage 1 ;; esac
done
if [ "$HOSTS" -lt 1 ] || [ "$HOSTS" -gt 8 ]; then
	lab_die "--hosts must be 1..8"
fi

if [ "$MODE" = teardown ]; then
	[ "$(id -u)" = 0 ] || lab_die "needs root"
	lab_teardown_id "$TEARDOWN_ID"
	echo "removed lab $TEARDOWN_ID"
	exit 0
fi
[ -x "$LAB_PEERS/pgm-send" ] || lab_die "build the peers first (make tools)"

build() {
	lab_init "$1"
	lab_groups "$GROUP"
	lab_topo_tree "$HOSTS"
	lab_topo_loss a 0.05 odata
	lab_topo_loss t2 0.03 odata
}

# ROUTER-HOOK: pgmrouterd starts here, in every router namespace, with the lab's default startup config
# (lab_router_config). Returns non-zero when a daemon does not come up.
routers_up() {
	local r
	for r in $TOPO_ROUTERS; do
		lab_router_config "$r" >"$LAB_DIR/pgmrouterd.$r.conf"
		lab_router_start "$r" "$LAB_DIR/pgmrouterd.$r.conf" || return 1
	done
}

# ROUTER-HOOK: print `show ip pgm router` (and whatever else tells the story) from every router here,
# through the CLI client and each daemon's control socket, e.g.
#   "$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock core)" show ip pgm router
show_routers() {
	local r
	[ -x "$LAB_REPO/build/pgmrouter" ] || return 0
	for r in $TOPO_ROUTERS; do
		echo "--- $r: show ip pgm router"
		"$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock "$r")" show ip pgm router 2>&1 |
			sed 's/^/    /'
	done
}

# progress_line: one status line from the receivers' latest progress reports.
progress_line() {
	local r n min="" max=0 line
	for r in $TOPO_RECEIVERS; do
		line=$(grep -E '^(event=progress|result=)' "$LAB_DIR/$r.out" 2>/dev/null | tail -n 1)
		n=$(lab_kv messages "$line")
		n=${n:-0}
		if [ -z "$min" ] || [ "$n" -lt "$min" ]; then min=$n; fi
		if [ "$n" -gt "$max" ]; then max=$n; fi
	done
	printf "  %3ss  delivered per receiver: %s..%s of %s   RDATA on src: %s\n" "$1" "$min" \
		"$max" "$COUNT" "$(lab_count src rdata)"
}

# stream VARIANT: one run; results land in RESULT_<variant>_* variables via record.
declare -A RES
stream() {
	local variant=$1 r pids=() spid start now elapsed limit lan
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
	echo "streaming $COUNT messages at $RATE/s to ${#pids[@]} receivers ($variant router assist)"
	while :; do
		sleep 1
		now=$(date +%s)
		elapsed=$((now - start))
		local alive=0
		for r in "${pids[@]}"; do
			kill -0 "$r" 2>/dev/null && ! _lab_is_zombie "$r" && alive=1
		done
		[ "$alive" = 0 ] && break
		[ $((elapsed % 5)) = 0 ] && progress_line "$elapsed"
		[ "$elapsed" -gt "$limit" ] && break
	done
	for r in "${pids[@]}"; do lab_wait_pid "$r" 5 >/dev/null; done
	lab_stop "$spid"
	progress_line "$(($(date +%s) - start))"
	for r in $TOPO_RECEIVERS; do
		RES["$variant|$r"]=$(lab_result "$LAB_DIR/$r.out")
		RES["lan|$r"]=$(lab_node_lan "$r")
	done
	for lan in $TOPO_LANS; do RES["$variant|seg|$lan"]=$(lab_counts "$lan"); done
	RES["$variant|drop|a"]=$(lab_topo_loss_dropped a)
	RES["$variant|drop|t2"]=$(lab_topo_loss_dropped t2)
	RES["$variant|seconds"]=$(($(date +%s) - start))
}

receiver_cell() {
	local line=${RES["$1|$2"]:-}
	[ -n "$line" ] || {
		echo "no result"
		return
	}
	echo "$(lab_kv result "$line") $(lab_kv messages "$line")/$(lab_kv expected "$line") rec $(lab_kv recovered "$line")"
}

segment_cell() {
	local line=${RES["$1|seg|$2"]:-}
	echo "$(lab_kv odata "$line")/$(lab_kv rdata "$line")/$(lab_kv nak "$line")/$(lab_kv ncf "$line")"
}

report() {
	local variants=("$@") v r lan ok
	echo
	printf "%-26s" "receiver (LAN)"
	for v in "${variants[@]}"; do printf "  %-30s" "$v router assist"; done
	echo
	for r in $TOPO_RECEIVERS; do
		printf "%-26s" "$r (${RES["lan|$r"]})"
		for v in "${variants[@]}"; do printf "  %-30s" "$(receiver_cell "$v" "$r")"; done
		echo
	done
	echo
	printf "%-26s" "segment: odata/rdata/nak/ncf"
	for v in "${variants[@]}"; do printf "  %-30s" ""; done
	echo
	for lan in $TOPO_LANS; do
		printf "%-26s" "$lan${TOPO_PARENT[$lan]:+ (below ${TOPO_PARENT[$lan]})}"
		for v in "${variants[@]}"; do printf "  %-30s" "$(segment_cell "$v" "$lan")"; done
		echo
	done
	echo
	for v in "${variants[@]}"; do
		ok=0
		for r in $TOPO_RECEIVERS; do
			[ "$(lab_kv result "${RES["$v|$r"]:-}")" = ok ] && ok=$((ok + 1))
		done
		echo "$v router assist: $ok of $(echo "$TOPO_RECEIVERS" | wc -w) receivers got every" \
			"message exactly once and in order; ODATA dropped into a: ${RES["$v|drop|a"]}," \
			"into t2: ${RES["$v|drop|t2"]}; ${RES["$v|seconds"]} s"
	done
	echo "(b lost nothing: without router assist every repair still crosses t1 and b.)"
}

if [ "$MODE" = interactive ]; then
	build lab
	if lab_router_available; then
		routers_up || lab_die "pgmrouterd did not start"
	else
		echo "note: $(lab_router_cmd) not built: the routers forward without router assist"
	fi
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
	lab_topo_describe
	cat <<EOF

The lab $LAB_ID is running: one OpenPGM stream (group $GROUP, 50 messages/s, for up to an
hour) from s1 to every receiver, 5 % ODATA loss into LAN a, 3 % into trunk t2.

  enter a node:           ip netns exec $(lab_ns core) bash     (also s1, e1, e2, a1, ...)
  packets on a segment:   ip netns exec $(lab_lan_ns a) nft list counters table bridge pl_count
  capture on a segment:   ip netns exec $(lab_lan_ns t1) tshark -i br0 -f 'ip proto 113'
  receiver progress:      tail -f $LAB_DIR/a1.out
  loss rules (a, t2):     ip netns exec $(lab_ns e1) iptables -t mangle -nvL PL_LOSS
                          ip netns exec $(lab_ns core) iptables -t mangle -nvL PL_LOSS
  files (configs, logs):  $LAB_DIR
EOF
	# ROUTER-HOOK: the interactive pgmrouter session goes here, e.g.
	#   "$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock core)"
	if lab_router_available; then
		echo "  router CLI:             $LAB_REPO/build/pgmrouter -s $(lab_router_sock core)"
	fi
	cat <<EOF

  tear it all down:       $0 --teardown $LAB_ID
EOF
	exit 0
fi

variants=(without)
build demo
stream without
lab_cleanup
if lab_router_available; then
	build demo
	if routers_up; then
		stream with
		show_routers
		variants+=(with)
	else
		echo "!!! pgmrouterd did not start; no 'with router assist' run"
	fi
	lab_cleanup
else
	echo
	echo "!!! $(lab_router_cmd) is not built: only the run without router assist was made"
fi
report "${variants[@]}"
