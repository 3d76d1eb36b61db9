#!/bin/bash
# pgmrouterd's packet path end to end over IPv6, with crafted packets (router_repair.sh for
# IPv4): an IPv6-only topology, the (S,G) route by smcroute. SPMs get each downstream
# interface's global IPv6 address as path NLA (AFI 2) and create the session, shown by its IPv6
# addresses; a NAK from r1 gets an NCF on r1's segment only, multicast to the group from the
# data source, with the hop-by-hop Router Alert; exactly one NAK goes upstream, from the
# router's global address on up0 to the SPM's path address (the source), repeated only until an
# NCF comes from upstream; RDATA goes only where it was asked for; ODATA reaches everyone and
# never enters the queue. tshark decodes every packet the router sent. Then with the iptables
# backend (ip6tables chains): NAKs, one behind a hop-by-hop Router Alert, confirmed; ODATA never
# queued; the chains removed at exit; and without ip6tables, IPv4 alone with IPv6's absence
# shown and logged.
#
#   src (s0 2001:db8:1::2) --- (up0 2001:db8:1::1) rtr (d1 2001:db8:2::1) --- (dn 2001:db8:2::2) r1
#                                                      (d2 2001:db8:3::1) --- (dn 2001:db8:3::2) r2
. "$(dirname "$0")/lib_router.sh"
router_need
command -v tshark >/dev/null || {
	log "tshark is not installed"
	exit 1
}
RATE=4 # NAK repeats per second
TSI="010203040506\.1234"
S6=2001:db8:1::2
G6=ff0e::8000:1
UP6=2001:db8:1::1
D16=2001:db8:2::1
D26=2001:db8:3::1
R16=2001:db8:2::2
R26=2001:db8:3::2

lab_host src
lab_router rtr
lab_host r1
lab_host r2
for n in src rtr r1 r2; do lab_ipv6 $n; done
lab_link src s0 - rtr up0 -
lab_link rtr d1 - r1 dn -
lab_link rtr d2 - r2 dn -
lab_addr6 src s0 $S6/64
lab_addr6 rtr up0 $UP6/64
lab_addr6 rtr d1 $D16/64
lab_addr6 r1 dn $R16/64
lab_addr6 rtr d2 $D26/64
lab_addr6 r2 dn $R26/64
lab_exec src ip -6 route add default via $UP6
lab_exec r1 ip -6 route add default via $D16
lab_exec r2 ip -6 route add default via $D26
lab_mroute rtr up0 $S6 $G6 d1 d2
lab_smcroute_start rtr

# sniff6 NAME IF: pgm-sniff with a capture for tshark (sniff in lib_router.sh, --write).
sniff6() {
	lab_spawn_ready "$1" "$LAB_DIR/$1.sniff" "$LAB_DIR/$1.ready" "$SNIFF" --if "$2" --time \
		--timeout 240 --ready "$LAB_DIR/$1.ready" --write "$LAB_DIR/$1.pcap" || {
		log "sniffer in $1 did not start"
		exit 1
	}
	SNIFFERS="${SNIFFERS:-} $LAB_PID"
}
sniff6 src s0
sniff6 r1 dn
sniff6 r2 dn
router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-rate $RATE" \
	"ip pgm router nak-repeat-interval 60000" "ip pgm router nak-eliminate-interval 60000" \
	"ip pgm router nak-rdata-interval 600000" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

# sync6: an ODATA marker of its own session, forwarded by the kernel alone (sync_wire over IPv6).
sync6() {
	local m
	MARK_SQN=$((MARK_SQN + 1))
	inj src s0 --src $S6 --dst $G6 --type odata --gsi "$MARK_GSI" --sqn "$MARK_SQN"
	m="type=ODATA \| ODATA $MARK_GSI\.1234 sqn $MARK_SQN "
	for n in src r1 r2; do
		wait_seen 10 $n "$m" 1 || { log "marker $MARK_SQN not seen in $n"; return 1; }
	done
}
ncf_re() { echo "^pgm src=$S6 dst=$G6 ttl=255 ra=1 encap=ip csum=ok type=NCF \| NCF $TSI sqn $1 src $S6 grp $G6 ports 1234>7500 "; }
any_ncf() { echo "type=NCF \| NCF $TSI sqn $1 "; }
up_nak_re() { echo "^pgm src=$UP6 dst=$S6 ttl=[0-9]+ ra=[01] encap=ip csum=ok type=NAK \| NAK $TSI sqn $1 src $S6 grp $G6 ports 7500>1234 "; }
any_up_nak() { echo "^pgm src=$UP6 dst=$S6 .*type=NAK \| NAK $TSI sqn $1 "; }
rdata() { echo "type=RDATA \| RDATA $TSI sqn $1 "; }

# ---- SPM: path NLA per egress interface, session state ----
inj src s0 --src $S6 --dst $G6 --type spm --sqn 1 --trail 1 --lead 20
spm() { echo "^pgm src=$S6 dst=$G6 ttl=15 ra=0 encap=ip csum=ok type=SPM \| SPM $TSI sqn 1 trail 1 lead 20 path $1 ports 1234>7500 "; }
check "SPM on r1's segment: path NLA $D16 (AFI 2), checksum good" wait_seen 10 r1 "$(spm $D16)" 1
check "SPM on r2's segment: path NLA $D26" wait_seen 10 r2 "$(spm $D26)" 1
check "state: the IPv6 session, upstream $S6 on up0, SPM sqn 1, window 1-20" \
	lab_poll 5 jtrue "show ip pgm router state json" "(len(sess) == 1 and
	sess[0]['tsi'] == '010203040506.1234' and sess[0]['source'] == '$S6' and
	sess[0]['group'] == '$G6' and sess[0]['upstream'] == '$S6' and
	sess[0]['upstream_interface'] == 'up0' and sess[0]['spm_sqn'] == 1 and
	sess[0]['trail'] == 1 and sess[0]['lead'] == 20)"
check "show ip pgm router state (text) names the session's IPv6 source and group" eval \
	"cli 'show ip pgm router state' | grep -q '$S6' && cli 'show ip pgm router state' | grep -q '$G6'"
check "interface d1: its IPv6 address and a link-local one shown (JSON)" jtrue \
	"show ip pgm router interface d1 json" "(j['interfaces'][0]['address_ipv6'] == '$D16' and
	j['interfaces'][0]['address_link_local'].startswith('fe80::') and j['interfaces'][0]['address'] == '-')"
check "interface d1: and in the text" eval "cli 'show ip pgm router interface d1' | grep -q '^  IPv6 address $D16, link-local fe80::'"
check "state source X:X::X:X finds the session, group X:X::X:X too" eval "
	cli 'show ip pgm router state source $S6' | grep -q 'Session 010203040506.1234, source $S6' &&
	cli 'show ip pgm router state group $G6' | grep -q 'Session 010203040506.1234, source $S6'"
check "traffic: SPM forwarded once on d1 and once on d2" eval "
	[ \$(ev d1 spm-forwarded) = 1 ] && [ \$(ev d2 spm-forwarded) = 1 ]"

# ---- NAK from r1 (unicast to the router's address on r1's LAN, NAK_SRC the source) ----
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 5 --nak-src $S6 --nak-grp $G6
check "NAK sqn 5: the daemon confirmed it" wait_ev 10 d1 ncf-sent 1
check "NAK sqn 5: an upstream NAK on the source's segment" wait_seen 10 src "$(any_up_nak 5)" 1
sync6
check "NCF sqn 5 on r1's segment: from the data source to the group, hop limit 255, Router Alert" \
	seen_is r1 "$(ncf_re 5)" 1
check "no NCF sqn 5 on r2's segment" seen_is r2 "$(any_ncf 5)" 0
check "no NCF on the source's segment" seen_is src "type=NCF" 0
# (one snapshot: repeats keep coming)
grep -E -- "$(any_up_nak 5)" "$LAB_DIR/src.sniff" >"$LAB_DIR/naks5"
check "the upstream NAK: from $UP6 to the SPM's path address $S6, NAK_SRC the source" \
	test "$(count_lines "$LAB_DIR/naks5" "$(up_nak_re 5)")" = "$(wc -l <"$LAB_DIR/naks5")"
check "the NAK was forwarded once (repeats are counted apart)" test "$(ev up0 nak-forwarded)" = 1
check "state: sqn 5 pending, for d1" lab_poll 5 jtrue "show ip pgm router state json" \
	"[(r['phase'], r['interfaces']) for r in sess[0]['repairs'] if r['sqn'] == 5] == [('PENDING', 'd1')]"
# The NCF from upstream ends the repeats.
inj src s0 --src $S6 --dst $G6 --type ncf --sqn 5 --ra --ttl 255
check "NCF from upstream: sqn 5 confirmed (OUTSTANDING)" lab_poll 10 eval "[ \"\$(phase 5)\" = OUTSTANDING ]"
sync6
n1=$(seen src "$(any_up_nak 5)")
retx=$(ev up0 nak-retransmitted)
check "every NAK on the source's segment is the forward or a counted repeat ($n1 = 1 + $retx)" \
	test "$n1" = $((1 + retx))
sleep "$(python3 -c "print(3.0 / $RATE)")"
sync6
check "no NAK after the NCF from upstream" test "$(seen src "$(any_up_nak 5)")" = "$n1"
check "the NCF from upstream reached neither r1 nor r2 beyond the router's own" eval \
	"[ $(seen r1 "$(any_ncf 5)") = 1 ] && [ $(seen r2 "$(any_ncf 5)") = 0 ]"

# ---- a duplicate from r2: an NCF, nothing upstream ----
fwd=$(ev up0 nak-forwarded)
inj r2 dn --src $R26 --dst $D26 --type nak --sqn 5 --nak-src $S6 --nak-grp $G6
check "duplicate from r2: an NCF sqn 5 on r2's segment" wait_seen 10 r2 "$(ncf_re 5)" 1
check "duplicate eliminated, nothing forwarded" eval \
	"[ \$(ev up0 nak-forwarded) = $fwd ] && [ \$(ev d2 nak-eliminated) = 1 ]"
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 7 --nak-src $S6 --nak-grp $G6
check "NAK sqn 7 from r1 forwarded" wait_seen 10 src "$(up_nak_re 7)" 1
inj src s0 --src $S6 --dst $G6 --type ncf --sqn 7 --ra --ttl 255

# ---- clear by IPv6 group ----
check "clear ip pgm router rtx-state ff0e::8000:2 (another group) clears nothing" eval \
	"cli 'clear ip pgm router rtx-state ff0e::8000:2' | grep -q '^Cleared 0 repair states'"
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 11 --nak-src $S6 --nak-grp $G6
check "NAK sqn 11 from r1: a repair state" lab_poll 10 eval "[ \"\$(phase 11)\" != none ]"
check "clear ip pgm router rtx-state $G6 clears the session's repair states (5, 7, 11)" eval \
	"cli 'clear ip pgm router rtx-state $G6' | grep -q '^Cleared 3 repair states' &&
	 [ \"\$(phase 11)\" = none ]"
# the repairs asked for again
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 5 --nak-src $S6 --nak-grp $G6
inj r2 dn --src $R26 --dst $D26 --type nak --sqn 5 --nak-src $S6 --nak-grp $G6
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 7 --nak-src $S6 --nak-grp $G6
check "sqn 5 wanted on d1 and d2 again, sqn 7 on d1" lab_poll 10 jtrue "show ip pgm router state json" \
	"sorted((r['sqn'], r['interfaces']) for r in sess[0]['repairs']) == [(5, 'd1,d2'), (7, 'd1')]"
inj src s0 --src $S6 --dst $G6 --type ncf --sqn 5 --ra --ttl 255
inj src s0 --src $S6 --dst $G6 --type ncf --sqn 7 --ra --ttl 255

check "clear ip pgm router dlr X:X::X:X is taken" eval \
	"cli 'clear ip pgm router dlr 2001:db8:2::50' | grep -q '^Cleared 0 learned DLRs'"

# ---- RDATA: only where asked for ----
inj src s0 --src $S6 --dst $G6 --type rdata --sqn 5 --trail 1
inj src s0 --src $S6 --dst $G6 --type rdata --sqn 7 --trail 1
inj src s0 --src $S6 --dst $G6 --type rdata --sqn 9 --trail 1
check "RDATA: the daemon saw 3 x 2 copies" wait_rx 10 up0 RDATA 6
sync6
check "RDATA sqn 5 (asked by both) reaches r1 and r2" eval "
	[ $(seen r1 "$(rdata 5)") = 1 ] && [ $(seen r2 "$(rdata 5)") = 1 ]"
check "RDATA sqn 7 (asked by r1) reaches r1 only" eval "
	[ $(seen r1 "$(rdata 7)") = 1 ] && [ $(seen r2 "$(rdata 7)") = 0 ]"
check "unsolicited RDATA sqn 9 reaches neither" eval "
	[ $(seen r1 "$(rdata 9)") = 0 ] && [ $(seen r2 "$(rdata 9)") = 0 ]"
rd=$(jval "show ip pgm router traffic json" "' '.join(str(ifs[i]['events'][e]) for e in ('rdata-forwarded', 'rdata-no-state') for i in ('d1', 'd2'))")
check "RDATA counters: forwarded 2 into d1 and 1 into d2; sqn 9 without repair state on both ($rd)" \
	test "$rd" = "2 1 1 1"

# ---- ODATA: everyone gets it, the queue never sees it ----
q_before=$(dp "j['queue_stats']['packets']")
k_before=$(queue_counters rtr 113 | awk '{ print $4 }')
inj src s0 --src $S6 --dst $G6 --type odata --sqn 21 --trail 1 --count 5 --sqn-step 1
check "ODATA (5) reaches r1" wait_seen 10 r1 "type=ODATA \| ODATA $TSI sqn (21|22|23|24|25) " 5
check "ODATA (5) reaches r2" wait_seen 10 r2 "type=ODATA \| ODATA $TSI sqn (21|22|23|24|25) " 5
sync6
check "ODATA never queued: the daemon's queue counter did not move ($q_before)" \
	test "$(dp "j['queue_stats']['packets']")" = "$q_before"
check "ODATA never queued: the kernel's queue sequence did not move ($k_before)" \
	test "$(queue_counters rtr 113 | awk '{ print $4 }')" = "$k_before"
check "traffic: no ODATA counted anywhere" jtrue "show ip pgm router traffic json" \
	"all(i['received']['ODATA'] == 0 and i['sent']['ODATA'] == 0 for i in j['interfaces'])"
check "nothing malformed, nothing failed on the packet path" jtrue "show ip pgm router dataplane json" \
	"j['path']['malformed'] == 0 and j['path']['rewrite_failed'] == 0 and j['path']['build_failed'] == 0 and j['path']['send_failed'] == 0"
check "the daemon is still running" kill -0 "$DAEMON_PID"

# ---- tshark: every packet the router sent decodes, checksums good ----
for p in $SNIFFERS; do kill -INT "$p" 2>/dev/null; done
for p in $SNIFFERS; do ended "$p" 5; done
TSHARK_OPTS=(-o pgm.check_checksum:TRUE)
# the router's packets: NCFs (from the data source, but only the router sends them downstream),
# copies of SPM and RDATA on r1 and r2, NAKs from its address on src
from_router() { # FILE FILTER: packets matching FILTER, then those of them tshark flags
	local all bad good
	all=$(tshark -n -r "$1" "${TSHARK_OPTS[@]}" -Y "pgm && !icmpv6 && ($2)" 2>/dev/null | wc -l)
	good=$(tshark -n -r "$1" "${TSHARK_OPTS[@]}" -Y "pgm && !icmpv6 && ($2) && pgm.hdr.cksum.status == 1" 2>/dev/null | wc -l)
	bad=$(tshark -n -r "$1" "${TSHARK_OPTS[@]}" -Y "($2) && (_ws.malformed || _ws.expert.severity >= warning)" 2>/dev/null | wc -l)
	echo "$all $good $bad"
}
R1_ROUTER="pgm.hdr.type == 0x0a || pgm.hdr.type == 0x00 || pgm.hdr.type == 0x05"
read -r a g b <<<"$(from_router "$LAB_DIR/r1.pcap" "$R1_ROUTER")"
check "r1: tshark decodes the router's $a NCFs, SPMs and RDATA, every checksum good, nothing flagged" \
	test "$a" -ge 5 -a "$g" = "$a" -a "$b" = 0
read -r a g b <<<"$(from_router "$LAB_DIR/src.pcap" "ipv6.src == $UP6")"
check "src: tshark decodes the router's $a NAKs, every checksum good, nothing flagged" \
	test "$a" -ge 2 -a "$g" = "$a" -a "$b" = 0

# ---- the iptables backend: the same packet path through ip6tables chains ----
kill -TERM "$DAEMON_PID"
lab_wait_pid "$DAEMON_PID" 10
router_conf "$LAB_DIR/ipt.conf" "ip pgm router backend iptables" "ip pgm router ncf-interval 0"
router_start "$LAB_DIR/ipt.conf" || exit 1
check "iptables: IPv4 and IPv6 intercepted" jtrue "show ip pgm router dataplane json" \
	"j['intercepts_ipv4'] and j['intercepts_ipv6'] and j['ipv6_unavailable'] == ''"
check "iptables: our chains in ip6tables, no nftables table of ours" eval \
	"lab_exec rtr ip6tables-save -t mangle | grep -q '^:PGMROUTER-IN' &&
	 ! lab_exec rtr nft list tables | grep -q pgmrouter"
inj src s0 --src $S6 --dst $G6 --type spm --sqn 2 --trail 1 --lead 40
check "iptables: the SPM makes the session" lab_poll 10 jtrue "show ip pgm router state json" \
	"len(sess) == 1 and sess[0]['source'] == '$S6'"
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 31 --nak-src $S6 --nak-grp $G6
check "iptables: a NAK to the router is confirmed" wait_ev 10 d1 ncf-sent 1
inj r1 dn --src $R16 --dst $D16 --type nak --sqn 33 --nak-src $S6 --nak-grp $G6 --ra
check "iptables: one behind a hop-by-hop Router Alert too" wait_ev 10 d1 ncf-sent 2
check "iptables: the ip6tables input rules matched both" jtrue "show ip pgm router dataplane json" \
	"j['rules_matched']['input_ipv6'] >= 2"
# r1's received packets (ip -s link: the line after "RX:")
r1_rx() { lab_exec r1 ip -s link show dn | awk 'f { print $2; exit } /RX:/ { f = 1 }'; }
q_before=$(dp "j['queue_stats']['packets']")
k_before=$(queue_counters rtr 113 | awk '{ print $4 }')
rx_before=$(r1_rx)
inj src s0 --src $S6 --dst $G6 --type odata --sqn 41 --trail 1 --count 5 --sqn-step 1
inj src s0 --src $S6 --dst $G6 --type odata --sqn 46 --trail 1 --count 5 --sqn-step 1 --ra
check "iptables: ODATA (also behind a Router Alert) forwarded to r1" lab_poll 10 eval \
	"[ \$(r1_rx) -ge $((rx_before + 10)) ]"
sleep 0.3
check "iptables: ODATA never queued (daemon $q_before, kernel $k_before)" eval \
	"[ \"\$(dp \"j['queue_stats']['packets']\")\" = '$q_before' ] &&
	 [ \"\$(queue_counters rtr 113 | awk '{ print \$4 }')\" = '$k_before' ]"
kill -TERM "$DAEMON_PID"
lab_wait_pid "$DAEMON_PID" 10
check "iptables: removed at exit from ip6tables and iptables" eval \
	"! lab_exec rtr ip6tables-save | grep -q PGMROUTER && ! lab_exec rtr iptables-save | grep -q PGMROUTER"

# ---- iptables without ip6tables: IPv4 alone, IPv6's absence said ----
mkdir -p "$LAB_DIR/bin"
for t in iptables-restore iptables-save; do ln -sf "$(command -v $t)" "$LAB_DIR/bin/$t"; done
ROUTER_CMD="env PATH=$LAB_DIR/bin $(lab_router_cmd)" router_start "$LAB_DIR/ipt.conf" || exit 1
check "without ip6tables: IPv4 intercepted, IPv6 not, saying why" jtrue \
	"show ip pgm router dataplane json" "(j['intercepts_ipv4'] and not j['intercepts_ipv6'] and
	'ip6tables-restore is not installed' in j['ipv6_unavailable'] and j['ipv6_install_failures'] >= 1)"
check "without ip6tables: show ip pgm router dataplane says so" eval \
	"cli 'show ip pgm router dataplane' | grep -q 'IPv6 not intercepted (.*ip6tables-restore is not installed'"
check "without ip6tables: logged" grep -q 'ip6tables-restore is not installed' "$DLOG"
kill -TERM "$DAEMON_PID"
lab_wait_pid "$DAEMON_PID" 10
check "without ip6tables: removed at exit" eval "! lab_exec rtr iptables-save | grep -q PGMROUTER"
[ "$NS_FAILS" -gt 0 ] && { log "daemon log:"; sed 's/^/    /' "$DLOG" | tail -40; }
finish
