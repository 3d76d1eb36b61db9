#!/bin/bash
# same-loss: topology (d), eight receivers a1..a8 on one LAN behind r1; r1 drops 5 % of the
# ODATA it sends into LAN a, so all eight lose the same packets. 3000 messages at 1000/s over
# PGM/IP, with the source near (the lab's sub-millisecond links) and far (everything it sends
# delayed by 100 ms, lab_delay: a source across a WAN).
#
# Without router assist each receiver's NAKs go to the source, and only the source's NCF, when
# it comes back before a receiver's random back-off ends, keeps that receiver from asking too.
# With pgmrouterd the receivers NAK r1, which confirms on LAN a at once and sends one NAK per
# lost packet upstream: the sequence numbers the source is asked for per lost packet fall to
# about 1 (measured on the wire at the source, NAK lists counted per entry).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

FAR_MS=100
TITLE="eight receivers on one LAN losing the same 5 % of the ODATA, source near and $FAR_MS ms away"
TAG=same
TOPOLOGY="lan 8"
CASES="near far" # where the source is
ENCAP=ip
GROUP=239.192.0.16
COUNT=3000
RATE=1000
LOSS="a:0.05"

# far: everything the source sends, FAR_MS later.
scenario_start() {
	if [ "$2" = far ]; then lab_delay s1 "$FAR_MS"; fi
}

# Sequence numbers NAKed on LAN, times 100, per ODATA dropped.
requests_x100() {
	local n
	n=$(e2e_wire_sum "$1" "type == 8" "1 + nlist")
	awk -v n="$n" -v d="$2" 'BEGIN { printf "%d", d ? 100 * n / d : 0 }'
}

checks_common() {
	local dropped=$1 r
	for r in $TOPO_RECEIVERS; do
		e2e_check_complete "$r"
		e2e_check_recovered "$dropped" "$r"
	done
	# 5 % of 3000: mean 150, standard deviation 12; 90..210 is 5 deviations.
	e2e_check_loss a "$dropped" 90 210
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
}

# Without router assist near the source, the source's NCF (multicast back to the whole LAN)
# arrives well within the receivers' random back-off (up to 50 ms), so most of them stay quiet:
# measured 1.12..1.19 sequence numbers NAKed per lost packet. With the source 100 ms away every
# receiver NAKs before any NCF can come back: measured 9.9 (eight receivers, each repeating
# part of its NAK lists), and the source repairs each packet several times (measured 7x).
checks_without() {
	local dropped=$1 where=$2
	e2e_check "NAK on src = NAK on a (no elimination)" "$(e2e_c src nak)" -eq "$(e2e_c a nak)"
	if [ "$where" = far ]; then
		e2e_check "SQNs NAKed at the source per lost packet x100 >= 500 (8 receivers)" \
			"$(requests_x100 src "$dropped")" -ge 500
		e2e_check "RDATA from the source >= 2 x dropped (repeated repairs)" \
			"$(e2e_c src rdata)" -ge $((2 * dropped))
	fi
}

# With pgmrouterd the receivers NAK r1, which confirms at once on LAN a (its NCFs suppress the
# other receivers near or far) and forwards each sequence number once: measured 1.00 near and
# far; the source repairs each lost packet once.
checks_with() {
	local dropped=$1
	e2e_check "SQNs NAKed at the source per lost packet x100 <= 115" \
		"$(requests_x100 src "$dropped")" -le 115
	e2e_check "SQNs NAKed at the source per lost packet x100 >= 100" \
		"$(requests_x100 src "$dropped")" -ge 100
	e2e_check "RDATA from the source <= dropped + 10 %" "$(e2e_c src rdata)" \
		-le $((dropped + dropped / 10))
	e2e_check "NAKs on a = NAKs r1 received" "$(e2e_c a nak)" -eq "$(e2e_rt r1 eth1 received NAK)"
	e2e_check "NAKs on src = NAKs r1 sent upstream" "$(e2e_c src nak)" \
		-eq "$(e2e_rt r1 eth0 sent NAK)"
	e2e_check "NCFs on a = r1's ncf-sent" "$(e2e_c a ncf)" -eq "$(e2e_rt r1 eth1 events ncf-sent)"
	e2e_router_checks
}

scenario_record() {
	local variant=$1 dropped=${E2E_DROPPED[0]}
	e2e_record "$variant" "$E2E_CASE_PREFIX NAK packets on a / on src" "$(e2e_c a nak) / $(e2e_c src nak)"
	e2e_record "$variant" "$E2E_CASE_PREFIX SQNs NAKed on a per lost packet" \
		"$(awk -v n="$(requests_x100 a "$dropped")" 'BEGIN { printf "%.2f", n / 100 }')"
	e2e_record "$variant" "$E2E_CASE_PREFIX SQNs NAKed at the source per lost packet" \
		"$(awk -v n="$(requests_x100 src "$dropped")" 'BEGIN { printf "%.2f", n / 100 }')"
}

e2e_run
