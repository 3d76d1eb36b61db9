#!/bin/bash
# ipv6-loss: branch-loss over IPv6. Topology (a) in the IPv6 lab (LAB_IPV6=1: 2001:db8:k::/64 on
# LAN k, no IPv4 at all), one router r1 with smcroute's IPv6 (S,G) route, source s1 on LAN src,
# receivers a1 a2 on LAN a and b1 b2 on LAN b; r1 drops 5 % of the ODATA it sends into LAN a
# (ip6tables). One OpenPGM stream of 3000 messages at 1000/s to ff0e::8000:11, over PGM/IP.
#
# The checks are branch-loss's (every receiver complete, the lossy ones recovering exactly the
# dropped messages, the loss-free LAN b without repairs with pgmrouterd and with every repair
# without it), every count on the wire matched against r1's own counters and every frame r1
# sends decoded by tshark (e2e_router_checks), and same-loss's: with pgmrouterd the source is
# asked for each lost packet about once.
export LAB_IPV6=1 # the lab (tests/lab/lib.sh) reads it
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="IPv6: one router, 5 % ODATA loss into LAN a, 3000 messages, PGM/IP"
TAG=v6
TOPOLOGY="one_router 2"
CASES="ip"
GROUP=ff0e::8000:11
COUNT=3000
RATE=1000
LOSS="a:0.05"
SEGMENTS="odata rdata nak naklist ncf spm"

# Sequence numbers NAKed on LAN, times 100, per ODATA dropped.
requests_x100() {
	local n
	n=$(e2e_wire_sum "$1" "type == 8" "1 + nlist")
	awk -v n="$n" -v d="$2" 'BEGIN { printf "%d", d ? 100 * n / d : 0 }'
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	# 5 % of 3000: mean 150, standard deviation 12; 3 %..7 % (90..210) is 5 deviations.
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_recovered "$dropped" a1 a2
	e2e_check_no_repair b1 b2
	e2e_check "ODATA on b = messages sent" "$(e2e_c b odata)" -eq "$COUNT"
	e2e_check "ODATA on a = sent - dropped" "$(e2e_c a odata)" -eq $((COUNT - dropped))
	e2e_check "no NAK on loss-free b" "$(e2e_c b nak)" -eq 0
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "RDATA from the source <= dropped + 20 %" "$(e2e_c src rdata)" \
		-le $((dropped + dropped / 5 + 2))
	e2e_check "RDATA on a >= dropped" "$(e2e_c a rdata)" -ge "$dropped"
}

checks_without() {
	e2e_check "RDATA on a = RDATA from the source" "$(e2e_c a rdata)" -eq "$(e2e_c src rdata)"
	e2e_check "RDATA on loss-free b = RDATA on a (no constraint)" \
		"$(e2e_c b rdata)" -eq "$(e2e_c a rdata)"
	e2e_check "NAK on src = NAK on a (no elimination)" "$(e2e_c src nak)" -eq "$(e2e_c a nak)"
}

# As branch-loss's checks_with, and the source asked for each lost packet about once (same-loss:
# 1.00 measured over IPv4).
checks_with() {
	local dropped=$1 src=$TOPO_SOURCE_ADDR
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
	e2e_check "no NCF on loss-free b (NCFs are not forwarded)" "$(e2e_c b ncf)" -eq 0
	e2e_check "NAKs on src = NAKs r1 sent on eth0" "$(e2e_c src nak)" \
		-eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_check "NAK on src <= NAK on a (elimination)" "$(e2e_c src nak)" -le "$(e2e_c a nak)"
	e2e_check "NAKs on src naming anything but the source in NAK_SRC" \
		"$(e2e_wire_count src "type == 8 && naksrc != \"$src\"")" -eq 0
	e2e_check "SQNs NAKed at the source per lost packet x100 <= 115" \
		"$(requests_x100 src "$dropped")" -le 115
	e2e_check "SQNs NAKed at the source per lost packet x100 >= 100" \
		"$(requests_x100 src "$dropped")" -ge 100
	e2e_router_checks
}

scenario_record() {
	local variant=$1 dropped=${E2E_DROPPED[0]}
	e2e_record "$variant" "$E2E_CASE_PREFIX SQNs NAKed on a per lost packet" \
		"$(awk -v n="$(requests_x100 a "$dropped")" 'BEGIN { printf "%.2f", n / 100 }')"
	e2e_record "$variant" "$E2E_CASE_PREFIX SQNs NAKed at the source per lost packet" \
		"$(awk -v n="$(requests_x100 src "$dropped")" 'BEGIN { printf "%.2f", n / 100 }')"
}

e2e_run
