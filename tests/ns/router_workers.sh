#!/bin/bash
# Two workers (`ip pgm router workers 2`): the rules steer each session to a queue of its own by
# its GSI, in both directions. Session A (GSI ...06) goes to queue 113, session B (GSI ...f6)
# to queue 114; each gets its SPM copies with the path NLAs, an NCF for a NAK on the NAKing
# segment only, one NAK upstream, and its repair only where it was asked for. Both queues carry
# packets, each worker is a thread of its own with its own control plane (the sessions split
# between them), the shows add them up and list each worker, and going back to one worker at run
# time gives the one-queue table again, the sessions learned afresh from their next SPMs.
. "$(dirname "$0")/lib_router.sh"
router_need
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router workers 2" \
	"ip pgm router nak-repeat-interval 60000" "ip pgm router nak-eliminate-interval 60000" \
	"ip pgm router nak-rdata-interval 600000" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

GSI_A=010203040506 # last byte 0x06: worker 0 of 2
GSI_B=0102030405f6 # 0xf6: worker 1
check "the running configuration has the workers" eval "cli 'show running-config' | grep -qx ' *ip pgm router workers 2'"
check "rules: a steering chain per hook, queues 113 and 114" eval "
	t=\$(lab_exec rtr nft list table ip pgmrouter);
	echo \"\$t\" | grep -q 'chain steer-prerouting' && echo \"\$t\" | grep -q 'chain steer-input' &&
	echo \"\$t\" | grep -q '@th,104,8 0x80-0xff counter packets [0-9]* bytes [0-9]* queue num 114 bypass' &&
	! echo \"\$t\" | grep -q 'queue num 115'"
check "the kernel has both queues bound" eval "[ -n \"\$(queue_counters rtr 113)\" ] && [ -n \"\$(queue_counters rtr 114)\" ]"

any_up_nak() { echo "^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $1\.1234 sqn $2 "; }
ncf() { echo "type=NCF \| NCF $1\.1234 sqn $2 "; }
rdata() { echo "type=RDATA \| RDATA $1\.1234 sqn $2 "; }
spm() { echo "type=SPM \| SPM $1\.1234 sqn 1 .* path $2 "; }

# the workers' debug lines go to the log ring from their threads (show logging, below)
cli "debug ip pgm router packets" >/dev/null
for g in $GSI_A $GSI_B; do
	inj src s0 --gsi $g --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
	check "$g: SPM on r1's segment with path $D1_ADDR" wait_seen 10 r1 "$(spm $g $D1_ADDR)" 1
	check "$g: SPM on r2's segment with path $D2_ADDR" wait_seen 10 r2 "$(spm $g $D2_ADDR)" 1
done
check "state: both sessions" lab_poll 5 jtrue "show ip pgm router state json" \
	"sorted(s['tsi'] for s in sess) == ['010203040506.1234', '0102030405f6.1234']"

for g in $GSI_A $GSI_B; do
	inj r1 dn --gsi $g --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP
	check "$g: NAK sqn 5 from r1 forwarded upstream" wait_seen 10 src "$(any_up_nak $g 5)" 1
	check "$g: an NCF on r1's segment" wait_seen 10 r1 "$(ncf $g 5)" 1
done
sync_wire
for g in $GSI_A $GSI_B; do
	check "$g: one NCF on r1's segment, none on r2's" eval "
		[ $(seen r1 "$(ncf $g 5)") = 1 ] && [ $(seen r2 "$(ncf $g 5)") = 0 ]"
done
check "the NAKs were forwarded once each" test "$(ev up0 nak-forwarded)" = 2

for g in $GSI_A $GSI_B; do
	inj src s0 --gsi $g --src $SRC_ADDR --dst $GROUP --type ncf --sqn 5 --ra --ttl 255
	inj src s0 --gsi $g --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --trail 1
	check "$g: RDATA sqn 5 reaches r1, which asked" wait_seen 10 r1 "$(rdata $g 5)" 1
done
sync_wire
n_up=$(($(seen src "$(any_up_nak $GSI_A 5)") + $(seen src "$(any_up_nak $GSI_B 5)")))
check "every NAK upstream is a forward or a counted repeat ($n_up = 2 + repeats)" \
	test "$n_up" = $((2 + $(ev up0 nak-retransmitted)))
for g in $GSI_A $GSI_B; do
	check "$g: RDATA sqn 5 does not reach r2" seen_is r2 "$(rdata $g 5)" 0
	check "$g: the NCF from upstream confirmed the state" eval "[ \"\$(phase 5 $g.1234)\" != PENDING ]"
done

check "dataplane: two workers, each with packets, adding up to the queue's" jtrue \
	"show ip pgm router dataplane json" "(len(j['workers']) == 2 and
	[w['queue'] for w in j['workers']] == [113, 114] and
	all(w['packets'] >= 4 for w in j['workers']) and
	sum(w['packets'] for w in j['workers']) == j['queue_stats']['packets'] and
	all(w['kernel_dropped'] == 0 for w in j['workers']))"
check "each worker is a thread of its own, not the daemon's main thread" jtrue \
	"show ip pgm router dataplane json" "(len(set(w['thread'] for w in j['workers'])) == 2 and
	$DAEMON_PID not in [w['thread'] for w in j['workers']])"
check "the threads exist in the daemon" eval "
	[ \$(ls /proc/$DAEMON_PID/task | wc -l) -ge 3 ]"
# caps TASK: its effective and permitted capabilities
caps() { awk '/^Cap(Eff|Prm)/ { printf "%s ", $2 }' "$1/status"; }
same_caps() {
	local t main
	main=$(caps "/proc/$DAEMON_PID")
	for t in /proc/"$DAEMON_PID"/task/*; do
		[ "$(caps "$t")" = "$main" ] || { log "$t: $(caps "$t") against $main"; return 1; }
	done
}
check "every worker thread has the capabilities the daemon kept, no more" same_caps
check "traffic: the interfaces' counters add up both workers' (a NAK in for each session)" jtrue \
	"show ip pgm router traffic json" "sum(ifs[i]['received'].get('NAK', 0) for i in ifs) == 2"
check "show logging: both workers' debug lines, from their threads" eval "
	out=\$(cli 'show logging');
	echo \"\$out\" | grep -q '\[worker 0\] .*SPM 010203040506' &&
	echo \"\$out\" | grep -q '\[worker 1\] .*SPM 0102030405f6'"
cli "no debug ip pgm router packets" >/dev/null
check "the kernel handed packets out on both queues" eval "
	[ \$(queue_counters rtr 113 | awk '{ print \$4 }') -ge 4 ] &&
	[ \$(queue_counters rtr 114 | awk '{ print \$4 }') -ge 4 ]"
check "dataplane text: the queues and a line per worker" eval "
	out=\$(cli 'show ip pgm router dataplane');
	echo \"\$out\" | grep -q 'queues 113-114 (sessions by GSI)' &&
	echo \"\$out\" | grep -Eq '^  Worker 0: queue 113, [1-9][0-9]* packets, .*CPU [0-9.]+ s' &&
	echo \"\$out\" | grep -Eq '^  Worker 1: queue 114, [1-9][0-9]* packets'"

# ---- back to one worker at run time: one queue, the table of one, the sessions afresh ----
cli "configure terminal" "no ip pgm router workers" "end" >/dev/null
check "one worker: no steering chain, queue 113 only" lab_poll 10 eval "
	t=\$(lab_exec rtr nft list table ip pgmrouter);
	! echo \"\$t\" | grep -q steer && ! echo \"\$t\" | grep -q 'queue num 114' &&
	echo \"\$t\" | grep -q 'queue num 113 bypass'"
check "one worker: queue 114 unbound" eval "[ -z \"\$(queue_counters rtr 114)\" ]"
check "one worker: the workers' sessions went with them" jtrue "show ip pgm router state json" "len(sess) == 0"
for g in $GSI_A $GSI_B; do
	inj src s0 --gsi $g --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 20
done
check "one worker: both sessions learned again from their SPMs" lab_poll 5 jtrue \
	"show ip pgm router state json" "len(sess) == 2"
inj r2 dn --gsi $GSI_B --src $R2_ADDR --dst $D2_ADDR --type nak --sqn 7 --nak-src $SRC_ADDR --nak-grp $GROUP
check "one worker: session B's NAK still confirmed on r2's segment" wait_seen 10 r2 "$(ncf $GSI_B 7)" 1
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
