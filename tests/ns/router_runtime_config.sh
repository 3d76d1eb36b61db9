#!/bin/bash
# Router assist configured at run time: `no ip pgm router` on an interface removes its rules (NAKs
# there are no longer intercepted, SPMs leaving there keep the upstream path NLA), `ip pgm router`
# again restores them exactly; an interface configured before it exists gets router assist when
# it appears (rules, NCFs, NAK forwarding, SPM path NLA).
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router ncf-interval 0" "ip pgm router nak-repeat-interval 60000" \
	"interface d3" " ip pgm router"
router_start "$LAB_DIR/r.conf" || exit 1
our_rules >"$LAB_DIR/rules.start"
check "d3 is configured and does not exist yet" jtrue "show ip pgm router interface d3 json" \
	"ifs['d3']['exists'] == False and ifs['d3']['router_assist'] == True"
check "d3: its rules are installed by name before it exists" \
	test "$(our_if_rules rtr d3)" = "$(rules_per_if rtr)"
check "the log says the daemon waits for d3" grep -q 'd3: router assist configured; the interface does not exist yet' "$DLOG"
spm() { echo "type=SPM \| SPM $TSI sqn $1 .* path $2 "; }
ncf() { echo "^pgm src=$SRC_ADDR dst=$GROUP .*type=NCF \| NCF $TSI sqn $1 "; }
up_nak() { echo "^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn $1 src $SRC_ADDR "; }
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 50
check "SPM 1: r2 gets path $D2_ADDR" wait_seen 10 r2 "$(spm 1 $D2_ADDR)" 1

# ---- no ip pgm router on d2 ----
cli "configure terminal" "interface d2" "no ip pgm router" "end" >"$LAB_DIR/cli.out" 2>&1
check "no ip pgm router: accepted" eval "! grep -q '%' $LAB_DIR/cli.out"
check "d2: no rule of ours names it" eval '! our_rules | grep -q "d2"'
# The rules now are the start's less those naming d2 (its queue rules and policing jumps).
check "d2: the other interfaces' rules are untouched" eval \
	'our_rules | diff -q <(grep -vE -- "(-[io] d2 |ifname \"d2\" )" "$LAB_DIR/rules.start") - >/dev/null'
check "show: d2 router assist off" jtrue "show ip pgm router interface d2 json" "ifs['d2']['router_assist'] == False"
n2=$(jval "show ip pgm router traffic d2 json" "ifs['d2']['received']['NAK']")
inj r2 dn --src $R2_ADDR --dst $D2_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP
# A NAK from r1 after it: the queue is FIFO, so once r1's is answered r2's would have been too.
inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 6 --nak-src $SRC_ADDR --nak-grp $GROUP
check "barrier: r1's NAK answered" wait_seen 10 r1 "$(ncf 6)" 1
sync_wire
check "d2 disabled: r2's NAK got no NCF" seen_is r2 "$(ncf 5)" 0
check "d2 disabled: nothing went upstream for it" seen_is src "$(up_nak 5)" 0
check "d2 disabled: the daemon never saw it" test "$(jval "show ip pgm router traffic d2 json" "ifs['d2']['received']['NAK']")" = "$n2"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 50
check "d2 disabled: SPM 2 leaves d2 with the upstream path NLA ($SRC_ADDR)" wait_seen 10 r2 "$(spm 2 $SRC_ADDR)" 1
check "d2 disabled: and d1 still with $D1_ADDR" wait_seen 10 r1 "$(spm 2 $D1_ADDR)" 1

# ---- ip pgm router on d2 again ----
cli "configure terminal" "interface d2" "ip pgm router" "end" >"$LAB_DIR/cli.out" 2>&1
check "ip pgm router: accepted" eval "! grep -q '%' $LAB_DIR/cli.out"
check "d2 again: exactly the rules of the start" eval 'our_rules | diff "$LAB_DIR/rules.start" -'
inj r2 dn --src $R2_ADDR --dst $D2_ADDR --type nak --sqn 7 --nak-src $SRC_ADDR --nak-grp $GROUP
check "d2 again: r2's NAK gets an NCF" wait_seen 10 r2 "$(ncf 7)" 1
check "d2 again: and goes upstream" wait_seen 10 src "$(up_nak 7)" 1
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 3 --trail 1 --lead 50
check "d2 again: SPM 3 leaves d2 with path $D2_ADDR" wait_seen 10 r2 "$(spm 3 $D2_ADDR)" 1

# ---- d3 appears ----
lab_host r3
lab_link rtr d3 198.18.4.1/24 r3 dn 198.18.4.2/24
lab_route r3 default 198.18.4.1
lab_spawn_ready r3 "$LAB_DIR/r3.sniff" "$LAB_DIR/r3.ready" "$SNIFF" --if dn --time --timeout 120 \
	--ready "$LAB_DIR/r3.ready" || log "sniffer in r3 did not start"
# Multicast routing to d3 too (smcroute learns of new interfaces on reload).
sed -i -e 's/^phyint d2 enable$/&\nphyint d3 enable/' -e "s/ to d1 d2$/ to d1 d2 d3/" \
	"$LAB_DIR/smcroute.rtr.conf"
lab_exec rtr smcroutectl -u "$LAB_DIR/smcroute.rtr.sock" reload >/dev/null 2>&1
check "d3 appeared: the daemon knows it, with its address" lab_poll 10 jtrue \
	"show ip pgm router interface d3 json" "ifs['d3']['exists'] and ifs['d3']['address'] == '198.18.4.1'"
check "d3 appeared: the log says so" lab_poll 5 grep -q 'd3: appeared (ifindex [0-9]*), router assist active' "$DLOG"
# Rules match interfaces by name, so d3's are in place from the start.
check "d3: rules of ours name it (every hook)" \
	test "$(our_if_rules rtr d3)" = "$(rules_per_if rtr)"
inj r3 dn --src 198.18.4.2 --dst 198.18.4.1 --type nak --sqn 8 --nak-src $SRC_ADDR --nak-grp $GROUP
check "d3: r3's NAK gets an NCF on d3" lab_poll 10 eval "[ \$(count_lines $LAB_DIR/r3.sniff '$(ncf 8)') = 1 ]"
check "d3: and goes upstream" wait_seen 10 src "$(up_nak 8)" 1
check "d3: the repair state lists d3" lab_poll 5 jtrue "show ip pgm router state json" \
	"[r['interfaces'] for r in sess[0]['repairs'] if r['sqn'] == 8] == ['d3']"
if lab_poll 10 sh -c "ip netns exec $(lab_ns rtr) cat /proc/net/ip_mr_cache | grep -q ' [0-9]:'" &&
	lab_exec rtr smcroutectl -u "$LAB_DIR/smcroute.rtr.sock" show routes 2>/dev/null | grep -q d3; then
	inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 4 --trail 1 --lead 50
	check "d3: SPM 4 leaves d3 with path 198.18.4.1" \
		lab_poll 10 eval "[ \$(count_lines $LAB_DIR/r3.sniff '$(spm 4 198.18.4.1)') = 1 ]"
else
	log "smcroute did not route to d3 after reload; SPM path on d3 not checked"
fi
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
