#!/bin/bash
# branch-loss: topology (a), one router r1, source s1 on LAN src, receivers a1 a2 on LAN a and
# b1 b2 on LAN b. r1 drops 5 % of the ODATA it sends into LAN a. One OpenPGM stream of 5000
# messages at 1000/s, over PGM/IP, over PGM/UDP and over PGM/IP with Router Alert switched on in
# source and receivers (OpenPGM then sets it on SPM, RDATA, NCF and single NAKs; not on ODATA
# and not on NAKs with OPT_NAK_LIST).
#
# Without router assist every receiver must still get every message exactly once and in order,
# the lossy receivers recovering exactly the dropped messages; and the loss-free LAN b carries
# every repair too, because plain multicast forwarding sends RDATA down every branch.
# With pgmrouterd, checks_with states what RFC 3208 router assist must change: repairs constrained
# to the branch that asked for them, NAKs confirmed by r1 and eliminated upstream; every count on
# the wire is matched against r1's own counters (show ip pgm router traffic json) and every frame
# r1 sends is decoded by tshark (e2e_router_checks).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="one router, 5 % ODATA loss into LAN a, 5000 messages, PGM/IP, PGM/UDP, PGM/IP with Router Alert"
TAG=bl
TOPOLOGY="one_router 2"
CASES="ip udp ip-ra ip-pim"
GROUP=239.192.0.11
COUNT=5000
RATE=1000
LOSS="a:0.05"
SEGMENTS="odata rdata nak naklist ncf spm"

# Checks that hold whether or not a router assists.
checks_common() {
	local dropped=$1
	e2e_check_all_complete
	# 5 % of 5000: mean 250, standard deviation 15; 3 %..7 % is more than 6 deviations.
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_recovered "$dropped" a1 a2
	e2e_check_no_repair b1 b2
	e2e_check "ODATA on b = messages sent" "$(e2e_c b odata)" -eq "$COUNT"
	e2e_check "ODATA on a = sent - dropped" "$(e2e_c a odata)" -eq $((COUNT - dropped))
	e2e_check "no NAK on loss-free b" "$(e2e_c b nak)" -eq 0
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	# Duplicate repairs (a NAK repeated before its RDATA arrived) stay rare: at most 20 % more.
	e2e_check "RDATA from the source <= dropped + 20 %" "$(e2e_c src rdata)" \
		-le $((dropped + dropped / 5 + 2))
	e2e_check "RDATA on a >= dropped" "$(e2e_c a rdata)" -ge "$dropped"
}

# Plain forwarding: every repair and every NCF reaches every branch; NAKs pass unchanged.
checks_without() {
	e2e_check "RDATA on a = RDATA from the source" "$(e2e_c a rdata)" -eq "$(e2e_c src rdata)"
	e2e_check "RDATA on loss-free b = RDATA on a (no constraint)" \
		"$(e2e_c b rdata)" -eq "$(e2e_c a rdata)"
	e2e_check "NCF on b = NCF on src" "$(e2e_c b ncf)" -eq "$(e2e_c src ncf)"
	e2e_check "NAK on src = NAK on a (no elimination)" "$(e2e_c src nak)" -eq "$(e2e_c a nak)"
}

# Router assist (RFC 3208 section 7), each wire count matched by r1's own counters (eth0 on src,
# eth1 on a, eth2 on b): repairs go only where NAKs came from; r1 confirms every NAK on a, but
# withholds identical NCFs within its ncf-interval (7.2 storm protection, counted as
# ncf-rate-limited), so NCFs on a can be fewer than NAKs on a; it forwards NAKs upstream after
# eliminating duplicates, with the source's address in NAK_SRC where OpenPGM's receivers put
# r1's (nak-src-path); NCFs are never forwarded.
checks_with() {
	local src=$TOPO_SOURCE_ADDR
	# A repair the source sends twice finds no repair state the second time: r1 drops it.
	e2e_check "RDATA on a <= RDATA from the source" "$(e2e_c a rdata)" -le "$(e2e_c src rdata)"
	e2e_check "RDATA on loss-free b <= 2 % of RDATA on a" "$(e2e_c b rdata)" \
		-le "$(e2e_scale "$(e2e_c a rdata)" 2)"
	e2e_check "RDATA on a = RDATA r1 forwarded into a" "$(e2e_c a rdata)" \
		-eq "$(e2e_rt r1 eth1 events rdata-forwarded)"
	e2e_check "RDATA on b = RDATA r1 forwarded into b" "$(e2e_c b rdata)" \
		-eq "$(e2e_rt r1 eth2 events rdata-forwarded)"
	e2e_check "NAKs on a = NAKs r1 received on eth1" "$(e2e_c a nak)" \
		-eq "$(e2e_rt r1 eth1 received NAK)"
	e2e_check "NCFs on a = r1's ncf-sent on eth1 (none from the source)" "$(e2e_c a ncf)" \
		-eq "$(e2e_rt r1 eth1 events ncf-sent)"
	e2e_check "ncf-sent + ncf-rate-limited on eth1 >= NAKs on a" \
		$(($(e2e_rt r1 eth1 events ncf-sent) + $(e2e_rt r1 eth1 events ncf-rate-limited))) \
		-ge "$(e2e_c a nak)"
	e2e_check "no NCF on loss-free b (NCFs are not forwarded)" "$(e2e_c b ncf)" -eq 0
	e2e_check "NAKs on src = NAKs r1 sent on eth0" "$(e2e_c src nak)" \
		-eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_check "NAK on src <= NAK on a (elimination)" "$(e2e_c src nak)" -le "$(e2e_c a nak)"
	e2e_check "NAKs on a naming r1 in NAK_SRC = NAKs on a (OpenPGM, nak-src-path)" \
		"$(e2e_rt r1 eth1 events nak-src-path)" -eq "$(e2e_c a nak)"
	e2e_check "NAKs on src naming anything but the source in NAK_SRC" \
		"$(e2e_wire_count src "type == 8 && naksrc != \"$src\"")" -eq 0
	e2e_router_checks
}

e2e_run
