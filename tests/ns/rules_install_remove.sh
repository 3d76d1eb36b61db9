#!/bin/bash
# Interception rules, both backends: install, replace and remove leave everyone else's rules
# exactly as they were; the nftables table the daemon commits over netlink is the generated
# script's table, rule for rule; a failed install leaves nothing of ours (not even an earlier
# run's leftovers); the backend choice, how it queues, and the errors are reported clearly.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
lab_host a
lab_host b
lab_link a a1 198.18.10.1/24 b b1 198.18.10.2/24
lab_link a a2 198.18.11.1/24 b b2 198.18.11.2/24
H="$HARNESS"

# Someone else's rules, in the tables and chains we use and in others.
lab_exec a iptables -t mangle -A PREROUTING -p tcp --dport 22 -j MARK --set-mark 7
lab_exec a iptables -t mangle -A FORWARD -p udp --dport 53 -j ACCEPT
lab_exec a iptables -t mangle -N OTHER-CHAIN
lab_exec a iptables -t mangle -A OTHER-CHAIN -j RETURN
lab_exec a iptables -A INPUT -p udp --dport 9 -j DROP
lab_exec a iptables -A FORWARD -p 113 -j ACCEPT
lab_exec a ip6tables -t mangle -A PREROUTING -p tcp --dport 22 -j ACCEPT
lab_exec a ip6tables -A INPUT -p 113 -j ACCEPT
lab_exec a nft add table inet someone
lab_exec a nft add chain inet someone c '{ type filter hook forward priority 10; policy accept; }'
lab_exec a nft add rule inet someone c ip protocol 113 counter
saved_rules a >"$LAB_DIR/ipt.before"
saved6() { lab_exec "$1" ip6tables-save 2>/dev/null | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'; }
saved6 a >"$LAB_DIR/ipt6.before"
lab_exec a nft list table inet someone >"$LAB_DIR/nft.before"

# our_table NAME: our nftables table as nft lists it, counters zeroed, without nft's comment
# lines (it says a table with an xtables target is iptables-nft's).
our_table() {
	lab_exec "$1" nft list table ip pgmrouter 2>/dev/null | grep -v '^#' |
		sed 's/counter packets [0-9]* bytes [0-9]*/counter/'
}
# script_table ARGS...: the generated script's table block (what nft would list).
script_table() {
	"$H" rules-script --backend nft "$@" | sed -n '/^table ip pgmrouter {/,$p'
}
others_unchanged() {
	saved_rules a | diff -q "$LAB_DIR/ipt.before" - >/dev/null &&
		lab_exec a nft list table inet someone | diff -q "$LAB_DIR/nft.before" - >/dev/null
}

# ---- nftables: what auto chooses wherever nf_tables exists ----
lab_exec a "$H" rules-install --if a1,a2 --queue 21 >"$LAB_DIR/install.out" 2>&1
rc=$?
log "install: $(cat "$LAB_DIR/install.out")"
check "install succeeds" test $rc = 0
check "auto chooses nftables" grep -q '^backend=nftables ' "$LAB_DIR/install.out"
if grep -q 'queue="queue statement"' "$LAB_DIR/install.out"; then
	log "this kernel has the nftables queue statement"
else
	check "without the queue statement: the xtables target, and why" \
		grep -q 'queue="xtables NFQUEUE target (the kernel has no nftables queue statement, CONFIG_NFT_QUEUE)"' \
		"$LAB_DIR/install.out"
fi
our_table a >"$LAB_DIR/nft.installed"
script_table --if a1,a2 --queue 21 >"$LAB_DIR/nft.script"
check "the committed table is the generated script's, rule for rule" \
	diff "$LAB_DIR/nft.script" "$LAB_DIR/nft.installed"
check "two base chains (prerouting, input), before the mangle table; none at forward" sh -c "
	[ \$(grep -c 'type filter hook .* priority mangle - 1; policy accept;' $LAB_DIR/nft.installed) = 2 ] &&
	! grep -q 'hook forward' $LAB_DIR/nft.installed"
check "ODATA leaves by the first rule of every hook" sh -c "
	[ \$(grep -A1 'type filter hook' $LAB_DIR/nft.installed |
		grep -c 'ip protocol 113 @th,32,8 & 0xf == 0x4 ip length >= 36 accept') = 2 ]"
check "one queue rule per hook and interface, and 4 for multicast SPM/RDATA (IP, UDP)" sh -c "
	[ \$(grep -c 'counter queue num 21 bypass' $LAB_DIR/nft.installed) = 8 ] &&
	[ \$(grep -c 'ip daddr 224.0.0.0/4 counter queue num 21 bypass' $LAB_DIR/nft.installed) = 4 ]"
check "everyone else's rules unchanged" others_unchanged

# A second start (after a crash) with another interface set replaces, never duplicates.
lab_exec a "$H" rules-install --if a2 --queue 21 >/dev/null 2>&1
check "restart: one table of ours per family" test "$(lab_exec a nft list tables | grep pgmrouter | sort | tr '\n' ,)" = "table ip pgmrouter,table ip6 pgmrouter,"
check "restart: the table for a2 only" sh -c "
	[ \"\$(ip netns exec $(lab_ns a) nft list table ip pgmrouter | grep -v '^#' |
		sed 's/counter packets [0-9]* bytes [0-9]*/counter/')\" = \"\$(
		$H rules-script --backend nft --if a2 --queue 21 | sed -n '/^table ip pgmrouter {/,\$p')\" ]"
# Three workers: the steering chains, committed as generated, in both families' tables.
lab_exec a "$H" rules-install --if a1,a2 --queue 21 --workers 3 >/dev/null 2>&1
check "3 workers: the ip table is the generated script's, rule for rule" bash -c "
	diff <($H rules-script --backend nft --if a1,a2 --queue 21 --workers 3 |
		sed -n '/^table ip pgmrouter {/,\$p') <(ip netns exec $(lab_ns a) nft list table ip pgmrouter |
		grep -v '^#' | sed 's/counter packets [0-9]* bytes [0-9]*/counter/')"
check "3 workers: the ip6 table is the generated script's, rule for rule" bash -c "
	diff <($H rules-script --backend nft --ip6 --if a1,a2 --queue 21 --workers 3 |
		sed -n '/^table ip6 pgmrouter {/,\$p') <(ip netns exec $(lab_ns a) nft list table ip6 pgmrouter |
		grep -v '^#' | sed 's/counter packets [0-9]* bytes [0-9]*/counter/')"
check "3 workers: queues 21, 22 and 23, each by GSI range (IP, UDP) at both hooks" sh -c "
	t=\$(ip netns exec $(lab_ns a) nft list table ip pgmrouter);
	[ \$(echo \"\$t\" | grep -c '@th,104,8 0x56-0xaa counter packets [0-9]* bytes [0-9]* queue num 22 bypass') = 2 ] &&
	[ \$(echo \"\$t\" | grep -c '@th,168,8 0xab-0xff counter packets [0-9]* bytes [0-9]* queue num 23 bypass') = 2 ] &&
	! echo \"\$t\" | grep -q 'queue num 24'"
lab_exec a "$H" rules-install --backend iptables --if a1 --queue 21 --workers 3 >/dev/null \
	2>"$LAB_DIR/ipt-workers.err"
check "3 workers on iptables: refused, saying why" \
	grep -q 'workers need the nftables backend' "$LAB_DIR/ipt-workers.err"
lab_exec a "$H" rules-remove
check "remove succeeds" test $? = 0
check "after remove: no table of ours" sh -c "! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter"
check "after remove: everyone else's rules exactly as before" others_unchanged
check "a second remove is a no-op" lab_exec a "$H" rules-remove

# The kernel refusing the batch commits none of it: here table ip pgmrouter belongs to another
# process (an owner flag), so every message of ours is refused. Both ends of the pipe run in a,
# so the lab's cleanup ends them with it.
lab_exec a sh -c 'echo "add table ip pgmrouter { flags owner; }"
	echo "add chain ip pgmrouter theirs"
	sleep 30' | ip netns exec "$(lab_ns a)" nft -i >/dev/null 2>&1 &
OWNER=$!
lab_poll 10 sh -c "ip netns exec $(lab_ns a) nft list table ip pgmrouter 2>/dev/null | grep -q theirs"
lab_exec a "$H" rules-install --if a1 --queue 21 >/dev/null 2>"$LAB_DIR/owned.err"
check "a refused batch: the install fails with the kernel's reason" \
	grep -q 'nftables: cannot install the table: the kernel refused the table: Operation not permitted' \
	"$LAB_DIR/owned.err"
check "a refused batch: nothing of it committed, the other table as it was" sh -c "
	[ \"\$(ip netns exec $(lab_ns a) nft list table ip pgmrouter | grep -c chain)\" = 1 ] &&
	! ip netns exec $(lab_ns a) iptables-save | grep -q PGMROUTER"
kill "$OWNER" 2>/dev/null
wait "$OWNER" 2>/dev/null
lab_poll 10 sh -c "! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter"

# No tool is needed: nftables is spoken over netlink.
lab_exec a env PATH=/nonexistent "$H" rules-install --if a1 >"$LAB_DIR/notools.out" 2>&1
check "without nft and iptables in PATH: installed all the same" grep -q '^backend=nftables ' "$LAB_DIR/notools.out"
lab_exec a env PATH=/nonexistent "$H" rules-remove
check "... and removed" sh -c "! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter"

# The generated script against the real nft, where the queue statement is missing: with the
# statement swapped for accept, nft takes the same table.
"$H" rules-script --backend nft --if a1,a2 --queue 21 |
	sed 's/queue num [0-9]* bypass/accept/' >"$LAB_DIR/nft.accept"
check "nft accepts the generated script (queue swapped for accept)" lab_exec a nft -f "$LAB_DIR/nft.accept"
check "nft table has the two hooks" sh -c "
	ip netns exec $(lab_ns a) nft list table ip pgmrouter | grep -c 'type filter hook' | grep -qx 2"
"$H" rules-script --backend nft --remove >"$LAB_DIR/nft.remove"
check "the removal script removes it" lab_exec a nft -f "$LAB_DIR/nft.remove"
check "and a second removal is harmless" lab_exec a nft -f "$LAB_DIR/nft.remove"
check "no table of ours left" sh -c "! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter"

# The assisted set changes at run time: the table is replaced in one batch.
lab_spawn a "$LAB_DIR/update.out" "$H" consume --queue 23 --if a1 --update-if a2 --timeout 30
UPD=$LAB_PID
check "run-time update applied" lab_poll 10 grep -q '^rules updated interfaces=1' "$LAB_DIR/update.out"
check "update: queue rules for a2 only" sh -c "
	t=\$(ip netns exec $(lab_ns a) nft list table ip pgmrouter 2>/dev/null);
	[ \$(echo \"\$t\" | grep -c 'name \"a2\" counter') = 2 ] && ! echo \"\$t\" | grep -q '\"a1\"'"
kill "$UPD"
ended "$UPD" 10
check "update: removed at exit, the rest as before" sh -c "
	! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter && [ \"\$(ip netns exec $(lab_ns a) iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//')\" = \"\$(cat $LAB_DIR/ipt.before)\" ]"

# ---- iptables: chosen explicitly (the fallback for kernels without nf_tables) ----
# An earlier version's chain at the forward hook, with its jump: removed by the install.
lab_exec a iptables -t mangle -N PGMROUTER-FWD
lab_exec a iptables -t mangle -A PGMROUTER-FWD -p 113 -j NFQUEUE --queue-num 21 --queue-bypass
lab_exec a iptables -t mangle -I FORWARD 1 -j PGMROUTER-FWD
lab_exec a "$H" rules-install --backend iptables --if a1,a2 --queue 21 >"$LAB_DIR/ipt.out" 2>&1
check "iptables install succeeds" grep -q '^backend=iptables ' "$LAB_DIR/ipt.out"
saved_rules a >"$LAB_DIR/ipt.installed"
check "2 chains of ours; the earlier version's forward chain and jump are gone" sh -c "
	[ \$(grep -c '^:PGMROUTER-' $LAB_DIR/ipt.installed) = 2 ] && ! grep -q 'PGMROUTER-FWD' $LAB_DIR/ipt.installed"
check "our jump is first in PREROUTING, INPUT" sh -c "
	grep -A0 -m1 '^-A PREROUTING ' $LAB_DIR/ipt.installed | grep -q 'PGMROUTER-PRE' &&
	grep -m1 '^-A INPUT ' $LAB_DIR/ipt.installed | grep -q 'PGMROUTER-IN'"
check "ODATA returns first in each chain (IP, UDP)" sh -c "
	for c in PRE IN; do
		grep '^-A PGMROUTER-'\$c' ' $LAB_DIR/ipt.installed | head -n 2 | grep -c '=0x4\" -j RETURN\$' | grep -qx 2 || exit 1
	done"
# per interface and encapsulation: prerouting by type, multicast NAK/NNAK, unicast NAKs past
# the router, too short; input by type, too short; and multicast SPM/RDATA from any interface
# (IP, UDP)
check "12 queue rules per interface, 2 for any" \
	test "$(grep -c '^-A PGMROUTER-[A-Z]* .*NFQUEUE --queue-num 21 --queue-bypass' "$LAB_DIR/ipt.installed")" = 26
# (iptables-save prints the u32 tests in its own way: "...@0x4>>0x18&0xf=0x1,0x2,0xa")
grep -E 'NFQUEUE|RETURN' "$LAB_DIR/ipt.installed" | grep -o '&0xf=[0-9a-fx,]*' | sort -u >"$LAB_DIR/types"
check "type lists: ODATA (returns); SPM,RDATA; POLL,POLR,NCF; RDATA,NAK,NNAK; NAK; NAK,NNAK" \
	test "$(tr '\n' ' ' <"$LAB_DIR/types")" = "&0xf=0x0,0x5 &0xf=0x1,0x2,0xa &0xf=0x4 &0xf=0x5,0x8,0x9 &0xf=0x8 &0xf=0x8,0x9 "
check "NAK,NNAK only with a multicast destination, at prerouting" sh -c "
	[ \$(grep NFQUEUE $LAB_DIR/ipt.installed | grep -c '&0xf=0x8,0x9\"') = 4 ] &&
	! grep NFQUEUE $LAB_DIR/ipt.installed | grep '&0xf=0x8,0x9\"' | grep -v '^-A PGMROUTER-PRE -d 224.0.0.0/4 -i a[12] -p '"
# policing (the defaults): hashlimit drops in front of the queue rules, never of ODATA or RDATA
check "policing: per source and per interface, dropping" sh -c "
	grep -q -- '--hashlimit-mode srcip .*-j DROP' $LAB_DIR/ipt.installed &&
	grep -q -- '--hashlimit-name pgmrout-nak0 .*-j DROP' $LAB_DIR/ipt.installed &&
	! grep hashlimit $LAB_DIR/ipt.installed | grep -v -- '-j DROP' &&
	! grep hashlimit $LAB_DIR/ipt.installed | grep -o '&0xf=[0-9a-fx,]*' | grep -q '0x4\|0x5'"
check "no queue rule matches ODATA (type 4)" sh -c "
	! grep NFQUEUE $LAB_DIR/ipt.installed | grep -o '&0xf=[0-9a-fx,]*' | grep -q 0x4"
check "iptables: everyone else's rules unchanged" sh -c "grep -v PGMROUTER $LAB_DIR/ipt.installed | diff -q $LAB_DIR/ipt.before - >/dev/null"
saved6 a >"$LAB_DIR/ipt6.installed"
check "ip6tables: the same 2 chains, our jumps first in PREROUTING and INPUT" sh -c "
	[ \$(grep -c '^:PGMROUTER-' $LAB_DIR/ipt6.installed) = 2 ] &&
	grep -m1 '^-A PREROUTING ' $LAB_DIR/ipt6.installed | grep -q 'PGMROUTER-PRE' &&
	grep -m1 '^-A INPUT ' $LAB_DIR/ipt6.installed | grep -q 'PGMROUTER-IN'"
check "ip6tables: ODATA returns first in each chain (IP, UDP; two shapes each)" sh -c "
	for c in PRE IN; do
		grep '^-A PGMROUTER-'\$c' ' $LAB_DIR/ipt6.installed | head -n 4 | grep -c '=0x4\" -j RETURN\$' | grep -qx 4 || exit 1
	done"
check "ip6tables: no queue rule matches ODATA (type 4); multicast is ff00::/8" sh -c "
	! grep NFQUEUE $LAB_DIR/ipt6.installed | grep -o '&0xf=[0-9a-fx,]*' | grep -q 0x4 &&
	grep -q -- '-d ff00::/8' $LAB_DIR/ipt6.installed && ! grep -q 224.0.0.0 $LAB_DIR/ipt6.installed"
check "ip6tables: everyone else's rules unchanged" sh -c "grep -v PGMROUTER $LAB_DIR/ipt6.installed | diff -q $LAB_DIR/ipt6.before - >/dev/null"
check "iptables: no nftables table of ours" sh -c "! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter"

lab_exec a "$H" rules-install --backend iptables --if a2 --queue 21 >/dev/null 2>&1
saved_rules a >"$LAB_DIR/ipt.again"
check "iptables restart: still one jump per hook" \
	test "$(grep -c '^-A [A-Z]* -j PGMROUTER-' "$LAB_DIR/ipt.again")" = 2
check "iptables restart: rules only for a2" sh -c "
	[ \$(grep NFQUEUE $LAB_DIR/ipt.again | grep -c '^-A PGMROUTER-.* a2 ') = 12 ] && ! grep '^-A PGMROUTER-' $LAB_DIR/ipt.again | grep -q a1"
# Switching backends removes the other one's leftovers.
lab_exec a "$H" rules-install --if a1 --queue 21 >/dev/null 2>&1
check "auto after iptables: nftables, and nothing left in iptables" sh -c "
	ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter && ! ip netns exec $(lab_ns a) iptables-save | grep -q PGMROUTER"
lab_exec a "$H" rules-install --backend iptables --if a1 --queue 21 >/dev/null 2>&1
check "iptables after nftables: the table is gone" sh -c "
	! ip netns exec $(lab_ns a) nft list tables | grep -q pgmrouter && ip netns exec $(lab_ns a) iptables-save | grep -q PGMROUTER"
lab_exec a "$H" rules-remove
saved_rules a >"$LAB_DIR/ipt.after"
check "after remove: iptables exactly as before" diff "$LAB_DIR/ipt.before" "$LAB_DIR/ipt.after"
saved6 a >"$LAB_DIR/ipt6.after"
check "after remove: ip6tables exactly as before" diff "$LAB_DIR/ipt6.before" "$LAB_DIR/ipt6.after"
check "after remove: the other nft table exactly as before" others_unchanged

# A failing install (the tool refuses the real script, not the probe) removes leftovers.
lab_exec a "$H" rules-install --backend iptables --if a1 --queue 21 >/dev/null 2>&1 # a "crash"
mkdir -p "$LAB_DIR/bin"
real=$(command -v iptables-restore)
cat >"$LAB_DIR/bin/iptables-restore" <<EOS
#!/bin/sh
script=\$(cat)
case "\$script" in
*"-I PREROUTING 1"*) echo "iptables-restore: line 9 failed: injected failure" >&2; exit 1 ;;
esac
printf '%s\n' "\$script" | exec $real "\$@"
EOS
chmod +x "$LAB_DIR/bin/iptables-restore"
lab_exec a env PATH="$LAB_DIR/bin:$PATH" "$H" rules-install --backend iptables --if a1,a2 \
	>"$LAB_DIR/fail.out" 2>&1
check "injected failure reported with the tool's message" \
	grep -q 'failed to install the chains: .*injected failure' "$LAB_DIR/fail.out"
check "after a failed install nothing of ours is left" \
	sh -c "! ip netns exec $(lab_ns a) iptables-save | grep -q PGMROUTER &&
		! ip netns exec $(lab_ns a) ip6tables-save | grep -q PGMROUTER"
check "after a failed install the rest is as before" \
	sh -c "saved=\$(ip netns exec $(lab_ns a) iptables-save | grep -v '^#' | sed 's/\[[0-9]*:[0-9]*\]//'); [ \"\$saved\" = \"\$(cat $LAB_DIR/ipt.before)\" ]"
lab_exec a env PATH=/nonexistent "$H" rules-install --backend iptables --if a1 >/dev/null 2>"$LAB_DIR/nopath.err"
check "iptables missing: named" grep -q 'iptables-restore is not installed' "$LAB_DIR/nopath.err"

# A namespace without any rules: one run (install at start, remove at exit) leaves it empty,
# also of the mangle table that iptables-nft creates on first use.
lab_host c
lab_link c c1 198.18.12.1/24 b b3 198.18.12.2/24
for backend in auto iptables; do
	lab_exec c "$H" consume --queue 22 --if c1 --backend $backend --timeout 1 >"$LAB_DIR/pristine.out" 2>&1
	check "pristine ($backend): the run installed rules" grep -q '^rules backend=' "$LAB_DIR/pristine.out"
	check "pristine ($backend): iptables-save empty afterwards" test -z "$(lab_exec c iptables-save)"
	check "pristine ($backend): ip6tables-save empty afterwards" test -z "$(lab_exec c ip6tables-save)"
	check "pristine ($backend): nft ruleset empty afterwards" test -z "$(lab_exec c nft list ruleset)"
done

# Errors named clearly.
lab_exec a setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all --bounding-set=-all \
	"$H" rules-install --if a1 >/dev/null 2>"$LAB_DIR/noroot.err"
check "not root: named" grep -q 'needs root (CAP_NET_ADMIN)' "$LAB_DIR/noroot.err"
"$H" rules-install --if 'a*' >/dev/null 2>"$LAB_DIR/badname.err"
check "wildcard interface name refused" grep -q 'cannot be used in a rule' "$LAB_DIR/badname.err"
finish
