#!/bin/bash
# Interception rules: install, replace and remove leave everyone else's rules exactly as they
# were; a failed install leaves nothing of ours (not even an earlier run's leftovers); the
# nftables script is accepted by the real nft (with the queue statement swapped for this
# kernel's lack of it); the backend choice and the errors are reported clearly.
. "$(dirname "$0")/lib.sh"
need_root
ns_add a
ns_add b
veth a a1 198.18.10.1/24 b b1 198.18.10.2/24
veth a a2 198.18.11.1/24 b b2 198.18.11.2/24
H="$HARNESS"

# Someone else's rules, in the tables and chains we use and in others.
nsx a iptables -t mangle -A PREROUTING -p tcp --dport 22 -j MARK --set-mark 7
nsx a iptables -t mangle -A FORWARD -p udp --dport 53 -j ACCEPT
nsx a iptables -t mangle -N OTHER-CHAIN
nsx a iptables -t mangle -A OTHER-CHAIN -j RETURN
nsx a iptables -A INPUT -p udp --dport 9 -j DROP
nsx a iptables -A FORWARD -p 113 -j ACCEPT
nsx a nft add table inet someone
nsx a nft add chain inet someone c '{ type filter hook forward priority 10; policy accept; }'
nsx a nft add rule inet someone c ip protocol 113 counter
saved_rules a >"$NS_TMP/ipt.before"
nsx a nft list table inet someone >"$NS_TMP/nft.before"

nsx a "$H" rules-install --if a1,a2 --queue 21 >"$NS_TMP/install.out" 2>&1
rc=$?
check "install succeeds" test $rc = 0
backend=$(sed -n 's/^backend=\([a-z]*\).*/\1/p' "$NS_TMP/install.out")
log "backend: $(cat "$NS_TMP/install.out")"
if [ "$backend" = iptables ]; then
	check "nftables rejected for the missing queue statement, reason given" \
		grep -q 'nft_unavailable=".*No such file or directory' "$NS_TMP/install.out"
	saved_rules a >"$NS_TMP/ipt.installed"
	check "3 chains of ours" test "$(grep -c '^:PGMROUTER-' "$NS_TMP/ipt.installed")" = 3
	check "our jump is first in PREROUTING, INPUT, FORWARD" sh -c "
		grep -A0 -m1 '^-A PREROUTING ' $NS_TMP/ipt.installed | grep -q 'PGMROUTER-PRE' &&
		grep -m1 '^-A INPUT ' $NS_TMP/ipt.installed | grep -q 'PGMROUTER-IN' &&
		grep -m1 '^-A FORWARD ' $NS_TMP/ipt.installed | grep -q 'PGMROUTER-FWD'"
	check "4 rules per interface per chain (IP, UDP; by type, too short)" \
		test "$(grep -c '^-A PGMROUTER-[A-Z]* .*NFQUEUE --queue-num 21 --queue-bypass' "$NS_TMP/ipt.installed")" = 24
	grep -o '&0xf=[0-9a-fx,]*' "$NS_TMP/ipt.installed" | sort -u >"$NS_TMP/types"
	check "type lists are NCF; POLR,RDATA,NAK,NNAK; SPM,POLL,RDATA" \
		test "$(tr '\n' ' ' <"$NS_TMP/types")" = "&0xf=0x0,0x1,0x5 &0xf=0x2,0x5,0x8,0x9 &0xf=0xa "
	check "no rule matches ODATA (type 4)" sh -c "! grep -q '=.*0x4\b' $NS_TMP/types"
	check "everyone else's rules unchanged" sh -c "grep -v PGMROUTER $NS_TMP/ipt.installed | diff -q $NS_TMP/ipt.before - >/dev/null"

	# A second start (after a crash) with another interface set replaces, never duplicates.
	nsx a "$H" rules-install --if a2 --queue 21 >/dev/null 2>&1
	saved_rules a >"$NS_TMP/ipt.again"
	check "restart: still one jump per hook" \
		test "$(grep -c '^-A [A-Z]* -j PGMROUTER-' "$NS_TMP/ipt.again")" = 3
	check "restart: rules only for a2" sh -c "
		[ \$(grep -c '^-A PGMROUTER-' $NS_TMP/ipt.again) = 12 ] && ! grep '^-A PGMROUTER-' $NS_TMP/ipt.again | grep -q a1"
	nsx a "$H" rules-remove
	check "remove succeeds" test $? = 0
	saved_rules a >"$NS_TMP/ipt.after"
	check "after remove: iptables exactly as before" diff "$NS_TMP/ipt.before" "$NS_TMP/ipt.after"
	nsx a nft list table inet someone >"$NS_TMP/nft.after"
	check "after remove: the other nft table exactly as before" \
		diff "$NS_TMP/nft.before" "$NS_TMP/nft.after"
	check "a second remove is a no-op" nsx a "$H" rules-remove

	# A failing install (the tool refuses the real script, not the probe) removes leftovers.
	nsx a "$H" rules-install --if a1 --queue 21 >/dev/null 2>&1 # leftovers of a "crash"
	mkdir -p "$NS_TMP/bin"
	real=$(command -v iptables-restore)
	cat >"$NS_TMP/bin/iptables-restore" <<EOS
#!/bin/sh
script=\$(cat)
case "\$script" in
*"-I PREROUTING 1"*) echo "iptables-restore: line 9 failed: injected failure" >&2; exit 1 ;;
esac
printf '%s\n' "\$script" | exec $real "\$@"
EOS
	chmod +x "$NS_TMP/bin/iptables-restore"
	nsx a env PATH="$NS_TMP/bin:$PATH" "$H" rules-install --backend iptables --if a1,a2 \
		>"$NS_TMP/fail.out" 2>&1
	check "injected failure reported with the tool's message" \
		grep -q 'failed to install the chains: .*injected failure' "$NS_TMP/fail.out"
	check "after a failed install nothing of ours is left" \
		sh -c "! ip netns exec $(ns a) iptables-save | grep -q PGMROUTER"
	check "after a failed install the rest is as before" \
		sh -c "saved=\$(ip netns exec $(ns a) iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'); [ \"\$saved\" = \"\$(cat $NS_TMP/ipt.before)\" ]"
	check "forcing nftables fails with the kernel's reason, leaves no table" sh -c "
		! ip netns exec $(ns a) $H rules-install --backend nft --if a1 2>$NS_TMP/nft.err &&
		grep -q 'nftables backend unusable: .*CONFIG_NFT_QUEUE' $NS_TMP/nft.err &&
		! ip netns exec $(ns a) nft list tables | grep -q pgmrouter"
else
	check "nftables table installed" nsx a nft list table ip pgmrouter
	nsx a "$H" rules-remove
	check "nft table removed" sh -c "! ip netns exec $(ns a) nft list tables | grep -q pgmrouter"
	saved_rules a >"$NS_TMP/ipt.after"
	check "after remove: iptables exactly as before" diff "$NS_TMP/ipt.before" "$NS_TMP/ipt.after"
fi

# The generated nftables script against the real nft: everything but the queue statement.
"$H" rules-script --backend nft --if a1,a2 --queue 21 |
	sed 's/queue num [0-9]* bypass/accept/' >"$NS_TMP/nft.script"
check "nft accepts the generated table (queue swapped for accept)" nsx a nft -f "$NS_TMP/nft.script"
check "nft table has the three hooks" sh -c "
	ip netns exec $(ns a) nft list table ip pgmrouter | grep -c 'type filter hook' | grep -qx 3"
"$H" rules-script --backend nft --remove >"$NS_TMP/nft.remove"
check "the removal script removes it" nsx a nft -f "$NS_TMP/nft.remove"
check "and a second removal is harmless" nsx a nft -f "$NS_TMP/nft.remove"
check "no table of ours left" sh -c "! ip netns exec $(ns a) nft list tables | grep -q pgmrouter"

# The assisted set changes at run time: the chains are replaced in place, jumps untouched.
bg a "$NS_TMP/update.out" "$H" consume --queue 23 --if a1 --update-if a2 --timeout 30
UPD=$BG_PID
check "run-time update applied" wait_for 10 grep -q '^rules updated interfaces=1' "$NS_TMP/update.out"
saved_rules a >"$NS_TMP/ipt.updated"
check "update: rules for a2 only, one jump per hook" sh -c "
	[ \$(grep -c '^-A PGMROUTER-.* a2 ' $NS_TMP/ipt.updated) = 12 ] &&
	! grep '^-A PGMROUTER-' $NS_TMP/ipt.updated | grep -q ' a1 ' &&
	[ \$(grep -c '^-A [A-Z]* -j PGMROUTER-' $NS_TMP/ipt.updated) = 3 ]"
kill "$UPD"
wait_exit "$UPD" 10
check "update: removed at exit, the rest as before" sh -c "
	[ \"\$(ip netns exec $(ns a) iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')\" = \"\$(cat $NS_TMP/ipt.before)\" ]"

# A namespace without any rules: one run (install at start, remove at exit) leaves it empty,
# also of the mangle table that iptables-nft creates on first use.
ns_add c
veth c c1 198.18.12.1/24 b b3 198.18.12.2/24
nsx c "$H" consume --queue 22 --if c1 --timeout 1 >"$NS_TMP/pristine.out" 2>&1
check "pristine: the run installed rules" grep -q '^rules backend=' "$NS_TMP/pristine.out"
check "pristine: iptables-save empty afterwards" test -z "$(nsx c iptables-save)"
check "pristine: nft ruleset empty afterwards" test -z "$(nsx c nft list ruleset)"

# Errors named clearly.
nsx a env PATH=/nonexistent "$H" rules-install --if a1 >/dev/null 2>"$NS_TMP/nopath.err"
check "iptables missing: named" grep -q 'iptables-restore is not installed' "$NS_TMP/nopath.err"
nsx a setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$H" rules-install --if a1 >/dev/null 2>"$NS_TMP/noroot.err"
check "not root: named" grep -q 'needs root (CAP_NET_ADMIN)' "$NS_TMP/noroot.err"
"$H" rules-install --if 'a*' >/dev/null 2>"$NS_TMP/badname.err"
check "wildcard interface name refused" grep -q 'cannot be used in a rule' "$NS_TMP/badname.err"
finish
