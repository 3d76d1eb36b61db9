#!/bin/bash
# A read-only user stalls the packet path (the issue's "the CLI cannot stall the daemon"): a
# user in the daemon's read-only group (made for the test, removed after it) holds as many
# control-socket sessions as it can and runs `show ... | include ((a{1,100}){1,100}){1,100}`,
# several at once. Safe outcome: root gets an answer within 1 s throughout, a receiver's NAK
# still gets its NCF within 100 ms, and the queue does not fail open (no packet id skipped).
. "$(dirname "$0")/lib.sh"
sec_need
command -v useradd >/dev/null && command -v userdel >/dev/null || {
	log "needs useradd and userdel"
	exit 1
}
SEC_USER="pgmsec${LAB_ID##*-}"
useradd --system --user-group --no-create-home --shell /usr/sbin/nologin "$SEC_USER" || {
	log "cannot create user $SEC_USER"
	exit 1
}
trap 'userdel "$SEC_USER" 2>/dev/null; lab_cleanup' EXIT
trap 'userdel "$SEC_USER" 2>/dev/null; lab_cleanup; trap - INT; kill -INT $$' INT
trap 'userdel "$SEC_USER" 2>/dev/null; lab_cleanup; trap - TERM; kill -TERM $$' TERM
chmod 711 "$LAB_DIR" # the user reaches the socket; the directory's names stay private
sec_topo
sniff_all
sec_start -g "$SEC_USER"
legit_session
as_user() { ip netns exec "$(lab_ns r1)" runuser -u "$SEC_USER" -- "$@"; }
out=$(as_user "$(lab_cli_cmd)" -s "$SOCK" -c "show ip pgm router" 2>&1 | head -3)
check "the user is a read-only user of the socket" eval "! grep -q 'Access denied' <<<'$out'"
gaps() {
	timeout 5 ip netns exec "$(lab_ns r1)" "$(lab_cli_cmd)" -s "$SOCK" \
		-c "show ip pgm router dataplane json" 2>/dev/null |
		python3 "$JQ" "j['queue_stats']['id_gaps']"
}

# root_ms: one root show, its time in ms (5000 when it did not answer within 5 s).
root_ms() {
	local t0 rc
	t0=$(date +%s%N)
	timeout 5 ip netns exec "$(lab_ns r1)" "$(lab_cli_cmd)" -s "$SOCK" -c "show ip pgm router json" \
		2>/dev/null | grep -q '"running":true'
	rc=$?
	[ "$rc" = 0 ] && echo $((($(date +%s%N) - t0) / 1000000)) || echo 5000
}
probe
check "before the user's load: $(probe_text), root answers in $(root_ms) ms" probe_ok

# measure NAME SECONDS: root's show and a probe, in turn, for SECONDS (once at least); then the
# figures and checks. The queue's skipped packet ids are compared with GAPS, read before the load.
measure() {
	local name=$1 end worst=0 bad=0 n=0 ms g0=$GAPS g1
	end=$(($(date +%s) + $2))
	while [ "$n" = 0 ] || [ "$(date +%s)" -lt "$end" ]; do
		ms=$(root_ms)
		[ "$ms" -gt "$worst" ] && worst=$ms
		probe
		n=$((n + 1))
		probe_ok || { bad=$((bad + 1)); log "  $name: $(probe_text)"; }
	done
	g1=$(gaps)
	figure "$name: root's slowest answer $worst ms; $bad of $n probes failed; queue id gaps $g0 -> $g1"
	check "$name: root answered within 1 s throughout (slowest $worst ms)" [ "$worst" -lt 1000 ]
	check "$name: every probe's NAK confirmed within $NCF_LIMIT_MS ms and forwarded once ($bad of $n failed)" \
		[ "$bad" = 0 ]
	check "$name: the queue did not fail open (packet ids skipped: $g0 -> $g1)" \
		eval "[ -n '$g0' ] && [ '$g0' = '$g1' ] && [ -z '${g1//[0-9]/}' ]"
}

GAPS=$(gaps)
# The user's sessions: as many as it can open, held silent and reopened as the daemon drops them.
as_user timeout 12 python3 "$(dirname "$0")/hold-sessions.py" "$SOCK" 6 >"$LAB_DIR/hold.out" 2>&1 &
hold=$!
sleep 0.5
measure "while the user holds sessions" 4
wait "$hold"
figure "the user's sessions: $(cat "$LAB_DIR/hold.out")"

lab_poll 10 eval '[ "$(root_ms)" -lt 5000 ]' # the held sessions are gone
GAPS=$(gaps)
# The pathological filter in 4 clients at once (each bounded in time and address space).
pids=()
for i in 1 2 3 4; do
	as_user timeout 10 prlimit --as=1500000000 "$(lab_cli_cmd)" -s "$SOCK" \
		-c "show running-config | include ((a{1,100}){1,100}){1,100}" >"$LAB_DIR/regex.$i.out" 2>&1 &
	pids+=($!)
done
sleep 0.5
measure "while the user's filters run" 6
wait "${pids[@]}" 2>/dev/null
finish
