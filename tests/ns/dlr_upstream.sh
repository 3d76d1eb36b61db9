#!/bin/bash
# The test DLR (pgm-dlr) as an upstream DLR (RFC 3208 9.5.2.1), with crafted NCFs from its
# parent (multicast, the data source's address, Router Alert; tests/ns/dlr.lib):
#  - an NCF for an SQN it holds (header or list) makes it multicast a redirecting POLR with the
#    data source's address and Router Alert, OPT_REDIRECT = its own address, upstream ports;
#  - no POLR for an NCF of SQNs it does not hold, for a unicast NCF, for a parity NCF, and none
#    for an NCF that confirms a NAK it sent itself ("MUST NOT"), even once that SQN is cached,
#    until its --own-nak-hold runs out;
#  - --role off-tree sends none; --parity sets OPT_PARITY.
# Absence is proved without timing: the DLR answers an NCF while reading it, so the next
# NCF's POLR must come first on the wire.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dlr.lib"
dlr_need
dlr_lan_captured
start_dlr "$LAB_DIR/dlr.out" -v -T 120 --own-nak-hold 1000

inj --src $S --dst $G --type spm --ra --path $P --sqn 1 --trail 1 --lead 10
inj --src $S --dst $G --type odata --sqn 1 --count 10 --trail 1
ncf() { inj --src $S --dst $G --type ncf --ra "$@"; }
POLR="^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=POLR \| POLR $TSI"
REDIRECT="round 0 opts OPT_REDIRECT dlr $DL\$"

# 1. the parent confirms a NAK for an SQN the DLR holds
m=$(sniffed)
ncf --sqn 7
expect_packets "NCF for a cached SQN: a multicast redirecting POLR from the source with RA" "$m" \
	"$POLR sqn 7 $REDIRECT"

# 2. nothing it holds, then a marker
m=$(sniffed)
ncf --sqn 50
check "the DLR saw NCF 50" wait_event '^event=ncf tsi=.* sqn=50 '
ncf --sqn 8
expect_packets "NCF for an SQN it does not hold: no POLR" "$m" "$POLR sqn 8 $REDIRECT"

# 3. one cached SQN in the list is enough; POLR_SQN is the NCF's
m=$(sniffed)
ncf --sqn 0 --list 3,52
expect_packets "NCF whose list holds a cached SQN: POLR" "$m" "$POLR sqn 0 $REDIRECT"

# 4. its own NAK: a NAK from below for 60, which it lacks, goes to the parent; the parent's NCF
#    for it (with a cached SQN, 70, in the list) must draw no POLR
inj --src $S --dst $G --type odata --sqn 70 --trail 1
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 60 --nak-src $S --nak-grp $G
expect_packets "NAK for an uncached SQN: NCF down, NAK to the parent" "$m" \
	"^pgm src=$S dst=$G .*type=NCF \| NCF $TSI sqn 60 " \
	"^pgm src=$DL dst=$P .*type=NAK \| NAK $TSI sqn 60 "
m=$(sniffed)
ncf --sqn 60 --list 61,70
check "the DLR saw NCF 60" wait_event '^event=ncf tsi=.* sqn=60 '
#    the repair arrives and is cached; a late NCF for it still draws nothing
inj --src $S --dst $G --type rdata --sqn 60 --trail 1 --ra
ncf --sqn 60
check "the DLR saw NCF 60 again" wait_event '^event=ncf tsi=.* sqn=60 ' 2
ncf --sqn 10
expect_packets "NCF completing its own NAK: no POLR (9.5.2.1), cached or not" "$m" \
	"$POLR sqn 10 $REDIRECT"
#    once the hold has run out, 60 is an SQN like any other
sleep 1.5
m=$(sniffed)
ncf --sqn 60
expect_packets "after --own-nak-hold, NCF 60 (now cached) draws a POLR" "$m" \
	"$POLR sqn 60 $REDIRECT"

# 5. a unicast NCF and a parity NCF are not the parent's multicast confirmation
m=$(sniffed)
inj --src $S --dst $DL --type ncf --sqn 5
check "the DLR saw the unicast NCF" wait_event '^event=ncf tsi=.* sqn=5 '
ncf --sqn 6 --parity
check "the DLR saw the parity NCF" wait_event '^event=ncf tsi=.* sqn=6 '
ncf --sqn 4
expect_packets "unicast NCF, parity NCF: no POLR" "$m" "$POLR sqn 4 $REDIRECT"
stop_dlr
expect_summary ncfs_received 11
expect_summary upstream_polrs 6
expect_summary polrs_sent 6
expect_summary ncfs_own_nak 2
expect_summary ncfs_uncached 1
expect_summary rdata_cached 1
expect_summary acting_upstream 1

# 6. --role off-tree: no POLR on NCFs; a DLR poll is the marker
start_dlr "$LAB_DIR/dlr-offtree.out" -v -T 120 --role off-tree
inj --src $S --dst $G --type odata --sqn 11 --trail 1
m=$(sniffed)
ncf --sqn 11
check "the off-tree DLR saw NCF 11" wait_event '^event=ncf tsi=.* sqn=11 '
inj --src $S --dst $G --type poll --ra --path $P --sqn 1 --poll-type 1 --poll-bo-ivl 0
expect_packets "--role off-tree: no POLR for the NCF, only the poll's" "$m" \
	"^pgm src=$DL dst=$P .*type=POLR \| POLR $TSI sqn 1 $REDIRECT"
stop_dlr

# 7. --parity: a DLR that says it can send FEC sets OPT_PARITY in its redirecting POLR
start_dlr "$LAB_DIR/dlr-parity.out" -v -T 120 --parity --role upstream
inj --src $S --dst $G --type odata --sqn 12 --trail 1
m=$(sniffed)
ncf --sqn 12
expect_packets "--parity: OPT_PARITY in the POLR header" "$m" \
	"$POLR sqn 12 round 0 parity opts OPT_REDIRECT dlr $DL\$"
stop_dlr
stop_dlr_sniffer
check "the sniffer saw exactly the 10 packets above" test "$(sniffed)" = 10

check "tshark: 10 packets with good PGM and IP checksums" test \
	"$(tshark_count "$PCAP" 'pgm.hdr.cksum.status == 1 && ip.checksum.status == 1')" = 10
check "tshark: nothing malformed, no expert info" \
	test "$(tshark_count "$PCAP" '_ws.malformed || _ws.expert')" = 0
check "tshark: the 7 upstream POLRs go to the group from the source with Router Alert" test \
	"$(tshark_count "$PCAP" "pgm.hdr.type == 0x02 && ip.src == $S && ip.dst == $G && ip.opt.type == 148")" = 7
check "tshark: every POLR in upstream port form and redirecting to the DLR" test \
	"$(tshark_fields "$PCAP" 'pgm.hdr.type == 0x02' pgm.hdr.sport pgm.hdr.dport pgm.opts.redirect.afi pgm.opts.redirect.dlr.ipv4 | sort -u)" = "7500|1234|1|$DL"
finish
