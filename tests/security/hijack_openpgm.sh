#!/bin/bash
# Session hijack against a live OpenPGM session: pgm-send on s1, pgm-recv on a1 and b1, every
# 20th ODATA lost on the way into LAN a, so a1 depends on NAKs, NCFs and repairs throughout. Once
# the router knows the session, m1 (LAN x) and a2 (LAN a) send SPMs with its TSI and a higher
# SPM_SQN to another group, every half second, for the whole stream. Safe outcome: the session
# keeps its source, group and upstream, and both receivers get every message intact
# (pgm-recv's own check: result=ok, missing=0). SEC_ATTACK=0 runs the same without the attack:
# the baseline, which passes on any daemon that assists.
. "$(dirname "$0")/lib.sh"
sec_need
need_peer() { [ -x "$LAB_PEERS/$1" ] || { log "missing $LAB_PEERS/$1 (run make)"; exit 1; }; }
need_peer pgm-send
need_peer pgm-recv
sec_topo
sec_start
lab_loss r1 eth1 nth:20 odata
COUNT=2000
RATE=200
declare -A RECV
for r in a1 b1; do
	lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" -n "$(lab_addr $r eth0);$G" \
		-c $COUNT -T 40
	RECV[$r]=$LAB_PID
done
lab_wait 10 "receivers ready" sh -c "grep -q '^event=ready' '$LAB_DIR/a1.out' &&
	grep -q '^event=ready' '$LAB_DIR/b1.out'" || exit 1
lab_spawn s1 "$LAB_DIR/s1.out" "$LAB_PEERS/pgm-send" -n "$S1;$G" -c $COUNT -r $RATE -T 45
sender=$LAB_PID
ospm() { jval "show ip pgm router state json" \
	"([s['$1'] for s in sess if s['source'] == '$S1'] + ['none'])[0]"; }
lab_wait 10 "the OpenPGM session in the router's state" eval '[ "$(ospm tsi)" != none ]' || exit 1
OTSI=$(ospm tsi)
log "the OpenPGM session: TSI $OTSI"
ogsi=${OTSI%.*}
osport=${OTSI#*.}
pinned() {
	jtrue "show ip pgm router state json" "[(s['source'], s['group'], s['upstream'],
		s['upstream_interface']) for s in sess if s['tsi'] == '$OTSI'] == [('$S1', '$G', '$S1', 'eth0')]"
}
# the attack, for as long as the receivers run
k=0
while kill -0 "${RECV[a1]}" 2>/dev/null && ! _lab_is_zombie "${RECV[a1]}" && [ $k -lt 80 ]; do
	k=$((k + 1))
	sq=$(ospm spm_sqn)
	[ "$sq" = none ] && sq=0
	[ "${SEC_ATTACK:-1}" = 0 ] && break
	for n in "m1 $M1" "a2 $A2"; do
		set -- $n
		inj "$1" --src "$2" --dst $G2 --type spm --gsi "$ogsi" --sport "$osport" \
			--sqn $(((sq + 1000 * k) % 4294967296)) --trail 0 --lead $((1000 * k)) --path "$2"
	done
	[ "$k" = 2 ] && figure "after the first SPMs of the attackers: session $(jval "show ip pgm router state json" \
		"[(s['source'], s['group'], s['upstream'], s['upstream_interface']) for s in sess if s['tsi'] == '$OTSI']")"
	[ "$k" = 2 ] && check "after the first SPMs of the attackers the session keeps its source and path" pinned
	sleep 0.5
done
for r in a1 b1; do
	lab_wait_pid "${RECV[$r]}" 45
	res=$(lab_result "$LAB_DIR/$r.out")
	figure "$r: ${res:-no result}"
	check "$r got every message (result=ok, missing=0)" eval "[ '$(lab_kv result "$res")' = ok ] && [ '$(lab_kv missing "$res")' = 0 ]"
done
lab_stop "$sender"
figure "lost on the way into LAN a: $(lab_loss_dropped r1) ODATA"
check "the session kept its source and path to the end" pinned
finish
