#!/bin/bash
# tree-loss: topology (c), source s1, core router, edge routers e1 (LANs a, b) and e2 (LANs c, d),
# two receivers per LAN. e1 drops 5 % of the ODATA into LAN a; core drops 3 % of the ODATA into
# trunk t2 (so c and d both lose it). 3000 messages at 1000/s over PGM/IP.
#
# Without router assist every segment carries every repair, b included, which lost nothing.
# With pgmrouterd, checks_with states the RFC 3208 expectations, matched against the routers'
# own counters.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="core and two edge routers, four receiver LANs, loss into LAN a and trunk t2"
TAG=tree
TOPOLOGY="tree 2"
GROUP=239.192.0.14
COUNT=3000
RATE=1000
LOSS="a:0.05 t2:0.03"

checks_common() {
	local drop_a=$1 drop_t2=$2 r
	e2e_check_all_complete
	for r in a1 a2; do
		e2e_check "$r recovered exactly the ODATA dropped into a" \
			"$(e2e_r "$r" recovered)" -eq "$drop_a"
	done
	e2e_check_no_repair b1 b2
	for r in c1 c2 d1 d2; do
		e2e_check "$r recovered exactly the ODATA dropped into t2" \
			"$(e2e_r "$r" recovered)" -eq "$drop_t2"
	done
	# 5 % and 3 % of 3000: means 150 and 90, deviations 12 and 9.3; bounds are 5 deviations.
	e2e_check_loss a "$drop_a" 90 210
	e2e_check_loss t2 "$drop_t2" 43 137
	e2e_check "no NAK on loss-free b" "$(e2e_c b nak)" -eq 0
	e2e_check "RDATA from the source >= the larger loss" "$(e2e_c src rdata)" -ge \
		"$((drop_a > drop_t2 ? drop_a : drop_t2))"
}

checks_without() {
	local lan
	for lan in t1 t2 a b c d; do
		e2e_check "RDATA on $lan = RDATA on src (no constraint)" "$(e2e_c "$lan" rdata)" \
			-eq "$(e2e_c src rdata)"
	done
}

# Router assist: each repair goes only down the branches that asked for it (b gets none; t1
# carries a's repairs and t2 the repairs of c and d, each fewer than the source sent); e2 hears
# the same losses from c and from d and eliminates duplicates while a repair is pending. Wire counts match the routers' own counters (e2e_router_checks).
checks_with() {
	local drop_t2=$2 lan
	e2e_check "RDATA on loss-free b <= 2 % of RDATA on a" "$(e2e_c b rdata)" \
		-le "$(e2e_scale "$(e2e_c a rdata)" 2)"
	e2e_check "RDATA on b = RDATA e1 forwarded into b" "$(e2e_c b rdata)" \
		-eq "$(e2e_rt e1 eth2 events rdata-forwarded)"
	e2e_check "RDATA on t1 < RDATA on src (only a's repairs)" "$(e2e_c t1 rdata)" \
		-lt "$(e2e_c src rdata)"
	e2e_check "RDATA on t2 < RDATA on src (only the repairs of c and d)" "$(e2e_c t2 rdata)" \
		-lt "$(e2e_c src rdata)"
	for lan in c d; do
		e2e_check "RDATA on $lan >= ODATA dropped into t2" "$(e2e_c "$lan" rdata)" -ge "$drop_t2"
		e2e_check "RDATA on $lan <= ODATA dropped into t2 + 10 %" "$(e2e_c "$lan" rdata)" \
			-le $((drop_t2 + drop_t2 / 10))
	done
	e2e_check "NAK on src <= NAK on t1 + NAK on t2" "$(e2e_c src nak)" \
		-le $(($(e2e_c t1 nak) + $(e2e_c t2 nak)))
	# c and d NAK the same sequence numbers. e2 eliminates the second NAK only while the first
	# is still waiting for its repair; the receivers' random back-off (up to 50 ms) is much
	# longer than the round trip to the source, so the second usually comes after the RDATA
	# went by (to the first LAN only) and is a new request, forwarded (7.8): few eliminations.
	e2e_check "NAK on t2 < NAK on c + NAK on d (e2 eliminates some)" "$(e2e_c t2 nak)" \
		-lt $(($(e2e_c c nak) + $(e2e_c d nak)))
	e2e_check "e2: NAKs eliminated (>= 1)" "$(e2e_rt e2 '*' events nak-eliminated)" -ge 1
	e2e_router_checks
}

# The sequence numbers NAKed on a segment per ODATA dropped upstream of it.
scenario_record() {
	local variant=$1 drop_a=${E2E_DROPPED[0]} drop_t2=${E2E_DROPPED[1]} lan d
	for lan in a b c d t1 t2 src; do
		case $lan in a | t1) d=$drop_a ;; c | d | t2) d=$drop_t2 ;; *) d=$((drop_a + drop_t2)) ;; esac
		e2e_record "$variant" "ip SQNs NAKed on $lan per ODATA dropped above it" \
			"$(awk -v n="$(e2e_wire_sum "$lan" "type == 8" "1 + nlist")" -v d="$d" \
				'BEGIN { printf "%.2f", d ? n / d : 0 }')"
	done
	[ "$variant" = with ] && e2e_record with "ip e2: NAK SQNs received/eliminated" \
		"$(e2e_rt e2 '*' events nak-received)/$(e2e_rt e2 '*' events nak-eliminated)"
	return 0
}

e2e_run
