# shellcheck shell=bash
# Variables set here are read by the scripts that source this file:
# shellcheck disable=SC2034
#
# Shared helpers of the attack suite (tests/security/*.sh; bash; sourced, not run), on top of the
# lab (tests/lab/lib.sh): the suite's topology with pgmrouterd in r1 (its defaults plus
# `ip pgm router` on every interface), a legitimate session, a probe that measures what the
# session's receivers get from the router, and the daemon's memory sampled while attacks run.
#
#           s1 (source .10)   su (attacker on the upstream LAN, .20)
#            |                 |
#   LAN src  +--------+--------+             198.18.1.0/24
#                     | eth0 .1
#                     r1 (pgmrouterd)
#          eth1 .1 |   eth2 .1 |    | eth3 .1
#   LAN a   +------+--+  LAN b +-+  LAN x +-----+     198.18.2 / .3 / .4.0/24
#           |         |        |        |
#       a1 (.11)  a2 (.66)  b1 (.11)  m1 (.66)
#       receiver  attacker  receiver  attacker on a LAN of its own
#
# Multicast routes (smcroute, source-specific): (s1, G) from eth0 to eth1 eth2 eth3, the
# legitimate session; (m1, G2) from eth3 to eth1 eth2 and (a2, G2) from eth1 to eth2 eth3: hosts
# whose multicast the router routes, another group on another interface; (m1, G3) from eth3 to
# eth2, the group of the SPM flood (kept off LAN a, where the probe is measured).
#
# The legitimate session is TSI 500001000000.1234 (the TSI pgm-flood makes with --gsi-base 1
# --sport 1234 --tsis 1), SPMs from s1 to G. A probe is one NAK from a1, to the router's address
# on LAN a, for a fresh SQN; it is measured on the wire, by pgm-sniff on each LAN's bridge (one
# clock for the NAK and its NCF): the NCF's delay, the NAKs the router sends upstream for it, and
# whether any of them went anywhere but the source.
#
# Every script is one lab run tagged "sec"; LAB_KEEP=1 keeps its files. Figures worth reporting
# are printed as lines "[NAME] figure: ...".

set -u

SEC_TEST=${SEC_TEST:-$(basename "$0" .sh)}
SEC_FAILS=0
SEC_CHECKS=0

log() { echo "[$SEC_TEST] $*"; }
figure() { echo "[$SEC_TEST] figure: $*"; }

# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lab/lib.sh"
lab_init sec

INJECT="$LAB_PEERS/pgm-inject"
SNIFF="$LAB_PEERS/pgm-sniff"
FLOOD="$LAB_REPO/build/bench/pgm-flood"
read -r -a DAEMON <<<"$(lab_router_cmd)"

G=239.192.0.1
G2=239.192.0.2
G3=239.192.0.3
S1=198.18.1.10
SU=198.18.1.20
R_SRC=198.18.1.1
R_A=198.18.2.1
R_B=198.18.3.1
R_X=198.18.4.1
A1=198.18.2.11
A2=198.18.2.66
B1=198.18.3.11
M1=198.18.4.66
GSI=500001000000
TSI=$GSI.1234
TSI_RE="500001000000\.1234"
SOCK=$(lab_router_sock r1)
# The memory budget the issue documents, when the daemon does not show one of its own.
DEFAULT_BUDGET_MB=256
# The most a NAK may wait for its NCF.
NCF_LIMIT_MS=100

# check DESCRIPTION COMMAND...: counts a failure when COMMAND fails.
check() {
	local desc=$1
	shift
	SEC_CHECKS=$((SEC_CHECKS + 1))
	if "$@"; then
		log "ok   $desc"
	else
		log "FAIL $desc"
		SEC_FAILS=$((SEC_FAILS + 1))
	fi
}

finish() {
	if [ "$SEC_FAILS" -gt 0 ]; then
		log "$SEC_FAILS of $SEC_CHECKS checks failed"
		exit 1
	fi
	log "all $SEC_CHECKS checks passed"
	exit 0
}

sec_need() {
	local b
	for b in "${DAEMON[0]}" "$(lab_cli_cmd)" "$INJECT" "$SNIFF" "$FLOOD"; do
		[ -x "$b" ] || {
			log "missing $b (run make)"
			exit 1
		}
	done
	command -v python3 >/dev/null || {
		log "needs python3"
		exit 1
	}
}

# The JSON reader (tests/lab/jq.py): EXPR over j (the document), ifs (interfaces by name), sess
# (the sessions list).
JQ="$LAB_REPO/tests/lab/jq.py"

cli() { lab_router_cli r1 "$@"; }
jval() { cli "$1" | python3 "$JQ" "$2"; }
jtrue() { [ "$(jval "$1" "$2")" = True ]; }

# session_field FIELD: a field of the legitimate session in the state JSON ("none" without it).
session_field() {
	jval "show ip pgm router state json" \
		"([s.get('$1') for s in sess if s['tsi'] == '$TSI'] + ['none'])[0]"
}

# sec_topo: the topology above, routes installed, nothing started.
sec_topo() {
	lab_lan src
	lab_lan a
	lab_lan b
	lab_lan x
	lab_router r1
	lab_attach r1 eth0 src 1
	lab_attach r1 eth1 a 1
	lab_attach r1 eth2 b 1
	lab_attach r1 eth3 x 1
	local h
	for h in "s1 src 10 $R_SRC" "su src 20 $R_SRC" "a1 a 11 $R_A" "a2 a 66 $R_A" \
		"b1 b 11 $R_B" "m1 x 66 $R_X"; do
		set -- $h
		lab_host "$1"
		lab_attach "$1" eth0 "$2" "$3"
		lab_route "$1" default "$4"
	done
	lab_mroute r1 eth0 $S1 $G eth1 eth2 eth3
	lab_mroute r1 eth3 $M1 $G2 eth1 eth2
	lab_mroute r1 eth1 $A2 $G2 eth2 eth3
	lab_mroute r1 eth3 $M1 $G3 eth2
	lab_smcroute_start r1
}

# sec_conf FILE: the daemon's defaults plus router assist on every interface.
sec_conf() {
	{
		echo "hostname r1"
		for i in eth0 eth1 eth2 eth3; do
			printf 'interface %s\n ip pgm router\n' "$i"
		done
	} >"$1"
}

# sec_start [ARG...]: pgmrouterd in r1 with that configuration. DAEMON_PID.
sec_start() {
	sec_conf "$LAB_DIR/r1.conf"
	lab_router_start r1 "$LAB_DIR/r1.conf" "$@" || exit 1
	DAEMON_PID=$LAB_PID
}

# inj NODE ARGS...: pgm-inject in NODE out of eth0.
inj() {
	local n=$1
	shift
	lab_exec "$n" "$INJECT" --if eth0 "$@" >>"$LAB_DIR/inject.out" 2>&1 || {
		log "inject failed in $n: $*"
		tail -1 "$LAB_DIR/inject.out"
	}
}

# sniff_lan LAN [BPF]: pgm-sniff on the LAN's bridge (every frame of the segment) into
# $LAB_DIR/LAN.sniff, with capture times.
sniff_lan() {
	local lan=$1 f=${2:-}
	local -a extra=()
	[ -n "$f" ] && extra=(--filter "$f")
	# promiscuous: the bridge floods unicast (no learning), and br0 then takes every frame
	ip -n "$(lab_lan_ns "$lan")" link set br0 promisc on
	lab_spawn_ready "lan:$lan" "$LAB_DIR/$lan.sniff" "$LAB_DIR/$lan.sniff.ready" "$SNIFF" \
		--if br0 --time --timeout 280 --ready "$LAB_DIR/$lan.sniff.ready" "${extra[@]}" || {
		log "sniffer on LAN $lan did not start"
		exit 1
	}
}

# sniff_all: every LAN, the attack groups G2 and G3 left out of the receiver LANs (floods).
sniff_all() {
	sniff_lan src "ip proto 113"
	sniff_lan a "ip proto 113 and not ip dst host $G2 and not ip dst host $G3"
	sniff_lan b "ip proto 113 and not ip dst host $G2 and not ip dst host $G3"
	sniff_lan x "ip proto 113 and not ip dst host $G2 and not ip dst host $G3"
}

seen() {
	[ -e "$LAB_DIR/$1.sniff" ] || { echo 0; return; }
	grep -Ec -- "$2" "$LAB_DIR/$1.sniff"
}
wait_seen() { lab_poll "$1" sh -c "[ \$(grep -Ec -- '$3' '$LAB_DIR/$2.sniff') -ge $4 ]"; }

# The legitimate session ----------------------------------------------------------------------

SPM_SQN=0
TRAIL=1
LEAD=100000

# legit_spm: the real source's next SPM (window TRAIL..LEAD), until the router forwarded it to
# LAN a (returns 1 when it did not within 2 s).
legit_spm() {
	SPM_SQN=$((SPM_SQN + 1))
	inj s1 --src $S1 --dst $G --type spm --gsi $GSI --sport 1234 --sqn $SPM_SQN \
		--trail $TRAIL --lead $LEAD
	wait_seen 2 a "type=SPM \| SPM $TSI_RE sqn $SPM_SQN " 1
}

# legit_session: the session's first SPM, and the router holding it as s1's.
legit_session() {
	legit_spm || {
		log "the legitimate session's first SPM was not forwarded"
		exit 1
	}
	lab_wait 5 "the legitimate session in the router's state" field_is source $S1 || exit 1
}

# field_is FIELD VALUE: the legitimate session's FIELD is VALUE.
field_is() { [ "$(session_field "$1")" = "$2" ]; }

# Probes --------------------------------------------------------------------------------------

PROBE_SQN=50000
# probe: a NAK from a1 for a fresh SQN of the legitimate session; after it, PROBE_NCF_MS (the
# delay from the NAK to the router's NCF on LAN a, in ms, or "none" within 2 s), PROBE_UP (the
# router's NAKs to the source for it on LAN src within 150 ms of the first: a forward is one; the
# next repeat is due 200 ms later), PROBE_ELSEWHERE (NAKs for it to any other address on any LAN)
# and PROBE_SQN.
probe() {
	local nak_re ncf_re up_re
	PROBE_SQN=$((PROBE_SQN + 1))
	inj a1 --src $A1 --dst $R_A --type nak --gsi $GSI --sqn $PROBE_SQN --nak-src $S1 --nak-grp $G
	nak_re="^pgm src=$A1 dst=$R_A .*type=NAK \| NAK $TSI_RE sqn $PROBE_SQN "
	ncf_re="^pgm src=$S1 dst=$G .*type=NCF \| NCF $TSI_RE sqn $PROBE_SQN "
	up_re="^pgm src=$R_SRC dst=$S1 .*type=NAK \| NAK $TSI_RE sqn $PROBE_SQN "
	wait_seen 2 a "$ncf_re" 1
	wait_seen 1 src "$up_re" 1
	sleep 0.2
	PROBE_NCF_MS=$(python3 - "$LAB_DIR/a.sniff" "$nak_re" "$ncf_re" <<'EOF'
import re, sys
nak = ncf = None
for line in open(sys.argv[1], errors="replace"):
    t = re.search(r" time=([0-9.]+)$", line)
    if not t:
        continue
    if nak is None and re.search(sys.argv[2], line):
        nak = float(t.group(1))
    elif nak is not None and ncf is None and re.search(sys.argv[3], line):
        ncf = float(t.group(1))
print("none" if nak is None or ncf is None else "%.1f" % ((ncf - nak) * 1000))
EOF
)
	PROBE_UP=$(python3 - "$LAB_DIR/src.sniff" "$up_re" <<'EOF'
import re, sys
ts = []
for line in open(sys.argv[1], errors="replace"):
    t = re.search(r" time=([0-9.]+)$", line)
    if t and re.search(sys.argv[2], line):
        ts.append(float(t.group(1)))
print(len([t for t in ts if t < ts[0] + 0.150]) if ts else 0)
EOF
)
	# Each LAN's capture read once: the router's next repeat to the source may arrive between
	# two reads of a growing file.
	PROBE_ELSEWHERE=0
	local lan
	for lan in src a b x; do
		[ -e "$LAB_DIR/$lan.sniff" ] || continue
		PROBE_ELSEWHERE=$((PROBE_ELSEWHERE + $(grep -E -- \
			"^pgm src=198\.18\.[0-9]+\.1 dst=[0-9.]+ .*type=NAK \| NAK $TSI_RE sqn $PROBE_SQN " \
			"$LAB_DIR/$lan.sniff" | grep -Evc -- "$up_re")))
	done
}

# probe_ok: the last probe got its NCF within NCF_LIMIT_MS, one NAK upstream to the source and
# none elsewhere.
probe_ok() {
	[ "$PROBE_NCF_MS" != none ] &&
		python3 -c "import sys; sys.exit(0 if $PROBE_NCF_MS <= $NCF_LIMIT_MS else 1)" &&
		[ "$PROBE_UP" = 1 ] && [ "$PROBE_ELSEWHERE" = 0 ]
}
probe_text() {
	echo "NAK sqn $PROBE_SQN: NCF after ${PROBE_NCF_MS} ms, $PROBE_UP NAK(s) to the source, $PROBE_ELSEWHERE elsewhere"
}

# Memory --------------------------------------------------------------------------------------

# budget_mb: the memory budget the daemon shows (any JSON key with "budget" in its name, in the
# router's show; MB, or bytes when the key says so), else DEFAULT_BUDGET_MB.
budget_mb() {
	cli "show ip pgm router json" 2>/dev/null | python3 -c "
import json, sys
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if 'budget' in k.lower() and isinstance(v, (int, float)) and v > 0:
                return v / 1048576 if 'byte' in k.lower() or v > 1 << 20 else v
            r = walk(v)
            if r:
                return r
    elif isinstance(o, list):
        for v in o:
            r = walk(v)
            if r:
                return r
    return None
try:
    b = walk(json.load(sys.stdin))
except ValueError:
    b = None
print(int(b) if b else $DEFAULT_BUDGET_MB)"
}

rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# rss_watch_start PID LIMIT_KB: samples the daemon's VmRSS every 50 ms into $LAB_DIR/rss; when
# it passes LIMIT_KB, stops every flood listed in $LAB_DIR/flood.pids (the budget is already
# lost, and the machine's memory is shared). rss_watch_stop ends it; RSS_MAX_KB then holds the
# largest sample.
rss_watch_start() {
	local pid=$1 limit=$2
	: >"$LAB_DIR/rss"
	: >"$LAB_DIR/flood.pids"
	rm -f "$LAB_DIR/rss.stop" "$LAB_DIR/rss.over"
	(
		while [ ! -e "$LAB_DIR/rss.stop" ] && [ -d "/proc/$pid" ]; do
			r=$(rss_kb "$pid")
			echo "$(date +%s.%N) $r" >>"$LAB_DIR/rss"
			if [ "${r:-0}" -gt "$limit" ] && [ ! -e "$LAB_DIR/rss.over" ]; then
				touch "$LAB_DIR/rss.over"
				while read -r p; do kill -TERM "$p" 2>/dev/null; done <"$LAB_DIR/flood.pids"
			fi
			sleep 0.05
		done
	) &
	RSS_WATCH_PID=$!
}

rss_watch_stop() {
	touch "$LAB_DIR/rss.stop"
	wait "$RSS_WATCH_PID" 2>/dev/null
	RSS_MAX_KB=$(awk '$2 > m { m = $2 } END { print m + 0 }' "$LAB_DIR/rss")
}

# flood NODE NAME ARGS...: pgm-flood in NODE (out of eth0) in the background, stopped by the
# memory watch when the budget is passed. FLOOD_PID.
flood() {
	local n=$1 name=$2
	shift 2
	lab_spawn "$n" "$LAB_DIR/flood.$name.log" "$FLOOD" -i eth0 "$@"
	FLOOD_PID=$LAB_PID
	echo "$FLOOD_PID" >>"$LAB_DIR/flood.pids"
}

# session_pinned: the legitimate session still has s1 as source and upstream, G as group, eth0
# as upstream interface.
session_pinned() {
	jtrue "show ip pgm router state json" "([(s['source'], s['group'], s['upstream'],
		s['upstream_interface']) for s in sess if s['tsi'] == '$TSI'] ==
		[('$S1', '$G', '$S1', 'eth0')])"
}
session_text() {
	jval "show ip pgm router state json" "[(s['source'], s['group'], s['upstream'],
		s['upstream_interface'], s['spm_sqn']) for s in sess if s['tsi'] == '$TSI']"
}

MARK_SQN=0
# marker: an ODATA of a session of its own from s1 to G, which the kernel forwards (ODATA never
# enters the queue); once every receiver LAN shows it, whatever the router sent before it is in
# the captures too.
marker() {
	MARK_SQN=$((MARK_SQN + 1))
	inj s1 --src $S1 --dst $G --type odata --gsi fffffffe0001 --sqn $MARK_SQN
	local lan
	for lan in a b x; do
		wait_seen 5 $lan "type=ODATA \| ODATA fffffffe0001\.1234 sqn $MARK_SQN " 1 ||
			log "marker $MARK_SQN not seen on LAN $lan"
	done
}
