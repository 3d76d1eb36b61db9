#!/bin/bash
# The test DLR (pgm-dlr) with real OpenPGM peers on one LAN (a bridge):
#
#   src 198.18.41.1 (pgm-send)   dlr 198.18.41.2 (pgm-dlr)   rcv 198.18.41.3 (pgm-recv)
#   ne  198.18.41.4 (pgm-inject, pgm-sniff: a network element's view)
#
#  - the DLR learns the OpenPGM session from its SPMs (TSI, source, group, port, parent) and
#    caches its ODATA, every 40th message a 4000-byte one that OpenPGM fragments (OPT_FRAGMENT);
#  - the receiver loses every 25th ODATA (raw PREROUTING) and its NAKs, sent to the source, are
#    redirected to the DLR (nat OUTPUT DNAT): it must receive every message exactly once and
#    in order from the DLR's NCFs and RDATA alone, the source sending no RDATA at all. So an
#    OpenPGM receiver accepts the DLR's upstream-mode NCF and RDATA;
#  - a network element's NAK for a cached SQN: NCF, NNAK to the source, RDATA whose payload is
#    the original ODATA's; for a fragment, RDATA with the same OPT_FRAGMENT;
#  - a NAK for an SQN that left the DLR's window: the DLR NAKs the source, and the OpenPGM
#    source answers that NAK with its NCF and RDATA. So OpenPGM accepts the DLR's NAKs.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/dlr.lib"
dlr_need
SEND=${SEND:-"$LAB_PEERS/pgm-send"}
RECV=${RECV:-"$LAB_PEERS/pgm-recv"}
need "$SEND" "$RECV"
command -v tshark >/dev/null || { log "tshark missing"; exit 1; }
S=198.18.41.1
DL=198.18.41.2
R=198.18.41.3
N=198.18.41.4
COUNT=1000
WINDOW=512
RDATA_U32="0>>22&0x3C@4>>24&0x0F=5"
ODATA_U32="0>>22&0x3C@4>>24&0x0F=4"

# A learning switch (not one of the lab's hub-like LANs): each sniffer sees the multicast and
# only the unicast addressed to its own host.
lab_host sw
ip -n "$(lab_ns sw)" link add br0 type bridge mcast_snooping 0
ip -n "$(lab_ns sw)" link set br0 up
for pair in "src s0 $S" "dlr d0 $DL" "rcv r0 $R" "ne n0 $N"; do
	read -r node ifname addr <<<"$pair"
	lab_host "$node"
	lab_link "$node" "$ifname" "$addr/24" sw "p-$node" -
	ip -n "$(lab_ns sw)" link set "p-$node" master br0
done
# the receiver loses every 25th ODATA, and its NAKs go to the DLR instead of the source
lab_exec rcv iptables -t raw -A PREROUTING -i r0 -p 113 -m u32 --u32 "$ODATA_U32" \
	-m statistic --mode nth --every 25 --packet 0 -j DROP || { log "iptables (raw) failed"; exit 1; }
lab_exec rcv iptables -t nat -A OUTPUT -p 113 -d $S -j DNAT --to-destination $DL ||
	{ log "iptables (nat) failed"; exit 1; }
# the RDATA the source sends, counted
lab_exec src iptables -A OUTPUT -o s0 -p 113 -m u32 --u32 "$RDATA_U32"
source_rdata() {
	lab_exec src iptables -nvxL OUTPUT | awk '$3 == 113 || $3 == "pgm" { print $1; exit }'
}
lost_odata() {
	lab_exec rcv iptables -t raw -nvxL PREROUTING | awk '$3 == "DROP" { print $1; exit }'
}

# what the DLR sends, as the source's interface receives it; and everything on the LAN as a
# network element sees it
PCAP_NE="$LAB_DIR/ne.pcap"
SNIFF_OUT="$LAB_DIR/src-in.out"
lab_spawn_ready src "$SNIFF_OUT" "$LAB_DIR/s.ready" "$SNIFF" --if s0 --in --timeout 120 \
	--ready "$LAB_DIR/s.ready" || exit 1
SNIFF_PID=$LAB_PID
lab_spawn_ready ne "$LAB_DIR/ne.out" "$LAB_DIR/n.ready" "$SNIFF" --if n0 --in --timeout 120 \
	--ready "$LAB_DIR/n.ready" --write "$PCAP_NE" || exit 1
NE_SNIFF_PID=$LAB_PID

start_dlr "$LAB_DIR/dlr.out" -v -T 120 -w $WINDOW
lab_spawn rcv "$LAB_DIR/recv.out" "$RECV" -n "$R;$G" -c $COUNT -T 60
RECV_PID=$LAB_PID
lab_poll 10 grep -q '^event=ready' "$LAB_DIR/recv.out" || {
	log "pgm-recv did not start"
	exit 1
}
lab_spawn src "$LAB_DIR/send.out" "$SEND" -n "$S;$G" -c $COUNT -r 200 --large-every 40 \
	--linger 15000 -T 60
SEND_PID=$LAB_PID

check "the DLR learns the OpenPGM session from its SPMs, parent = the source" \
	wait_event "^event=session tsi=[0-9a-f]{12}\.[0-9]+ source=$S group=$G dport=7500 parent=$S\$"
TSI=$(sed -n "s/^event=session tsi=\([^ ]*\) source=$S .*parent=$S\$/\1/p" "$DLR_OUT" | head -n 1)
GSI=${TSI%.*}
SPORT=${TSI#*.}

check "pgm-recv: every message once and in order" ended "$RECV_PID" 60
recv_result=$(grep '^result=' "$LAB_DIR/recv.out")
log "receiver: $recv_result"
check "pgm-recv: result=ok" grep -q '^result=ok .* missing=0 ' "$LAB_DIR/recv.out"
lost=$(lost_odata)
log "ODATA dropped at the receiver: $lost; RDATA sent by the source: $(source_rdata)"
check "the receiver did lose ODATA (the test means something)" test "${lost:-0}" -ge 20
check "the source sent no RDATA: every repair came from the DLR" test "$(source_rdata)" = 0
check "the DLR answered the receiver's NAKs with RDATA" \
	sh -c "[ \$(grep -c 'event=send type=RDATA src=$S dst=$G ra=1' $DLR_OUT) -ge $lost ]"
check "the DLR sent NNAKs to the source" \
	sh -c "grep -q 'event=send type=NNAK src=$DL dst=$S ' $DLR_OUT"

# the first and last SQNs of the stream, as the network element saw the ODATA: more TPDUs than
# messages, for the fragments
first=$(sed -n "s/.*type=ODATA | ODATA $TSI sqn \([0-9]*\) .*/\1/p" "$LAB_DIR/ne.out" | head -n 1)
last=$(sed -n "s/.*type=ODATA | ODATA $TSI sqn \([0-9]*\) .*/\1/p" "$LAB_DIR/ne.out" | tail -n 1)
TPDUS=$(grep -c "type=ODATA | ODATA $TSI sqn " "$LAB_DIR/ne.out")
check "the network element saw the whole stream ($first..$last, $TPDUS TPDUs for $COUNT messages)" \
	test "$((last - first + 1))" = "$TPDUS" -a "$TPDUS" -gt $COUNT

# a network element's NAK for a cached SQN (upstream service: it is not the DLR's parent)
X=$((last - 10))
m=$(sniffed)
lab_exec ne "$INJECT" --if n0 --src $N --dst $DL --type nak --gsi "$GSI" --dport "$SPORT" \
	--sqn $X --nak-src $S --nak-grp $G >/dev/null
expect_packets "NAK for a cached SQN of the OpenPGM session: NCF, NNAK to the source, RDATA" "$m" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=NCF \| NCF $TSI sqn $X src $S grp $G\$" \
	"^pgm src=$DL dst=$S ttl=16 ra=0 encap=ip csum=ok type=NNAK \| NNAK $TSI sqn $X src $S grp $G\$" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=RDATA \| RDATA $TSI sqn $X "

# a fragment: the repair carries the same OPT_FRAGMENT (first SQN, offset, APDU length)
frag_line=$(grep "type=ODATA | ODATA $TSI sqn .* frag " "$LAB_DIR/ne.out" | tail -n 1)
F=$(printf '%s\n' "$frag_line" | sed -n 's/.* sqn \([0-9]*\) .*/\1/p')
frag=$(printf '%s\n' "$frag_line" | grep -o 'frag [0-9+/]*' | tail -n 1)
frag_re=${frag//+/\\+}
m=$(sniffed)
lab_exec ne "$INJECT" --if n0 --src $N --dst $DL --type nak --gsi "$GSI" --dport "$SPORT" \
	--sqn "$F" --nak-src $S --nak-grp $G >/dev/null
expect_packets "NAK for a fragment ($F, $frag): the RDATA keeps OPT_FRAGMENT" "$m" \
	"type=NCF \| NCF $TSI sqn $F " "type=NNAK \| NNAK $TSI sqn $F " \
	"^pgm src=$S dst=$G .* ra=1 .*csum=ok type=RDATA \| RDATA $TSI sqn $F trail [0-9]+ len [0-9]+ opts OPT_FRAGMENT $frag_re\$"

# a NAK for an SQN older than the DLR's window goes to the source, which repairs it
Y=$first
m=$(sniffed)
lab_exec ne "$INJECT" --if n0 --src $N --dst $DL --type nak --gsi "$GSI" --dport "$SPORT" \
	--sqn $Y --nak-src $S --nak-grp $G >/dev/null
expect_packets "NAK for an SQN out of the DLR's window: NCF, then a NAK to the source" "$m" \
	"^pgm src=$S dst=$G ttl=16 ra=1 encap=ip csum=ok type=NCF \| NCF $TSI sqn $Y " \
	"^pgm src=$DL dst=$S ttl=16 ra=0 encap=ip csum=ok type=NAK \| NAK $TSI sqn $Y src $S grp $G\$"
check "the OpenPGM source confirms the DLR's NAK (its own NCF, without RA)" lab_poll 10 \
	grep -Eq "^pgm src=$S dst=$G .* ra=0 .*type=NCF \| NCF $TSI sqn $Y " "$LAB_DIR/ne.out"
# the source's own RDATA is told from the DLR's by the source's output counter: both carry the
# source's address, and the DLR's full-size repairs go without Router Alert
check "... and repairs it: the source sends its first RDATA" lab_poll 10 \
	sh -c "[ \"\$(ip netns exec $(lab_ns src) iptables -nvxL OUTPUT | awk '\$3 == 113 || \$3 == \"pgm\" { print \$1 }')\" = 1 ]"

stop_dlr
kill "$SEND_PID" 2>/dev/null
ended "$SEND_PID" 10
sleep 0.5
kill "$SNIFF_PID" "$NE_SNIFF_PID" 2>/dev/null
ended "$SNIFF_PID" 10
ended "$NE_SNIFF_PID" 10
expect_summary sessions 1
expect_summary odata_cached "$TPDUS"
expect_summary cache_held $WINDOW
expect_summary bad_packets 0
expect_summary send_errors 0
# OpenPGM fills TPDUs up to the MTU; Router Alert would not fit on their repairs
check "full-size repairs went without Router Alert rather than not at all (ra_dropped_mtu > 0)" \
	test "$(summary ra_dropped_mtu)" -gt 0
log "DLR: $(grep '^result=' "$DLR_OUT" | cut -d' ' -f3-22)"

# the DLR's repair of X carries the OpenPGM source's bytes
hexof() {
	tshark_fields "$PCAP_NE" "pgm.hdr.type == $1 && pgm.spm.sqn == $2 && ip.src == $S" data.data |
		head -n 1
}
ox=$(hexof 0x04 $X)
rx=$(hexof 0x05 $X)
check "tshark: the RDATA for $X carries the ODATA's payload (${#ox} hex digits)" \
	sh -c "[ -n '$ox' ] && [ '$ox' = '$rx' ]"
of=$(hexof 0x04 "$F")
rf=$(hexof 0x05 "$F")
check "tshark: the RDATA for fragment $F carries the ODATA's payload (${#of} hex digits)" \
	sh -c "[ -n '$of' ] && [ '$of' = '$rf' ]"
check "tshark: every PGM checksum on the LAN good" test \
	"$(tshark_count "$PCAP_NE" 'pgm && !(pgm.hdr.cksum.status == 1)')" = 0
check "tshark: nothing malformed" test "$(tshark_count "$PCAP_NE" '_ws.malformed')" = 0
finish
