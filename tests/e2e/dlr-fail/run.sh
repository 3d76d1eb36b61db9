#!/bin/bash
# dlr-fail: as dlr-offtree (one router r1, an off-tree DLR on loss-free LAN b, 5 % ODATA loss
# into LAN a), but the DLR stops repairing after 20 RDATA:
#   silent  it then answers nothing: r1 gets no NCF for the NAKs it sent there, drops the DLR
#           after NAK_RPT_IVL and sends them to the source (RFC 3208 9.5.3.2, MUST);
#   nak     it then confirms every NAK and NAKs the SQNs upstream itself: r1 drops the redirect
#           for those SQNs and forwards them to the source (9.5.3.2, MUST).
# Either way every receiver must complete. Without router assist the DLR is never asked and the
# source repairs everything, as in dlr-offtree.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

GROUP=239.192.0.22
COUNT=${DLR_COUNT:-4000}
RATE=1000
LOSS=0.05
FAIL_AFTER=20
DLR_HOST=dl

scenario_router_config() {
	lab_router_config "$1" | sed '$d'
	echo "ip pgm router dlr-discovery"
	echo "end"
}

dlr_start() {
	lab_host $DLR_HOST
	lab_attach $DLR_HOST eth0 b 50
	lab_route $DLR_HOST default "$(lab_addr r1 @b)"
	lab_spawn $DLR_HOST "$LAB_DIR/dlr.out" "$LAB_PEERS/pgm-dlr" -i eth0 -g "$GROUP" \
		--role off-tree --fail-after $FAIL_AFTER --fail-mode "$1" -T 90 \
		--ready "$LAB_DIR/dlr.ready"
	DLR_PID=$LAB_PID
	lab_wait 10 "the DLR listening" test -e "$LAB_DIR/dlr.ready"
}

dlr_kv() {
	local v
	v=$(lab_kv "$1" "$(tail -n 1 "$LAB_DIR/dlr.out")")
	echo "${v:-0}"
}

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
	for r in a1 a2; do
		e2e_check "$r recovered exactly the dropped messages" "$(e2e_r "$r" recovered)" \
			-eq "$dropped"
	done
}

checks_without() {
	local dropped=$1
	e2e_check "RDATA from the source >= dropped" "$(e2e_c src rdata)" -ge "$dropped"
	e2e_check "the DLR sent no repair" "$(dlr_kv rdata_sent)" -eq 0
}

checks_with() {
	local dropped=$1 mode=$2
	e2e_check "the DLR repaired its $FAIL_AFTER before failing" "$(dlr_kv rdata_sent)" -eq $FAIL_AFTER
	e2e_check "r1 learned the off-tree DLR" "$(router_ev dlr-offtree-learned)" -ge 1
	e2e_check "the source repaired the rest" "$(e2e_c src rdata)" -ge $((dropped - FAIL_AFTER))
	if [ "$mode" = silent ]; then
		e2e_check "r1 dropped the DLR at NAK_RPT_IVL" "$(router_ev dlr-timeout)" -eq 1
		e2e_check "the silent DLR was not learned again" "$(router_ev dlr-offtree-learned)" -eq 1
	else
		e2e_check "r1 sent the SQNs the DLR NAKed upstream" "$(router_ev dlr-nak-fallback)" -ge 1
		e2e_check "the DLR NAKed upstream" "$(dlr_kv naks_sent)" -ge 1
	fi
}

run_case() {
	local variant=$1 mode=$2 dropped
	e2e_case_begin pxfail "$variant" "$mode"
	lab_topo_one_router 2
	dlr_start "$mode"
	if e2e_router_up; then
		lab_topo_loss a "$LOSS" odata
		e2e_pgm_stream "$GROUP" ip "$COUNT" "$RATE" 60
		dropped=$(lab_topo_loss_dropped a)
		e2e_record "$variant" "$mode receivers complete" "$(e2e_receivers_ok)/4"
		e2e_record "$variant" "$mode ODATA dropped into a" "$dropped ($(e2e_pct "$dropped" "$COUNT") %)"
		e2e_record_receivers
		e2e_record_segments odata rdata nak nnak ncf poll polr
		if [ "$variant" = with ]; then
			e2e_record "$variant" "$mode r1: DLRs learned / NAKs redirected / timeouts / SQNs NAKed by the DLR" \
				"$(router_ev dlr-offtree-learned)/$(router_ev nak-redirected)/$(router_ev dlr-timeout)/$(router_ev dlr-nak-fallback)"
		fi
		lab_stop "$DLR_PID"
		e2e_record "$variant" "$mode DLR: NAKs received / RDATA sent / NNAKs / NAKs sent" \
			"$(dlr_kv naks_received)/$(dlr_kv rdata_sent)/$(dlr_kv nnaks_sent)/$(dlr_kv naks_sent)"
		checks_common "$dropped"
		"checks_$variant" "$dropped" "$mode"
		e2e_router_check_alive
	fi
	e2e_case_end
}

lab_groups "$GROUP"
e2e_begin dlr-fail "one router, an off-tree DLR that stops repairing after $FAIL_AFTER RDATA (silent, or NAKing upstream), $LOSS ODATA loss into LAN a"
e2e_note_skips
for variant in $(e2e_variants); do
	for mode in silent nak; do
		run_case "$variant" "$mode"
	done
done
e2e_end
