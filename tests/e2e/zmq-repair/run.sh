#!/bin/bash
# zmq-repair: ZeroMQ epgm:// (PGM in UDP, port 5555) across the router of topology (a), 5 % of the
# ODATA into LAN a dropped, and repairs lost too; 2000 messages at 500/s. libzmq's receivers
# back off up to 50 ms, re-NAK 200 ms after an NCF without RDATA (NAK_RDATA_IVL) and give up
# after 50 tries (5 before libzmq 3.1). RDATA is lost in two places:
#
#   in LAN a   20 % of the RDATA reaching a1 and a2, dropped at their ingress (each on its own):
#              r1 forwarded the repair and holds no state for it any more, so the re-NAK is a
#              new request;
#   upstream   20 % of the RDATA the publisher sends, dropped as it leaves s1, before r1: the
#              repair state r1 holds stays, and eliminates the receivers' re-NAKs for
#              nak-eliminate-interval after the source's NCF; a re-NAK gets through only once
#              that ran out.
#
# Every subscriber must complete, exactly once and in order. ZeroMQ does not say which messages
# came from repairs: the repair latency of each loss is read from the send and delivery times
# (e2e_zmq_repair_latencies); p50, p99 and the mean over a1 and a2 are printed in both variants,
# and the "with" variant asserts that router assist delays no repair (checks_with says how).
# One case: the two variants took 84-148 s on the 2-core machine at load 8-22.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="ZeroMQ epgm://, 5 % ODATA loss into LAN a, 20 % of the repairs lost in LAN a and upstream"
TAG=zrep
TOPOLOGY="one_router 2"
STREAM=zmq
CASES=epgm
GROUP=239.192.0.16
COUNT=2000
RATE=500
LIMIT=30
LOSS="a:0.05"
SEGMENTS="odata rdata nak ncf"
RDATA_LOSS=0.2

declare -A P50 P99 MEAN

# The RDATA drop rules: a u32 match on the PGM type after the UDP header (lab_loss), in a chain of
# their own so that the runner's ODATA count (PL_LOSS on r1) stays ODATA only.
_rdata_drop() {
	local node=$1 chain=$2 dir=$3
	lab_exec "$node" iptables -t mangle -N PL_RLOSS
	lab_exec "$node" iptables -t mangle -A "$chain" -j PL_RLOSS
	lab_exec "$node" iptables -t mangle -A PL_RLOSS "$dir" eth0 -p udp --dport 5555 \
		-m u32 --u32 "0>>22&0x3C@12>>24&0x0F=5" \
		-m statistic --mode random --probability "$RDATA_LOSS" -j DROP
}

_rdata_dropped() {
	local node n=0
	for node in "$@"; do
		n=$((n + $(lab_exec "$node" iptables -t mangle -nvxL PL_RLOSS |
			awk '$3 == "DROP" { n += $1 } END { print n + 0 }')))
	done
	echo "$n"
}

scenario_start() {
	_rdata_drop a1 PREROUTING -i
	_rdata_drop a2 PREROUTING -i
	_rdata_drop s1 POSTROUTING -o
}

scenario_record() {
	local variant=$1 case=$2 lat
	RDATA_DROPPED=$(_rdata_dropped s1 a1 a2)
	e2e_record "$variant" "$case RDATA dropped upstream/a1/a2" \
		"$(_rdata_dropped s1)/$(_rdata_dropped a1)/$(_rdata_dropped a2)"
	lat=$(e2e_zmq_repair_latencies a1 a2)
	REPAIRS=$(echo "$lat" | grep -c .)
	P50[$variant.$case]=$(echo "$lat" | e2e_percentile 50)
	P99[$variant.$case]=$(echo "$lat" | e2e_percentile 99)
	MEAN[$variant.$case]=$(echo "$lat" | awk 'NF { s += $1; n++ } END { printf "%.0f", n ? s / n : 0 }')
	e2e_record "$variant" "$case repair latency a1+a2: losses/p50/p99/max (ms)" \
		"$REPAIRS/${P50[$variant.$case]}/${P99[$variant.$case]}/$(echo "$lat" | e2e_percentile 100)"
	e2e_record "$variant" "$case repair latency a1+a2: mean/p40/p60 (ms), losses over 150 ms" \
		"${MEAN[$variant.$case]}/$(echo "$lat" | e2e_percentile 40)/$(echo "$lat" | e2e_percentile 60), $(echo "$lat" | awk '$1 > 150 { n++ } END { print n + 0 }')"
	NAK_ROUNDS_A=$(_nak_rounds a)
	NAK_ROUNDS_SRC=$(_nak_rounds src)
	e2e_record "$variant" "$case NAK rounds (SQN NAKed again after 150 ms): on a/on src" \
		"$NAK_ROUNDS_A/$NAK_ROUNDS_SRC"
	[ "$variant" = with ] || return 0
	NAK_DELAY=$(_nak_forward_delays)
	e2e_record with "$case NAK on a -> NAK on src, r1's delay: NAKs/p50/p99 (ms)" \
		"$(echo "$NAK_DELAY" | grep -c .)/$(echo "$NAK_DELAY" | e2e_percentile 50)/$(echo "$NAK_DELAY" | e2e_percentile 99)"
}

# _nak_rounds LAN: the NAK rounds on LAN: each SQN a NAK names (OPT_NAK_LIST too) counts once,
# and again when NAKed more than 150 ms after its last NAK there: a receiver's re-NAK (ZeroMQ's
# NAK_RDATA_IVL is 200 ms), not another receiver's NAK within the same round (its back-off is at
# most 50 ms; 100 ms counted as a round one NAK r1 rightly eliminated, 100 ms after the source's
# NCF).
_nak_rounds() {
	e2e_tshark "$LAB_DIR/wire.$1.pcap" -Y "pgm.hdr.type == 8" -T fields -E occurrence=a \
		-E aggregator=, -e frame.time_epoch -e pgm.nak.sqn -e pgm.opts.nak.list |
		awk '{ n = split($2 "," $3, q, ",")
			for (i = 1; i <= n; i++) {
				if (q[i] == "") continue
				if (!(q[i] in last) || $1 - last[q[i]] > 0.15) rounds++
				last[q[i]] = $1
			} } END { print rounds + 0 }'
}

# The time r1 takes to send a NAK upstream: for each NAK on src, from the last NAK for the same
# (first) SQN on a before it, in ms, one a line.
_nak_forward_delays() {
	local lan
	for lan in a src; do
		e2e_tshark "$LAB_DIR/wire.$lan.pcap" -Y "pgm.hdr.type == 8" -T fields \
			-e frame.time_epoch -e pgm.nak.sqn | awk -v l="$lan" '{ print $1, l, $2 }'
	done | sort -n | awk '$2 == "a" { last[$3] = $1; next }
		($3 in last) { printf "%.2f\n", ($1 - last[$3]) * 1000 }'
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	# 5 % of 2000: mean 100, standard deviation 9.7; 50..150 is more than 5 deviations.
	e2e_check_loss a "$dropped" 50 150
	e2e_check "RDATA dropped (>= 1)" "$RDATA_DROPPED" -ge 1
	# A loss whose repair comes before that of an older one is hidden behind it: not every
	# loss is seen, but the latencies must show some.
	e2e_check "losses seen in the latencies (>= 1)" "$REPAIRS" -ge 1
	e2e_check "no NAK on loss-free b" "$(e2e_c b nak)" -eq 0
}

checks_without() { :; }

# Repair latency with router assist no worse than without, measured in the same run. The
# latencies fall in two groups: repairs that came at the first NAK (the source's RDATA 20-90 ms
# later) and those whose repair was lost, one re-NAK cycle or more later (NAK_RDATA_IVL 200 ms,
# a back-off, the source's delay: 220-300 ms). With 20 % of the repairs lost in two places,
# 40-55 % of the losses need a re-NAK in either variant, so the median sits on the step between
# the groups and jumps from one to the other by chance: p40/p60 of one run 68/270 ms. That was
# the finding (p50 238.8 ms with, 118.2 ms without; a later run 127 against 252, means 226 and
# 221 ms). Even the mean varies from run to run with the losses drawn (how many repairs are
# lost, how many losses queue behind another's repair): 124 to 268 ms over six variants alike.
# So what the router adds is judged directly: every re-NAK round on a reaches the source (no
# re-NAK eliminated; with a 1000 ms nak-eliminate-interval a repair lost upstream waited 1.1 s
# per loss: p50 528 ms against 102 ms, p99 2264 against 1184) and r1 forwards NAKs within
# 50 ms (p99; 18 ms seen with the machine loaded, 2-4 ms usually), a quarter of the re-NAK cycle. The latencies are a guard against gross change only: mean within twice
# without's + 100 ms, p99 within 25 % + 250 ms (over so few losses, the largest one).
checks_with() {
	local case=$2 w=${MEAN[without.$2]:-} w99=${P99[without.$2]:-}
	e2e_check "RDATA on loss-free b <= 2 % of RDATA on a" "$(e2e_c b rdata)" \
		-le "$(e2e_scale "$(e2e_c a rdata)" 2)"
	e2e_check "NAKs forwarded to the source (>= 1)" "$(echo "$NAK_DELAY" | grep -c .)" -ge 1
	e2e_check "every NAK round on a reached the source (none eliminated)" \
		"$NAK_ROUNDS_SRC" -ge "$NAK_ROUNDS_A"
	e2e_check "r1's NAK forwarding delay p99 <= 50 ms" \
		"$(echo "$NAK_DELAY" | e2e_percentile 99 | cut -d. -f1)" -le 20
	if [ -z "$w" ] || [ "${P99[without.$case]:-}" = - ]; then
		e2e_record with "$case repair latency against without" "not measured (one variant)"
	else
		e2e_check "repair latency mean <= twice without's + 100 ms" \
			"${MEAN[with.$case]}" -le $(( w * 2 + 100 ))
		e2e_check "repair latency p99 <= without's + 25 % + 250 ms" \
			"${P99[with.$case]%.*}" -le $(( ${w99%.*} * 5 / 4 + 250 ))
	fi
	e2e_router_checks
}

e2e_run
