#!/bin/bash
# The test DLR (pgm-dlr) answering NAKs addressed to it (RFC 3208 9.5.2), with crafted packets on
# one LAN (tests/ns/dlr.lib): it caches the session's ODATA and learns its parent from the SPM;
#  - a NAK from its parent (off-tree service, 9.5.2.2, 9.5.2.3) gets, in this order, an NCF for
#    the whole NAK, a NAK upstream for the SQNs it lacks, one NNAK for those it repairs, then
#    the RDATA, all unicast to the parent from its own address without Router Alert;
#  - a NAK from another network element (upstream service, 9.5.2.1) gets the NCF and RDATA
#    multicast with the data source's address and Router Alert, the NNAK and NAK to the parent;
#  - uncached SQNs, unknown sessions and parity NAKs get an NCF (parity NCF) and a NAK upstream;
#  - the same over UDP encapsulation;
#  - a multicast repair that Router Alert would push past the MTU goes without it.
# Addresses, ports, Router Alert, order, payloads and PGM/IP/UDP checksums are checked with
# pgm-sniff and, independently, with tshark.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dlr.lib"
dlr_need
dlr_lan_captured
start_dlr "$LAB_DIR/dlr.out" -v -T 120

# the session: SPM (parent P), then ODATA 1..10, each with its own payload
inj --src $S --dst $G --type spm --ra --path $P --sqn 1 --trail 1 --lead 10
for i in 1 2 3 4 5 6 7 8 9 10; do
	inj --src $S --dst $G --type odata --sqn $i --trail 1 --payload "odata-$i"
done
check "the DLR learned the session and its parent from the SPM" \
	wait_event "^event=session tsi=$TSI source=$S group=$G dport=7500 parent=$P\$"

# 1. off-tree: the parent NAKs 3 and 4 (cached) and 20 (not)
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 3 --list 4,20 --nak-src $S --nak-grp $G
expect_packets "off-tree: NCF, NAK upstream, NNAK, RDATA x2, unicast to the parent, no RA" "$m" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=NCF \| NCF $TSI sqn 3 list 4,20 src $S grp $G\$" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=NAK \| NAK $TSI sqn 20 src $S grp $G\$" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=NNAK \| NNAK $TSI sqn 3 list 4 src $S grp $G\$" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn 3 trail 1 len 7\$" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn 4 trail 1 len 7\$"

# 2. upstream: a network element below the DLR (Q) NAKs 5
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 5 --nak-src $S --nak-grp $G
expect_packets "upstream: NCF and RDATA multicast from the source with RA, NNAK to the parent" "$m" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=NCF \| NCF $TSI sqn 5 src $S grp $G\$" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=NNAK \| NNAK $TSI sqn 5 src $S grp $G\$" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn 5 trail 1 len 7\$"

# 3. upstream, a list with a gap
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 6 --list 7,40 --nak-src $S --nak-grp $G
expect_packets "upstream list: NCF with the same list, NAK 40 upstream, NNAK 6+7, RDATA 6 and 7" "$m" \
	"^pgm src=$S dst=$G .* ra=1 .*type=NCF \| NCF $TSI sqn 6 list 7,40 src $S grp $G\$" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NAK \| NAK $TSI sqn 40 src $S grp $G\$" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NNAK \| NNAK $TSI sqn 6 list 7 src $S grp $G\$" \
	"^pgm src=$S dst=$G .* ra=1 .*csum=ok type=RDATA \| RDATA $TSI sqn 6 trail 1 len 7\$" \
	"^pgm src=$S dst=$G .* ra=1 .*csum=ok type=RDATA \| RDATA $TSI sqn 7 trail 1 len 7\$"

# 4. an SQN it does not hold, from the parent: NCF, then a NAK back to the parent (9.5.2.2)
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 30 --nak-src $S --nak-grp $G
expect_packets "off-tree, uncached SQN: NCF and a NAK to the parent, nothing else" "$m" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NCF \| NCF $TSI sqn 30 src $S grp $G\$" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NAK \| NAK $TSI sqn 30 src $S grp $G\$"

# 5. an SQN it never saw, from below: NCF down the tree, NAK to the parent
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 31 --nak-src $S --nak-grp $G
expect_packets "upstream, uncached SQN: NCF down the tree and a NAK to the parent" "$m" \
	"^pgm src=$S dst=$G .* ra=1 .*type=NCF \| NCF $TSI sqn 31 src $S grp $G\$" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NAK \| NAK $TSI sqn 31 src $S grp $G\$"

# 6. a session it never saw: no parent known, so the NAK goes to the data source
m=$(sniffed)
inj --src $Q --dst $DL --type nak --gsi 0a0b0c0d0e0f --sqn 2 --nak-src $S --nak-grp $G
expect_packets "unknown session: NCF, and a NAK to the data source (no SPM path known)" "$m" \
	"^pgm src=$S dst=$G .* ra=1 .*type=NCF \| NCF 0a0b0c0d0e0f.1234 sqn 2 src $S grp $G\$" \
	"^pgm src=$DL dst=$S .* ra=0 .*type=NAK \| NAK 0a0b0c0d0e0f.1234 sqn 2 src $S grp $G\$"

# 7. parity: the SPM announces transmission groups of 4 (OPT_PARITY_PRM, on-demand); a parity
#    NAK for TG 8 asking for 2 packets (PKT_CNT 1) gets a parity NCF and goes upstream intact
inj --src $S --dst $G --type spm --ra --path $P --sqn 2 --trail 1 --lead 10 \
	--opt-raw 0808000100000004
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 9 --parity --nak-src $S --nak-grp $G
expect_packets "parity NAK: parity NCF with the NAK's count, parity NAK upstream, no RDATA" "$m" \
	"^pgm src=$DL dst=$P .*csum=ok type=NCF \| NCF $TSI sqn 9 src $S grp $G parity\$" \
	"^pgm src=$DL dst=$P .*csum=ok type=NAK \| NAK $TSI sqn 9 src $S grp $G parity\$"

# 8. a NAK to the group, not to the DLR, is not for it (counted, no answer: see the totals)
inj --src $Q --dst $G --type nak --sqn 3 --nak-src $S --nak-grp $G
check "a NAK to the group is seen and left alone" wait_event '^event=nak-not-for-us '
stop_dlr
expect_summary odata_cached 10
expect_summary cache_held 10
expect_summary sessions 1
expect_summary naks_received 7
expect_summary naks_not_for_us 1
expect_summary ncfs_sent 7
expect_summary nnaks_sent 3
expect_summary rdata_sent 5
expect_summary naks_sent 6
expect_summary unknown_sqn 6
expect_summary parity_naks 1
expect_summary bad_packets 0
expect_summary send_errors 0
expect_summary build_errors 0

# 9. the same over UDP (OpenPGM's encapsulation, ports 3055 unicast / 3056 multicast)
start_dlr "$LAB_DIR/dlr-udp.out" -v -T 120 -u 3055:3056
inj --udp --src $S --dst $G --type spm --path $P --sqn 1 --trail 1 --lead 3
for i in 1 2 3; do
	inj --udp --src $S --dst $G --type odata --sqn $i --trail 1 --payload "udp-$i"
done
m=$(sniffed)
inj --udp --src $P --dst $DL --type nak --sqn 2 --list 9 --nak-src $S --nak-grp $G
expect_packets "UDP, off-tree: NCF, NAK, NNAK, RDATA, UDP and PGM checksums good" "$m" \
	"^pgm src=$DL dst=$P .* ra=0 encap=udp udpcsum=ok csum=ok type=NCF \| NCF $TSI sqn 2 list 9 " \
	"^pgm src=$DL dst=$P .* ra=0 encap=udp udpcsum=ok csum=ok type=NAK \| NAK $TSI sqn 9 " \
	"^pgm src=$DL dst=$P .* ra=0 encap=udp udpcsum=ok csum=ok type=NNAK \| NNAK $TSI sqn 2 " \
	"^pgm src=$DL dst=$P .* ra=0 encap=udp udpcsum=ok csum=ok type=RDATA \| RDATA $TSI sqn 2 trail 1 len 5\$"
m=$(sniffed)
inj --udp --src $Q --dst $DL --type nak --sqn 3 --nak-src $S --nak-grp $G
expect_packets "UDP, upstream: NCF and RDATA to the group with RA, NNAK to the parent" "$m" \
	"^pgm src=$S dst=$G .* ra=1 encap=udp udpcsum=ok csum=ok type=NCF \| NCF $TSI sqn 3 " \
	"^pgm src=$DL dst=$P .* ra=0 encap=udp udpcsum=ok csum=ok type=NNAK \| NNAK $TSI sqn 3 " \
	"^pgm src=$S dst=$G .* ra=1 encap=udp udpcsum=ok csum=ok type=RDATA \| RDATA $TSI sqn 3 trail 1 len 5\$"
stop_dlr
expect_summary odata_cached 3
expect_summary rdata_sent 2

# 10. the MTU (1500): 20 bytes of IP header, 24 of ODATA header, 1456 of payload fill it, so
#     Router Alert (4 bytes) does not fit on the repair; with 1452 it does
start_dlr "$LAB_DIR/dlr-mtu.out" -v -T 120
check "the DLR knows the interface MTU" grep -q '^event=ready .* mtu=1500$' "$DLR_OUT"
inj --src $S --dst $G --type spm --path $P --sqn 1 --trail 1 --lead 2
inj --src $S --dst $G --type odata --sqn 1 --trail 1 --payload-len 1456
inj --src $S --dst $G --type odata --sqn 2 --trail 1 --payload-len 1452
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 1 --list 2 --nak-src $S --nak-grp $G
expect_packets "full-size repair without Router Alert, the other with it" "$m" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=NCF \| NCF $TSI sqn 1 list 2 " \
	"^pgm src=$DL dst=$P .*type=NNAK \| NNAK $TSI sqn 1 list 2 " \
	"^pgm src=$S dst=$G ttl=16 ra=0 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn 1 trail 1 len 1456\$" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn 2 trail 1 len 1452\$"
stop_dlr
expect_summary ra_dropped_mtu 1
expect_summary rdata_sent 2
expect_summary send_errors 0
stop_dlr_sniffer
check "the sniffer saw nothing more than the 32 packets above" test "$(sniffed)" = 32

# tshark, on its own decoder: every checksum good, nothing malformed, and the header fields
total=$(tshark_count "$PCAP" pgm)
check "tshark decodes the 32 packets as PGM" test "$total" = 32
check "tshark: every PGM checksum good" test "$(tshark_count "$PCAP" 'pgm.hdr.cksum.status == 1')" = 32
check "tshark: every IP header checksum good" \
	test "$(tshark_count "$PCAP" 'ip.checksum.status == 1')" = 32
check "tshark: every UDP checksum good" \
	test "$(tshark_count "$PCAP" 'udp.checksum.status == 1')" = 7
check "tshark: nothing malformed, no expert info" \
	test "$(tshark_count "$PCAP" '_ws.malformed || _ws.expert')" = 0
# Router Alert exactly on the multicast answers (upstream service): 4 NCFs and 3 RDATA over
# IP, 1 NCF and 1 RDATA over UDP, 1 NCF and 1 RDATA in the MTU case
check "tshark: Router Alert on the 11 multicast answers" \
	test "$(tshark_count "$PCAP" 'ip.opt.type == 148')" = 11
check "tshark: Router Alert only on packets from the source to the group" test \
	"$(tshark_count "$PCAP" "ip.opt.type == 148 && !(ip.src == $S && ip.dst == $G)")" = 0
check "tshark: every packet to the group has Router Alert but the 1500-byte one" test \
	"$(tshark_count "$PCAP" "ip.dst == $G && !ip.opt.type == 148")|$(tshark_count "$PCAP" "ip.dst == $G && !ip.opt.type == 148 && ip.len == 1500")" = "1|1"
# ports: downstream types carry the data-source port first, NAK and NNAK the data-destination port
check "tshark: NCF and RDATA ports 1234 -> 7500" test \
	"$(tshark_fields "$PCAP" 'pgm.hdr.type == 0x0a || pgm.hdr.type == 0x05' pgm.hdr.sport pgm.hdr.dport | sort -u)" = "1234|7500"
check "tshark: NAK and NNAK ports 7500 -> 1234" test \
	"$(tshark_fields "$PCAP" 'pgm.hdr.type == 0x08 || pgm.hdr.type == 0x09' pgm.hdr.sport pgm.hdr.dport | sort -u)" = "7500|1234"
check "tshark: UDP ports 3055 unicast, 3056 to the group" test \
	"$(tshark_fields "$PCAP" udp ip.dst udp.srcport udp.dstport | sort -u | tr '\n' ' ')" = "$P|3055|3055 $G|3056|3056 "
# the repairs carry the original payloads (hex of "odata-N" and "udp-N")
hex() { printf '%s' "$1" | od -An -tx1 | tr -d ' \n'; }
expect_rdata="$(for n in 3 4 5 6 7; do echo "$n|$(hex odata-$n)"; done; for n in 2 3; do echo "$n|$(hex udp-$n)"; done)"
rdata_seen=$(tshark_fields "$PCAP" 'pgm.hdr.type == 0x05 && pgm.hdr.tsdulen < 1000' pgm.spm.sqn data.data |
	while IFS='|' read -r sqn data; do echo "$((sqn))|$data"; done)
check "tshark: RDATA SQNs and payloads are the cached ODATA's" test "$rdata_seen" = "$expect_rdata"
check "tshark: the NNAK and NCF NLAs are the data source and the group" test \
	"$(tshark_fields "$PCAP" 'pgm.hdr.type == 0x09 || pgm.hdr.type == 0x0a' pgm.nak.src.ipv4 pgm.nak.grp.ipv4 | sort -u)" = "$S|$G"
finish
