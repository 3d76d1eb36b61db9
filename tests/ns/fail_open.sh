#!/bin/bash
# The queue is fail-open: when it is full (the consumer stalls), the kernel accepts further
# packets instead of dropping them, so PGM keeps flowing unassisted. The rule counters against
# the kernel's queue id sequence show how many went unassisted. A second consumer on a bound
# queue gets a clear error.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
topo_router
Q=51
C="$LAB_DIR/consumer.out"
start_receiver_sniffers
start_consumer "$C" --queue $Q --if d1,d2 --hold --max-queue 4 || exit 1

lab_exec rtr "$HARNESS" consume --queue $Q --timeout 1 >"$LAB_DIR/second.out" 2>&1
check "a second consumer on the bound queue: clear error" \
	grep -q "queue $Q is already bound by another process (netlink port id [0-9]*)" "$LAB_DIR/second.out"

send src --if s0 --src $SRC_ADDR --dst $GROUP --ttl 16 --type spm --count 10
check "4 SPM queued and held" lab_poll 10 sh -c "[ \$(grep -c 'verdict=held' $C) = 4 ]"
check "the other 6 were accepted by the kernel (fail-open) and arrived, 2 copies each" lab_poll 10 sh -c "
	[ \$((\$(grep -c 'type=SPM' $LAB_DIR/r1.sniff) + \$(grep -c 'type=SPM' $LAB_DIR/r2.sniff))) = 12 ]"
set -- $(queue_counters rtr $Q)
check "kernel: 4 waiting, 4 ids handed out, nothing dropped" test "${1:-x}/${2:-x}/${3:-x}/${4:-x}" = 4/0/0/4
kill "$CONSUMER_PID"
ended "$CONSUMER_PID" 10
check "the rules matched all 10 SPM: 6 went unassisted" grep -q '^rules matched prerouting=10 input=0$' "$C"
check "consumer stats: 4 packets pending at exit" grep -Eq '^stats packets=4 .* pending=4 ' "$C"
finish
