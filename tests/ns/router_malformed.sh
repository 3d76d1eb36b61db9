#!/bin/bash
# Malformed PGM on the wire (truncated, bad checksums, lengths that lie, bad option lengths, bad
# version or address family), in every path the router intercepts (NAKs to its address, NCFs
# from upstream, SPM and RDATA to the group, over IP and UDP): each is counted under its
# error name on its arrival interface in `show ip pgm router traffic`, dropped, and leaves the
# state of the good session exactly as it was; the good session keeps working afterwards.
# Over UDP only what is PGM (a PGM header whose checksum verifies) and malformed is dropped:
# a datagram too short for a PGM header or with a checksum that does not verify may be anything
# else on those ports, and goes on unchanged, counted as udp_not_pgm.
. "$(dirname "$0")/lib_router.sh"
router_need
TSI="010203040506\.1234"
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-interval 60000" \
	"ip pgm router nak-rdata-interval 600000" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

# ---- a good session with one confirmed repair state (sqn 5, wanted on d1) ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 1 --trail 1 --lead 20
wait_seen 10 r1 "type=SPM" 1
inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 5 --nak-src $SRC_ADDR --nak-grp $GROUP
wait_seen 10 src "type=NAK \| NAK $TSI sqn 5 " 1
inj src s0 --src $SRC_ADDR --dst $GROUP --type ncf --sqn 5 --ra
check "the good session: sqn 5 confirmed" lab_poll 10 eval '[ "$(phase 5)" = OUTSTANDING ]'
state_now() {
	jval "show ip pgm router state json" \
		"[(s['tsi'], s['upstream'], s['upstream_interface'], s['spm_sqn'], s['trail'], s['lead'], [(r['sqn'], r['phase'], r['interfaces']) for r in s['repairs']]) for s in sess]"
}
errs() { # errs IF: that interface's non-zero error counters, "name=n" sorted
	jval "show ip pgm router traffic json" \
		"' '.join(sorted('%s=%d' % (k, v) for k, v in ifs['$1']['errors'].items() if v))"
}
state_now >"$LAB_DIR/state.before"
log "state before: $(cat "$LAB_DIR/state.before")"
malformed_before=$(dp "j['path']['malformed']")
udp_not_pgm_before=$(dp "j['path']['udp_not_pgm']")
sync_wire

# ---- bad packets: NAKs to the router's address on d1 (seen once each) ----
bad_nak() { inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 7 --nak-src $SRC_ADDR --nak-grp $GROUP "$@"; }
bad_nak --truncate 6                   # nak-length
bad_nak --bad-checksum                 # bad-checksum
bad_nak --list 8,9 --opt-total 400     # opt-total-length
bad_nak --opt-raw 04040000             # opt-size: OPT_NAK_BO_IVL 4 bytes long instead of 12
bad_nak --list 8,9 --opt-total 12      # tsdu-length: OPT_LENGTH total short of the options
bad_nak --afi 7                        # unknown-afi
bad_nak --version 1                    # bad-version
bad_nak --tsdu-len 10                  # tsdu-length
bad_nak --udp --truncate 24            # not PGM: UDP with 12 bytes, no PGM header
bad_nak --udp --bad-checksum           # not PGM: UDP whose PGM checksum does not verify
bad_nak --udp --opt-raw 04040000       # opt-size (PGM over UDP, checksum right)
# ---- an NCF from upstream (seen once) ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type ncf --sqn 5 --truncate 8 # nak-length
# ---- multicast SPM and RDATA (replicated by the daemon: a bad one is dropped before any copy) ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 100 --lead 100 --truncate 6 # spm-length
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 101 --lead 101 --bad-checksum
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 102 --lead 102 --nak-bo-ivl 100 --opt-total 400
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --tsdu-len 999    # tsdu-length
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --zero-checksum   # zero-checksum
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --bad-checksum --udp # not PGM

# What the data plane saw: every one of the 9 + 1 + 5 packets once, and the 3 UDP that is not PGM.
log "malformed: $(dp "j['path']['malformed']") udp_not_pgm: $(dp "j['path']['udp_not_pgm']") (before $udp_not_pgm_before) up0: $(errs up0) d1: $(errs d1)"
check "the daemon counted 15 malformed packets" \
	lab_poll 10 eval '[ $(dp "j[\"path\"][\"malformed\"]") -ge $((malformed_before + 15)) ]'
check "and not more" test "$(dp "j['path']['malformed']")" = $((malformed_before + 15))
check "3 UDP datagrams on the ports that are not PGM, accepted" \
	lab_poll 10 eval '[ $(dp "j[\"path\"][\"udp_not_pgm\"]") = $((udp_not_pgm_before + 3)) ]'
check "d1: every bad NAK counted by name" test "$(errs d1)" = \
	"bad-checksum=1 bad-version=1 nak-length=1 opt-size=2 opt-total-length=1 tsdu-length=2 unknown-afi=1"
# Multicast SPM and RDATA are counted on the arrival interface, once each.
check "up0: the bad NCF and the bad SPM and RDATA counted by name" test "$(errs up0)" = \
	"bad-checksum=1 nak-length=1 opt-total-length=1 spm-length=1 tsdu-length=1 zero-checksum=1"
check "d2: nothing bad arrived there" test -z "$(errs d2)"
check "show ip pgm router traffic (text) lists them by name" eval \
	"cli 'show ip pgm router traffic d1' | grep -Eq '^    opt-total-length +1 *\$'"

sync_wire
check "no bad PGM was forwarded downstream (no RDATA, no SPM beyond the first)" eval "
	[ $(seen r1 'encap=ip .*(type=RDATA|sqn 10[0-2] )') = 0 ] &&
	[ $(seen r2 'encap=ip .*(type=RDATA|sqn 10[0-2] )') = 0 ] &&
	[ $(seen r1 "^pgm src=$SRC_ADDR .*encap=ip .*(error=|csum=bad)") = 0 ] &&
	[ $(seen r2 'encap=ip .*(error=|csum=bad)') = 0 ]"
check "the UDP datagram that is not PGM went on, unchanged" eval "
	[ $(seen r1 "^pgm src=$SRC_ADDR .*encap=udp .*csum=bad type=RDATA") = 1 ] &&
	[ $(seen r2 "^pgm src=$SRC_ADDR .*encap=udp .*csum=bad type=RDATA") = 1 ]"
check "no NCF answered a bad NAK" eval "[ $(seen r1 'type=NCF \| NCF $TSI sqn 7 ') = 0 ]"
check "nothing went upstream for a bad NAK" eval "[ $(seen src 'sqn 7 ') = 0 ]"
state_now >"$LAB_DIR/state.after"
check "the good session's state is unchanged" diff "$LAB_DIR/state.before" "$LAB_DIR/state.after"

# ---- PGM too short to carry a type byte's word (under 8 bytes) ----
# The type rules test the type with a 32-bit u32 load at offset 4, which does not match when the
# PGM part is shorter than 8 bytes; separate rules queue every datagram too short for a PGM
# header by its length, so these reach the daemon too: once, at prerouting, which drops them,
# so the multicast one is never forwarded.
m0=$(dp "j['path']['malformed']")
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 103 --truncate 30 # 6 bytes of PGM
inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 7 --nak-src $SRC_ADDR --nak-grp $GROUP --truncate 31
sync_wire
check "a 6-byte multicast PGM datagram is not forwarded downstream" \
	eval "[ $(seen r1 "^pgm src=$SRC_ADDR .*error=short-header") = 0 ] && [ $(seen r2 'error=short-header') = 0 ]"
check "6- and 5-byte PGM datagrams are counted as short-header, once each" \
	lab_poll 10 eval '[ $(dp "j[\"path\"][\"malformed\"]") = $((m0 + 2)) ]'
check "... on their arrival interfaces (up0 for the SPM, d1 for the NAK)" \
	eval "errs up0 | grep -q 'short-header=1' && errs d1 | grep -q 'short-header=1'"
log "malformed now $(dp "j['path']['malformed']") (before $m0) up0: $(errs up0) d1: $(errs d1) d2: $(errs d2)"

# ---- the good session still works ----
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --sqn 2 --trail 1 --lead 21
check "a good SPM is still processed (sqn 2)" lab_poll 10 jtrue "show ip pgm router state json" \
	"sess[0]['spm_sqn'] == 2 and sess[0]['lead'] == 21"
inj src s0 --src $SRC_ADDR --dst $GROUP --type rdata --sqn 5 --trail 1
check "the repair for sqn 5 still reaches r1" wait_seen 10 r1 "type=RDATA \| RDATA $TSI sqn 5 " 1
inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --sqn 7 --nak-src $SRC_ADDR --nak-grp $GROUP
check "a good NAK still gets its NCF" wait_seen 10 r1 "type=NCF \| NCF $TSI sqn 7 " 1
check "the daemon is still running" kill -0 "$DAEMON_PID"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -30; }
finish
