#!/bin/bash
# Verdicts reach the wire: an accept with a rewritten payload (SPM path NLA replaced, checksum
# recomputed; SPMs are queued once, at prerouting) arrives rewritten at both receivers, the
# kernel forwarding the rewritten packet; a drop verdict removes exactly the dropped type;
# everything else still arrives; held drop verdicts keep their packets in the kernel's queue
# until a later round's send, and drop them then. (pgmrouterd's per-egress paths are its own copies:
# router_repair.sh.) The consumer's debug capture holds
# every queued packet and reads back with the pcap reader.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
topo_router
Q=41
C="$LAB_DIR/consumer.out"
start_receiver_sniffers

start_consumer "$C" --queue $Q --if up0,d1,d2 --rewrite-spm-path 198.18.9.9 \
	--pcap "$LAB_DIR/queued.pcap" || exit 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 3
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --count 2
for r in r1 r2; do
	path=198.18.9.9
	check "$r: 3 SPM arrive with path $path (rewritten) and a valid checksum" lab_poll 10 sh -c "
		[ \$(grep -c 'type=SPM csum=ok spm_path=$path ' $LAB_DIR/$r.sniff) = 3 ]"
	check "$r: no SPM with the original path" \
		test "$(count_lines "$LAB_DIR/$r.sniff" "type=SPM .*spm_path=$SRC_ADDR")" = 0
	check "$r: ODATA untouched" lab_poll 5 sh -c "[ \$(grep -c 'type=ODATA csum=ok' $LAB_DIR/$r.sniff) = 2 ]"
done
check "consumer: 3 rewritten verdicts" test "$(count_lines "$C" 'type=SPM verdict=rewritten')" = 3
kill "$CONSUMER_PID"
ended "$CONSUMER_PID" 10
check "consumer stats count 3 rewritten, no kernel errors" \
	grep -Eq '^stats .* rewritten=3 .* netlink_errors=0 ' "$C"
check "capture: 3 records written" grep -q '^pcap written=3 ' "$C"
"$HARNESS" pcap-read "$LAB_DIR/queued.pcap" >"$LAB_DIR/pcap.out" 2>&1
check "capture reads back: 3 SPM datagrams from the source to the group" \
	test "$(count_lines "$LAB_DIR/pcap.out" "^dgram ts=[0-9]+\.[0-9]{6} v4 len=56 $SRC_ADDR > $GROUP proto=113 type=SPM")" = 3
if command -v tshark >/dev/null; then
	check "capture: tshark decodes the 3 records as PGM SPM" test "$(tshark -r "$LAB_DIR/queued.pcap" \
		-T fields -e pgm.hdr.type 2>/dev/null | grep -c '^0x00$')" = 3
fi

start_consumer "$C.2" --queue $Q --if up0,d1,d2 --drop RDATA || exit 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 2
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type poll --count 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --count 1
for r in r1 r2; do
	check "$r: POLL and ODATA arrive" lab_poll 10 sh -c "
		[ \$(grep -c 'type=POLL' $LAB_DIR/$r.sniff) = 1 ] && [ \$(grep -c 'type=ODATA' $LAB_DIR/$r.sniff) = 3 ]"
	check "$r: dropped RDATA never arrives" test "$(count_lines "$LAB_DIR/$r.sniff" 'type=RDATA')" = 0
done
check "consumer: 2 drop verdicts (2 RDATA, queued once each)" \
	test "$(count_lines "$C.2" 'type=RDATA verdict=drop')" = 2
kill "$CONSUMER_PID"
ended "$CONSUMER_PID" 10

# Held drops: a round that would send only drop verdicts, fewer than 64, sends nothing; the
# dropped packets wait in the kernel's queue for a later round's send (this consumer has no timer:
# the next accept, the 64th drop, or its exit).
queue_waiting() { [ "$(queue_counters rtr $Q | cut -d' ' -f1)" = "$1" ]; }
start_consumer "$C.3" --queue $Q --if up0,d1,d2 --drop RDATA --hold-drops 64 || exit 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 5
check "held: 5 dropped RDATA wait in the kernel's queue" lab_poll 10 queue_waiting 5
check "held: their 5 drop verdicts given" \
	lab_poll 5 sh -c "[ \$(grep -c 'type=RDATA verdict=drop' $C.3) = 5 ]"
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type poll --count 1
check "held: the next accept sends them, the queue is empty" lab_poll 10 queue_waiting 0
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 70
check "held: 70 more RDATA dropped" \
	lab_poll 10 sh -c "[ \$(grep -c 'type=RDATA verdict=drop' $C.3) = 75 ]"
waiting=$(queue_counters rtr $Q | cut -d' ' -f1)
check "held: never 64 or more wait ($waiting)" test "${waiting:-99}" -lt 64
kill "$CONSUMER_PID"
ended "$CONSUMER_PID" 10
check "held: the exit sent the rest: 75 dropped in batches of 76 verdicts, none held, none queued" \
	grep -Eq '^stats .* dropped=75 .* batched=76 .* held_rounds=[1-9][0-9]* held=0 netlink_errors=0 .* kernel_queue_total=0 ' "$C.3"
for r in r1 r2; do
	check "$r: POLL arrives, held RDATA never does" lab_poll 10 sh -c "
		[ \$(grep -c 'type=POLL' $LAB_DIR/$r.sniff) = 2 ]"
	check "$r: no RDATA at all" test "$(count_lines "$LAB_DIR/$r.sniff" 'type=RDATA')" = 0
done
finish
