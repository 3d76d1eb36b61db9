#!/bin/bash
# Repairs silenced from downstream (RFC 3208 15.3): a host on a receiver LAN sends NCFs with
# OPT_NBR_UNREACH naming the session's upstream neighbour (the source's address, visible in
# every ODATA), unicast to the router and multicast to the group. Only the upstream neighbour on
# the upstream interface may say that. Safe outcome: the receivers' NAKs are still confirmed and
# forwarded upstream, before and after the source's next SPM.
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_all
sec_start
legit_session
probe
check "before any attack: $(probe_text)" probe_ok

round() {
	local when=$1
	inj a2 --src $A2 --dst $R_A --type ncf --gsi $GSI --sport 1234 --sqn $((PROBE_SQN + 1)) \
		--nak-src $S1 --nak-grp $G --nbr-unreach --path-nla $S1
	inj a2 --src $A2 --dst $G --type ncf --gsi $GSI --sport 1234 --sqn $((PROBE_SQN + 1)) \
		--nak-src $S1 --nak-grp $G --nbr-unreach --path-nla $S1 --ra
	sleep 0.3
	probe
	figure "$when: $(probe_text)"
	check "$when: a1's NAK confirmed and forwarded: $(probe_text)" probe_ok
}
round "after NBR_UNREACH NCFs from a2 (LAN a)"
check "the source's next SPM is forwarded" legit_spm
round "after the next SPM and NBR_UNREACH NCFs again"
finish
