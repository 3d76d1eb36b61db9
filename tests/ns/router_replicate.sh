#!/bin/bash
# pgmrouterd replicates SPM and RDATA to a group itself, from the kernel's multicast routes:
#  - the routes are mirrored from rtnetlink: smcroute's route is known at start, a route added at
#    run time is used by the next packet, a removed one is forgotten;
#  - copies go only where the route says, TTL decremented, not below the interface's threshold;
#  - a route with one outgoing interface: the original is accepted rewritten, the kernel forwards it;
#  - an interface without router assist gets the SPM unchanged, the assisted one rewritten;
#  - no route: left to the kernel, counted (and the kernel, with no route, forwards nothing);
#  - off the route's incoming interface: left to the kernel, counted, not forwarded;
#  - nothing of it is seen at the forward hook: there is no rule of ours there;
#  - the copies go through the link layer (d1, d2 are Ethernet), and through the IP stack with
#    `no ip pgm router link-layer-output`, the same on the wire;
#  - under a burst the originals' drop verdicts are held for a later send, and sent within 5 ms;
#    one SPM at a time, they are not.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
# SPMs to GROUP2 are a session of their own: a TSI is pinned to its first SPM's group
GSI2=0a0203040506
TSI2="0a0203040506\.1234"
GROUP2=239.192.0.2
topo_router
sniffers || exit 1
# The bursts below measure the queue's rounds, not policing (router_police): SPMs unpoliced.
router_conf "$LAB_DIR/r.conf" "no ip pgm router police-spm" "no ip pgm router police-interface"
router_start "$LAB_DIR/r.conf" || exit 1
repl() { dp "j['replication']['$1']"; }
out() { dp "j['output']['$1']"; }
spm() { # spm SQN PATH [GROUP]: the SPM as the receivers' sniffers print it
	local tsi=$TSI
	[ "${3:-$GROUP}" = "$GROUP2" ] && tsi=$TSI2
	echo "^pgm src=$SRC_ADDR dst=${3:-$GROUP} ttl=15 ra=0 encap=ip csum=ok type=SPM \| SPM $tsi sqn $1 .* path $2 "
}
smc() { lab_exec rtr smcroutectl -u "$LAB_DIR/smcroute.rtr.sock" "$@"; }

check "the route smcroute installed is known at start" test "$(repl routes)" -ge 1
check "no rule of ours at the forward hook" test "$(lab_exec rtr nft list table ip pgmrouter | grep -c 'hook forward')" = 0

# ---- the route: both downstream interfaces, each copy with its own path ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 1
check "SPM 1: one copy on d1 with path $D1_ADDR" wait_seen 10 r1 "$(spm 1 $D1_ADDR)" 1
check "SPM 1: one copy on d2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 1 $D2_ADDR)" 1
check "replicated 1, 2 copies sent, nothing failed" eval "
	[ $(repl replicated) = 1 ] && [ $(repl copies) = 2 ] && [ $(repl copies_failed) = 0 ]"

# ---- TTL: a datagram the kernel would not forward (TTL 1, threshold 1) makes no copy ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 2 --ttl 1
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 3 --trail 1 --lead 3
check "SPM 3 arrives on d1 and d2" eval "wait_seen 10 r1 '$(spm 3 $D1_ADDR)' 1 && wait_seen 10 r2 '$(spm 3 $D2_ADDR)' 1"
check "SPM 2 (TTL 1) went nowhere" eval "[ $(seen r1 'SPM $TSI sqn 2 ') = 0 ] && [ $(seen r2 'SPM $TSI sqn 2 ') = 0 ]"
check "copies: 2 for SPM 1, none for SPM 2, 2 for SPM 3" test "$(repl copies)" = 4
check "... sent through the link layer" test "$(out link_layer)" -ge 4
# SPM 2 (TTL 1) made no copy: left to the kernel, which drops it
check "show ip pgm router mroute: ($SRC_ADDR, $GROUP) from up0 to d1 and d2, SPM 1 and 3 replicated" \
	jtrue "show ip pgm router mroute json" "any(r['source'] == '$SRC_ADDR' and r['group'] == '$GROUP'
		and r['incoming_interface'] == 'up0' and r['incoming_router_assist']
		and sorted(o['interface'] for o in r['outgoing']) == ['d1', 'd2']
		and all(o['router_assist'] and o['ttl_threshold'] == 1 for o in r['outgoing'])
		and r['replicated'] == 2 and r['by_kernel'] == 1 for r in j['routes'])"
mroute_text() {
	cli "show ip pgm router mroute" >"$LAB_DIR/mroute.txt"
	grep -A2 -Fx "($SRC_ADDR, $GROUP), incoming up0 (router assist)" "$LAB_DIR/mroute.txt" |
		grep -Fqx "  SPM/RDATA: 2 replicated here, 1 left to the kernel" || {
		sed 's/^/    /' "$LAB_DIR/mroute.txt"
		return 1
	}
}
check "... and as text" mroute_text

# ---- no route: left to the kernel, counted ----
nr=$(repl no_route)
inj src s0 --src $SRC_ADDR --dst $GROUP2 --type spm --gsi $GSI2 --sqn 4 --trail 1 --lead 4
check "no route for $GROUP2: left to the kernel and counted" lab_poll 10 eval "[ \$(repl no_route) = $((nr + 1)) ]"

# ---- a route added at run time: d1 only ----
# (The SPM without a route left the kernel an unresolved entry for it: the route replaces it.)
smc add up0 $SRC_ADDR $GROUP2 d1
check "the added route is mirrored" lab_poll 10 jtrue "show ip pgm router dataplane json" \
	"j['replication']['route_messages'] > 0"
sleep 0.5
rp=$(repl replicated)
sr=$(repl single_rewritten)
inj src s0 --src $SRC_ADDR --dst $GROUP2 --type spm --gsi $GSI2 --sqn 5 --trail 1 --lead 5
check "SPM 5 to $GROUP2 on d1 with path $D1_ADDR (TTL decremented, checksum valid)" wait_seen 10 r1 "$(spm 5 $D1_ADDR $GROUP2)" 1
check "... the route's one copy: the original accepted rewritten, not replicated" eval "
	[ $(repl single_rewritten) = $((sr + 1)) ] && [ $(repl replicated) = $rp ]"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 6 --trail 1 --lead 6
wait_seen 10 r2 "SPM $TSI sqn 6 " 1
check "... and not on d2" test "$(seen r2 "dst=$GROUP2 ")" = 0
smc del up0 $SRC_ADDR $GROUP2
sleep 0.5
nr=$(repl no_route)
inj src s0 --src $SRC_ADDR --dst $GROUP2 --type spm --gsi $GSI2 --sqn 10 --trail 1 --lead 10
check "the removed route is forgotten: the next SPM to $GROUP2 has no route" \
	lab_poll 10 eval "[ \$(repl no_route) = $((nr + 1)) ]"
check "... and is not forwarded" test "$(seen r1 "SPM $TSI2 sqn 10 ")" = 0

# ---- off the route's incoming interface: left to the kernel, not forwarded ----
wi=$(repl wrong_interface)
inj r1 dn --src $SRC_ADDR --dst $GROUP --type spm --sqn 7 --trail 1 --lead 7
check "an SPM of the route's source arriving on d1: counted as off the route" \
	lab_poll 10 eval "[ \$(repl wrong_interface) = $((wi + 1)) ]"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 8 --trail 1 --lead 8
wait_seen 10 r2 "SPM $TSI sqn 8 " 1
check "... and the kernel did not forward it to d2" test "$(seen r2 "SPM $TSI sqn 7 ")" = 0

# ---- an interface without router assist: its copy leaves unchanged ----
cli "configure terminal" "interface d2" "no ip pgm router" "end" >/dev/null
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 9 --trail 1 --lead 9
check "SPM 9 on d1 (assisted) with path $D1_ADDR" wait_seen 10 r1 "$(spm 9 $D1_ADDR)" 1
check "SPM 9 on d2 (not assisted) unchanged: path $SRC_ADDR" wait_seen 10 r2 "$(spm 9 $SRC_ADDR)" 1
# ---- link-layer output off: the copies go through the IP stack, the same on the wire ----
cli "configure terminal" "interface d2" "ip pgm router" "exit" "no ip pgm router link-layer-output" \
	"end" >/dev/null
ll=$(out link_layer)
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 11 --trail 1 --lead 11
check "link-layer output off: SPM 11 on d1 with path $D1_ADDR" wait_seen 10 r1 "$(spm 11 $D1_ADDR)" 1
check "... and on d2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 11 $D2_ADDR)" 1
check "... both through the IP stack" eval "[ $(out link_layer) = $ll ] && [ $(dp "j['output']['link_layer_output']") = False ]"
check "the running config says so" eval "cli 'show running-config' | grep -qx 'no ip pgm router link-layer-output'"
cli "configure terminal" "ip pgm router link-layer-output" "end" >/dev/null
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 12 --trail 1 --lead 12
check "on again: SPM 12 on d1 and d2 through the link layer" eval "wait_seen 10 r1 '$(spm 12 $D1_ADDR)' 1 &&
	wait_seen 10 r2 '$(spm 12 $D2_ADDR)' 1 && [ \$(out link_layer) = $((ll + 2)) ]"
check "nothing failed on the packet path" jtrue "show ip pgm router dataplane json" \
	"j['path']['malformed'] == 0 and j['path']['send_failed'] == 0 and j['replication']['copies_failed'] == 0"
check "show ip pgm router dataplane (text) reports replication" \
	eval "cli 'show ip pgm router dataplane' | grep -Eq '^  Replication: [0-9]+ SPM/RDATA replicated'"
# ---- held drops: under a burst, the originals' drop verdicts wait for a later send, 5 ms at most ----
check "one SPM at a time, wakeups far apart: no drop verdict was held" \
	jtrue "show ip pgm router dataplane json" "j['queue_stats']['held_rounds'] == 0"
rp=$(repl replicated)
# More than one wakeup can take (16 receive rounds of 32), so either the next wakeup follows the
# last one's work at once or the daemon keeps pace with the sender: busy, either way. (200 could
# all be read in the first wakeup, which is not busy: then nothing is held.)
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 13 --trail 1 --lead 1012 --count 1000
check "a burst of 1000 SPMs (SQN 13-1012), all replicated" lab_poll 10 eval "[ \$(repl replicated) = $((rp + 1000)) ]"
check "... rounds held their drops; none is held now, nothing waits in the queue" \
	lab_poll 2 jtrue "show ip pgm router dataplane json" \
	"j['queue_stats']['held_rounds'] > 0 and j['queue_stats']['held'] == 0 and j['kernel']['waiting'] == 0"
check "show ip pgm router dataplane (text) reports them" \
	eval "cli 'show ip pgm router dataplane' | grep -Eq '^    [1-9][0-9]* receive rounds held their drop verdicts for a later send, 0 held now$'"
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
