#!/bin/bash
# NAKs sent where the SPM says (RFC 3208 7.3, 16): a session's upstream NAKs go to its SPMs' path
# NLA, which any source (or anyone sending SPMs) chooses. SPMs of fresh sessions name a multicast
# group, loopback, the router's own addresses, the limited and the subnet broadcast. Safe
# outcome: the router never sends a NAK to any of them (sniffed on every LAN and on the
# router's loopback), and keeps serving the legitimate session.
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_all
lab_spawn_ready r1 "$LAB_DIR/lo.sniff" "$LAB_DIR/lo.sniff.ready" "$SNIFF" --if lo --time \
	--timeout 280 --ready "$LAB_DIR/lo.sniff.ready" || exit 1
sec_start
legit_session

BAD="239.192.0.99 224.0.0.1 127.0.0.1 $R_SRC $R_A 255.255.255.255 198.18.1.255 0.0.0.0"
n=0
for path in $BAD; do
	n=$((n + 1))
	gsi=$(printf 'bad000000%03x' $n)
	inj s1 --src $S1 --dst $G --type spm --gsi "$gsi" --sport 1234 --sqn 1 --trail 1 --lead 1000 \
		--path "$path"
	wait_seen 2 a "type=SPM \| SPM $gsi\.1234 sqn 1 " 1 || log "SPM of $gsi not forwarded"
	inj a1 --src $A1 --dst $R_A --type nak --gsi "$gsi" --sqn 5 --nak-src $S1 --nak-grp $G
done
# NAKs go out at once and are repeated every 200 ms: a second is five chances
sleep 1
marker
for path in $BAD; do
	p=${path//./\\.}
	c=0
	for f in src a b x lo; do
		# (not a1's own NAKs: they go to the router's address on LAN a, as they should)
		c=$((c + $(grep -E -- "dst=$p .*type=NAK " "$LAB_DIR/$f.sniff" | grep -Evc -- "src=$A1 " || true)))
	done
	figure "path NLA $path: $c NAK(s) sent to it"
	check "path NLA $path: no NAK sent to it" [ "$c" = 0 ]
done
probe
check "the legitimate session still served: $(probe_text)" probe_ok
finish
