#!/bin/bash
# NCFs that create state (RFC 3208 7.5, 7.7): anticipated repair state is made by NCFs from
# upstream, which nothing bounds but the session's window. NCFs on the upstream LAN, for SQNs far
# outside the session's window, and for in-window SQNs with a NAK_SRC or NAK_GRP that is not the
# session's. Safe outcome: none of them leaves repair state for its SQNs; an NCF inside the
# window with the session's NLAs still does (the barrier that shows the others were processed).
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_all
sec_start
legit_session

# has_state SQN: the legitimate session holds repair state for SQN.
has_state() {
	jtrue "show ip pgm router state json" \
		"any(r['sqn'] == $1 for s in sess if s['tsi'] == '$TSI' for r in s.get('repairs', []))"
}
ncf() { # ncf SQN NAK_SRC NAK_GRP
	inj s1 --src $S1 --dst $G --type ncf --gsi $GSI --sport 1234 --sqn "$1" --nak-src "$2" \
		--nak-grp "$3" --ra --ttl 255
}
OUT_LEAD=$((LEAD + 1000000000)) # a billion past the leading edge
OUT_TRAIL=$((0x80000000 + 1))   # half the sequence space away: behind the trailing edge
ncf $OUT_LEAD $S1 $G
ncf $OUT_TRAIL $S1 $G
ncf 7001 198.18.1.99 $G
ncf 7002 $S1 239.192.0.99
ncf 7003 $S1 $G # inside the window, the session's NLAs: anticipated state, as 7.5 says
check "the in-window NCF with the session's NLAs makes anticipated state (the barrier)" \
	lab_poll 5 has_state 7003
for c in "$OUT_LEAD:SQN $OUT_LEAD, a billion past the window" \
	"$OUT_TRAIL:SQN $OUT_TRAIL, behind the window" \
	"7001:NAK_SRC 198.18.1.99, not the source" "7002:NAK_GRP 239.192.0.99, not the group"; do
	sqn=${c%%:*}
	st=no
	has_state "$sqn" && st=yes
	figure "NCF with $(echo "${c#*:}"): state made: $st"
	check "NCF with ${c#*:}: no repair state" [ "$st" = no ]
done
probe
check "the legitimate session still served: $(probe_text)" probe_ok
finish
