#!/bin/bash
# zmq-flap-end: the router's upstream link flapped over the end of a ZeroMQ stream (the soak's
# finding: c1 and d1 lost a stream's tail to a flap in its last second). Topology (a), no loss
# but the flap's; ZeroMQ epgm:// (PGM in UDP, port 5555), 1500 messages at 100/s, the publisher
# lingering 30 s after its last message (as in the soak). Manual (a file `manual` says why).
#
#   stream   until every subscriber has 1400 messages (1 s before the last is sent)
#   flap     r1's eth0 (towards the source LAN) down for 3 s, then up: the last second of ODATA
#            and the source's first SPMs after it are lost
#   after    the subscribers learn of the tail from the source's next SPM and NAK it
#
# Two cases: "idle", the publisher sends nothing after its last message (as an application
# would); "awake", it sends 10 messages a second of another run id while it lingers (zmq-pub
# --linger-rate; the subscribers ignore them). The rows give, per LAN, when the source's SPMs
# and the NAKs, NCFs and RDATA went by, in seconds from the link coming back, and the longest a
# NAK on the source's LAN waited for the source's next RDATA: what tells the source's part
# (NAKs reach it, no answer) from the router's (no NAK forwarded, or repairs not forwarded).
# Asserted: the subscribers NAK the tail after the flap (it is detected); r1 forwards their NAKs
# to the source; with the publisher awake, every subscriber completes in both variants. Idle,
# the publisher answers late or never and the subscribers give up (tests/soak/README, Flaps and
# the stream's end): recorded, not asserted.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="ZeroMQ epgm://, r1's upstream link flapped for 3 s over the stream's end"
TAG=zmqflap
TOPOLOGY="one_router 2"
STREAM=zmq
ENCAP=epgm
CASES="idle awake"
GROUP=239.192.0.26
COUNT=1500
RATE=100
LIMIT=60
RECV_ARGS=(--progress 100)
FLAP_AT=$((COUNT - RATE))

T_DOWN="" T_UP="" REPAIR_WAIT="" NAKS_AFTER=0

scenario_stream() {
	local variant=$1 case=$2
	SEND_ARGS=(--linger 30000)
	[ "$case" = awake ] && SEND_ARGS+=(--linger-rate 10)
	e2e_case_stream_start
	lab_wait 40 "$FLAP_AT messages everywhere" e2e_delivered_all "$FLAP_AT"
	T_DOWN=$(date +%s.%N)
	lab_exec r1 ip link set eth0 down
	sleep 3
	lab_exec r1 ip link set eth0 up
	T_UP=$(date +%s.%N)
	e2e_stream_finish
}

# times LAN TYPE: the seconds (from the link coming back) at which frames of a PGM type went by on
# a LAN, comma-separated; at most the first eight.
times() {
	e2e_tshark "$LAB_DIR/wire.$1.pcap" -T fields -e frame.time_epoch -Y "pgm.hdr.type == $2" |
		awk -v up="$T_UP" '{ t = $1 - up; if (t > -1.5) { n++; if (n <= 8) s = s sprintf("%s%.1f", n > 1 ? "," : "", t) } }
			END { printf "%s%s\n", (n ? s : "none"), (n > 8 ? sprintf(" (+%d)", n - 8) : "") }'
}

# after LAN TYPE: frames of a PGM type on a LAN after the link came back.
after() {
	e2e_tshark "$LAB_DIR/wire.$1.pcap" -T fields -e frame.time_epoch -Y "pgm.hdr.type == $2" |
		awk -v up="$T_UP" '$1 > up { n++ } END { print n + 0 }'
}

# repair_wait: on the source LAN after the flap, the longest a NAK waited for the source's next
# RDATA (s; to the capture's end when none came), and the RDATA the source sent.
repair_wait() {
	e2e_tshark "$LAB_DIR/wire.src.pcap" -T fields -e frame.time_epoch -e pgm.hdr.type \
		-Y "pgm.hdr.type == 0x05 || pgm.hdr.type == 0x08" |
		awk -v up="$T_UP" '$1 > up - 1.5 {
				if ($2 == "0x08") { if (!waiting) since = $1; waiting = 1 }
				else { n++; if (waiting && $1 - since > worst) worst = $1 - since; waiting = 0 }
				last = $1 }
			END { if (waiting && last - since > worst) worst = last - since
				printf "%.1f / %d\n", worst, n }'
}

scenario_record() {
	local variant=$1 case=$2 lan
	e2e_record "$variant" "$case flap: r1 eth0 down for (s)" \
		"$(awk -v d="$T_DOWN" -v u="$T_UP" 'BEGIN { printf "%.1f", u - d }')"
	for lan in src a b; do
		e2e_record "$variant" "$case $lan: SPM at (s from the link's return)" "$(times "$lan" 0x00)"
		e2e_record "$variant" "$case $lan: NAK at" "$(times "$lan" 0x08)"
		e2e_record "$variant" "$case $lan: NCF at" "$(times "$lan" 0x0a)"
		e2e_record "$variant" "$case $lan: RDATA at" "$(times "$lan" 0x05)"
	done
	REPAIR_WAIT=$(repair_wait)
	NAKS_AFTER=$(($(after a 0x08) + $(after b 0x08)))
	e2e_record "$variant" "$case source: longest wait of a NAK for its next RDATA (s) / RDATA" \
		"$REPAIR_WAIT"
}

checks_common() {
	local case=$2
	e2e_check "the subscribers NAKed after the link came back (the tail is detected)" \
		"$NAKS_AFTER" -ge 1
	[ "$case" = awake ] && e2e_check_all_complete
	return 0
}
checks_without() { :; }
checks_with() {
	e2e_check "r1 forwarded NAKs to the source: NAKs on src = r1's NAKs out on eth0 (>= 1)" \
		"$(e2e_c src nak)" -eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_check "r1 sent NAKs upstream (>= 1)" "$(e2e_rt r1 eth0 sent NAK)" -ge 1
	e2e_check "r1: no packet error" "$(e2e_rt_errors r1)" -eq 0
}

e2e_run
