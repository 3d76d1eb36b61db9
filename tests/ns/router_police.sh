#!/bin/bash
# Policing before the queue (dataplane/rules.h): a receiver's flood of NAKs is cut to its
# per-source rate by the interception rules, before the queue, and counted in `show ip pgm
# router`; another receiver's NAK, meanwhile, still gets its NCF at once and goes upstream.
# With `no ip pgm router police-nak` the same flood reaches the daemon whole.
. "$(dirname "$0")/lib_router.sh"
router_need
FLOOD="$LAB_REPO/build/bench/pgm-flood"
need "$FLOOD"
topo_router
sniffers || exit 1
# a small limit, so that a flood of a second shows it
router_conf "$LAB_DIR/r.conf" "ip pgm router police-nak rate 100 burst 20" \
	"ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

# policed NAKs of the summary, per source
policed() { jval "show ip pgm router json" "j['police']['nak']['source'].get('dropped', -1)"; }
# NAKs the daemon received on d1
rx_d1() { jval "show ip pgm router traffic json" "ifs['d1']['received']['NAK']"; }

check "the summary shows the limit" eval \
	"cli 'show ip pgm router' | grep -q 'NAK per source 100/s burst 20: 0; per interface 2000/s burst 400: 0'"
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
wait_seen 10 r1 "type=SPM" 1
check "the session exists" lab_poll 10 jtrue "show ip pgm router state json" "len(sess) == 1"

# 3,000 NAKs from r1 at 3,000/s (NAKs for a session the router does not know: each costs the
# daemon as much to refuse as a real one costs to parse)
lab_exec r1 "$FLOOD" -s $R1_ADDR -d $D1_ADDR -m nak --nla-src $SRC_ADDR --nla-grp $GROUP \
	-n 3000 -r 3000 >"$LAB_DIR/flood1.log" 2>&1 &
FPID=$!
sleep 0.3
# r2's NAK in the middle of r1's flood
inj r2 dn --src $R2_ADDR --dst $D2_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP
check "r2's NAK is confirmed on its LAN" wait_seen 5 r2 "type=NCF .*\| NCF 010203040506\.1234 sqn 5 " 1
check "and forwarded upstream once" wait_seen 5 src "type=NAK \| NAK 010203040506\.1234 sqn 5 " 1
wait $FPID
log "flood: $(tail -1 "$LAB_DIR/flood1.log")"
wait_ev 10 d2 nak-confirmed 1 >/dev/null 2>&1
rx=$(rx_d1)
dropped=$(policed)
log "r1's flood: $rx NAKs reached the daemon, $dropped dropped before the queue"
# a second at 100/s with a burst of 20: about 120; the flood's second may stretch on a busy
# machine, so allow for three
check "most of the flood was dropped before the queue ($dropped)" [ "$dropped" -ge 2500 ]
check "the daemon got no more than the limit lets through ($rx)" [ "$rx" -le 400 ]
check "dropped and received add up to the flood" [ $((rx + dropped)) -ge 2990 ]
check "the text shows the same count" eval \
	"cli 'show ip pgm router' | grep -q 'NAK per source 100/s burst 20: $dropped;'"

# without policing the whole flood reaches the daemon
cli "configure terminal" "no ip pgm router police-nak" "end" >/dev/null
check "the running configuration says so" eval \
	"cli 'show running-config' | grep -q '^no ip pgm router police-nak$'"
check "the summary says it is off" eval \
	"cli 'show ip pgm router' | grep -q 'NAK per source off; per interface 2000/s burst 400'"
before=$(rx_d1)
lab_exec r1 "$FLOOD" -s $R1_ADDR -d $D1_ADDR -m nak --nla-src $SRC_ADDR --nla-grp $GROUP \
	-n 1500 -r 1500 >"$LAB_DIR/flood2.log" 2>&1
check "every NAK of the second flood reached the daemon" \
	lab_poll 10 jtrue "show ip pgm router traffic json" "ifs['d1']['received']['NAK'] >= $before + 1500"
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
