#!/bin/bash
# IP fragments of PGM get router assist (PGM over IP): the daemon's table makes the kernel
# reassemble at prerouting (dataplane/README, Fragments), so an SPM, a NAK and RDATA that arrive
# in fragments are handled as whole datagrams: the SPM's copies carry each interface's path NLA,
# the NAK gets its NCF and one NAK upstream, the RDATA goes only where it was asked for, and the
# router's own copy larger than its interface's MTU leaves in fragments of that MTU (d1's is set
# to 1000 here). Fragmented ODATA reaches everyone, reassembled and fragmented again by the
# kernel, and never enters the queue. The fragments are made by pgm-inject --frag-mtu (the data
# plane's fragmenter; --frag-order: last first, or each twice); pgm-sniff prints each fragment
# and then its datagram with ipfrags=N.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
lab_exec rtr ip link set d1 mtu 1000
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-interval 60000" \
	"ip pgm router nak-rdata-interval 600000" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

# ---- SPM in 8-byte fragments: one whole copy per interface with its path NLA ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20 --frag-mtu 28
check "the SPM left the source in fragments" wait_seen 10 src "^pgm src=$SRC_ADDR dst=$GROUP .*type=SPM .* ipfrags=5\$" 1
spm() { echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=15 ra=0 encap=ip csum=ok type=SPM \| SPM $TSI sqn 1 trail 1 lead 20 path $1 ports 1234>7500 time=[0-9.]+\$"; }
check "SPM on r1's segment whole, path NLA $D1_ADDR" wait_seen 10 r1 "$(spm $D1_ADDR)" 1
check "SPM on r2's segment whole, path NLA $D2_ADDR" wait_seen 10 r2 "$(spm $D2_ADDR)" 1
check "state: the session, upstream $SRC_ADDR on up0" lab_poll 5 jtrue "show ip pgm router state json" \
	"len(sess) == 1 and sess[0]['upstream'] == '$SRC_ADDR' and sess[0]['upstream_interface'] == 'up0'"

# ---- the fragments out of order, and each twice: the same one SPM copy per interface ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 20 --frag-mtu 28 --frag-order reverse
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 3 --trail 1 --lead 20 --frag-mtu 28 --frag-order dup
spm_n() { echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=15 ra=0 encap=ip csum=ok type=SPM \| SPM $TSI sqn $1 trail 1 lead 20 path $2 ports 1234>7500 time=[0-9.]+\$"; }
check "SPM in fragments last first: on r1's segment whole, path NLA $D1_ADDR" wait_seen 10 r1 "$(spm_n 2 $D1_ADDR)" 1
check "SPM in fragments each twice: on r1's segment whole, path NLA $D1_ADDR" wait_seen 10 r1 "$(spm_n 3 $D1_ADDR)" 1
sync_wire
check "each once on r2's segment" eval "[ $(seen r2 "$(spm_n 2 $D2_ADDR)") = 1 ] && [ $(seen r2 "$(spm_n 3 $D2_ADDR)") = 1 ]"
check "state: the session's SPM sqn 3" jtrue "show ip pgm router state json" "sess[0]['spm_sqn'] == 3"

# ---- a NAK in fragments from r1: an NCF on r1's segment, one NAK upstream ----
inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP --frag-mtu 28
check "the NAK left r1 in fragments" wait_seen 10 r1 "^pgm src=$R1_ADDR dst=$D1_ADDR .*type=NAK .* ipfrags=" 1
check "NAK sqn 5: one NAK upstream" wait_seen 10 src "^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn 5 " 1
check "NAK sqn 5: an NCF on r1's segment" wait_seen 10 r1 "^pgm src=$SRC_ADDR dst=$GROUP .*ra=1 .*type=NCF \| NCF $TSI sqn 5 " 1
sync_wire
check "no NCF on r2's segment" seen_is r2 "type=NCF" 0
check "the NAK was forwarded once" test "$(ev up0 nak-forwarded)" = 1

# ---- RDATA in fragments: only to r1, in fragments of d1's MTU ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --trail 1 --payload-len 3000 --frag-mtu 1500
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 9 --trail 1 --payload-len 3000 --frag-mtu 1500
check "RDATA: the daemon saw 2 x 2 copies, whole" wait_rx 10 up0 RDATA 4
sync_wire
rdata() { echo "^pgm src=$SRC_ADDR dst=$GROUP .*csum=ok type=RDATA \| RDATA $TSI sqn $1 .*len 3000 .* ipfrags=$2\$"; }
check "RDATA sqn 5 (asked for by r1) reaches r1 whole, in 4 fragments (MTU 1000)" seen_is r1 "$(rdata 5 4)" 1
check "RDATA sqn 5's fragments on d1 no larger than its MTU" eval \
	"[ \$(grep -c '^pgm ipfrag src=$SRC_ADDR dst=$GROUP .* len=' '$LAB_DIR/r1.sniff') -ge 4 ] &&
	 ! grep '^pgm ipfrag src=$SRC_ADDR dst=$GROUP ' '$LAB_DIR/r1.sniff' | grep -Eq 'len=(1[0-9]{3}|[2-9][0-9]{3})'"
check "RDATA sqn 5 does not reach r2" seen_is r2 "RDATA $TSI sqn 5 " 0
check "unsolicited RDATA sqn 9 reaches neither" eval \
	"[ $(seen r1 "RDATA $TSI sqn 9 ") = 0 ] && [ $(seen r2 "RDATA $TSI sqn 9 ") = 0 ]"
check "the data plane counts the copy it fragmented" jtrue "show ip pgm router dataplane json" \
	"j['output']['fragmented'] >= 1 and j['output']['fragments'] >= 4 and j['output']['fragment_refused'] == 0"

# ---- ODATA in fragments: everyone, never queued ----
q_before=$(dp "j['queue_stats']['packets']")
inj src s0 --src $SRC_ADDR --dst $GROUP --type odata --sqn 30 --trail 1 --payload-len 3000 --frag-mtu 1500
odata() { echo "^pgm src=$SRC_ADDR dst=$GROUP .*type=ODATA \| ODATA $TSI sqn 30 .*len 3000 .* ipfrags=[0-9]+\$"; }
check "fragmented ODATA reaches r1" wait_seen 10 r1 "$(odata)" 1
check "fragmented ODATA reaches r2" wait_seen 10 r2 "$(odata)" 1
sync_wire
check "fragmented ODATA never queued ($q_before)" test "$(dp "j['queue_stats']['packets']")" = "$q_before"
check "nothing unparsed: no fragment reached the daemon" jtrue "show ip pgm router dataplane json" \
	"j['path']['not_pgm'] == 0 and j['path']['malformed'] == 0 and j['path']['send_failed'] == 0"
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
