#!/bin/bash
# The queue sees what the rules promise and nothing else:
#  - multicast SPM and RDATA: once each, at prerouting, before routing (the daemon replicates
#    them; this consumer accepts them and the kernel forwards), and nothing at all at the
#    forward hook;
#  - ODATA never enters the queue (the kernel's per-queue id sequence proves it) yet reaches
#    both receivers;
#  - a NAK to the router's address: once, at input; an NCF and a POLL from upstream: once, at
#    prerouting (hop by hop: a POLL must reach the router even without another egress);
#  - a NAK or NNAK to the group (a receiver's multicast copy): once, at prerouting; a NAK
#    through the router to the source: once, at prerouting (counted per session and accepted);
#  - the same over UDP (port 3056);
#  - a deferred verdict (out of order) and the batch verdicts around it keep every packet;
#  - all of it with either backend: nftables (the default) and iptables.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
topo_router

# run_backend BACKEND QUEUE: one pass with that backend and a queue of its own (a fresh id
# sequence); the receivers' captures are counted from what they held before.
run_backend() {
	local backend=$1 Q=$2 C="$LAB_DIR/consumer.$1.out" r1_before r2_before expected
	start_consumer "$C" --queue $Q --if up0,d1,d2 --backend "$backend" --defer-every 5 || exit 1
	if [ "$backend" = auto ]; then
		check "auto: nftables chosen" grep -Eq '^rules backend=nftables$' "$C"
	else
		check "$backend chosen" grep -Eq "^rules backend=$backend\$" "$C"
	fi
	start_sniffer r1 dn "$LAB_DIR/r1.$backend.sniff" || exit 1
	start_sniffer r2 dn "$LAB_DIR/r2.$backend.sniff" || exit 1

	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 3
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --count 5
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 2
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type poll --count 1
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --udp --count 2
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --udp --count 4
	send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type ncf --count 1
	send r1 --if dn --src 198.18.2.2 --dst 198.18.2.1 --ttl 16 --type nak --count 2
	send r1 --if dn --src 198.18.2.2 --dst 198.18.2.1 --ttl 16 --type nak --udp --count 1
	# a receiver's multicast NAK and NNAK (TTL 1: never forwarded); a NAK through the router
	send r1 --if dn --src 198.18.2.2 --dst $GROUP --ttl 1 --type nak --count 1
	send r1 --if dn --src 198.18.2.2 --dst $GROUP --ttl 1 --type nnak --count 1
	send r1 --if dn --src 198.18.2.2 --dst $GROUP --ttl 1 --type nak --udp --count 1
	send r1 --if dn --src 198.18.2.2 --dst $SRC_ADDR --ttl 16 --type nak --count 1

	# 3 SPM + 2 RDATA + 2 SPM/UDP once each; 1 NCF and 1 POLL; 3 NAKs to the router;
	# 3 multicast NAK/NNAK; the NAK through the router (counted per session, then accepted)
	expected=$((3 + 2 + 2 + 2 + 3 + 3 + 1))
	lab_poll 10 sh -c "[ \$(grep -c '^pkt ' $C) -ge $expected ]"
	# Give stray extra copies (which would be a failure) a chance to show up.
	sleep 1
	# received by both receivers: everything but the NAKs, ODATA included
	lab_poll 10 sh -c "[ \$(grep -c '^pgm ' $LAB_DIR/r1.$backend.sniff) -ge 18 ] &&
		[ \$(grep -c '^pgm ' $LAB_DIR/r2.$backend.sniff) -ge 18 ]"

	check "$backend: 3 SPM once each at prerouting, no egress" \
		test "$(count_lines "$C" "hook=prerouting in=up0 out=- len=[0-9]+ proto=113 type=SPM")" = 3
	check "$backend: 2 RDATA once each at prerouting" \
		test "$(count_lines "$C" "hook=prerouting in=up0 out=- .*proto=113 type=RDATA")" = 2
	check "$backend: 2 SPM/UDP once each at prerouting" \
		test "$(count_lines "$C" "hook=prerouting in=up0 out=- .*proto=17 type=SPM")" = 2
	check "$backend: nothing queued at the forward hook" test "$(count_lines "$C" "hook=forward")" = 0
	check "$backend: no ODATA in the queue" test "$(count_lines "$C" "type=ODATA")" = 0
	check "$backend: NCF once, at prerouting, no egress" \
		test "$(count_lines "$C" "hook=prerouting in=up0 out=- .*type=NCF")" = 1
	check "$backend: POLL once, at prerouting, no egress" \
		test "$(count_lines "$C" "hook=prerouting in=up0 out=- .*type=POLL")" = 1
	check "$backend: NAKs to the router once each at input on d1 (IP and UDP)" \
		test "$(count_lines "$C" "hook=input in=d1 out=- .*type=NAK")" = 3
	check "$backend: multicast NAKs (IP, UDP), NNAK and the NAK through the router once each at prerouting on d1" sh -c "
		[ \$(grep -Ec 'hook=prerouting in=d1 out=- .*proto=113 type=NAK' $C) = 2 ] &&
		[ \$(grep -Ec 'hook=prerouting in=d1 out=- .*proto=17 type=NAK' $C) = 1 ] &&
		[ \$(grep -Ec 'hook=prerouting in=d1 out=- .*type=NNAK' $C) = 1 ]"
	check "$backend: the NAK through the router is queued once" \
		test "$(count_lines "$C" "type=NAK")" = 6
	check "$backend: every queued packet is one of the expected ones" \
		test "$(count_lines "$C" '^pkt ')" = $expected
	check "$backend: deferred verdicts were given late" test "$(count_lines "$C" '^late-verdict')" -ge 1
	set -- $(queue_counters rtr $Q)
	check "$backend: kernel id sequence = queued packets ($expected): ODATA never queued" \
		test "${4:-x}" = $expected
	check "$backend: kernel queue empty, nothing dropped" test "${1:-x}/${2:-x}/${3:-x}" = 0/0/0
	for r in r1 r2; do
		check "$backend: $r received 5+4 ODATA" \
			test "$(count_lines "$LAB_DIR/$r.$backend.sniff" 'type=ODATA')" = 9
		check "$backend: $r received 5 SPM (accepted after queueing)" \
			test "$(count_lines "$LAB_DIR/$r.$backend.sniff" 'type=SPM')" = 5
		check "$backend: $r received 2 RDATA, 1 POLL, 1 NCF" \
			test "$(count_lines "$LAB_DIR/$r.$backend.sniff" 'type=(RDATA|POLL|NCF)')" = 4
	done
	kill "$CONSUMER_PID"
	ended "$CONSUMER_PID" 10
	check "$backend: consumer stats: every verdict given, none pending" \
		grep -Eq "^stats packets=$expected accepted=$expected .* netlink_errors=0 pending=0" "$C"
	check "$backend: batch verdicts were used" grep -Eq '^stats .* batches=[1-9]' "$C"
	check "$backend: rule counters: 7 SPM/RDATA, NCF, POLL, 3 multicast NAK/NNAK, 1 NAK through at prerouting, 3 NAKs at input" \
		grep -q '^rules matched prerouting=13 input=3$' "$C"
	check "$backend: rules removed at exit" test -z "$(our_backend rtr)"
}

run_backend auto 11
run_backend iptables 12
finish
