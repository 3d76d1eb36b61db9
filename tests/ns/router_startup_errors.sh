#!/bin/bash
# pgmrouterd refusing to start: not root, the iptables backend configured and iptables missing,
# its queue already bound by another daemon. Each time: one message naming the cause, a non-zero
# exit, no rule, control socket or pid file left behind, and the other daemon left untouched.
. "$(dirname "$0")/lib_router.sh"
router_need
topo_router
router_conf "$LAB_DIR/r.conf"

# start_fail NAME ENV-AND-COMMAND...: runs a daemon in rtr that is expected to fail, with its own
# socket and pid file in a directory anyone may write (so only the cause under test can stop it);
# leaves its exit status in RC and its standard error in $LAB_DIR/NAME.err.
PUB="$LAB_DIR/pub"
mkdir -p "$PUB"
chmod 755 "$LAB_DIR"
chmod 1777 "$PUB"
install -m 644 "$LAB_DIR/r.conf" "$PUB/r.conf"
start_fail() {
	local name
	name=$1
	shift
	rm -f "$PUB/$name.sock" "$PUB/$name.pid"
	timeout 20 ip netns exec "$(lab_ns rtr)" "$@" "${DAEMON[@]}" -d -f "$PUB/r.conf" \
		-s "$PUB/$name.sock" -p "$PUB/$name.pid" >"$LAB_DIR/$name.out" 2>"$LAB_DIR/$name.err"
	RC=$?
	log "$name: exit $RC: $(tr '\n' '|' <"$LAB_DIR/$name.err")"
}
# The log lines of a failed start, without the time stamps.
messages() { sed 's/^[0-9:.]* //' "$LAB_DIR/$1.err"; }
left_nothing() {
	[ ! -e "$PUB/$1.sock" ] && [ ! -e "$PUB/$1.pid" ] && ! saved_rules rtr | grep -q PGMROUTER &&
		! lab_exec rtr nft list ruleset 2>/dev/null | grep -qi pgmrouter && [ -z "$(queue_counters rtr 113)" ]
}

# ---- not root ----
start_fail notroot setpriv --reuid=nobody --regid=nogroup --clear-groups --inh-caps=-all
check "not root: non-zero exit" test "$RC" != 0 -a "$RC" != 124
check "not root: one message" test "$(messages notroot | wc -l)" = 1
check "not root: it names the cause" grep -q 'must run as root' "$LAB_DIR/notroot.err"
check "not root: nothing left behind" left_nothing notroot

# ---- the iptables backend configured and iptables missing (a PATH with nft only) ----
router_conf "$LAB_DIR/ipt.conf" "ip pgm router backend iptables"
install -m 644 "$LAB_DIR/ipt.conf" "$PUB/r.conf"
mkdir -p "$LAB_DIR/bin"
for t in nft; do
	p=$(command -v $t) && ln -sf "$p" "$LAB_DIR/bin/$t"
done
start_fail noipt env PATH="$LAB_DIR/bin"
check "iptables missing: non-zero exit" test "$RC" != 0 -a "$RC" != 124
check "iptables missing: one message" test "$(messages noipt | wc -l)" = 1
check "iptables missing: it names the missing tool" grep -q 'iptables.* not installed' "$LAB_DIR/noipt.err"
check "iptables missing: nothing left behind" left_nothing noipt
install -m 644 "$LAB_DIR/r.conf" "$PUB/r.conf"

# ---- no tool at all: the default (nftables, spoken over netlink) needs none ----
rm -f "$LAB_DIR/bin/nft"
rm -f "$PUB/notools.sock" "$PUB/notools.pid"
lab_spawn rtr "$LAB_DIR/notools.err" env PATH="$LAB_DIR/bin" "${DAEMON[@]}" -d -f "$PUB/r.conf" \
	-s "$PUB/notools.sock" -p "$PUB/notools.pid"
NOTOOLS=$LAB_PID
check "no nft or iptables in PATH: starts with nftables all the same" \
	lab_poll 10 sh -c "[ \"\$(ip netns exec $(lab_ns rtr) nft list tables 2>/dev/null | tr '\\n' ,)\" = 'table ip pgmrouter,table ip6 pgmrouter,' ] &&
		grep -q 'interception rules installed (nftables' $LAB_DIR/notools.err"
kill -TERM "$NOTOOLS"
lab_wait_pid "$NOTOOLS" 10
check "no tools: the clean exit leaves nothing behind" left_nothing notools

# ---- queue already bound: a running daemon, a second one on the same queue ----
router_start "$LAB_DIR/r.conf" || exit 1
our_rules >"$LAB_DIR/rules.first"
start_fail second
check "queue bound: non-zero exit" test "$RC" != 0 -a "$RC" != 124
check "queue bound: one message" test "$(messages second | wc -l)" = 1
check "queue bound: it names the queue and says it is bound" grep -q 'queue 113 is already bound' "$LAB_DIR/second.err"
check "queue bound: no socket or pid file of its own left" test ! -e "$PUB/second.sock" -a ! -e "$PUB/second.pid"
check "queue bound: the first daemon's rules are untouched" eval 'our_rules | diff -q "$LAB_DIR/rules.first" - >/dev/null'
check "queue bound: the first daemon still runs and answers" jtrue "show ip pgm router json" "j['running']"
# The same without -d: the starting process reports the child's reason and exits non-zero.
rm -f "$PUB/second.sock" "$PUB/second.pid"
timeout 20 ip netns exec "$(lab_ns rtr)" "${DAEMON[@]}" -f "$PUB/r.conf" -s "$PUB/second.sock" -p "$PUB/second.pid" \
	>"$LAB_DIR/detach.out" 2>"$LAB_DIR/detach.err"
RC=$?
log "detached start: exit $RC: $(tr '\n' '|' <"$LAB_DIR/detach.err")"
check "queue bound, daemon mode: non-zero exit, one message naming the cause" eval '[ "$RC" = 1 ] &&
	[ "$(wc -l <"$LAB_DIR/detach.err")" = 1 ] && grep -q "^pgmrouterd: .*queue 113 is already bound" "$LAB_DIR/detach.err"'
check "queue bound, daemon mode: nothing of its own left" test ! -e "$PUB/second.sock" -a ! -e "$PUB/second.pid"
check "queue bound, daemon mode: the first daemon's rules are untouched" eval 'our_rules | diff -q "$LAB_DIR/rules.first" - >/dev/null'
sniffers || exit 1
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1
check "queue bound: the first daemon still assists (SPM path $D1_ADDR on r1)" \
	wait_seen 10 r1 "type=SPM .* path $D1_ADDR " 1
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
