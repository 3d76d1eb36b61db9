#!/bin/bash
# zmq: ZeroMQ PUB/SUB across the router namespace of topology (a): zmq-pub on s1, zmq-sub on
# a1 a2 b1 b2, 2 % ODATA loss into LAN a, 2000 messages at 500/s, over epgm:// (PGM in UDP,
# port 5555) and pgm:// (PGM over IP). ZMQ_MULTICAST_HOPS is 16 in both peers.
#
# Every subscriber must get every message exactly once and in order. ZeroMQ does not say which
# messages came from repairs, so recovery is judged on the wire: every dropped ODATA must be
# matched by at least one RDATA.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="ZeroMQ epgm:// and pgm:// across one router, 2 % ODATA loss into LAN a"
TAG=zmq
TOPOLOGY="one_router 2"
STREAM=zmq
CASES="epgm pgm"
GROUP=239.192.0.12
COUNT=2000
RATE=500
LOSS="a:0.02"

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	# 2 % of 2000: mean 40, standard deviation 6.3; 10..80 is more than 4.7 deviations.
	e2e_check_loss a "$dropped" 10 80
	e2e_check "ODATA on b = ODATA on src" "$(e2e_c b odata)" -eq "$(e2e_c src odata)"
	e2e_check "ODATA on a = ODATA on src - dropped" "$(e2e_c a odata)" \
		-eq $(($(e2e_c src odata) - dropped))
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "no NAK on loss-free b" "$(e2e_c b nak)" -eq 0
}

checks_without() {
	e2e_check "RDATA on loss-free b = RDATA on src (no constraint)" "$(e2e_c b rdata)" \
		-eq "$(e2e_c src rdata)"
	e2e_check "NAK on src = NAK on a (no elimination)" "$(e2e_c src nak)" -eq "$(e2e_c a nak)"
}

# Router assist for ZeroMQ's PGM (epgm: in UDP on port 5555, which the lab's router config
# intercepts; pgm: over IP): r1 sees the NAKs (its counters match the wire), confirms them on a,
# keeps repairs off b and eliminates duplicates upstream.
checks_with() {
	e2e_check "RDATA on loss-free b <= 2 % of RDATA on a" "$(e2e_c b rdata)" \
		-le "$(e2e_scale "$(e2e_c a rdata)" 2)"
	e2e_check "RDATA on a = RDATA r1 forwarded into a" "$(e2e_c a rdata)" \
		-eq "$(e2e_rt r1 eth1 events rdata-forwarded)"
	e2e_check "NAKs on a = NAKs r1 received on eth1 (>= 1)" "$(e2e_rt r1 eth1 received NAK)" \
		-eq "$(e2e_c a nak)"
	e2e_check "r1 received NAKs on eth1 (>= 1)" "$(e2e_rt r1 eth1 received NAK)" -ge 1
	e2e_check "NCFs on a = r1's ncf-sent on eth1" "$(e2e_c a ncf)" \
		-eq "$(e2e_rt r1 eth1 events ncf-sent)"
	e2e_check "NAK on src <= NAK on a (elimination)" "$(e2e_c src nak)" -le "$(e2e_c a nak)"
	e2e_check "NAKs on src = NAKs r1 sent on eth0" "$(e2e_c src nak)" \
		-eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_router_checks
}

e2e_run
