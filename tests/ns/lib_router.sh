# shellcheck shell=bash
# Variables set here are read by the tests that source this file:
# shellcheck disable=SC2034
#
# Helpers for the tests of pgmrouterd's packet path (tests/ns/router_*.sh; bash; sourced, not
# run). On top of lib.sh: the standard topology with pgmrouterd in rtr (started by the lab,
# lab_router_start), pgm-inject for traffic, pgm-sniff on every segment, the daemon's JSON read
# with python3, and barriers that make "nothing more arrived" checks independent of the
# machine's load.
#
#   src (s0 198.18.1.2) --- (up0 198.18.1.1) rtr (d1 198.18.2.1) --- (dn 198.18.2.2) r1
#                                               (d2 198.18.3.1) --- (dn 198.18.3.2) r2
#
# LAB_KEEP=1 keeps the captures and logs of a run (for looking into a failure).

# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

read -r -a DAEMON <<<"$(lab_router_cmd)" # ROUTER_CMD, as the lab starts it
INJECT=${INJECT:-"$LAB_PEERS/pgm-inject"}
SNIFF=${SNIFF:-"$LAB_PEERS/pgm-sniff"}
UP_ADDR=198.18.1.1
D1_ADDR=198.18.2.1
D2_ADDR=198.18.3.1
R1_ADDR=198.18.2.2
R2_ADDR=198.18.3.2
SOCK=$(lab_router_sock rtr)
PIDFILE="$LAB_DIR/pgmrouterd.rtr.pidfile"
DLOG="$LAB_DIR/pgmrouterd.rtr.log" # lab_router_start's log; an earlier daemon's is DLOG.1
# Markers (sync_wire) use their own session so that they never count as test traffic.
MARK_GSI=fffffffe0001
MARK_SQN=0

router_need() {
	need "${DAEMON[0]}" "$(lab_cli_cmd)" "$INJECT" "$SNIFF"
	command -v python3 >/dev/null || {
		log "needs python3"
		exit 1
	}
}

# The JSON reader (tests/lab/jq.py): EXPR over j (the document), ifs (interfaces by name), sess
# (the sessions list).
JQ="$LAB_REPO/tests/lab/jq.py"

# router_conf FILE [LINES...]: a startup config with router assist on up0, d1 and d2; extra
# global lines go first.
router_conf() {
	local f
	f=$1
	shift
	{
		echo "hostname r1"
		for l in "$@"; do
			echo "$l"
		done
		for i in up0 d1 d2; do
			printf 'interface %s\n ip pgm router\n' "$i"
		done
	} >"$f"
}

# router_start CONF: pgmrouterd in rtr (lab_router_start, in the foreground with its log in
# DLOG, its pid file PIDFILE), until its control socket answers (the socket comes after the
# interception rules) that it runs. DAEMON_PID.
router_start() {
	lab_router_start rtr "$1" -p "$PIDFILE" || return 1
	DAEMON_PID=$LAB_PID
}

# cli CMD...: the commands in one pgmrouter session on rtr's daemon (as root: privileged mode).
cli() { lab_router_cli rtr "$@"; }

# jval CMD EXPR: EXPR evaluated over the JSON output of CMD.
jval() {
	cli "$1" | python3 "$JQ" "$2"
}
jtrue() { [ "$(jval "$1" "$2")" = True ]; }
# ev IF NAME: an event counter of one interface.
ev() { jval "show ip pgm router traffic json" "ifs['$1']['events']['$2']"; }
# wait_ev SECONDS IF NAME VALUE: until that event counter reaches VALUE (a barrier: what the
# daemon sent while counting is on the wire when the CLI answers; a worker thread's counters are
# read under its lock, between its receive rounds, after their sends);
# wait_rx SECONDS IF TYPE VALUE: the same for packets received (forwarded types: per copy).
wait_ev() { lab_poll "$1" jtrue "show ip pgm router traffic json" "ifs['$2']['events']['$3'] >= $4"; }
wait_rx() { lab_poll "$1" jtrue "show ip pgm router traffic json" "ifs['$2']['received']['$3'] >= $4"; }
# dp EXPR: the data plane's JSON.
dp() { jval "show ip pgm router dataplane json" "$1"; }
# The repair state of SQN in the only session of group GROUP (its phase, or "none").
phase() {
	jval "show ip pgm router state json" \
		"([r['phase'] for s in sess if s['tsi'] == '${2:-010203040506.1234}' for r in s['repairs'] if r['sqn'] == $1] + ['none'])[0]"
}

# inj NAME IF ARGS...: pgm-inject in namespace NAME out of IF.
inj() {
	local n i
	n=$1
	i=$2
	shift 2
	lab_exec "$n" "$INJECT" --if "$i" "$@" >>"$LAB_DIR/inject.out" 2>&1 || {
		log "inject failed in $n: $*"
		tail -1 "$LAB_DIR/inject.out"
	}
}

# sniff NAME IF: pgm-sniff on IF of NAME (everything on the segment, both directions), into
# $LAB_DIR/NAME.sniff, with capture times.
sniff() {
	lab_spawn_ready "$1" "$LAB_DIR/$1.sniff" "$LAB_DIR/$1.ready" "$SNIFF" --if "$2" --time \
		--timeout 240 --ready "$LAB_DIR/$1.ready" || {
		log "sniffer in $1 did not start"
		return 1
	}
}

# sniffers: sniff on the three end hosts, into $LAB_DIR/{src,r1,r2}.sniff.
sniffers() {
	sniff src s0 && sniff r1 dn && sniff r2 dn
}

# seen NAME ERE: lines of NAME's capture matching ERE.
seen() { count_lines "$LAB_DIR/$1.sniff" "$2"; }
# seen_is NAME ERE N
seen_is() { [ "$(seen "$1" "$2")" = "$3" ]; }
# wait_seen SECONDS NAME ERE N: until at least N lines match.
wait_seen() { lab_poll "$1" sh -c "[ \$(grep -Ec -- '$3' '$LAB_DIR/$2.sniff') -ge $4 ]"; }

# sync_wire [ENCAP-ARGS]: an ODATA marker of its own session from src to the group, forwarded by
# the kernel alone; once every capture shows it, every packet the router sent before it was
# captured too. Call it after a daemon barrier (wait_ev) to prove that something did not happen.
sync_wire() {
	local m
	MARK_SQN=$((MARK_SQN + 1))
	inj src s0 --src "$SRC_ADDR" --dst "$GROUP" --type odata --gsi $MARK_GSI --sqn $MARK_SQN "$@"
	m="type=ODATA \| ODATA $MARK_GSI\.1234 sqn $MARK_SQN "
	for n in src r1 r2; do
		wait_seen 10 $n "$m" 1 || { log "marker $MARK_SQN not seen in $n"; return 1; }
	done
}

# The rules of ours in rtr (lab_router_rules).
our_rules() { lab_router_rules rtr; }
