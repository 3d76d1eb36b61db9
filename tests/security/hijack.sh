#!/bin/bash
# Session hijack (RFC 3208 7.1, 10, 16): a host that is not the source sends an SPM with the
# legitimate session's TSI (visible in every ODATA) and a higher SPM_SQN, to another group from
# another interface. Safe outcome: the session keeps its source, group and upstream; the real
# source's next SPMs are accepted and forwarded; the receivers' NAKs keep getting NCFs at once
# and go upstream to the source once; repairs go only where they were asked for.
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_all
sec_start
legit_session
probe
check "before any attack: $(probe_text)" probe_ok

# attack ATTACKER ADDR SQN-AHEAD: an SPM of the session's TSI from ADDR to G2, SPM_PATH ADDR.
attack() {
	local node=$1 addr=$2 ahead=$3
	inj "$node" --src "$addr" --dst $G2 --type spm --gsi $GSI --sport 1234 \
		--sqn $((SPM_SQN + ahead)) --trail 1 --lead $((LEAD + ahead)) --path "$addr"
	# the daemon takes it within milliseconds; a pinned session never changes, so wait a while
	lab_poll 1 eval "! session_pinned" || true
	figure "after the SPM from $node: session (source, group, upstream, interface, spm_sqn) = $(session_text)"
	check "SPM from $node ($addr, group $G2, SPM_SQN +$ahead): the session keeps source $S1, group $G, upstream $S1 on eth0" \
		session_pinned
	check "the real source's next SPM (sqn $((SPM_SQN + 1))) is forwarded to LAN a" legit_spm
	check "and is the session's SPM_SQN" field_is spm_sqn $SPM_SQN
	probe
	figure "after the SPM from $node: $(probe_text)"
	check "a1's NAK after the SPM from $node: $(probe_text)" probe_ok
}

attack m1 $M1 1000
attack a2 $A2 100000

# Repairs stay confined: a fresh SQN NAKed from LAN a only, confirmed by the source as a real
# one does at once (without it the router gives the NAK up after NAK_RPT_IVL), then repaired.
PROBE_SQN=$((PROBE_SQN + 1))
inj a1 --src $A1 --dst $R_A --type nak --gsi $GSI --sqn $PROBE_SQN --nak-src $S1 --nak-grp $G
sleep 0.1
inj s1 --src $S1 --dst $G --type ncf --gsi $GSI --sport 1234 --sqn $PROBE_SQN --nak-src $S1 --nak-grp $G
inj s1 --src $S1 --dst $G --type rdata --gsi $GSI --sport 1234 --sqn $PROBE_SQN --trail 1
marker
check "the source's RDATA sqn $PROBE_SQN reaches LAN a" \
	[ "$(seen a "type=RDATA \| RDATA $TSI_RE sqn $PROBE_SQN ")" -ge 1 ]
check "and neither LAN b nor LAN x" eval "[ $(seen b "type=RDATA \| RDATA $TSI_RE sqn $PROBE_SQN ") = 0 ] &&
	[ $(seen x "type=RDATA \| RDATA $TSI_RE sqn $PROBE_SQN ") = 0 ]"
check "no NAK of the session ever went to an attacker" eval \
	"[ $(seen x "type=NAK \| NAK $TSI_RE ") = 0 ] && [ $(seen a "dst=$A2 .*type=NAK") = 0 ]"
finish
