#!/bin/bash
# PGM over UDP on a set of ports: `udp-encapsulation ports 3055 3056 5555 7000-7010` installs one
# set in the rules; PGM on a port of the set other than the defaults (5555, as ZeroMQ's epgm uses
# its endpoint's port for both directions) gets router assist; UDP on those ports that is not PGM
# (text that happens to match a queue rule, a datagram too short for a PGM header) goes through
# the router unchanged and is counted (udp-not-pgm), never dropped.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
# and the ports outside the sniffers' defaults
for n in src r1; do
	i=dn
	[ $n = src ] && i=s0
	lab_spawn_ready $n "$LAB_DIR/$n-p.sniff" "$LAB_DIR/$n-p.ready" "$SNIFF" --if $i --ports 5555,7005 \
		--timeout 240 --ready "$LAB_DIR/$n-p.ready" || exit 1
done
router_conf "$LAB_DIR/r.conf" "ip pgm router udp-encapsulation ports 3055 3056 5555 7000-7010" \
	"ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

check "running-config keeps the port set" eval \
	"cli 'show running-config' | grep -qx 'ip pgm router udp-encapsulation ports 3055 3056 5555 7000-7010'"
our_rules >"$LAB_DIR/rules"
check "the rules hold the port set" grep -Eq '5555|7000[-:]7010' "$LAB_DIR/rules"

# ---- UDP on the ports that is not PGM: through the router, byte for byte ----
# A receiver on r1 joined to the group on 3056 writes each payload in hex.
cat >"$LAB_DIR/udp_recv.py" <<'EOF'
import socket, struct, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("", int(sys.argv[2])))
s.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP,
	struct.pack("4s4s", socket.inet_aton(sys.argv[1]), socket.inet_aton(sys.argv[3])))
open(sys.argv[4], "w").close()
s.settimeout(60)
with open(sys.argv[5], "a") as out:
	while True:
		try:
			d = s.recv(65535)
		except socket.timeout:
			break
		out.write(d.hex() + "\n")
		out.flush()
EOF
cat >"$LAB_DIR/udp_send.py" <<'EOF'
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, 8)
s.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(sys.argv[3]))
s.sendto(bytes.fromhex(sys.argv[4]), (sys.argv[1], int(sys.argv[2])))
EOF
lab_spawn_ready r1 "$LAB_DIR/udp_recv.log" "$LAB_DIR/udp_recv.ready" python3 "$LAB_DIR/udp_recv.py" \
	$GROUP 3056 $R1_ADDR "$LAB_DIR/udp_recv.ready" "$LAB_DIR/udp_recv.out" || exit 1
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
# "ping\n...": its fifth byte, where a PGM type would be, reads as an NCF, which the rules queue
TEXT=$(hex "ping
this is not PGM, only text over UDP")
SHORT=$(hex "hi") # shorter than a PGM header: queued by length
before=$(dp "j['path'].get('udp_not_pgm', 0)")
for p in "$TEXT" "$SHORT"; do
	lab_exec src python3 "$LAB_DIR/udp_send.py" $GROUP 3056 $SRC_ADDR "$p"
done
check "both non-PGM datagrams reached r1 unchanged" lab_poll 10 eval \
	"grep -qx '$TEXT' '$LAB_DIR/udp_recv.out' && grep -qx '$SHORT' '$LAB_DIR/udp_recv.out'"
check "the data plane counted them as UDP that is not PGM" lab_poll 10 eval \
	"[ \"\$(dp \"j['path'].get('udp_not_pgm', 0)\")\" = $((before + 2)) ]"
check "... and not as malformed" test "$(dp "j['path']['malformed']")" = 0
check "the dataplane show names the counter" eval \
	"cli 'show ip pgm router dataplane' | grep -q 'UDP not PGM'"

# ---- PGM over UDP on 5555, both directions on the one port (ZeroMQ epgm) ----
inj src s0 --udp --udp-port 5555 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
check "the SPM on port 5555 is replicated with r1's path NLA" wait_seen 10 r1-p \
	"type=SPM \| SPM $TSI sqn 1 trail 1 lead 20 path $D1_ADDR .*udp-ports [0-9]+>5555" 1
inj r1 dn --udp --udp-port 5555 --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 5 \
	--nak-src $SRC_ADDR --nak-grp $GROUP
check "a NAK on port 5555 gets an NCF on r1's segment" wait_seen 10 r1-p \
	"type=NCF \| NCF $TSI sqn 5 .*udp-ports [0-9]+>5555" 1
check "... and goes upstream from the router" wait_seen 10 src-p \
	"^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn 5 .*udp-ports [0-9]+>5555" 1
inj r1 dn --udp --udp-port 7005 --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 6 \
	--nak-src $SRC_ADDR --nak-grp $GROUP
# the NCF goes to the group on the session's port (its SPMs'), the NAK upstream on the NAK's
check "a NAK on a port of the range (7005) is confirmed" wait_seen 10 r1-p \
	"type=NCF \| NCF $TSI sqn 6 .*udp-ports [0-9]+>5555" 1
check "... and forwarded upstream on its port" wait_seen 10 src-p \
	"^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $TSI sqn 6 .*udp-ports [0-9]+>7005" 1
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
