#!/bin/bash
# The soak (tests/soak/README): the tree topology with pgmrouterd in its three routers, an
# OpenPGM stream and a ZeroMQ epgm:// stream under 5 % ODATA loss, for SOAK_SECONDS, with churn
# on a schedule (daemon killed with -9 and restarted, SIGHUP reload with a changed setting, link
# flap, a route added and removed through smcroute, a burst of malformed packets, a NAK flood).
# Every SOAK_SAMPLE seconds each daemon's RSS, descriptors, sessions, repair states, queue drops
# and fail-open count, and the receivers' delivery, go into a CSV; at the end analyze.py checks
# the pass criteria and plots. Results under tests/soak/results/<timestamp> (SOAK_RESULTS).
#
#   tests/soak/run.sh                 as root; exit 0 when every criterion passed
#   SOAK_SECONDS=3600                 the run's length (make soak-smoke: 180)
#   SOAK_ROUND=60                     one stream round: fresh peers, each with its own verdict
#   SOAK_EVENT_EVERY=S                seconds between churn events (default: six events per run
#                                     up to an hour, then one a minute)
#   SOAK_SAMPLE=10                    seconds between samples
cd "$(dirname "$0")" || exit 1
SOAK_DIR=$(pwd)
# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. ../lab/lib.sh

SOAK_SECONDS=${SOAK_SECONDS:-3600}
SOAK_ROUND=${SOAK_ROUND:-60}
# The senders answer NAKs this long after their last message (the peers' default is 3 s): an
# event in a round's last seconds (a 3 s flap) must not take the source away before the
# receivers behind it could NAK the tail; they are stopped once their receivers are done.
SENDER_LINGER_MS=30000
SOAK_SAMPLE=${SOAK_SAMPLE:-10}
# The first event after the baseline samples; the last one leaves SOAK_SETTLE seconds to settle
# before the end, so that "back to baseline" can be read after it too.
SOAK_FIRST=30
SOAK_SETTLE=25
# The ZeroMQ publisher keeps sending while it lingers (zmq-pub --linger-rate: messages of another
# run id, which the subscribers ignore): an idle libzmq publisher answers NAKs only at its own
# timer events, seconds apart, and its subscribers give up on the tail of a stream whose end a
# flap took (README, Flaps and the stream's end; tests/e2e zmq-flap-end). So a flap may come at
# any time, over a stream's end too. SOAK_FLAP_CLEAR=S holds it instead until the round's streams
# have S seconds or more to run (the schedule before; 0: no hold).
FLAP_CLEAR=${SOAK_FLAP_CLEAR:-0}
ZMQ_LINGER_RATE=10
if [ -z "${SOAK_EVENT_EVERY:-}" ]; then
	SOAK_EVENT_EVERY=$(((SOAK_SECONDS - SOAK_FIRST - SOAK_SETTLE) / 5))
	[ "$SOAK_EVENT_EVERY" -gt 60 ] && SOAK_EVENT_EVERY=60
	[ "$SOAK_EVENT_EVERY" -lt 25 ] && SOAK_EVENT_EVERY=25
fi
PGM_RATE=200
ZMQ_RATE=100
G_PGM=239.192.0.40   # the OpenPGM stream
G_ZMQ=239.192.0.41   # the ZeroMQ stream
G_FLOOD=239.192.0.42 # the NAK flood's session (crafted SPMs; no receiver joins it)
G_ROUTE=239.192.0.43 # the route added and removed
FLOOD_GSI=5a0a5a0a5a0a
FLOOD_NAKS=2000
MALFORMED=300 # packets per kind of malformation
EVENTS="kill9 reload flap route malformed nakflood"

if [ "$(id -u)" != 0 ]; then
	echo "soak: needs root (network namespaces)" >&2
	exit 1
fi
for p in pgm-send pgm-recv zmq-pub zmq-sub pgm-inject; do
	[ -x "$LAB_PEERS/$p" ] || {
		echo "soak: build/peers/$p missing; run make tools" >&2
		exit 1
	}
done
lab_router_available || {
	echo "soak: $(lab_router_cmd) missing; run make" >&2
	exit 1
}

RES=${SOAK_RESULTS:-$SOAK_DIR/results/$(date -u +%Y%m%dT%H%M%SZ)}
mkdir -p "$RES" || exit 1
echo "=== soak: ${SOAK_SECONDS} s, rounds of ${SOAK_ROUND} s, an event every ${SOAK_EVENT_EVERY} s, results in $RES"

lab_groups "$G_PGM $G_ZMQ $G_FLOOD"
lab_init soak
T0=$(date +%s) # again once the daemons run
now() { echo $(($(date +%s) - T0)); }

# The helpers the background loops start; killed before the lab's cleanup.
BG_PIDS=()
soak_exit() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for p in "${BG_PIDS[@]}"; do wait "$p" 2>/dev/null; done
	lab_cleanup
}
trap soak_exit EXIT
trap 'soak_exit; trap - INT; kill -INT $$' INT
trap 'soak_exit; trap - TERM; kill -TERM $$' TERM

lab_topo_tree 1
lab_topo_loss a 0.05
lab_topo_loss t2 0.05
for r in $TOPO_ROUTERS; do
	lab_router_config "$r" >"$LAB_DIR/pgmrouterd.$r.conf"
	lab_router_start "$r" "$LAB_DIR/pgmrouterd.$r.conf" || {
		echo "soak: pgmrouterd did not start in $r" >&2
		exit 1
	}
done
T0=$(date +%s)

# Sampling ---------------------------------------------------------------------------------------

# The messages delivered so far by every receiver of KIND (pgm or zmq): those of the rounds
# done (delivered.KIND, kept by the rounds) and the current round's outputs' last progress or
# result lines.
delivered() {
	local f n sum cur
	sum=$(cat "$LAB_DIR/delivered.$1" 2>/dev/null)
	sum=${sum:-0}
	cur=$(cat "$LAB_DIR/round.current" 2>/dev/null)
	for f in "$LAB_DIR"/round."${cur:-0}"."$1".*.out; do
		[ -e "$f" ] || continue
		n=$(grep -E '^(event=progress|result=)' "$f" | tail -n 1)
		n=$(lab_kv messages "$n")
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

# One row per router: what /proc says of its daemon (descriptors counted before the CLI session
# that reads the rest opens its own), then its JSON shows.
sample_router() {
	local r=$1 t dp dz pid rss fds json
	# The time of this router's reading: a pass over the routers takes seconds on a busy
	# machine, and an event's transient must not be dated before the event.
	t=$(now)
	pid=$(lab_router_pid "$r")
	if ! lab_router_running "$r"; then
		echo "$t,$r,0,,,,,,,,,$3,$4"
		return
	fi
	# The least of three reads 0.2 s apart: a descriptor held for a moment (a client being
	# served) is not a leak; a leaked one stays.
	fds=$(for i in 1 2 3; do
		find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l
		[ "$i" = 3 ] || sleep 0.2
	done | sort -n | head -n 1)
	rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status" 2>/dev/null)
	json=$(lab_router_cli "$r" "show ip pgm router json" "show ip pgm router dataplane json" \
		"show ip pgm router traffic json" 2>/dev/null)
	echo "$json" | jq -rs --arg pre "$t,$r,$pid,$rss,$fds" --arg post "$3,$4" '
		(.[0] // {}) as $g | (.[1] // {}) as $d | (.[2] // {}) as $x |
		[$g.sessions, $g.repair_states, $g.memory_bytes,
		 (($d.kernel.queue_dropped // 0) + ($d.kernel.user_dropped // 0) +
		  ($d.kernel.socket_drops // 0)),
		 $d.queue_stats.id_gaps,
		 ([$x.interfaces[]?.errors | to_entries[] | .value] | add // 0)]
		| map(if . == null then "" else tostring end)
		| "\($pre)," + join(",") + ",\($post)"' 2>/dev/null ||
		echo "$t,$r,$pid,$rss,$fds,,,,,,,$3,$4"
}

sampler() {
	local t r dp dz next
	echo "t,router,pid,rss_kb,fds,sessions,repair_states,memory_bytes,queue_drops,fail_open,malformed,delivered_pgm,delivered_zmq" \
		>"$RES/samples.csv"
	next=0
	while :; do
		while [ "$(now)" -lt "$next" ]; do sleep 0.2; done
		t=$(now)
		dp=$(delivered pgm)
		dz=$(delivered zmq)
		for r in $TOPO_ROUTERS; do sample_router "$r" "" "$dp" "$dz"; done >>"$RES/samples.csv"
		next=$(((t / SOAK_SAMPLE + 1) * SOAK_SAMPLE))
	done
}

# Churn ------------------------------------------------------------------------------------------

# event_log START NAME TARGET OK DETAIL: a row of events.csv (START: seconds since the start; the
# end is now).
event_log() {
	echo "$1,$(now),$2,$3,$4,$5" >>"$RES/events.csv"
	echo "soak: t=$1-$(now) s $2 $3: $([ "$4" = 1 ] && echo ok || echo FAILED) ($5)"
}

# The sum of router R's traffic counter NAME (events, errors) over its interfaces and globally.
router_counter() {
	lab_router_cli "$1" "show ip pgm router traffic json" 2>/dev/null |
		jq --arg k "$2" '[.. | objects | .[$k]? // empty | numbers] | add // 0' 2>/dev/null || echo 0
}

rules_count() { lab_router_rules "$1" | grep -cE 'queue num|NFQUEUE'; }

# pgmrouterd in e1 killed with SIGKILL and started again: the new daemon must come up and take
# the rules over, none twice.
ev_kill9() {
	local t=$1 before after ok=1
	before=$(rules_count e1)
	lab_router_kill e1 KILL || ok=0
	sleep 1
	lab_router_start e1 "$LAB_DIR/pgmrouterd.e1.conf" || ok=0
	after=$(rules_count e1)
	[ "$after" = "$before" ] && [ "$before" -ge 1 ] || ok=0
	event_log "$t" kill9 e1 "$ok" "queue rules $before before, $after after, pid $(lab_router_pid e1)"
}

# SIGHUP to core's daemon with nak-eliminate-interval added to its startup file, or removed
# again: the running configuration must follow.
RELOAD_ON=0
ev_reload() {
	local t=$1 conf="$LAB_DIR/pgmrouterd.core.conf" ok=1 want
	if [ "$RELOAD_ON" = 0 ]; then
		sed -i '$d' "$conf"
		printf 'ip pgm router nak-eliminate-interval 900\nend\n' >>"$conf"
		RELOAD_ON=1 want=0
	else
		sed -i '/nak-eliminate-interval 900/d' "$conf"
		RELOAD_ON=0 want=1
	fi
	kill -HUP "$(lab_router_pid core)" || ok=0
	lab_wait 10 "the reload in core" reload_done "$want" || ok=0
	lab_router_running core || ok=0
	event_log "$t" reload core "$ok" "nak-eliminate-interval 900 $([ "$RELOAD_ON" = 1 ] && echo set || echo removed)"
}

# reload_done WANT: the running configuration has the line (WANT 0) or not (1).
reload_done() {
	lab_router_cli core "show running-config" 2>/dev/null | grep -q 'nak-eliminate-interval 900'
	[ $? = "$1" ]
}

# flap_clear: a round's streams run and have FLAP_CLEAR seconds or more to go.
flap_clear() {
	local start end n
	read -r start end <<<"$(cat "$LAB_DIR/round.streams" 2>/dev/null)"
	n=$(now)
	[ -n "$end" ] && [ "$n" -ge "$start" ] && [ $((n + FLAP_CLEAR)) -le "$end" ]
}

# e2's upstream link (eth0, to trunk t2) down for 3 s: c and d lose 3 s of the streams and get
# them repaired once it is back. Held between rounds (and in the streams' last FLAP_CLEAR
# seconds); not done at all when that would leave less than SOAK_SETTLE before the end. The link
# going down takes e2's default route with it; it is put back as a routing daemon would.
ev_flap() {
	local t=$1 ok=1 held
	while ! flap_clear; do
		if [ $(($(now) + SOAK_SETTLE)) -ge "$SOAK_SECONDS" ]; then
			event_log "$t" flap "e2 eth0" 1 "skipped: no round's streams clear of their end before the run's"
			return
		fi
		sleep 0.5
	done
	held=$(($(now) - t))
	lab_exec e2 ip link set eth0 down || ok=0
	sleep 3
	lab_exec e2 ip link set eth0 up || ok=0
	lab_wait 10 "e2 eth0 up" sh -c "ip -n $(lab_ns e2) link show eth0 2>/dev/null | grep -q LOWER_UP" || ok=0
	lab_exec e2 ip route replace default via "$(lab_addr core eth2)" || ok=0
	event_log "$t" flap "e2 eth0" "$ok" "3 s down, held $held s"
}

# A route for G_ROUTE added to core through smcroute, held 5 s, removed: the kernel must show
# it and then not.
ev_route() {
	local t=$1 ok=1 sock="$LAB_DIR/smcroute.core.sock"
	lab_exec core smcroutectl -u "$sock" add eth0 "$TOPO_SOURCE_ADDR" "$G_ROUTE" eth1 eth2 >/dev/null || ok=0
	lab_wait 5 "the route in core" mroute_has "$G_ROUTE" || ok=0
	sleep 5
	lab_exec core smcroutectl -u "$sock" remove eth0 "$TOPO_SOURCE_ADDR" "$G_ROUTE" >/dev/null || ok=0
	lab_wait 5 "the route gone from core" sh -c "! ip -n $(lab_ns core) mroute show | grep -q '$G_ROUTE'" || ok=0
	event_log "$t" route core "$ok" "($TOPO_SOURCE_ADDR,$G_ROUTE) added, removed after 5 s"
}

mroute_has() { ip -n "$(lab_ns core)" mroute show | grep -q "$1"; }

inject() {
	local node=$1
	shift
	lab_exec "$node" "$LAB_PEERS/pgm-inject" "$@" >>"$LAB_DIR/inject.log" 2>&1
}

# policed ROUTER CLASS: the packets of CLASS (nak, ncf, spm) the interception rules of ROUTER
# dropped over the policing limits, per source and per interface (README, Security).
policed() {
	lab_router_cli "$1" "show ip pgm router json" 2>/dev/null |
		jq --arg k "$2" '[.police[$k][]?.dropped // 0] | add // 0' 2>/dev/null || echo 0
}

# malformed ROUTER: the malformed packets ROUTER's data plane counted.
malformed() { lab_router_cli "$1" "show ip pgm router dataplane json" | jq '.path.malformed'; }

# Malformed packets at e2 (NAKs to it from c1: bad checksums, truncated) and at core (SPMs to
# the stream's group from the source LAN with bad checksums), back to back: every one must be
# counted as a packet error or dropped by the policing before the queue (a burst is far over
# its limits), some must reach the daemons, none may hurt the streams.
ev_malformed() {
	local t=$1 ok=1 e2a core0 e2b coreb e2p corep
	e2a=$(lab_addr e2 @c)
	e2b=$(malformed e2) e2p=$(policed e2 nak)
	coreb=$(malformed core) corep=$(policed core spm)
	inject c1 --src "$(lab_addr c1 eth0)" --dst "$e2a" --type nak --nak-src "$TOPO_SOURCE_ADDR" \
		--nak-grp "$G_PGM" --bad-checksum --count "$MALFORMED" || ok=0
	inject c1 --src "$(lab_addr c1 eth0)" --dst "$e2a" --type nak --nak-src "$TOPO_SOURCE_ADDR" \
		--nak-grp "$G_PGM" --truncate 6 --count "$MALFORMED" || ok=0
	inject s1 --src "$TOPO_SOURCE_ADDR" --dst "$G_PGM" --type spm --gsi "$FLOOD_GSI" \
		--bad-checksum --if eth0 --count "$MALFORMED" || ok=0
	sleep 1
	core0=$(($(malformed core) - coreb)) corep=$(($(policed core spm) - corep))
	e2a=$(($(malformed e2) - e2b)) e2p=$(($(policed e2 nak) - e2p))
	[ "$e2a" -ge 1 ] && [ "$core0" -ge 1 ] || ok=0
	[ $((e2a + e2p)) -ge $((2 * MALFORMED)) ] && [ $((core0 + corep)) -ge "$MALFORMED" ] || ok=0
	lab_router_running e2 && lab_router_running core || ok=0
	event_log "$t" malformed "e2 core" "$ok" "e2: $e2a counted malformed + $e2p policed (of $((2 * MALFORMED))), core: $core0 + $corep (of $MALFORMED)"
}

# A NAK flood at e2: crafted SPMs make a session on G_FLOOD (no receiver), then d1 NAKs
# FLOOD_NAKS sequence numbers of it back to back. The policing lets its burst and rate through
# (README, Security) and drops the rest before the queue; every NAK let through makes repair
# state that nothing confirms, which must all go again (NAK_RPT_IVL).
ev_nakflood() {
	local t=$1 ok=1 before after peak pol
	before=$(router_counter e2 nak-received)
	pol=$(policed e2 nak)
	inject s1 --src "$TOPO_SOURCE_ADDR" --dst "$G_FLOOD" --type spm --gsi "$FLOOD_GSI" \
		--sport 4321 --sqn "$((t + 1))" --trail 1 --lead 1000000 --if eth0 --count 2 \
		--interval-ms 100 || ok=0
	lab_wait 5 "the flood session in e2" flood_session || ok=0
	inject d1 --src "$(lab_addr d1 eth0)" --dst "$(lab_addr e2 @d)" --type nak --gsi "$FLOOD_GSI" \
		--sport 7500 --dport 4321 --nak-src "$TOPO_SOURCE_ADDR" --nak-grp "$G_FLOOD" --sqn 10 --sqn-step 1 \
		--count "$FLOOD_NAKS" || ok=0
	peak=$(lab_router_cli e2 "show ip pgm router json" | jq '.repair_states')
	after=$(router_counter e2 nak-received)
	pol=$(($(policed e2 nak) - pol))
	[ $((after - before)) -ge 1 ] || ok=0
	[ $((after - before + pol)) -ge $((FLOOD_NAKS * 9 / 10)) ] || ok=0
	lab_router_running e2 || ok=0
	event_log "$t" nakflood e2 "$ok" "NAKs received +$((after - before)), policed +$pol, of $FLOOD_NAKS; repair states just after: $peak"
}

flood_session() {
	lab_router_cli e2 "show ip pgm router state json" 2>/dev/null | grep -q "$G_FLOOD"
}

churn() {
	local next=$SOAK_FIRST i=0 ev t
	local -a evs
	read -r -a evs <<<"$EVENTS"
	echo "t_start,t_end,event,target,ok,detail" >"$RES/events.csv"
	while [ $((next + SOAK_SETTLE)) -le "$SOAK_SECONDS" ]; do
		while [ "$(now)" -lt "$next" ]; do sleep 0.2; done
		ev=${evs[$((i % ${#evs[@]}))]}
		t=$(now)
		"ev_$ev" "$t"
		i=$((i + 1))
		next=$((next + SOAK_EVENT_EVERY))
	done
}

# The streams, in rounds -------------------------------------------------------------------------

# round N SECONDS: both streams for SECONDS with fresh peers (run id N, so nothing of an earlier
# round is taken for this one's), every receiver's verdict into rounds.csv.
round() {
	local n=$1 secs=$2 limit r f pids=() names=() spid zpid i rc kind
	local npgm=$((PGM_RATE * secs)) nzmq=$((ZMQ_RATE * secs))
	limit=$((secs + 90))
	echo "$n" >"$LAB_DIR/round.current"
	for r in $TOPO_RECEIVERS; do
		f="$LAB_DIR/round.$n.pgm.$r.out"
		lab_spawn "$r" "$f" "$LAB_PEERS/pgm-recv" -n "$(lab_addr "$r" eth0);$G_PGM" \
			-c "$npgm" -I "$n" -T "$limit" --progress 1000
		pids+=("$LAB_PID") names+=("pgm $r")
		f="$LAB_DIR/round.$n.zmq.$r.out"
		lab_spawn "$r" "$f" "$LAB_PEERS/zmq-sub" -e "epgm://$(lab_addr "$r" eth0);$G_ZMQ:5555" \
			-c "$nzmq" -I "$n" -T "$limit" --progress 1000
		pids+=("$LAB_PID") names+=("zmq $r")
	done
	for f in "$LAB_DIR"/round."$n".*.out; do
		lab_wait 10 "receiver ready ($(basename "$f"))" grep -q '^event=ready' "$f"
	done
	lab_spawn s1 "$LAB_DIR/round.$n.pgm-send.log" "$LAB_PEERS/pgm-send" \
		-n "$TOPO_SOURCE_ADDR;$G_PGM" -c "$npgm" -r "$PGM_RATE" -I "$n" -T "$limit" \
		--linger "$SENDER_LINGER_MS"
	spid=$LAB_PID
	lab_spawn s1 "$LAB_DIR/round.$n.zmq-pub.log" "$LAB_PEERS/zmq-pub" \
		-e "epgm://$TOPO_SOURCE_ADDR;$G_ZMQ:5555" -c "$nzmq" -r "$ZMQ_RATE" -I "$n" -T "$limit" \
		--linger "$SENDER_LINGER_MS" --linger-rate "$ZMQ_LINGER_RATE"
	zpid=$LAB_PID
	echo "$(now) $(($(now) + secs))" >"$LAB_DIR/round.streams"
	echo "soak: t=$(now) s round $n: streams started"
	for i in "${!pids[@]}"; do
		lab_wait_pid "${pids[$i]}" $((limit + 5))
		rc=$?
		read -r kind r <<<"${names[$i]}"
		f="$LAB_DIR/round.$n.$kind.$r.out"
		line=$(lab_result "$f")
		[ -n "$line" ] || line="result=none rc=$rc"
		# One awk for the whole row: a process per field costs seconds on a busy machine.
		echo "$line" | awk -v pre="$n,$kind,$r" -v rc="$rc" '{
			for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
			print pre "," v["result"] "," v["expected"] "," v["messages"] "," v["duplicates"] "," \
				v["out_of_order"] "," v["missing"] "," v["recovered"] "," v["data_ms"] "," \
				v["run_ms"] "," rc }' >>"$RES/rounds.csv"
		case $line in result=ok\ *) ;; *)
			echo "soak: round $n: $kind receiver $r: $line"
			tail -n 3 "$f" | sed 's/^/    /'
			;;
		esac
	done
	echo "soak: t=$(now) s round $n: receivers done"
	rm -f "$LAB_DIR/round.streams"
	# The receivers are done: the senders' linger has nothing left to repair, they stop.
	for i in "$spid pgm-send" "$zpid zmq-pub"; do
		read -r spid kind <<<"$i"
		if kill -0 "$spid" 2>/dev/null && ! _lab_is_zombie "$spid"; then
			lab_stop "$spid"
			continue
		fi
		lab_wait_pid "$spid" 6
		rc=$?
		[ "$rc" = 0 ] || echo "soak: round $n: $kind exit $rc ($(tail -n 1 "$LAB_DIR/round.$n.$kind.log"))"
	done
	# The round leaves the sampler's sum before its count joins the total: a sample between
	# the two sees a dip, never the round twice.
	echo none >"$LAB_DIR/round.current"
	for kind in pgm zmq; do
		echo $(($(cat "$LAB_DIR/delivered.$kind" 2>/dev/null || echo 0) + $(n_delivered "$n" "$kind"))) \
			>"$LAB_DIR/delivered.$kind.new"
		mv "$LAB_DIR/delivered.$kind.new" "$LAB_DIR/delivered.$kind"
	done
}

# n_delivered ROUND KIND: the messages ROUND's receivers of KIND delivered.
n_delivered() {
	local f n sum=0
	for f in "$LAB_DIR"/round."$1"."$2".*.out; do
		n=$(lab_kv messages "$(lab_result "$f")")
		sum=$((sum + ${n:-0}))
	done
	echo "$sum"
}

echo "round,kind,receiver,result,expected,messages,duplicates,out_of_order,missing,recovered,data_ms,run_ms,rc" \
	>"$RES/rounds.csv"
sampler &
BG_PIDS+=($!)
churn &
BG_PIDS+=($!)
n=1
while :; do
	left=$((SOAK_SECONDS - $(now)))
	[ "$left" -ge 20 ] || break
	secs=$((left < SOAK_ROUND ? left : SOAK_ROUND))
	echo "soak: t=$(now) s round $n, $secs s"
	round "$n" "$secs"
	n=$((n + 1))
done
# The last samples: churn is done (it leaves SOAK_SETTLE seconds at the end).
wait "${BG_PIDS[1]}" 2>/dev/null
sleep $((SOAK_SAMPLE + 1))
for r in $TOPO_ROUTERS; do cp "$LAB_DIR/pgmrouterd.$r.log"* "$RES/" 2>/dev/null; done
cp "$LAB_DIR/inject.log" "$LAB_DIR"/round.*.log "$RES/" 2>/dev/null
echo "duration=$SOAK_SECONDS sample=$SOAK_SAMPLE event_every=$SOAK_EVENT_EVERY round=$SOAK_ROUND pgm_rate=$PGM_RATE zmq_rate=$ZMQ_RATE loss=a:0.05,t2:0.05 routers=$TOPO_ROUTERS" \
	>"$RES/params"
# Debian's python3, the one python3-matplotlib (make deps) is for.
py=/usr/bin/python3
[ -x "$py" ] || py=python3
"$py" "$SOAK_DIR/analyze.py" "$RES"
