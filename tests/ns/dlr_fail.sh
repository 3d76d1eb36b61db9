#!/bin/bash
# The test DLR (pgm-dlr) told to stop repairing (tests/ns/dlr.lib), as the lab needs to make a
# network element fall back from a DLR to the source (9.5.3.2):
#  - --fail-after N --fail-mode silent: N repairs, then nothing at all: no NCF, RDATA or NNAK
#    for NAKs, no POLR for DLR polls or parent NCFs;
#  - --fail-mode nak: after N repairs every NAK gets its NCF and a NAK upstream, the DLR's way
#    of telling the network element to drop the redirect for those SQNs; polls still answered;
#  - --fail-after 0: failed from the start;
#  - -T: the DLR exits by itself with its summary.
# Silence is proved by the DLR's own counters and by the capture, stopped after the DLR exited.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dlr.lib"
dlr_need
topo_dlr_lan
start_dlr_sniffer "$LAB_DIR/sniff.out"
session() {
	inj --src $S --dst $G --type spm --ra --path $P --sqn "$1" --trail 1 --lead 10
	inj --src $S --dst $G --type odata --sqn 1 --count 10 --trail 1
}

# 1. silent after 2 repairs; the NAK asks for 3 SQNs, so the third goes upstream
start_dlr "$LAB_DIR/dlr-silent.out" -v -T 120 --fail-after 2 --fail-mode silent
session 1
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 3 --list 4,5 --nak-src $S --nak-grp $G
expect_packets "the last answers: NCF, NAK 5 upstream (over budget), NNAK 3+4, RDATA 3 and 4" "$m" \
	"^pgm src=$DL dst=$P .*type=NCF \| NCF $TSI sqn 3 list 4,5 " \
	"^pgm src=$DL dst=$P .*type=NAK \| NAK $TSI sqn 5 " \
	"^pgm src=$DL dst=$P .*type=NNAK \| NNAK $TSI sqn 3 list 4 " \
	"^pgm src=$DL dst=$P .*type=RDATA \| RDATA $TSI sqn 3 " \
	"^pgm src=$DL dst=$P .*type=RDATA \| RDATA $TSI sqn 4 "
check "the DLR says it fails after 2 repairs" wait_event '^event=failing after=2 mode=silent$'
inj --src $P --dst $DL --type nak --sqn 6 --nak-src $S --nak-grp $G
inj --src $Q --dst $DL --type nak --sqn 7 --nak-src $S --nak-grp $G
inj --src $S --dst $G --type poll --ra --path $P --sqn 1 --poll-type 1 --poll-bo-ivl 0
inj --src $S --dst $G --type poll --ra --path $P --sqn 2 --poll-type 0 --poll-bo-ivl 0
inj --src $S --dst $G --type ncf --ra --sqn 8
check "the DLR read everything sent after it failed" wait_event '^event=ncf tsi=.* sqn=8 '
stop_dlr
expect_summary failed 1
expect_summary rdata_sent 2
expect_summary ncfs_sent 1
expect_summary nnaks_sent 1
expect_summary naks_sent 1
expect_summary naks_received 3
expect_summary naks_ignored 2
expect_summary polls_received 2
expect_summary poll_not_offered 2
expect_summary polrs_sent 0
check "nothing on the wire after the 5 last answers" test "$(sniffed)" = 5

# 2. nak mode after 1 repair
start_dlr "$LAB_DIR/dlr-nak.out" -v -T 120 --fail-after 1 --fail-mode nak
session 2
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 3 --nak-src $S --nak-grp $G
expect_packets "one repair: NCF, NNAK, RDATA" "$m" \
	"^pgm src=$DL dst=$P .*type=NCF \| NCF $TSI sqn 3 " \
	"^pgm src=$DL dst=$P .*type=NNAK \| NNAK $TSI sqn 3 " \
	"^pgm src=$DL dst=$P .*type=RDATA \| RDATA $TSI sqn 3 "
check "the DLR says it fails after 1 repair" wait_event '^event=failing after=1 mode=nak$'
m=$(sniffed)
inj --src $P --dst $DL --type nak --sqn 4 --list 5 --nak-src $S --nak-grp $G
expect_packets "failed, off-tree: NCF to the parent, then NAKs the cached SQNs back to it" "$m" \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NCF \| NCF $TSI sqn 4 list 5 " \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NAK \| NAK $TSI sqn 4 list 5 "
m=$(sniffed)
inj --src $Q --dst $DL --type nak --sqn 6 --nak-src $S --nak-grp $G
expect_packets "failed, upstream: NCF down the tree, NAK to the parent" "$m" \
	"^pgm src=$S dst=$G .* ra=1 .*type=NCF \| NCF $TSI sqn 6 " \
	"^pgm src=$DL dst=$P .* ra=0 .*type=NAK \| NAK $TSI sqn 6 "
m=$(sniffed)
inj --src $S --dst $G --type poll --ra --path $P --sqn 1 --poll-type 1 --poll-bo-ivl 0
expect_packets "failed in nak mode, it still answers DLR polls" "$m" \
	"^pgm src=$DL dst=$P .*type=POLR \| POLR $TSI sqn 1 round 0 opts OPT_REDIRECT dlr $DL\$"
stop_dlr
expect_summary failed 1
expect_summary rdata_sent 1
expect_summary naks_sent 2
expect_summary unknown_sqn 3
expect_summary naks_ignored 0

# 3. --fail-after 0: failed before the first NAK; -T 3: it leaves by itself
start_dlr "$LAB_DIR/dlr-zero.out" -v -T 3 --fail-after 0
check "--fail-after 0: failed from the start" wait_event '^event=failing after=0 mode=silent$'
session 3
inj --src $P --dst $DL --type nak --sqn 3 --nak-src $S --nak-grp $G
check "the NAK is ignored" wait_event '^event=nak sqn=3 ignored=failed$'
lab_wait_pid "$DLR_PID" 10
rc=$?
check "-T: the DLR exits by itself" test $rc != 124
check "-T: ... with status 0" test $rc = 0
check "-T: ... with its summary" grep -q '^result=ok peer=pgm-dlr ' "$DLR_OUT"
expect_summary rdata_sent 0
expect_summary ncfs_sent 0
expect_summary naks_ignored 1
stop_dlr_sniffer
check "the capture holds exactly the 13 answers above" test "$(sniffed)" = 13

# 4. bad command lines are refused with a message
lab_exec dlr "$DLR" -i d0 --fail-mode sometimes >/dev/null 2>"$LAB_DIR/usage.err"
check "an unknown --fail-mode is a usage error (64)" test $? = 64
check "... with a message" grep -q 'bad value for option --fail-mode' "$LAB_DIR/usage.err"
lab_exec dlr "$DLR" >/dev/null 2>"$LAB_DIR/usage.err"
check "no --if is a usage error" test $? = 64
lab_exec dlr "$DLR" -i nosuchif -T 1 >/dev/null 2>"$LAB_DIR/setup.err"
check "an unknown interface is a setup error (70)" test $? = 70
finish
