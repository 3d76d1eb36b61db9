#!/bin/bash
# NAKs that cross the router: a receiver that NAKs its source directly (unicast to the source,
# as Windows Server 2003 before SP1 and receivers ignoring the SPM path do) is routed by the
# kernel, unassisted; the router sees it (a queue rule for unicast NAKs not addressed to it, at
# prerouting, never ODATA) and counts it per session and interface in `show ip pgm router
# state`, so that an operator finds the receivers whose repairs will not be constrained to them.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
wait_seen 10 r1 "type=SPM" 1
check "the session exists" lab_poll 10 jtrue "show ip pgm router state json" "len(sess) == 1"
# r1 NAKs the source itself, over IP and over UDP
inj r1 dn --src $R1_ADDR --dst $SRC_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP
inj r1 dn --udp --src $R1_ADDR --dst $SRC_ADDR --type nak --sqn 6 --nak-src $SRC_ADDR --nak-grp $GROUP
check "both NAKs reach the source, from r1 (routed, not re-sourced)" eval "
	wait_seen 10 src '^pgm src=$R1_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn 5 ' 1 &&
	wait_seen 10 src '^pgm src=$R1_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn 6 ' 1"
check "the router counted them for the session, from d1" lab_poll 10 jtrue \
	"show ip pgm router state json" \
	"sess[0]['naks_to_source'] == 2 and sess[0]['naks_to_source_interfaces'] == 'd1'"
check "show ip pgm router state names them" eval \
	"cli 'show ip pgm router state' | grep -q 'NAKs to the source past this router: 2, from d1'"
check "counted on d1 as nak-transit" test "$(ev d1 nak-transit)" = 2
check "no NCF, no NAK of the router's own for them" eval \
	"[ $(seen r1 'type=NCF') = 0 ] && [ $(seen src "^pgm src=$UP_ADDR .*type=NAK") = 0 ]"
check "no repair state" test "$(phase 5)" = none
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
