#!/bin/bash
# Raw-socket output from the router: a multicast NCF whose IP source is the data source (not a
# router address), with Router Alert and the configured TTL, leaves by the chosen interface
# only; multicast loopback is off, so the router's own multicast routing never sees its packets
# (the packet counter of the MFC entry stays put; with loopback switched on it moves, which
# shows the check can fail); unicast NAKs go upstream from the router's own address, by the
# given interface or by route, over IP and UDP.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
topo_router
start_receiver_sniffers
start_sniffer src s0 "$LAB_DIR/src.sniff" || exit 1
# Packets that reached multicast routing (ip_mr_forward counts every packet it is handed, our own
# looped-back ones included, before deciding not to forward them). No source sends here.
mfc_pkts() { lab_exec rtr awk 'NR > 1 { s += $4 } END { print s + 0 }' /proc/net/ip_mr_cache; }

mfc0=$(mfc_pkts)
lab_exec rtr "$HARNESS" send --if d1 --src $SRC_ADDR --dst $GROUP --type ncf --ra --ttl 255 --count 3 \
	>"$LAB_DIR/send1.out" 2>&1
check "3 NCFs sent, no send error" grep -q '^sent packets=3 .* errors=0' "$LAB_DIR/send1.out"
check "r1 (behind d1) gets them: data source as IP source, RA, TTL 255" lab_poll 10 sh -c "
	[ \$(grep -c 'pgm $SRC_ADDR > $GROUP ttl=255 ra=1 proto=ip type=NCF csum=ok' $LAB_DIR/r1.sniff) = 3 ]"
sleep 1
check "r2 (behind d2) gets nothing" test "$(count_lines "$LAB_DIR/r2.sniff" 'type=NCF')" = 0
check "the source's link gets nothing" test "$(count_lines "$LAB_DIR/src.sniff" 'type=NCF')" = 0
check "loop off: multicast routing saw none of them" test "$(mfc_pkts)" = "$mfc0"

lab_exec rtr "$HARNESS" send --if d2 --src $SRC_ADDR --dst $GROUP --type ncf --udp --ttl 7 --count 2 \
	>/dev/null 2>&1
check "UDP NCF by d2: r2 gets 2, no RA, TTL 7" lab_poll 10 sh -c "
	[ \$(grep -c 'pgm $SRC_ADDR > $GROUP ttl=7 ra=0 proto=udp type=NCF csum=ok' $LAB_DIR/r2.sniff) = 2 ]"
check "r1 did not get the d2 ones" test "$(count_lines "$LAB_DIR/r1.sniff" 'type=NCF')" = 3

lab_exec rtr "$HARNESS" send --if d1 --src $SRC_ADDR --dst $GROUP --type ncf --count 1 --loop \
	>/dev/null 2>&1
check "loop on (control): the looped copy reaches multicast routing" \
	lab_poll 5 sh -c "[ \$(ip netns exec $(lab_ns rtr) awk 'NR > 1 { s += \$4 } END { print s + 0 }' /proc/net/ip_mr_cache) -gt $mfc0 ]"

lab_exec rtr "$HARNESS" send --if up0 --src 198.18.1.1 --dst $SRC_ADDR --type nak --count 2 >/dev/null 2>&1
lab_exec rtr "$HARNESS" send --src 198.18.1.1 --dst $SRC_ADDR --type nak --udp --count 1 >/dev/null 2>&1
check "unicast NAKs reach the source from the router's address (by interface, by route, UDP)" \
	lab_poll 10 sh -c "
	[ \$(grep -c 'pgm 198.18.1.1 > $SRC_ADDR .*proto=ip type=NAK csum=ok' $LAB_DIR/src.sniff) = 2 ] &&
	[ \$(grep -c 'pgm 198.18.1.1 > $SRC_ADDR .*proto=udp type=NAK csum=ok' $LAB_DIR/src.sniff) = 1 ]"
check "no NAK leaked downstream" test "$(count_lines "$LAB_DIR/r1.sniff" 'type=NAK')" = 0
finish
