#!/bin/bash
# A consumer killed with SIGKILL leaves its rules behind; with bypass on every queue rule the
# kernel keeps forwarding PGM (queued types included) while nobody is bound to the queue; the
# next start replaces the leftovers (one jump per hook, fresh chains) and sees packets again; a
# clean exit then removes everything of ours.
. "$(dirname "$0")/lib.sh"
need_root
topo_router
Q=31
C1="$NS_TMP/consumer1.out"
C2="$NS_TMP/consumer2.out"
start_receiver_sniffers

start_consumer "$C1" --queue $Q --if up0,d1,d2 || exit 1
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 2
check "first consumer saw 2 SPM x 2 egress copies" \
	wait_for 10 sh -c "[ \$(grep -c 'type=SPM' $C1) = 4 ]"
check "receivers got the 2 SPM" wait_for 10 sh -c "
	[ \$(grep -c 'type=SPM' $NS_TMP/r1.sniff) = 2 ] && [ \$(grep -c 'type=SPM' $NS_TMP/r2.sniff) = 2 ]"

kill -9 "$CONSUMER_PID"
wait "$CONSUMER_PID" 2>/dev/null
check "after SIGKILL: our rules are still installed (3 interfaces x 3 hooks x IP/UDP)" \
	test "$(saved_rules rtr | grep -c '^-A PGMROUTER-.*--queue-bypass')" = 36
check "after SIGKILL: nobody is bound to queue $Q" test -z "$(queue_counters rtr $Q)"

fwd_before=$(nsx rtr iptables -t mangle -vnxL PGMROUTER-FWD | awk '/NFQUEUE/ { s += $1 } END { print s + 0 }')
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 3
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type rdata --count 2
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type odata --count 3
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --udp --count 1
for r in r1 r2; do
	check "bypass: $r got 3+1 more SPM, 2 RDATA, 3 ODATA" wait_for 10 sh -c "
		[ \$(grep -c 'type=SPM' $NS_TMP/$r.sniff) = 6 ] &&
		[ \$(grep -c 'type=RDATA' $NS_TMP/$r.sniff) = 2 ] &&
		[ \$(grep -c 'type=ODATA' $NS_TMP/$r.sniff) = 3 ]"
done
fwd_after=$(nsx rtr iptables -t mangle -vnxL PGMROUTER-FWD | awk '/NFQUEUE/ { s += $1 } END { print s + 0 }')
check "bypass: the queue rules matched those packets (SPM, RDATA copies: 12)" \
	test $((fwd_after - fwd_before)) = 12

start_consumer "$C2" --queue $Q --if up0,d1 || exit 1
saved_rules rtr >"$NS_TMP/rules.restarted"
check "restart: one jump per hook" \
	test "$(grep -c '^-A [A-Z]* -j PGMROUTER-' "$NS_TMP/rules.restarted")" = 3
check "restart: chains hold only the new interface set (up0, d1)" sh -c "
	[ \$(grep -c '^-A PGMROUTER-' $NS_TMP/rules.restarted) = 24 ] &&
	! grep '^-A PGMROUTER-' $NS_TMP/rules.restarted | grep -q d2"
send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 1
check "restart: the new consumer sees the SPM copy out=d1 only" \
	wait_for 10 sh -c "grep -q 'hook=forward in=up0 out=d1 .*type=SPM' $C2"
check "restart: receivers still get it" wait_for 10 sh -c "
	[ \$(grep -c 'type=SPM' $NS_TMP/r1.sniff) = 7 ] && [ \$(grep -c 'type=SPM' $NS_TMP/r2.sniff) = 7 ]"
check "restart: no copy out=d2 (not assisted)" test "$(count_lines "$C2" 'out=d2')" = 0
kill "$CONSUMER_PID"
check "clean exit" wait_exit "$CONSUMER_PID" 10
check "clean exit removed every rule of ours" sh -c "! ip netns exec $(ns rtr) iptables-save | grep -q PGMROUTER"
finish
