#!/bin/bash
# fec-parity: topology (a), one router r1, receivers a1 a2 on LAN a and b1 b2 on LAN b, 5 % of
# the ODATA into LAN a dropped. OpenPGM source and receivers with on-demand parity (FEC,
# Reed-Solomon, transmission groups of 8; OPT_PARITY_PRM in the SPMs): the receivers ask for
# parity packets with parity NAKs (a count per transmission group) and the source answers with
# parity RDATA (RFC 3208 11).
#
# OpenPGM 5.3 as packaged cannot take part in on-demand parity repair: its receivers, on-demand
# parity enabled and the source's OPT_PARITY_PRM received, still ask with selective NAKs (no NAK
# of theirs carries OPT_PARITY), and its source aborts on a parity NAK ("skput:over",
# pgm_skb_over_panic). So the OpenPGM stream here checks that an FEC session (OPT_PARITY_PRM
# recorded by r1) is repaired and confined as usual, and the parity exchange is crafted with
# tests/peers/pgm-inject on a second TSI: the source's SPM with OPT_PARITY_PRM (groups of 8), a
# host on a asking for 2 parity packets of group 64, then 3 parity RDATA from the source.
#
# Without router assist every repair reaches both LANs. With pgmrouterd, r1 keeps repair state
# per transmission group (11.6): the parity NAK is confirmed with a parity NCF and forwarded,
# the first 2 parity RDATA go into a only (the count owed there), the third finds no state; the
# loss-free LAN b gets no repair at all.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TGS=8
TITLE="one router, OpenPGM on-demand parity (groups of $TGS), 5 % ODATA loss into LAN a, ${FEC_COUNT:-4000} messages"
TAG=pxfec
TOPOLOGY="one_router 2"
GROUP=239.192.0.25
COUNT=${FEC_COUNT:-4000}
RATE=1000
SEND_ARGS=(--fec "$TGS")
RECV_ARGS=(--fec "$TGS")
LOSS="a:0.05"
PGSI=0a0b0c0d0e0f # the crafted parity session
PSPORT=4321

# The crafted parity exchange, in the background during the stream (into inject.log).
scenario_inject() {
	local variant=$1 dst src sqn
	src=$TOPO_SOURCE_ADDR
	dst=$src
	[ "$variant" = with ] && dst=$(lab_addr r1 @a)
	sleep 1
	lab_exec s1 "$LAB_PEERS/pgm-inject" --src "$src" --dst "$GROUP" --type spm --ra \
		--gsi $PGSI --sport $PSPORT --sqn 1 --trail 0 --lead 100 --path "$src" \
		--opt-raw 0808000100000008
	sleep 0.3
	lab_exec a1 "$LAB_PEERS/pgm-inject" --src "$(lab_addr a1 eth0)" --dst "$dst" --type nak \
		--parity --gsi $PGSI --sport 7500 --dport $PSPORT --sqn $((64 | 1)) \
		--nak-src "$src" --nak-grp "$GROUP"
	sleep 0.3
	for sqn in 64 65 66; do
		lab_exec s1 "$LAB_PEERS/pgm-inject" --src "$src" --dst "$GROUP" --type rdata --ra \
			--parity --gsi $PGSI --sport $PSPORT --sqn $sqn --trail 0
	done
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check_no_repair b1 b2
	e2e_check "repairs came (RDATA on a)" "$(e2e_c a rdata)" -ge 1
	e2e_check "the 5 crafted packets went out" "$(grep -c '^sent 1 ' "$LAB_DIR/inject.log")" -eq 5
}

checks_without() {
	e2e_check "every repair reached loss-free b too" "$(e2e_c b rdata)" -eq "$(e2e_c a rdata)"
}

checks_with() {
	e2e_check "r1 kept parity state for the group" "$(e2e_router_ev r1 parity-nak-unique)" -eq 1
	e2e_check "r1 forwarded the parity NAK" "$(e2e_router_ev r1 parity-nak-forwarded)" -eq 1
	e2e_check "r1 forwarded 2 parity RDATA into a" "$(e2e_router_ev r1 parity-rdata-forwarded)" -eq 2
	e2e_check "r1 dropped the other copies (b; the third RDATA)" \
		"$(e2e_router_ev r1 parity-rdata-dropped)" -ge 3
	e2e_check "no repair into loss-free b" "$(e2e_c b rdata)" -eq 0
	e2e_check "NAKs at the source <= NAKs on a" "$(e2e_c src nak)" -le "$(e2e_c a nak)"
}

scenario_record() {
	e2e_record_events r1 parity-nak-unique parity-nak-forwarded parity-nak-eliminated \
		parity-rdata-forwarded parity-rdata-dropped parity-passthrough
}

e2e_run
