#!/bin/bash
# IPv6 output from the router (dataplane/rawsock.c), and the IPv6 route mirror
# (dataplane/mfc.c) against smcroute's routes. Multicast NCFs leave by the chosen interface
# only, as frames to 33:33 and the group's low 32 bits, with the data source as IPv6 source,
# the hop-by-hop Router Alert and the hop limit given; over UDP with a good UDP checksum. NAKs
# go upstream from the router's address, to a global and to a link-local neighbour, through the
# IP stack until the kernel has confirmed the neighbour (NDP), then as frames. tshark decodes
# every packet with no malformed or expert flag. The mirror holds smcroute's IPv6 (S,G) route
# with its interfaces by name (the kernel reports ifindexes) beside the IPv4 one.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
command -v tshark >/dev/null || {
	log "tshark is not installed"
	exit 1
}
G6=ff3e::8000:1
S6=2001:db8:1::2
lab_host src
lab_router rtr
lab_host r1
lab_host r2
# The lab's namespaces run without IPv6; it is under test here.
for n in src rtr r1 r2; do
	lab_exec $n sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
done
lab_exec rtr sysctl -qw net.ipv6.conf.all.forwarding=1
lab_link src s0 198.18.1.2/24 rtr up0 198.18.1.1/24
lab_link rtr d1 198.18.2.1/24 r1 dn 198.18.2.2/24
lab_link rtr d2 198.18.3.1/24 r2 dn 198.18.3.2/24
ip -n "$(lab_ns src)" -6 addr add $S6/64 dev s0 nodad
ip -n "$(lab_ns rtr)" -6 addr add 2001:db8:1::1/64 dev up0 nodad
ip -n "$(lab_ns rtr)" -6 addr add 2001:db8:2::1/64 dev d1 nodad
ip -n "$(lab_ns r1)" -6 addr add 2001:db8:2::2/64 dev dn nodad
lab_mroute rtr up0 "$SRC_ADDR" "$GROUP" d1 d2
lab_smcroute_start rtr
# The IPv6 route by smcroutectl: the lab's start waits for IPv4 routes only.
lab_exec rtr smcroutectl -u "$LAB_DIR/smcroute.rtr.sock" add up0 $S6 $G6 d1 ||
	lab_die "smcroute did not take the IPv6 route"

check "mirror: the IPv6 (S,G) route, in by up0, out by d1 with threshold 1, beside IPv4's" \
	lab_poll 10 sh -c "ip netns exec $(lab_ns rtr) $HARNESS mfc >$LAB_DIR/mfc.out &&
	grep -q '^route src=$S6 grp=$G6 iif=up0 oifs=d1:1\$' $LAB_DIR/mfc.out &&
	grep -q '^route src=$SRC_ADDR grp=$GROUP iif=up0 oifs=d1:1,d2:1\$' $LAB_DIR/mfc.out &&
	grep -q '^stats routes=2 invalid=0 errors=0' $LAB_DIR/mfc.out"

# The link-local addresses (DAD done) of the source's link.
ll_of() { ip -n "$(lab_ns "$1")" -6 addr show dev "$2" scope link | awk '/inet6/ && !/tentative/ { sub("/.*", "", $2); print $2 }'; }
lab_poll 10 sh -c "[ -n \"\$(ip -n $(lab_ns src) -6 addr show dev s0 scope link | grep -v tentative | grep inet6)\" ] &&
	[ -n \"\$(ip -n $(lab_ns rtr) -6 addr show dev up0 scope link | grep -v tentative | grep inet6)\" ]"
SRC_LL=$(ll_of src s0)
RTR_LL=$(ll_of rtr up0)

CAPTURES=""
capture() { # NODE IF FILE: tshark writing everything IPv6 on IF, started before we go on
	lab_spawn "$1" "$3.log" tshark -n -i "$2" -f ip6 -w "$3"
	CAPTURES="$CAPTURES $LAB_PID"
	lab_poll 10 grep -q Capturing "$3.log"
}
capture r1 dn "$LAB_DIR/r1.pcap"
capture r2 dn "$LAB_DIR/r2.pcap"
capture src s0 "$LAB_DIR/src.pcap"

lab_exec rtr "$HARNESS" send --if d1 --src $S6 --dst $G6 --ra --ttl 255 --count 3 \
	>"$LAB_DIR/send1.out" 2>&1
check "3 NCFs sent as frames, no send error" \
	grep -q '^sent packets=3 .* errors=0 link=3 link_unicast=0' "$LAB_DIR/send1.out"
lab_exec rtr "$HARNESS" send --if d1 --src $S6 --dst $G6 --udp --ttl 7 --count 2 \
	>"$LAB_DIR/send2.out" 2>&1
check "2 NCFs over UDP sent" grep -q '^sent packets=2 .* errors=0' "$LAB_DIR/send2.out"
# The first NAK finds the neighbour unconfirmed: through the IP stack, which resolves it.
lab_exec rtr "$HARNESS" send --if up0 --src 2001:db8:1::1 --dst $S6 --type nak --count 1 \
	>"$LAB_DIR/send3.out" 2>&1
check "a NAK to the source's global address, through the IP stack" \
	grep -q '^sent packets=1 .* errors=0 link=0' "$LAB_DIR/send3.out"
check "then as a frame to the neighbour NDP confirmed" lab_poll 10 sh -c "
	ip netns exec $(lab_ns rtr) $HARNESS send --if up0 --src 2001:db8:1::1 --dst $S6 --type nak >$LAB_DIR/send4.out 2>&1 &&
	grep -q 'link_unicast=1' $LAB_DIR/send4.out"
lab_exec rtr "$HARNESS" send --if up0 --src "$RTR_LL" --dst "$SRC_LL" --type nak --count 1 \
	>"$LAB_DIR/send5.out" 2>&1
check "a NAK to the source's link-local address (scope from the interface)" \
	grep -q '^sent packets=1 .* errors=0' "$LAB_DIR/send5.out"
sleep 1
# tshark writes its file out as it ends
for p in $CAPTURES; do kill -INT "$p"; done
for p in $CAPTURES; do ended "$p" 5; done

# one line per PGM packet (not those quoted in the source's ICMPv6 errors: nothing listens
# there), the fields given, empty ones left out; the PGM checksum verified (tshark has two
# fields of that name, one of them always "unknown": the filter takes the good one)
TSHARK_OPTS="-o pgm.check_checksum:TRUE -o udp.check_checksum:TRUE -d udp.port==3056,pgm"
fields() { tshark -n -r "$1" $TSHARK_OPTS -Y 'pgm && !icmpv6' -T fields -E separator=' ' \
	"${@:2}" 2>/dev/null | tr -s ' ' | sed 's/ $//'; }
good_pgm() { tshark -n -r "$1" $TSHARK_OPTS -Y 'pgm && !icmpv6 && pgm.hdr.cksum.status == 1' \
	2>/dev/null | wc -l; }
fields "$LAB_DIR/r1.pcap" -e eth.dst -e ipv6.src -e ipv6.dst -e ipv6.hlim -e ipv6.opt.router_alert \
	-e pgm.hdr.type -e udp.checksum.status >"$LAB_DIR/r1.fields"
check "r1: 3 NCFs to 33:33:80:00:00:01 from the data source, hop limit 255, Router Alert" \
	test "$(grep -c "^33:33:80:00:00:01 $S6 $G6 255 65503 0x0a\$" "$LAB_DIR/r1.fields")" = 3
check "r1: 2 UDP NCFs, hop limit 7, no Router Alert, UDP checksum good" \
	test "$(grep -c "^33:33:80:00:00:01 $S6 $G6 7 0x0a 1\$" "$LAB_DIR/r1.fields")" = 2
check "r2 (not the chosen interface) gets none" test "$(fields "$LAB_DIR/r2.pcap" -e pgm.hdr.type | wc -l)" = 0
fields "$LAB_DIR/src.pcap" -e ipv6.src -e ipv6.dst -e pgm.hdr.type >"$LAB_DIR/src.fields"
# (2, or more when the poll above had to send again)
check "the source gets the global NAKs from the router's address" \
	test "$(grep -c "^2001:db8:1::1 $S6 0x08\$" "$LAB_DIR/src.fields")" -ge 2
check "and the link-local one from the router's link-local address" \
	test "$(grep -c "^$RTR_LL $SRC_LL 0x08\$" "$LAB_DIR/src.fields")" = 1
check "every PGM checksum good" test "$(good_pgm "$LAB_DIR/r1.pcap") $(good_pgm "$LAB_DIR/src.pcap")" = \
	"5 $(wc -l <"$LAB_DIR/src.fields")"
for f in r1 src; do
	check "$f: tshark flags nothing (malformed, expert info)" test "$(tshark -n -r "$LAB_DIR/$f.pcap" \
		$TSHARK_OPTS -Y '_ws.malformed || _ws.expert.severity >= warning' 2>/dev/null |
		wc -l)" = 0
done
finish
