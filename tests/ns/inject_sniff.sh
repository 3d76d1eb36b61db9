#!/bin/bash
# The test peers pgm-inject and pgm-sniff: every packet type and every malformation the injector
# offers crosses a link and is classified by the observer as intended (type, fields, TTL, Router
# Alert, checksum status, the codec's error name), over IP and UDP; counts, intervals and
# sequence steps hold; the observer stops at its count and at its time limit.
. "$(dirname "$0")/lib.sh"
INJECT=${INJECT:-"$LAB_PEERS/pgm-inject"}
SNIFF=${SNIFF:-"$LAB_PEERS/pgm-sniff"}
need "$INJECT" "$SNIFF"
lab_host a
lab_host b
lab_link a x0 198.18.30.1/24 b y0 198.18.30.2/24
A=198.18.30.1
O="$LAB_DIR/sniff.out"
lab_spawn_ready b "$O" "$LAB_DIR/sniff.ready" "$SNIFF" --if y0 --in --timeout 60 --count 28 \
	--ready "$LAB_DIR/sniff.ready" || exit 1
SN=$LAB_PID
inj() { lab_exec a "$INJECT" --if x0 "$@" >>"$LAB_DIR/inject.out" 2>&1 || log "inject failed: $*"; }

inj --src $A --dst $GROUP --type spm --ra --ttl 9 --sqn 40 --trail 30 --lead 44
inj --src $A --dst 198.18.30.2 --type nak --gsi 0a0b0c0d0e0f --sport 7500 --dport 1234 --sqn 17 \
	--list 18,19 --nak-src 198.18.1.2 --nak-grp $GROUP
inj --src $A --dst 198.18.30.2 --type nnak --sqn 5 --nak-src 198.18.1.2 --nak-grp $GROUP
inj --src 198.18.1.2 --dst $GROUP --type ncf --sqn 17 --nak-bo-ivl 50000,9 --ttl 255 --ra
inj --src $A --dst $GROUP --type rdata --sqn 17 --payload hello
inj --src $A --dst $GROUP --type odata --sqn 20 --payload-len 300 --udp
inj --src $A --dst $GROUP --type poll --sqn 3
inj --src $A --dst 198.18.30.2 --type polr --sqn 3
inj --src $A --dst 198.18.30.2 --type spmr
inj --src $A --dst 198.18.30.2 --type nak --sqn 1 --udp --nak-src 198.18.1.2
# malformed
inj --src $A --dst $GROUP --type spm --truncate 6
inj --src $A --dst $GROUP --type rdata --bad-checksum
inj --src $A --dst $GROUP --type odata --zero-checksum
inj --src $A --dst $GROUP --type odata --tsdu-len 999
inj --src $A --dst $GROUP --type poll --version 1
inj --src $A --dst 198.18.30.2 --type nak --afi 7
inj --src $A --dst $GROUP --type spm --nak-bo-ivl 100 --opt-total 400
inj --src $A --dst $GROUP --type spm --type-byte 0x03
# repeated
inj --src $A --dst $GROUP --type odata --count 5 --interval-ms 20 --sqn 1 --sqn-step 2
# more than the sniffer's count: it must stop at 28
inj --src $A --dst $GROUP --type odata --count 6 --sqn 100
check "the sniffer stopped at its count" ended "$SN" 20
check "it printed exactly 28 packets" test "$(grep -c '^pgm ' "$O")" = 28
check "the injector reported every packet sent" \
	test "$(grep -c '^sent [0-9]* packets, [0-9]* bytes, 0 errors$' "$LAB_DIR/inject.out")" = 20

has() { grep -qF -- "$1" "$O"; }
check "SPM: TTL 9, Router Alert, fields" has "pgm src=$A dst=$GROUP ttl=9 ra=1 encap=ip csum=ok type=SPM | SPM 010203040506.1234 sqn 40 trail 30 lead 44 path $A"
check "NAK with a list, ports as given" has "csum=ok type=NAK | NAK 0a0b0c0d0e0f.1234 sqn 17 list 18,19 src 198.18.1.2 grp $GROUP"
check "NNAK" has "type=NNAK | NNAK 010203040506.1234 sqn 5 src 198.18.1.2 grp $GROUP"
check "NCF from the data source, TTL 255, RA, NAK_BO_IVL" \
	grep -q "^pgm src=198.18.1.2 dst=$GROUP ttl=255 ra=1 encap=ip csum=ok type=NCF | NCF 010203040506.1234 sqn 17 src 198.18.1.2 grp $GROUP .*50000" "$O"
check "RDATA" has "type=RDATA | RDATA 010203040506.1234 sqn 17 trail 0 len 5"
check "ODATA over UDP (port 3056, UDP checksum ok)" has "ttl=16 ra=0 encap=udp udpcsum=ok csum=ok type=ODATA | ODATA 010203040506.1234 sqn 20 trail 0 len 300"
check "POLL, POLR, SPMR" sh -c "grep -q 'type=POLL | POLL' $O && grep -q 'type=POLR | POLR' $O && grep -q 'type=SPMR | SPMR' $O"
check "NAK over UDP" has "encap=udp udpcsum=ok csum=ok type=NAK"
check "truncated SPM classified as too short" grep -q 'csum=ok error=spm-length' "$O"
check "bad checksum detected, contents still shown" has "csum=bad type=RDATA | RDATA"
check "zero checksum on ODATA refused" has "csum=none error=zero-checksum"
check "TSDU length that lies" has "error=tsdu-length"
check "bad version bits" has "error=bad-version"
check "unknown AFI" has "error=unknown-afi"
check "OPT_LENGTH total past the packet" has "error=opt-total-length"
check "reserved type" has "error=unknown-type"
check "5 ODATA with SQN 1,3,5,7,9" sh -c "
	[ \$(grep -cE 'type=ODATA \| ODATA 010203040506.1234 sqn (1|3|5|7|9) ' $O) = 5 ]"

rm -f "$LAB_DIR/idle.ready"
start=$(date +%s)
lab_exec b "$SNIFF" --if y0 --timeout 1 --ready "$LAB_DIR/idle.ready" >"$LAB_DIR/idle.out" 2>&1
check "an idle sniffer stops at its time limit, having seen nothing" sh -c "
	[ \$(( \$(date +%s) - $start )) -le 5 ] && grep -q '^sniffed 0 packets' $LAB_DIR/idle.out"
lab_exec a "$INJECT" --src $A --dst $GROUP --type bogus >/dev/null 2>"$LAB_DIR/bad.err"
check "an unknown type is refused with a message" grep -q 'unknown --type' "$LAB_DIR/bad.err"
finish
