#!/bin/bash
# A consumer killed with SIGKILL leaves its rules behind; with bypass on every queue rule the
# kernel keeps forwarding PGM (queued types included) while nobody is bound to the queue; the
# next start replaces the leftovers (one jump per hook, fresh chains) and sees packets again; a
# clean exit then removes everything of ours.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
topo_router
Q=31
C1="$LAB_DIR/consumer1.out"
C2="$LAB_DIR/consumer2.out"
start_receiver_sniffers

start_consumer "$C1" --queue $Q --if up0,d1,d2 || exit 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 2
check "first consumer saw the 2 SPM, once each at prerouting" \
	lab_poll 10 sh -c "[ \$(grep -c 'hook=prerouting .*type=SPM' $C1) = 2 ]"
check "receivers got the 2 SPM" lab_poll 10 sh -c "
	[ \$(grep -c 'type=SPM' $LAB_DIR/r1.sniff) = 2 ] && [ \$(grep -c 'type=SPM' $LAB_DIR/r2.sniff) = 2 ]"

kill -9 "$CONSUMER_PID"
wait "$CONSUMER_PID" 2>/dev/null
log "backend: $(our_backend rtr)"
check "after SIGKILL: our queue rules are all still installed (3 interfaces), with bypass" eval '
	[ "$(our_queue_rules rtr | grep -cE "queue num $Q bypass|--queue-num $Q --queue-bypass")" = $((3 * $(rules_per_if rtr) + $(rules_any_if rtr))) ]'
check "after SIGKILL: nobody is bound to queue $Q" test -z "$(queue_counters rtr $Q)"

pre_before=$(our_matches rtr prerouting)
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 3
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 2
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --count 3
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --udp --count 1
for r in r1 r2; do
	check "bypass: $r got 3+1 more SPM, 2 RDATA, 3 ODATA" lab_poll 10 sh -c "
		[ \$(grep -c 'type=SPM' $LAB_DIR/$r.sniff) = 6 ] &&
		[ \$(grep -c 'type=RDATA' $LAB_DIR/$r.sniff) = 2 ] &&
		[ \$(grep -c 'type=ODATA' $LAB_DIR/$r.sniff) = 3 ]"
done
pre_after=$(our_matches rtr prerouting)
check "bypass: the queue rules matched those packets (SPM, RDATA: 6)" \
	test $((pre_after - pre_before)) = 6

start_consumer "$C2" --queue $Q --if up0,d1 || exit 1
check "restart: one entry per hook (base chain or jump)" test "$(our_entries rtr)" = 2
check "restart: queue rules for the new interface set only (up0, d1)" eval '
	[ "$(our_queue_rules rtr | wc -l)" = $((2 * $(rules_per_if rtr) + $(rules_any_if rtr))) ] &&
	[ "$(our_if_rules rtr d2)" = 0 ] && [ "$(our_if_rules rtr d1)" = "$(rules_per_if rtr)" ]'
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 1
check "restart: the new consumer sees the SPM, at prerouting" \
	lab_poll 10 sh -c "grep -q 'hook=prerouting in=up0 out=- .*type=SPM' $C2"
check "restart: receivers still get it" lab_poll 10 sh -c "
	[ \$(grep -c 'type=SPM' $LAB_DIR/r1.sniff) = 7 ] && [ \$(grep -c 'type=SPM' $LAB_DIR/r2.sniff) = 7 ]"
check "restart: nothing at the forward hook" test "$(count_lines "$C2" 'hook=forward')" = 0
kill "$CONSUMER_PID"
check "clean exit" ended "$CONSUMER_PID" 10
check "clean exit removed every rule of ours" test -z "$(our_backend rtr)"
finish
