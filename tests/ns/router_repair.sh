#!/bin/bash
# pgmrouterd's packet path end to end, with crafted packets (PGM over IP; router_udp.sh runs the
# same over UDP): SPMs get each downstream interface's address as path NLA and create the
# session; a NAK from r1 gets an NCF on r1's segment only and one NAK toward the source from the
# router's upstream address, repeated at the configured rate until an NCF comes from upstream;
# duplicates within the elimination interval get NCFs and are not forwarded; NAKs upstream go
# through the link layer once the kernel has confirmed the neighbour, as well formed as before;
# RDATA goes only where it was asked for; ODATA reaches everyone and never enters the queue.
. "$(dirname "$0")/lib_router.sh"
router_need
ENCAP=${ROUTER_ENCAP:-ip}
E=()
[ "$ENCAP" = udp ] && E=(--udp)
RATE=10 # NAK repeats per second
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-rate $RATE" \
	"ip pgm router nak-repeat-interval 60000" "ip pgm router nak-eliminate-interval 60000" \
	"ip pgm router nak-rdata-interval 600000" \
	"ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1
log "PGM over $ENCAP"

# Wire forms (pgm-sniff lines). Downstream: ports 1234>7500 (to port 3056 over UDP); upstream:
# 7500>1234 (to 3055).
if [ "$ENCAP" = udp ]; then
	DOWN="encap=udp udpcsum=ok csum=ok"
	DOWN_TAIL="ports 1234>7500 udp-ports [0-9]+>3056"
	UP="encap=udp udpcsum=ok csum=ok"
	UP_TAIL="ports 7500>1234 udp-ports [0-9]+>3055"
else
	DOWN="encap=ip csum=ok"
	DOWN_TAIL="ports 1234>7500"
	UP="encap=ip csum=ok"
	UP_TAIL="ports 7500>1234"
fi
ncf_re() { echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=[0-9]+ ra=1 $DOWN type=NCF \| NCF $TSI sqn $1 src $SRC_ADDR grp $GROUP $DOWN_TAIL "; }
any_ncf() { echo "type=NCF \| NCF $TSI sqn $1 "; }
up_nak_re() { echo "^pgm src=$UP_ADDR dst=$SRC_ADDR ttl=[0-9]+ ra=[01] $UP type=NAK \| NAK $TSI sqn $1 src $SRC_ADDR grp $GROUP $UP_TAIL "; }
any_up_nak() { echo "^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn $1 "; }
rdata() { echo "type=RDATA \| RDATA $TSI sqn $1 "; }
nak_from() { # nak_from r1|r2 SQN
	local a
	a=$R1_ADDR
	[ "$1" = r2 ] && a=$R2_ADDR
	local rtr=$D1_ADDR
	[ "$1" = r2 ] && rtr=$D2_ADDR
	inj "$1" dn "${E[@]}" --src $a --dst $rtr --type nak --sqn "$2" --nak-src $SRC_ADDR --nak-grp $GROUP
}

# ---- SPM: path NLA per egress interface, session state ----
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
wait_seen 10 r1 "type=SPM" 1
wait_seen 10 r2 "type=SPM" 1
spm() { echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=15 ra=0 $DOWN type=SPM \| SPM $TSI sqn 1 trail 1 lead 20 path $1 $DOWN_TAIL "; }
check "SPM on r1's segment: path NLA $D1_ADDR, checksum good" seen_is r1 "$(spm $D1_ADDR)" 1
check "SPM on r2's segment: path NLA $D2_ADDR, checksum good" seen_is r2 "$(spm $D2_ADDR)" 1
check "one SPM copy per segment" eval "[ $(seen r1 type=SPM) = 1 ] && [ $(seen r2 type=SPM) = 1 ]"
check "state: the session, upstream $SRC_ADDR on up0, SPM sqn 1, window 1-20" \
	lab_poll 5 jtrue "show ip pgm router state json" "(len(sess) == 1 and
	sess[0]['tsi'] == '010203040506.1234' and sess[0]['source'] == '$SRC_ADDR' and
	sess[0]['group'] == '$GROUP' and sess[0]['upstream'] == '$SRC_ADDR' and
	sess[0]['upstream_interface'] == 'up0' and sess[0]['spm_sqn'] == 1 and
	sess[0]['trail'] == 1 and sess[0]['lead'] == 20 and sess[0]['udp'] == ('$ENCAP' == 'udp'))"
check "traffic: SPM forwarded once on d1 and once on d2" eval "
	[ \$(ev d1 spm-forwarded) = 1 ] && [ \$(ev d2 spm-forwarded) = 1 ]"

# ---- NAK from r1 (unicast to the router's address on r1's LAN, NAK_SRC = the source) ----
nak_from r1 5
check "NAK sqn 5: the daemon confirmed it" wait_ev 10 d1 ncf-sent 1
check "NAK sqn 5: one upstream NAK seen on the source's segment" wait_seen 10 src "$(any_up_nak 5)" 1
sync_wire "${E[@]}"
check "NCF sqn 5 on r1's segment: from the source, downstream ports, Router Alert, checksum good" \
	seen_is r1 "$(ncf_re 5)" 1
check "no NCF sqn 5 on r2's segment" seen_is r2 "$(any_ncf 5)" 0
check "no NCF on the source's segment" seen_is src "type=NCF" 0
# (one snapshot: repeats keep coming)
grep -E -- "$(any_up_nak 5)" "$LAB_DIR/src.sniff" >"$LAB_DIR/naks5"
check "the upstream NAK: from $UP_ADDR to the source, upstream ports, NAK_SRC the source, checksum good" \
	test "$(count_lines "$LAB_DIR/naks5" "$(up_nak_re 5)")" = "$(wc -l <"$LAB_DIR/naks5")"
check "the NAK was forwarded once (repeats are counted apart)" test "$(ev up0 nak-forwarded)" = 1
check "state: sqn 5 pending, for d1" lab_poll 5 jtrue "show ip pgm router state json" \
	"[(r['phase'], r['interfaces']) for r in sess[0]['repairs'] if r['sqn'] == 5] == [('PENDING', 'd1')]"

# ---- repeats until an NCF comes from upstream ----
check "the upstream NAK is repeated (3 repeats seen)" wait_seen 15 src "$(any_up_nak 5)" 4
check "next repeat due within 1/$RATE s" jtrue "show ip pgm router state json" \
	"[r for r in sess[0]['repairs'] if r['sqn'] == 5][0]['nak_repeat_in'] <= 1.0 / $RATE + 0.001"
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type ncf --sqn 5 --ra --ttl 255
check "NCF from upstream: sqn 5 confirmed (OUTSTANDING)" lab_poll 10 eval "[ \"\$(phase 5)\" = OUTSTANDING ]"
sync_wire "${E[@]}"
check "the NCF from upstream did not reach r1 or r2 (r1 has only the router's one NCF)" \
	eval "[ $(seen r1 "$(any_ncf 5)") = 1 ] && [ $(seen r2 "$(any_ncf 5)") = 0 ]"
n1=$(seen src "$(any_up_nak 5)")
retx=$(ev up0 nak-retransmitted)
check "every NAK on the wire is the forward or a counted repeat ($n1 = 1 + $retx)" test "$n1" = $((1 + retx))
# Rate: NAKs may come late under load, never early. The span between the first and the last
# holds at least (n - 2) periods (one period of slack for a late first repeat).
times=$(grep -E -- "$(any_up_nak 5)" "$LAB_DIR/src.sniff" | sed -n 's/.* time=\([0-9.]*\)$/\1/p' | tr '\n' ' ')
check "repeats not faster than $RATE/s ($n1 NAKs at $times)" python3 -c "
import sys
t = [float(x) for x in '$times'.split()]
sys.exit(0 if len(t) >= 4 and (t[-1] - t[0]) >= (len(t) - 2) / $RATE.0 - 0.005 else 1)"
# After the confirmation nothing more may come: watch for 10 repeat periods.
sleep $(python3 -c "print(10.0 / $RATE)")
sync_wire "${E[@]}"
check "no repeat after the NCF from upstream" test "$(seen src "$(any_up_nak 5)")" = "$n1"
check "and none counted" test "$(ev up0 nak-retransmitted)" = "$retx"

# ---- duplicates within the elimination interval ----
nak_from r1 6
wait_seen 10 src "$(any_up_nak 6)" 1
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type ncf --sqn 6 --ra --ttl 255
check "sqn 6 confirmed from upstream" lab_poll 10 eval "[ \"\$(phase 6)\" = OUTSTANDING ]"
sync_wire "${E[@]}"
k=$(seen src "$(any_up_nak 6)")
fwd=$(ev up0 nak-forwarded)
nak_from r1 6
nak_from r2 6
check "duplicates: both seen by the daemon" lab_poll 10 eval "
	[ \$(ev d1 nak-received) -ge 3 ] && [ \$(ev d2 nak-received) -ge 1 ]"
sync_wire "${E[@]}"
check "duplicate from r1: a second NCF sqn 6 on r1's segment" seen_is r1 "$(ncf_re 6)" 2
check "duplicate from r2: an NCF sqn 6 on r2's segment" seen_is r2 "$(ncf_re 6)" 1
check "no further upstream NAK for sqn 6 ($k before the duplicates)" test "$(seen src "$(any_up_nak 6)")" = "$k"
check "duplicates counted as eliminated, nothing forwarded" eval "
	[ \$(ev up0 nak-forwarded) = $fwd ] && [ \$(( \$(ev d1 nak-eliminated) + \$(ev d2 nak-eliminated) )) = 2 ]"
check "state: sqn 6 wanted on d1 and d2" jtrue "show ip pgm router state json" \
	"[r['interfaces'] for r in sess[0]['repairs'] if r['sqn'] == 6] == ['d1,d2']"

# ---- a NAK list: one NCF with the identical list, the list forwarded intact ----
inj r1 dn "${E[@]}" --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 10 --list 11,12 --nak-src $SRC_ADDR --nak-grp $GROUP
check "NAK list 10,11,12: the upstream NAK carries the same list" wait_seen 10 src "$(up_nak_re "10 list 11,12")" 1
sync_wire "${E[@]}"
check "NAK list: one NCF on r1's segment with the identical list" seen_is r1 "$(ncf_re "10 list 11,12")" 1
check "NAK list: a repair state per SQN" jtrue "show ip pgm router state json" \
	"sorted(r['sqn'] for r in sess[0]['repairs'] if r['sqn'] >= 10) == [10, 11, 12]"

# ---- unicast through the link layer once the kernel has confirmed the source's address ----
# (sqn 10's repeats go on: the first ones may leave through the IP stack, which resolves it)
check "upstream NAKs through the link layer to the confirmed neighbour $SRC_ADDR" lab_poll 10 eval \
	"[ \$(dp \"j['output']['link_layer_unicast']\") -ge 1 ] && [ \$(dp \"j['output']['neighbours']['usable']\") -ge 1 ]"
sync_wire "${E[@]}"
grep -E -- "$(any_up_nak "10 list 11,12")" "$LAB_DIR/src.sniff" >"$LAB_DIR/naks10"
check "and every upstream NAK sqn 10 on the wire is well formed ($(wc -l <"$LAB_DIR/naks10") seen)" \
	test "$(count_lines "$LAB_DIR/naks10" "$(up_nak_re "10 list 11,12")")" = "$(wc -l <"$LAB_DIR/naks10")"

# ---- RDATA: only where asked for ----
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --trail 1
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type rdata --sqn 6 --trail 1
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type rdata --sqn 9 --trail 1
check "RDATA: the daemon saw 3 x 2 copies" wait_rx 10 up0 RDATA 6
sync_wire "${E[@]}"
check "RDATA sqn 5 (asked by r1) reaches r1" seen_is r1 "$(rdata 5)" 1
check "RDATA sqn 5 does not reach r2" seen_is r2 "$(rdata 5)" 0
check "RDATA sqn 6 (asked by both) reaches r1 and r2" eval "
	[ $(seen r1 "$(rdata 6)") = 1 ] && [ $(seen r2 "$(rdata 6)") = 1 ]"
check "unsolicited RDATA sqn 9 reaches neither" eval "
	[ $(seen r1 "$(rdata 9)") = 0 ] && [ $(seen r2 "$(rdata 9)") = 0 ]"
check "RDATA sqn 6, asked for on every interface, was left to the kernel's forwarding (once)" \
	test "$(dp "j['replication']['by_kernel']")" = 1
check "RDATA counters: 3 forwarded, 1 without repair state on each interface" eval "
	[ \$(( \$(ev d1 rdata-forwarded) + \$(ev d2 rdata-forwarded) )) = 3 ] &&
	[ \$(( \$(ev d1 rdata-no-state) + \$(ev d2 rdata-no-state) )) = 2 ]"
check "state: sqn 5 and 6 repaired (FORWARDING or done)" jtrue "show ip pgm router state json" \
	"all(r['phase'] == 'FORWARDING' for r in sess[0]['repairs'] if r['sqn'] in (5, 6))"

# ---- ODATA: everyone gets it, the queue never sees it ----
q_before=$(dp "j['queue_stats']['packets']")
k_before=$(queue_counters rtr 113 | awk '{ print $4 }')
pre_rules_before=$(dp "j['rules_matched']['prerouting']")
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type odata --sqn 21 --trail 1 --count 5 --sqn-step 1
check "ODATA (5) reaches r1" wait_seen 10 r1 "type=ODATA \| ODATA $TSI sqn (21|22|23|24|25) " 5
check "ODATA (5) reaches r2" wait_seen 10 r2 "type=ODATA \| ODATA $TSI sqn (21|22|23|24|25) " 5
sync_wire "${E[@]}"
check "ODATA never queued: the daemon's queue counter did not move ($q_before)" \
	test "$(dp "j['queue_stats']['packets']")" = "$q_before"
check "ODATA never queued: the kernel's queue sequence did not move ($k_before)" \
	test "$(queue_counters rtr 113 | awk '{ print $4 }')" = "$k_before"
check "ODATA matched no queue rule of ours" test "$(dp "j['rules_matched']['prerouting']")" = "$pre_rules_before"
check "no rule of ours at the forward hook" test "$(lab_exec rtr nft list table ip pgmrouter | grep -c 'hook forward')" = 0
check "show ip pgm router dataplane (text) reports the same queue count" \
	eval "cli 'show ip pgm router dataplane' | grep -q '^  Queue: $q_before packets'"
check "traffic: no ODATA counted anywhere" jtrue "show ip pgm router traffic json" \
	"all(i['received']['ODATA'] == 0 and i['sent']['ODATA'] == 0 for i in j['interfaces'])"
# ---- 15.2.1: the source's OPT_NAK_BO_IVL does not pass the router ----
# No interface has a NAK_BO_IVL of its own (nak-backoff-interval 0): the option is removed from
# every copy, lengths and checksums right (DOWN: csum=ok, udpcsum=ok).
inj src s0 "${E[@]}" --src $SRC_ADDR --dst $GROUP --type spm --sqn 40 --trail 1 --lead 25 --nak-bo-ivl 600000
spm40() { echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=15 ra=0 $DOWN type=SPM \| SPM $TSI sqn 40 trail 1 lead 25 path $1 $DOWN_TAIL"; }
check "an SPM with OPT_NAK_BO_IVL reaches r1, the option removed" wait_seen 10 r1 "$(spm40 $D1_ADDR)" 1
check "... and r2" wait_seen 10 r2 "$(spm40 $D2_ADDR)" 1
check "no copy carries the source's NAK_BO_IVL" eval \
	"[ $(seen r1 'sqn 40 .*nak-bo-ivl') = 0 ] && [ $(seen r2 'sqn 40 .*nak-bo-ivl') = 0 ]"
check "nothing malformed, nothing failed on the packet path" jtrue "show ip pgm router dataplane json" \
	"j['path']['malformed'] == 0 and j['path']['rewrite_failed'] == 0 and j['path']['build_failed'] == 0 and j['path']['send_failed'] == 0"
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
