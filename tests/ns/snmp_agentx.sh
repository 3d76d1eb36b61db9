#!/bin/bash
# The PGM MIB over AgentX: a real snmpd in the router's namespace (its own configuration, SNMP
# and the AgentX master on the namespace's loopback only), pgmrouterd as its subagent
# (`snmp-server agentx port N`), PGM traffic through the router (an SPM, NAKs from r1), then,
# with the traffic stopped, snmpwalk of pgmNetworkElement against the CLI's JSON of the same
# moment: the settings, the interface tables, the TSI tables and their entry counts. Then: a
# SET is refused, an absent instance is noSuchInstance, the subagent finds a restarted snmpd
# again (within 5 s), a stopped snmpd does not hold up the daemon, and `no snmp-server agentx` takes the
# branch away.
. "$(dirname "$0")/lib_router.sh"
router_need
for p in snmpd snmpwalk snmpget snmpset snmptranslate; do
	command -v $p >/dev/null || {
		log "needs $p (make deps: snmpd, snmp)"
		exit 1
	}
done
MIBDIR="$LAB_REPO/router/snmp"
AX_PORT=7050
SNMP_PORT=1161
NE=.1.3.6.1.3.112.1.1
SNMP=(-v2c -c pgmtest -On -Oq -Oe -Ot -t 2 -r 1 "udp:127.0.0.1:$SNMP_PORT")

# The MIB file parses where the SMI's own modules are installed (Debian: snmp-mibs-downloader).
if snmptranslate -m SNMPv2-SMI -On SNMPv2-SMI::experimental >/dev/null 2>&1; then
	check "the MIB file parses: pgmNeTsiInNaks is $NE.101.4.1.18" test \
		"$(snmptranslate -M "+$MIBDIR" -m +PGM-MIB -On PGM-MIB::pgmNeTsiInNaks 2>&1)" = "$NE.101.4.1.18"
else
	log "skip: the MIB file's parse (no SNMPv2-SMI module installed)"
fi

topo_router
lab_exec rtr ip link set lo up
mkdir -p "$LAB_DIR/snmp"
cat >"$LAB_DIR/snmpd.conf" <<EOF
agentAddress udp:127.0.0.1:$SNMP_PORT
master agentx
agentXSocket tcp:127.0.0.1:$AX_PORT
rocommunity pgmtest 127.0.0.1
EOF
snmpd_start() {
	lab_spawn rtr "$LAB_DIR/snmpd.log" env SNMP_PERSISTENT_DIR="$LAB_DIR/snmp" \
		snmpd -f -Lo -C -c "$LAB_DIR/snmpd.conf" -p "$LAB_DIR/snmpd.pid"
	SNMPD_PID=$LAB_PID
	lab_wait 10 "snmpd in rtr" sh -c "ip netns exec $(lab_ns rtr) snmpget ${SNMP[*]} .1.3.6.1.2.1.1.3.0 >/dev/null 2>&1"
}
snmpd_start || exit 1
walk() { lab_exec rtr snmpwalk "${SNMP[@]}" "$NE" 2>&1; }
get() { lab_exec rtr snmpget "${SNMP[@]}" "$@" 2>&1; }
# served: at least one instance of the branch in a walk
served() { walk | grep -q "^$NE\."; }

router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-interval 60000" \
	"ip pgm router nak-eliminate-interval 60000" "ip pgm router nak-rdata-interval 600000" \
	"ip pgm router max-sessions 100" "snmp-server agentx port $AX_PORT"
router_start "$LAB_DIR/r.conf" || exit 1
check "running-config has snmp-server agentx port $AX_PORT" \
	eval "cli 'show running-config' | grep -qx 'snmp-server agentx port $AX_PORT'"
check "the subagent registered pgmNetworkElement with snmpd" lab_poll 15 served

# ---- traffic: an SPM (the session), NAKs from r1 (NCFs, a NAK upstream) ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
check "the session exists" lab_poll 5 jtrue "show ip pgm router state json" "len(sess) == 1"
for sqn in 5 6 7; do
	inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn $sqn --nak-src $SRC_ADDR --nak-grp $GROUP
done
check "three NAKs confirmed" wait_ev 10 d1 ncf-sent 3
# the source confirms them: the upstream NAK is no longer repeated, the traffic stops
for sqn in 5 6 7; do
	inj src s0 --src $SRC_ADDR --dst $GROUP --type ncf --sqn $sqn --ra --ttl 255
done
check "the source's NCFs arrived" wait_rx 10 up0 NCF 3
sleep 1.2 # the MIB view is at most a second old: the walk below sees the stopped traffic

# ---- the same moment: the JSON shows and one walk ----
cli "show ip pgm router json" >"$LAB_DIR/summary.json"
cli "show ip pgm router interface json" >"$LAB_DIR/interface.json"
cli "show ip pgm router traffic json" >"$LAB_DIR/traffic.json"
cli "show ip pgm router state json" >"$LAB_DIR/state.json"
walk >"$LAB_DIR/walk.txt"
log "walk: $(grep -c "^$NE" "$LAB_DIR/walk.txt") instances"
cat >"$LAB_DIR/compare.py" <<'EOF'
import json, sys
d = sys.argv[1]
ne = ".1.3.6.1.3.112.1.1"
mib = {}
for line in open(d + "/walk.txt"):
    parts = line.split(None, 1)
    if len(parts) == 2 and parts[0].startswith(ne + "."):
        mib[parts[0][len(ne) + 1:]] = parts[1].strip().strip('"')
load = lambda n: json.load(open(d + "/" + n + ".json"))
summary, interfaces, traffic, state = load("summary"), load("interface"), load("traffic"), load("state")
bad = []
served = set()
def eq(what, oid, want):
    served.add(oid)
    got = mib.get(oid)
    if got != str(want):
        bad.append("%s (%s): snmp %r, json %r" % (what, oid, got, want))
limit = lambda v: -1 if v == 0 else v
eq("pgmNeEnable", "1.0", 1 if summary["running"] else 2)
eq("pgmNeSessionLifeTime", "2.0", summary["session_lifetime"])
eq("pgmNeMaxReXmitStates", "3.0", limit(summary["max_rexmit_states"]))
eq("pgmNeMaxSessions", "4.0", limit(summary["max_sessions"]))
ifindex = {}
for i in interfaces["interfaces"]:
    x = i["ifindex"]
    ifindex[i["name"]] = x
    eq(i["name"] + " pgmNeIfPgmEnable", "100.3.1.2.%d" % x, 1 if i["router_assist"] else 2)
    eq(i["name"] + " pgmNeIfNakRptInterval", "100.3.1.3.%d" % x, i["nak_repeat_interval"])
    eq(i["name"] + " pgmNeIfNakRptRate", "100.3.1.4.%d" % x, i["nak_repeat_rate"])
    eq(i["name"] + " pgmNeIfNakRdataInterval", "100.3.1.5.%d" % x, i["nak_rdata_interval"])
    eq(i["name"] + " pgmNeIfNakEliminateInterval", "100.3.1.6.%d" % x, i["nak_eliminate_interval"])
rows = {k.split(".")[-1] for k in mib if k.startswith("100.3.1.2.")}
eq("pgmNeTotalInterfacesNumberOfEntries", "100.1.0", len(rows))
cols = {4: ("received", "SPM"), 5: ("sent", "SPM"), 8: ("received", "RDATA"),
        9: ("sent", "RDATA"), 14: ("received", "NAK"), 15: ("sent", "NAK"),
        22: ("received", "NNAK"), 23: ("sent", "NNAK"), 27: ("received", "NCF"),
        28: ("sent", "NCF"), 13: ("events", "nak-unique"), 55: ("events", "nak-eliminated"),
        35: ("events", "spm-bad-sqn"), 19: ("events", "nak-no-session")}
for i in traffic["interfaces"]:
    x = ifindex[i["name"]]
    for col, (kind, key) in cols.items():
        eq("%s %s %s" % (i["name"], kind, key), "100.4.1.%d.%d" % (col, x), i[kind][key])
    eq(i["name"] + " pgmNeIfMalformed", "100.4.1.33.%d" % x, sum(i["errors"].values()))
sessions = state["sessions"]
eq("pgmNeTotalTsiNumberOfEntries", "101.1.0", len(sessions))
for s in sessions:
    gsi, port = s["tsi"].split(".")
    idx = ".".join(str(ord(c)) for c in gsi) + "." + port
    t = "101.2.1.%d." + idx
    p = "101.4.1.%d." + idx
    eq("dport", t % 4, s["dport"])
    eq("source", t % 5, s["source"])
    eq("group", t % 6, s["group"])
    eq("upstream", t % 7, s["upstream"])
    eq("upstream ifindex", t % 8, ifindex[s["upstream_interface"]])
    eq("trail", p % 3, s["trail"])
    eq("lead", p % 5, s["lead"])
    eq("repair states", p % 10, s["repair_states"])
    eq("unique NAKs", p % 17, s["counters"]["nak-unique"])
    eq("SPM sqn", p % 32, s["spm_sqn"])
    eq("TG size", p % 33, s["tg_size"])
    eq("last TTL", p % 35, s["ttl"])
# what the test reads must be live: NAKs and NCFs counted
if not any(i["events"]["ncf-sent"] >= 3 for i in traffic["interfaces"]):
    bad.append("no NCFs counted: no traffic went through")
for b in bad:
    print("mismatch: " + b)
print("compared %d values, %d mismatches" % (len(served), len(bad)))
sys.exit(1 if bad else 0)
EOF
check "snmpwalk equals the CLI's JSON (settings, interfaces, TSIs, entry counts)" \
	python3 "$LAB_DIR/compare.py" "$LAB_DIR"
check "the session's GlobalId index reads as the CLI's TSI (010203040506.1234)" \
	grep -q "^$NE\.101\.2\.1\.5\.48\.49\.48\.50\.48\.51\.48\.52\.48\.53\.48\.54\.1234 $SRC_ADDR\$" "$LAB_DIR/walk.txt"
check "snmpget of a live counter: NCFs out of d1 equal the JSON's" eval \
	"[ \"\$(get $NE.100.4.1.28.$(lab_exec rtr cat /sys/class/net/d1/ifindex) | awk '{print \$2}')\" = \
	  \"\$(jval 'show ip pgm router traffic json' \"ifs['d1']['sent']['NCF']\")\" ]"
check "an absent instance: noSuchInstance" eval "get $NE.100.3.1.2.999999 | grep -q 'No Such Instance'"
check "a SET is refused (read-only)" eval "! lab_exec rtr snmpset ${SNMP[*]} $NE.2.0 u 60 >'$LAB_DIR/set.out' 2>&1 && grep -qi 'notWritable\|not writable\|noAccess' '$LAB_DIR/set.out'"

# ---- snmpd restarts: the subagent connects again ----
kill "$SNMPD_PID"
lab_wait_pid "$SNMPD_PID" 5 >/dev/null
snmpd_start || exit 1
check "after an snmpd restart the branch is served again (the subagent reconnects)" \
	lab_poll 20 served

# ---- snmpd stopped (SIGSTOP): the daemon still answers at once ----
kill -STOP "$SNMPD_PID"
slow=0
for _ in $(seq 1 24); do
	t0=$(date +%s%N)
	cli "show ip pgm router json" >/dev/null
	ms=$((($(date +%s%N) - t0) / 1000000))
	[ "$ms" -gt "$slow" ] && slow=$ms
	sleep 0.5
done
kill -CONT "$SNMPD_PID"
log "slowest CLI answer with snmpd stopped for 12 s: $slow ms"
# (the subagent sends no AgentX pings, which net-snmp waits for: with them, this stalled the
# daemon until snmpd went on; a CLI answer on a loaded machine alone can take most of 1 s)
check "with snmpd stopped, every CLI answer within 2 s (slowest $slow ms)" test "$slow" -le 2000
check "the daemon is still running" kill -0 "$DAEMON_PID"

# ---- no snmp-server agentx: the branch goes away ----
cli "configure terminal" "no snmp-server agentx" "end" >/dev/null
check "no snmp-server agentx: the branch is no longer served" lab_poll 10 sh -c \
	"! ip netns exec $(lab_ns rtr) snmpwalk ${SNMP[*]} $NE 2>&1 | grep -q '^$NE\.'"
check "running-config has no snmp-server line" eval "! cli 'show running-config' | grep -q snmp-server"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
