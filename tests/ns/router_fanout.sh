#!/bin/bash
# SPM fan-out by the kernel (`ip pgm router spm-fanout`, nftables): pgmrouterd accepts an SPM marked, the
# kernel's multicast forwarding makes the copies and a forward-hook rule writes each copy's
# SPM_PATH with the PGM checksum updated:
#  - each copy carries its egress interface's address, with a valid PGM checksum, over IP and
#    over UDP (whose checksum stays valid too); the daemon sends none of them;
#  - a copy by an interface without router assist leaves unchanged, the other still rewritten;
#  - SPMs the rules cannot make exactly are replicated by the daemon as before: no PGM checksum
#    (an update would invent one), OPT_NAK_BO_IVL to overwrite;
#  - an address change reaches the rules; `no ip pgm router spm-fanout` removes the chain;
#  - ODATA crosses the forward chain unchanged, and with the daemon killed (rules left behind)
#    SPMs are forwarded unchanged: nothing is marked, nothing rewritten.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$NS_TMP/r.conf" "ip pgm router spm-fanout"
router_start "$NS_TMP/r.conf" || exit 1
fo() { dp "j['fanout']['$1']"; }
repl() { dp "j['replication']['$1']"; }
spm() { # spm SQN PATH [ENCAP]: the SPM as the receivers' sniffers print it, checksum valid
	echo "^pgm src=$SRC_ADDR dst=$GROUP ttl=15 ra=0 encap=${3:-ip}.* csum=ok type=SPM \| SPM $TSI sqn $1 .* path $2 "
}

check "the fan-out is active on 3 interfaces" eval "[ \$(fo active) = True ] && [ \$(fo interfaces) = 3 ]"
check "our forward chain rewrites SPM_PATH on d1 and d2" eval "
	nsx rtr nft list chain ip pgmrouter pgm-forward | grep -q 'oifname \"d1\".* set 0x' &&
	nsx rtr nft list chain ip pgmrouter pgm-forward | grep -q 'oifname \"d2\".* set 0x'"

# ---- the kernel makes both copies, each with its own path ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 1
check "SPM 1 on d1 with path $D1_ADDR, checksum valid" wait_seen 10 r1 "$(spm 1 $D1_ADDR)" 1
check "SPM 1 on d2 with path $D2_ADDR, checksum valid" wait_seen 10 r2 "$(spm 1 $D2_ADDR)" 1
check "fanned out: 1 SPM, 2 copies, none sent by the daemon" eval "
	[ $(fo spms) = 1 ] && [ $(fo copies) = 2 ] && [ $(repl replicated) = 0 ] && [ $(repl copies) = 0 ]"
check "the rules rewrote 2 copies" test "$(fo rules_rewrote)" = 2
check "SPM 1 arrived once on each LAN" eval "[ $(seen r1 "SPM $TSI sqn 1 ") = 1 ] && [ $(seen r2 "SPM $TSI sqn 1 ") = 1 ]"

# ---- over UDP: the PGM checksum updated, the UDP checksum still valid ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 2 --udp
check "UDP SPM 2 on d1: path $D1_ADDR, UDP and PGM checksums valid" \
	wait_seen 10 r1 "$(spm 2 $D1_ADDR 'udp udpcsum=ok')" 1
check "UDP SPM 2 on d2: path $D2_ADDR, UDP and PGM checksums valid" \
	wait_seen 10 r2 "$(spm 2 $D2_ADDR 'udp udpcsum=ok')" 1
check "fanned out: 2 SPMs" test "$(fo spms)" = 2

# ---- what the rules cannot make exactly: the daemon's copies ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 3 --trail 1 --lead 3 --zero-checksum
check "SPM 3 without a checksum: on d1 with path $D1_ADDR, still without one" \
	wait_seen 10 r1 "encap=ip csum=none type=SPM \| SPM $TSI sqn 3 .* path $D1_ADDR " 1
check "... replicated by the daemon" eval "[ $(repl replicated) = 1 ] && [ $(fo spms) = 2 ]"
cli "configure terminal" "interface d1" "ip pgm router nak-backoff-interval 77" "end" >/dev/null
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 4 --trail 1 --lead 4 --nak-bo-ivl 500000
check "SPM 4 with OPT_NAK_BO_IVL: on d1 with path $D1_ADDR" wait_seen 10 r1 "$(spm 4 $D1_ADDR)" 1
check "... replicated by the daemon (the option is rewritten on d1)" test "$(repl replicated)" = 2
cli "configure terminal" "interface d1" "no ip pgm router nak-backoff-interval" "end" >/dev/null

# ---- an interface without router assist: its copy unchanged, by the kernel too ----
cli "configure terminal" "interface d2" "no ip pgm router" "end" >/dev/null
check "the rules follow: no rewrite on d2" wait_for 10 eval "[ \$(fo interfaces) = 2 ]"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 5 --trail 1 --lead 5
check "SPM 5 on d1 (assisted) with path $D1_ADDR" wait_seen 10 r1 "$(spm 5 $D1_ADDR)" 1
check "SPM 5 on d2 (not assisted) unchanged: path $SRC_ADDR" wait_seen 10 r2 "$(spm 5 $SRC_ADDR)" 1
check "... fanned out" test "$(fo spms)" = 3
cli "configure terminal" "interface d2" "ip pgm router" "end" >/dev/null

# ---- an address change reaches the rules ----
NEW_D1=${D1_ADDR%.*}.77
nsx rtr sysctl -qw net.ipv4.conf.d1.promote_secondaries=1
nsx rtr ip addr add "$NEW_D1/24" dev d1
nsx rtr ip addr del "$D1_ADDR/24" dev d1
check "the rules write d1's new address" wait_for 10 eval \
	"nsx rtr nft list chain ip pgmrouter pgm-forward | grep -q \"oifname \\\"d1\\\".* set 0x$(printf '%02x' ${NEW_D1//./ })\""
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 6 --trail 1 --lead 6
check "SPM 6 on d1 with path $NEW_D1" wait_seen 10 r1 "$(spm 6 $NEW_D1)" 1
check "SPM 6 on d2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 6 $D2_ADDR)" 1
nsx rtr ip addr add "$D1_ADDR/24" dev d1
nsx rtr ip addr del "$NEW_D1/24" dev d1

# ---- ODATA crosses the forward chain unchanged ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type odata --sqn 1
check "ODATA on d1 and d2, checksum valid" eval "
	wait_seen 10 r1 'csum=ok type=ODATA \| ODATA $TSI sqn 1 ' 1 && wait_seen 10 r2 'csum=ok type=ODATA \| ODATA $TSI sqn 1 ' 1"

# ---- switched off at run time: no forward chain, the daemon's copies ----
cli "configure terminal" "no ip pgm router spm-fanout" "end" >/dev/null
check "no rule of ours at the forward hook" wait_for 10 eval \
	"[ \$(nsx rtr nft list table ip pgmrouter | grep -c 'hook forward') = 0 ]"
check "running config says so (no spm-fanout line: the default)" eval "! cli 'show running-config' | grep -q 'spm-fanout'"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 7 --trail 1 --lead 7
check "SPM 7 on d1 with path $D1_ADDR (the daemon's copy)" wait_seen 10 r1 "$(spm 7 $D1_ADDR)" 1
check "... replicated" wait_for 10 eval "[ \$(repl replicated) = 3 ]"
cli "configure terminal" "ip pgm router spm-fanout mark-bit 3" "end" >/dev/null
check "back on, with mark 0x8" wait_for 10 eval "[ \$(fo active) = True ] && [ \$(fo mark) = 8 ]"
check "running config: ip pgm router spm-fanout mark-bit 3" eval "cli 'show running-config' | grep -qx 'ip pgm router spm-fanout mark-bit 3'"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 9 --trail 1 --lead 9
check "SPM 9 on d2 with path $D2_ADDR (fanned out with mark 0x8)" wait_seen 10 r2 "$(spm 9 $D2_ADDR)" 1
check "... fanned out (SPMs 1, 2, 5, 6, 9)" wait_for 10 eval "[ \$(fo spms) = 5 ]"
check "show ip pgm router dataplane (text) reports the fan-out" \
	eval "cli 'show ip pgm router dataplane' | grep -Eq '^  SPM fan-out by the kernel: mark 0x00000008, 3 interfaces'"
check "nothing failed on the packet path" jtrue "show ip pgm router dataplane json" \
	"j['path']['malformed'] == 0 and j['path']['send_failed'] == 0 and j['path']['rewrite_failed'] == 0"

# ---- the daemon killed, its rules left (bypass): SPMs pass unchanged ----
kill -9 "$DAEMON_PID"
wait "$DAEMON_PID" 2>/dev/null
check "the forward chain is still there" eval "nsx rtr nft list chain ip pgmrouter forward >/dev/null 2>&1"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 10 --trail 1 --lead 10
check "SPM 10 on d1 unchanged (path $SRC_ADDR): unmarked, not rewritten" wait_seen 10 r1 "$(spm 10 $SRC_ADDR)" 1
check "SPM 10 on d2 unchanged" wait_seen 10 r2 "$(spm 10 $SRC_ADDR)" 1
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
