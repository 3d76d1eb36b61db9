#!/bin/bash
# IPv6 interception (dataplane/rules_layout.h): the ip6 table beside the ip one, with crafted
# IPv6 PGM datagrams from a host. A NAK to the router's address is queued at input (with no
# consumer bound, bypass accepts it: the rule's counter says it was matched), one behind a
# hop-by-hop Router Alert header as well (PGM as the upper layer after extension headers);
# ODATA to a group matches no queue rule; a flood of NAKs from one source is policed by its
# ip6 saddr. The ip table is untouched by all of it. Then the same with the iptables backend's
# ip6tables chains (the PGM type read right behind the IPv6 header and behind one extension
# header), removed at exit with the mangle table iptables-nft made; and without ip6tables, IPv4
# alone installed and IPv6's absence said.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
command -v python3 >/dev/null || {
	log "missing python3"
	exit 1
}
lab_host h
lab_router rtr
lab_link h s0 198.18.1.2/24 rtr up0 198.18.1.1/24
# the lab's namespaces have IPv6 off; on for these two interfaces only
lab_exec h sysctl -qw net.ipv6.conf.s0.disable_ipv6=0
lab_exec rtr sysctl -qw net.ipv6.conf.up0.disable_ipv6=0
lab_exec h ip -6 addr add 2001:db8:1::2/64 dev s0 nodad
lab_exec rtr ip -6 addr add 2001:db8:1::1/64 dev up0 nodad

lab_exec rtr "$HARNESS" rules-install --backend nft --if up0 >"$LAB_DIR/install.log" 2>&1
check "rules installed" grep -q "backend=nftables" "$LAB_DIR/install.log"
check "an ip6 table beside the ip one" eval \
	"lab_exec rtr nft list tables | grep -q 'table ip6 pgmrouter' &&
	 lab_exec rtr nft list tables | grep -q 'table ip pgmrouter'"

# send6 DST TYPE COUNT [hbh]: COUNT PGM datagrams of TYPE (a nibble) from h to DST, over a raw
# IPv6 socket; hbh: behind a hop-by-hop Router Alert option (RFC 2711).
send6() {
	lab_exec h python3 - "$@" <<'EOF'
import socket, struct, sys
dst, typ, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
hbh = len(sys.argv) > 4
s = socket.socket(socket.AF_INET6, socket.SOCK_RAW, 113)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_MULTICAST_IF, socket.if_nametoindex("s0"))
if hbh:
    # next header (filled by the kernel), length 0, Router Alert (5, 2, value 0), PadN of 0
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_HOPOPTS, bytes([0, 0, 5, 2, 0, 0, 1, 0]))
# PGM common header: ports, type, options, checksum (none), GSI, TSDU length; then NAK's
# SQN, NAK_SRC and NAK_GRP NLAs of AFI 2
pgm = struct.pack("!HHBBH6sH", 7500, 1234, typ, 0, 0, b"\x01\x02\x03\x04\x05\x06", 0)
pgm += struct.pack("!I", 5) + struct.pack("!HH16s", 2, 0, socket.inet_pton(socket.AF_INET6, "2001:db8:1::2"))
pgm += struct.pack("!HH16s", 2, 0, socket.inet_pton(socket.AF_INET6, "ff3e::8000:1"))
for _ in range(count):
    s.sendto(pgm, (dst, 0))
EOF
}

# counter CHAIN: the packets of the chain's queue rules in the ip6 table
counter() {
	lab_exec rtr nft list chain ip6 pgmrouter "$1" 2>/dev/null |
		awk '/queue|NFQUEUE/ { for (i = 2; i <= NF; i++) if ($i == "packets" && $(i - 1) == "counter") n += $(i + 1) }
		     END { print n + 0 }'
}
policed() {
	lab_exec rtr nft list chain ip6 pgmrouter police-nak-input 2>/dev/null |
		awk '/police_nak_src/ { for (i = 2; i <= NF; i++) if ($i == "packets" && $(i - 1) == "counter") print $(i + 1) }'
}

send6 2001:db8:1::1 8 1
check "an IPv6 NAK to the router is queued at input" lab_poll 5 \
	eval '[ "$(counter queue-input)" = 1 ]'
send6 2001:db8:1::1 8 1 hbh
check "one behind a hop-by-hop header too" lab_poll 5 eval '[ "$(counter queue-input)" = 2 ]'
send6 ff3e::8000:1 4 20
send6 ff3e::8000:1 4 5 hbh
sleep 0.3
check "IPv6 ODATA is never queued" eval \
	'[ "$(counter queue-prerouting)" = 0 ] && [ "$(counter pgm-prerouting)" = 0 ]'
check "nothing reached the ip table" eval \
	"! lab_exec rtr nft list table ip pgmrouter 2>/dev/null | grep -Eq 'packets [1-9]'"
# 400 NAKs at once: the per-source bucket holds 100
send6 2001:db8:1::1 8 400
p=$(policed)
log "NAK flood: $p of 400 policed by ip6 saddr, $(counter queue-input) queued in all"
check "a flood of IPv6 NAKs is policed per source" [ "${p:-0}" -ge 200 ]

lab_exec rtr "$HARNESS" rules-remove >/dev/null 2>&1
check "both tables removed" eval "! lab_exec rtr nft list tables | grep -q pgmrouter"

# ---- the iptables backend: the same chains in ip6tables ----
# (the hashlimit buckets of the nftables run above are gone with its table: fresh ones here)
lab_exec rtr "$HARNESS" rules-install --backend iptables --if up0 >"$LAB_DIR/ipt.log" 2>&1
log "iptables install: $(cat "$LAB_DIR/ipt.log")"
check "iptables: installed, IPv6 too" grep -q '^backend=iptables .* ipv6=yes ' "$LAB_DIR/ipt.log"
check "iptables: our chains in ip6tables' mangle table" eval \
	"[ \"\$(lab_exec rtr ip6tables-save -t mangle | grep -c '^:PGMROUTER-')\" = 2 ]"
# ipt6 CHAIN TARGET: the packets of the chain's rules jumping to TARGET (NFQUEUE, RETURN, DROP)
ipt6() {
	lab_exec rtr ip6tables -t mangle -vnxL "PGMROUTER-$1" 2>/dev/null |
		awk -v t="$2" '$3 == t { n += $1 } END { print n + 0 }'
}
send6 2001:db8:1::1 8 1
check "iptables: an IPv6 NAK to the router is queued at input" lab_poll 5 \
	eval '[ "$(ipt6 IN NFQUEUE)" = 1 ]'
send6 2001:db8:1::1 8 1 hbh
check "iptables: one behind a hop-by-hop Router Alert too" lab_poll 5 \
	eval '[ "$(ipt6 IN NFQUEUE)" = 2 ]'
send6 ff3e::8000:1 4 20
send6 ff3e::8000:1 4 5 hbh
sleep 0.3
check "iptables: IPv6 ODATA is never queued" eval '[ "$(ipt6 PRE NFQUEUE)" = 0 ]'
check "iptables: ... it returns at the first rules, either shape" eval \
	'[ "$(ipt6 PRE RETURN)" = 25 ]'
check "iptables: nothing reached the IPv4 chains" eval \
	"! lab_exec rtr iptables -t mangle -vnxL PGMROUTER-IN | awk '\$3 == \"NFQUEUE\" && \$1 > 0' | grep -q ."
send6 2001:db8:1::1 8 400
p=$(ipt6 IN DROP)
log "iptables: NAK flood: $p of 400 policed, $(ipt6 IN NFQUEUE) queued in all"
check "iptables: a flood of IPv6 NAKs is policed per source" [ "${p:-0}" -ge 200 ]
lab_exec rtr "$HARNESS" rules-remove >/dev/null 2>&1
check "iptables: removed from ip6tables and iptables" eval \
	"! lab_exec rtr ip6tables-save | grep -q PGMROUTER && ! lab_exec rtr iptables-save | grep -q PGMROUTER"
# (the mangle tables ip(6)tables-nft made stay: a separate remove cannot know it made them; one
# process's install and removal leave none, rules_install_remove.sh pristine)
check "iptables: no chain or rule of ours left in nftables" eval \
	"! lab_exec rtr nft list ruleset | grep -qi pgmrouter"

# Without ip6tables (a PATH holding the iptables tools only): IPv4 installed, IPv6 said why.
mkdir -p "$LAB_DIR/bin"
for t in iptables-restore iptables-save; do ln -sf "$(command -v $t)" "$LAB_DIR/bin/$t"; done
lab_exec rtr env PATH="$LAB_DIR/bin" "$HARNESS" rules-install --backend iptables --if up0 \
	>"$LAB_DIR/no6.log" 2>&1
log "without ip6tables: $(cat "$LAB_DIR/no6.log")"
check "without ip6tables: IPv4 installed, IPv6 not, saying why" \
	grep -q '^backend=iptables .* ipv6=no ipv6_unavailable=".*ip6tables-restore is not installed' \
	"$LAB_DIR/no6.log"
check "without ip6tables: the IPv4 chains are there" eval \
	"lab_exec rtr iptables-save -t mangle | grep -q '^:PGMROUTER-PRE'"
lab_exec rtr env PATH="$LAB_DIR/bin" "$HARNESS" rules-remove >/dev/null 2>&1
check "without ip6tables: removed" eval "! lab_exec rtr iptables-save | grep -q PGMROUTER"
finish
