#!/bin/bash
# The test DLR (pgm-dlr) as an off-tree DLR answering POLLs (RFC 3208 9.5.2.2, 14.5), with
# crafted POLLs from the data source's address (tests/ns/dlr.lib):
#  - a DLR poll (POLL_S_TYPE 1) gets one unicast redirecting POLR to POLL_PATH, from the DLR's
#    own address, without Router Alert, POLR_SQN/ROUND echoed, after a delay it drew in
#    [0, POLL_BO_IVL];
#  - a POLL with another POLL_SQN cancels a pending reply;
#  - no POLR for a mask mismatch, an unknown sub-type, a round above 0 without round 0, a DLR
#    poll for a session it holds nothing of; a general poll gets a POLR without OPT_REDIRECT
#    (14.5 makes every child answer it), or none with --no-general-polls;
#  - --parity sets OPT_PARITY in the redirecting POLR; --role upstream answers no DLR poll.
# Absence is proved without timing: a POLL with POLL_BO_IVL 0 would be answered before the DLR
# reads its next packet, so the next POLL's reply must come first on the wire.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dlr.lib"
dlr_need
dlr_lan_captured
# RAND_NODE_ID 5 (binary 101); seed 3 makes the first reply delay 84% of POLL_BO_IVL
start_dlr "$LAB_DIR/dlr.out" -v -T 120 --node-id 5 --seed 3

inj --src $S --dst $G --type spm --ra --path $P --sqn 1 --trail 1 --lead 3
inj --src $S --dst $G --type odata --sqn 1 --count 3 --trail 1
poll() { inj --src $S --dst $G --type poll --ra --path $P "$@"; }
REDIRECT="opts OPT_REDIRECT dlr $DL\$"

# 1. a DLR poll with a long back-off, cancelled by a POLL with another POLL_SQN
start=$(date +%s)
poll --sqn 20 --poll-type 1 --poll-bo-ivl 5000000
check "the first reply is scheduled late enough to be cancelled (delay above 1 s)" \
	wait_event '^event=poll sqn=20 .*verdict=reply-redirect delay_us=[1-4][0-9]{6}$'
m=$(sniffed)
poll --sqn 21 --poll-type 1 --poll-bo-ivl 0
expect_packets "a POLL with a new POLL_SQN: its reply only" "$m" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=POLR \| POLR $TSI sqn 21 round 0 $REDIRECT"

# 2. a DLR poll answered within POLL_BO_IVL
m=$(sniffed)
poll --sqn 1 --poll-type 1 --poll-bo-ivl 300000
expect_packets "DLR poll: one unicast redirecting POLR to POLL_PATH, own address, no RA" "$m" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=POLR \| POLR $TSI sqn 1 round 0 $REDIRECT"

# 3. mask mismatch (bit 0 of 5 is 1, POLL_RAND's is 0), then a match (marker)
m=$(sniffed)
poll --sqn 2 --poll-type 1 --poll-bo-ivl 0 --poll-mask 1 --poll-rand 0
check "the DLR judged POLL 2 mask-mismatch" \
	wait_event '^event=poll sqn=2 .*verdict=mask-mismatch'
poll --sqn 3 --poll-type 1 --poll-bo-ivl 0 --poll-mask 1 --poll-rand 1
expect_packets "mask mismatch: no POLR (the matching POLL after it is answered first)" "$m" \
	"type=POLR \| POLR $TSI sqn 3 round 0 $REDIRECT"

# 4. a general poll: a POLR without options
m=$(sniffed)
poll --sqn 4 --poll-type 0 --poll-bo-ivl 0
expect_packets "general poll: a plain POLR, no OPT_REDIRECT" "$m" \
	"^pgm src=$DL dst=$P ttl=16 ra=0 encap=ip csum=ok type=POLR \| POLR $TSI sqn 4 round 0\$"

# 5. an unknown sub-type, then a DLR poll (marker)
m=$(sniffed)
poll --sqn 5 --poll-type 2 --poll-bo-ivl 0
check "the DLR judged POLL 5 unknown-type" \
	wait_event '^event=poll sqn=5 .*verdict=unknown-type'
poll --sqn 6 --poll-type 1 --poll-bo-ivl 0
expect_packets "unknown sub-type: no POLR" "$m" "type=POLR \| POLR $TSI sqn 6 round 0 $REDIRECT"

# 6. rounds: round 1 without round 0 is ignored; after round 0, round 1 is answered
m=$(sniffed)
poll --sqn 7 --poll-round 1 --poll-type 1 --poll-bo-ivl 0
check "the DLR judged POLL 7 round-unseen" \
	wait_event '^event=poll sqn=7 round=1 .*verdict=round-unseen'
poll --sqn 7 --poll-round 0 --poll-type 1 --poll-bo-ivl 0
wait_sniffed $((m + 1))
poll --sqn 7 --poll-round 1 --poll-type 1 --poll-bo-ivl 0
expect_packets "rounds: no reply to round 1 before round 0, then round 0 and round 1 echoed" "$m" \
	"type=POLR \| POLR $TSI sqn 7 round 0 $REDIRECT" \
	"type=POLR \| POLR $TSI sqn 7 round 1 $REDIRECT"

# 7. a session it holds nothing of (no reply), then one it holds (marker)
m=$(sniffed)
inj --src $S --dst $G --type poll --ra --path $P --gsi 0a0b0c0d0e0f --sqn 8 --poll-type 1 \
	--poll-bo-ivl 0
check "the DLR judged POLL 8 no-service" \
	wait_event '^event=poll sqn=8 .*verdict=no-service'
poll --sqn 9 --poll-type 1 --poll-bo-ivl 0
expect_packets "DLR poll for a session without data: no POLR" "$m" \
	"type=POLR \| POLR $TSI sqn 9 round 0 $REDIRECT"

# 8. the reply goes to POLL_PATH, whatever it is
m=$(sniffed)
inj --src $S --dst $G --type poll --ra --path $Q --sqn 10 --poll-type 1 --poll-bo-ivl 0
expect_packets "the POLR goes to POLL_PATH" "$m" \
	"^pgm src=$DL dst=$Q .*type=POLR \| POLR $TSI sqn 10 round 0 $REDIRECT"

check "every reply was scheduled within its POLL_BO_IVL" sh -c "
	awk '/^event=poll .*verdict=reply-/ {
		for (i = 1; i <= NF; i++) { split(\$i, kv, \"=\"); v[kv[1]] = kv[2] }
		n++; if (v[\"delay_us\"] + 0 > v[\"bo_ivl_us\"] + 0) bad++
	} END { exit !(n == 10 && bad == 0) }' $DLR_OUT"
# the cancelled reply would have been due 84% into its 5 s back-off: wait past it
lab_poll 8 sh -c "[ \$(date +%s) -ge $((start + 6)) ]"
stop_dlr
expect_summary polls_received 14
expect_summary polls_answered 9
expect_summary polrs_sent 9
expect_summary polls_cancelled 1
expect_summary poll_reply_redirect 9
expect_summary poll_reply_plain 1
expect_summary poll_mask_mismatch 1
expect_summary poll_unknown_type 1
expect_summary poll_round_unseen 1
expect_summary poll_no_service 1
expect_summary acting_off_tree 1
check "the cancelled POLR (sqn 20) never went out" sh -c "! grep -q 'POLR $TSI sqn 20 ' $SNIFF_OUT"

# 9. --parity --no-general-polls --role off-tree
start_dlr "$LAB_DIR/dlr-parity.out" -v -T 120 --parity --no-general-polls --role off-tree
inj --src $S --dst $G --type odata --sqn 4 --trail 1
m=$(sniffed)
poll --sqn 30 --poll-type 0 --poll-bo-ivl 0
check "the DLR judged POLL 30 not-offered" \
	wait_event '^event=poll sqn=30 .*verdict=not-offered'
poll --sqn 31 --poll-type 1 --poll-bo-ivl 0
expect_packets "--parity: OPT_PARITY in the redirecting POLR; --no-general-polls: none" "$m" \
	"^pgm src=$DL dst=$P .*csum=ok type=POLR \| POLR $TSI sqn 31 round 0 parity $REDIRECT"
stop_dlr

# 10. --role upstream: DLR polls are not answered; general polls still are (marker)
start_dlr "$LAB_DIR/dlr-upstream.out" -v -T 120 --role upstream
inj --src $S --dst $G --type odata --sqn 5 --trail 1
m=$(sniffed)
poll --sqn 40 --poll-type 1 --poll-bo-ivl 0
check "the DLR judged POLL 40 not-offered" \
	wait_event '^event=poll sqn=40 .*verdict=not-offered'
poll --sqn 41 --poll-type 0 --poll-bo-ivl 0
expect_packets "--role upstream: no reply to a DLR poll" "$m" \
	"type=POLR \| POLR $TSI sqn 41 round 0\$"
stop_dlr
stop_dlr_sniffer
check "the sniffer saw exactly the 11 POLRs above" test "$(sniffed)" = 11

check "tshark: 11 POLRs with good PGM and IP checksums" test \
	"$(tshark_count "$PCAP" 'pgm.hdr.type == 0x02 && pgm.hdr.cksum.status == 1 && ip.checksum.status == 1')" = 11
check "tshark: nothing malformed, no expert info, no Router Alert" \
	test "$(tshark_count "$PCAP" '_ws.malformed || _ws.expert || ip.opt.type == 148')" = 0
check "tshark: POLR ports in upstream form (7500 -> 1234)" \
	test "$(tshark_fields "$PCAP" pgm pgm.hdr.sport pgm.hdr.dport | sort -u)" = "7500|1234"
redirects=$(tshark_fields "$PCAP" pgm.opts.redirect.afi pgm.opts.redirect.afi \
	pgm.opts.redirect.dlr.ipv4 | sort | uniq -c | tr -s ' ')
check "tshark: OPT_REDIRECT holds AFI 1 and the DLR's address on the 9 redirecting POLRs" \
	test "$redirects" = " 9 1|$DL"
check "tshark: OPT_PARITY in the header of one POLR only" \
	test "$(tshark_count "$PCAP" 'pgm.hdr.opts.parity == 1')" = 1
finish
