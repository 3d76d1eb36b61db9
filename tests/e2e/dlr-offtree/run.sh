#!/bin/bash
# dlr-offtree: topology (a), one router r1, source s1 on LAN src, receivers a1 a2 on LAN a and
# b1 b2 on LAN b, and a designated local repairer (tests/peers/pgm-dlr, off-tree role) on the
# loss-free LAN b. r1 drops 5 % of the ODATA it sends into LAN a. One OpenPGM stream, PGM/IP.
#
# Without router assist nobody polls for the DLR: the receivers on a NAK the source, which
# repairs every loss. With pgmrouterd (dlr-discovery on) the first NAK makes r1 poll its LANs
# for off-tree DLRs (RFC 3208 9.5.3.1); the DLR on b answers, and from then on r1 sends the
# NAKs from a to it (9.5.3.2). The DLR confirms and repairs unicast to r1 and sends an NNAK
# upstream; r1 forwards the NNAK to the source and re-sources the RDATA onto LAN a (IP source =
# the data source, destination = the group, Router Alert). So the source sees NNAKs instead of
# NAKs and sends RDATA only for the losses before the DLR was found, and the repairs reach LAN
# a only (the RDATA counted on segment b is the DLR's unicast to r1: b1 and b2 recover nothing).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

GROUP=239.192.0.21
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS=0.05
DLR_HOST=dl

scenario_router_config() {
	lab_router_config "$1" | sed '$d'
	echo "ip pgm router dlr-discovery"
	echo "end"
}

# The DLR: a host on LAN b, caching the group's ODATA, answering DLR polls only
dlr_start() {
	lab_host $DLR_HOST
	lab_attach $DLR_HOST eth0 b 50
	lab_route $DLR_HOST default "$(lab_addr r1 @b)"
	lab_spawn $DLR_HOST "$LAB_DIR/dlr.out" "$LAB_PEERS/pgm-dlr" -i eth0 -g "$GROUP" \
		--role off-tree -T 90 --ready "$LAB_DIR/dlr.ready"
	DLR_PID=$LAB_PID
	lab_wait 10 "the DLR listening" test -e "$LAB_DIR/dlr.ready"
}

dlr_stop() {
	lab_stop "$DLR_PID"
}

# dlr_kv KEY: a value from the DLR's exit summary (0 when absent).
dlr_kv() {
	local v
	v=$(lab_kv "$1" "$(tail -n 1 "$LAB_DIR/dlr.out")")
	echo "${v:-0}"
}

# router_ev NAME: an event counter of r1, summed over interfaces and global.
router_ev() {
	"$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock r1)" -c "show ip pgm router traffic json" \
		2>/dev/null | tr ',{}' '\n\n\n' | awk -F: -v k="\"$1\"" '$1 == k { n += $2 } END { print n + 0 }'
}

checks_common() {
	local dropped=$1 r
	for r in $TOPO_RECEIVERS; do
		e2e_check "$r complete, exactly once, in order" \
			"$([ "$(e2e_r "$r" result)" = ok ] && echo 1 || echo 0)" -eq 1
	done
	e2e_check "ODATA loss into a >= 3 %" "$dropped" -ge $((COUNT * 3 / 100))
	e2e_check "ODATA loss into a <= 7 %" "$dropped" -le $((COUNT * 7 / 100))
	for r in b1 b2; do
		e2e_check "$r needed no repair" "$(e2e_r "$r" recovered)" -eq 0
	done
}

checks_without() {
	local dropped=$1
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "no NNAK at the source" "$(e2e_c src nnak)" -eq 0
	e2e_check "the DLR sent no repair" "$(dlr_kv rdata_sent)" -eq 0
}

# Only the losses before the DLR answered the poll (about 100 ms, 5 messages) go to the source;
# 10 % of the losses leaves room for a slow first poll on a loaded machine.
checks_with() {
	local dropped=$1 early
	early=$(e2e_scale "$dropped" 10)
	e2e_check "r1 learned the off-tree DLR" "$(router_ev dlr-offtree-learned)" -eq 1
	e2e_check "RDATA from the source <= 10 % of dropped + 5" "$(e2e_c src rdata)" \
		-le $((early + 5))
	e2e_check "NAKs at the source <= 10 % of NAKs on a + 5" "$(e2e_c src nak)" \
		-le $(($(e2e_scale "$(e2e_c a nak)" 10) + 5))
	# (NNAKs are packets and may carry lists: compared with the DLR's own count)
	e2e_check "NNAKs at the source >= 90 % of the DLR's NNAKs" "$(e2e_c src nnak)" \
		-ge "$(e2e_scale "$(dlr_kv nnaks_sent)" 90)"
	e2e_check "NNAKs at the source >= 50 % of dropped" "$(e2e_c src nnak)" \
		-ge "$(e2e_scale "$dropped" 50)"
	e2e_check "the DLR repaired >= 80 % of dropped" "$(dlr_kv rdata_sent)" \
		-ge "$(e2e_scale "$dropped" 80)"
	e2e_check "r1 re-sourced them onto a" "$(router_ev dlr-rdata)" -ge "$(e2e_scale "$dropped" 80)"
	e2e_check "NAKs sent to the DLR >= 80 % of dropped / 63" "$(router_ev nak-redirected)" -ge 1
	e2e_check "no DLR timeout" "$(router_ev dlr-timeout)" -eq 0
	for r in a1 a2; do
		e2e_check "$r recovered exactly the dropped messages" "$(e2e_r "$r" recovered)" \
			-eq "$dropped"
	done
}

run_case() {
	local variant=$1 dropped
	e2e_case_begin pxoff "$variant" ip
	lab_topo_one_router 2
	dlr_start
	if e2e_router_up; then
		lab_topo_loss a "$LOSS" odata
		e2e_pgm_stream "$GROUP" ip "$COUNT" "$RATE" 60
		dropped=$(lab_topo_loss_dropped a)
		e2e_record "$variant" "receivers complete" "$(e2e_receivers_ok)/4"
		e2e_record "$variant" "ODATA dropped into a" "$dropped ($(e2e_pct "$dropped" "$COUNT") %)"
		e2e_record_receivers
		e2e_record_segments odata rdata nak nnak ncf poll polr
		if [ "$variant" = with ]; then
			e2e_record "$variant" "r1: off-tree DLRs learned / NAKs redirected / RDATA re-sourced / DLR timeouts" \
				"$(router_ev dlr-offtree-learned)/$(router_ev nak-redirected)/$(router_ev dlr-rdata)/$(router_ev dlr-timeout)"
		fi
		dlr_stop
		e2e_record "$variant" "DLR: NAKs received / RDATA sent / NNAKs sent" \
			"$(dlr_kv naks_received)/$(dlr_kv rdata_sent)/$(dlr_kv nnaks_sent)"
		checks_common "$dropped"
		"checks_$variant" "$dropped"
		e2e_router_check_alive
	fi
	e2e_case_end
}

lab_groups "$GROUP"
e2e_begin dlr-offtree "one router, an off-tree DLR on loss-free LAN b, $LOSS ODATA loss into LAN a, $COUNT messages"
e2e_note_skips
for variant in $(e2e_variants); do
	run_case "$variant"
done
e2e_end
