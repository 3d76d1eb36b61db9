#!/bin/bash
# pgmrouterd killed with SIGKILL: its rules stay, with bypass, so multicast PGM keeps flowing
# (unassisted); a restart over the leftovers (rules, control socket, pid file) installs the same
# rules once, not twice, and assists again; SIGTERM then removes every rule of ours, the socket
# and the pid file, and exits 0.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf"
router_start "$LAB_DIR/r.conf" || exit 1
our_rules >"$LAB_DIR/rules.first"
log "backend: $(our_backend rtr)"
check "first start: the queue rules of 3 interfaces, all with bypass" eval '
	[ "$(grep -cE "queue num 113 bypass|--queue-num 113 --queue-bypass" "$LAB_DIR/rules.first")" = \
		$((3 * $(rules_per_if rtr) + $(rules_any_if rtr))) ] &&
	[ "$(our_queue_rules rtr | wc -l)" = $((3 * $(rules_per_if rtr) + $(rules_any_if rtr))) ]'
spm() { echo "type=SPM \| SPM $TSI sqn $1 trail 0 lead $1 path $2 "; }
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1
check "assisted: SPM 1 on r1 with path $D1_ADDR" wait_seen 10 r1 "$(spm 1 $D1_ADDR)" 1
check "assisted: SPM 1 on r2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 1 $D2_ADDR)" 1

# ---- SIGKILL ----
lab_router_kill rtr KILL
check "after SIGKILL: the rules are still installed, unchanged" eval 'our_rules | diff -q "$LAB_DIR/rules.first" - >/dev/null'
check "after SIGKILL: nobody is bound to queue 113" test -z "$(queue_counters rtr 113)"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 2 --count 2
inj src s0 --src $SRC_ADDR --dst $GROUP --type odata --sqn 3 --count 3
for r in r1 r2; do
	check "bypass: SPM 2 reaches $r (source's path NLA, unassisted)" wait_seen 10 $r "$(spm 2 $SRC_ADDR)" 1
	check "bypass: RDATA (queued type) reaches $r" wait_seen 10 $r "type=RDATA \| RDATA $TSI sqn (2|3) " 2
	check "bypass: ODATA reaches $r" wait_seen 10 $r "type=ODATA \| ODATA $TSI sqn (3|4|5) " 3
done

# ---- restart over the leftovers ----
check "the dead daemon left its socket and pid file" test -S "$SOCK" -a -e "$PIDFILE"
router_start "$LAB_DIR/r.conf" # (the first daemon's log is kept as DLOG.1)
check "restart over a stale control socket and pid file" kill -0 "$DAEMON_PID"
our_rules >"$LAB_DIR/rules.second"
check "restart: one entry per hook (base chain or jump)" test "$(our_entries rtr)" = 2
check "restart: exactly the first start's rules, no duplicates" diff "$LAB_DIR/rules.first" "$LAB_DIR/rules.second"
check "restart: bound to queue 113 again" test -n "$(queue_counters rtr 113)"
check "restart: the pid file names the new daemon" test "$(cat "$PIDFILE" 2>/dev/null)" = "$DAEMON_PID"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 4 --lead 4
check "restart: assisted again: SPM 4 on r1 with path $D1_ADDR" wait_seen 10 r1 "$(spm 4 $D1_ADDR)" 1
check "restart: assisted again: SPM 4 on r2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 4 $D2_ADDR)" 1
check "restart: the new daemon holds the session (SPM sqn 4)" \
	jtrue "show ip pgm router state json" "len(sess) == 1 and sess[0]['spm_sqn'] == 4"

# ---- clean exit ----
kill -TERM "$DAEMON_PID"
lab_wait_pid "$DAEMON_PID" 10
rc=$?
check "SIGTERM: the daemon exits 0" test "$rc" = 0
check "SIGTERM: no rule of ours is left" test -z "$(our_rules)"
check "SIGTERM: no chain of ours is left" eval '! saved_rules rtr | grep -q PGMROUTER'
check "SIGTERM: no nftables table of ours" eval '! lab_exec rtr nft list ruleset 2>/dev/null | grep -qi pgmrouter'
check "SIGTERM: control socket and pid file removed" test ! -e "$SOCK" -a ! -e "$PIDFILE"
check "SIGTERM: the log says why it stopped" grep -q 'signal 15' "$DLOG"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 5 --lead 5
check "after the clean exit multicast PGM still flows (no rules, plain forwarding)" \
	wait_seen 10 r1 "$(spm 5 $SRC_ADDR)" 1
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
