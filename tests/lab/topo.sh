# shellcheck shell=bash
# Variables set here are read by the scripts that source this file:
# shellcheck disable=SC2034
#
# Lab topologies, built with the primitives of lib.sh (which sources this file).
#
# Every builder takes HOSTS (receivers per receiver LAN, default 2), routes the groups set with
# lab_groups (default 239.192.0.1) from the source host with source-specific smcroute routes,
# starts smcroute (or, with LAB_ROUTING=pim, FRR's zebra and pimd in every router: routes come
# with the receivers' joins, lab_topo_routes_wait) and leaves a description in these variables:
#   TOPO_NAME         one-router, chain, tree or lan
#   TOPO_SOURCE       the source host (s1) and TOPO_SOURCE_ADDR its address
#   TOPO_ROUTERS      router nodes, upstream first
#   TOPO_RECEIVERS    receiver hosts
#   TOPO_LANS         every segment, upstream first
#   TOPO_RECV_LANS    the segments with receivers
#   TOPO_FEED[LAN]    "ROUTER IFNAME": the router interface that sends into LAN (loss goes there)
#   TOPO_PARENT[LAN]  the segment upstream of LAN (empty for the source LAN)
#   TOPO_ROUTING      smcroute or pim: what made the routes (LAB_ROUTING when it was built)
#
# Addresses: LAN k is 198.18.k.0/24, routers .1 (.2 for the downstream router of a trunk),
# the source .10, receivers .11, .12, ...
#
#   one-router          chain                          tree                           lan
#
#   s1                  s1                             s1                             s1
#   |  src              |  src                         |  src                         |  src
#   r1                  r1                             core                           r1
#   |a      |b          |  l1                          |t1          |t2               |  a
#   a1 a2   b1 b2       r2                             e1           e2                a1 .. a8
#                       |  l2                          |a    |b     |c    |d
#                       r3                             a1..  b1..   c1..  d1..
#                       |  a
#                       a1 a2

declare -gA TOPO_FEED TOPO_PARENT
TOPO_NAME=""
TOPO_SOURCE=""
TOPO_SOURCE_ADDR=""
TOPO_ROUTERS=""
TOPO_RECEIVERS=""
TOPO_LANS=""
TOPO_RECV_LANS=""
TOPO_ROUTING=""

_topo_reset() {
	TOPO_NAME=$1
	TOPO_SOURCE=s1
	TOPO_SOURCE_ADDR=""
	TOPO_ROUTERS=""
	TOPO_RECEIVERS=""
	TOPO_LANS=""
	TOPO_RECV_LANS=""
	TOPO_FEED=()
	TOPO_PARENT=()
	TOPO_ROUTING=""
}

_topo_lan() {
	lab_lan "$1"
	TOPO_LANS="${TOPO_LANS:+$TOPO_LANS }$1"
	TOPO_PARENT[$1]=${2:-}
}

_topo_router() {
	lab_router "$1"
	TOPO_ROUTERS="${TOPO_ROUTERS:+$TOPO_ROUTERS }$1"
}

# _topo_receivers LAN ROUTER_ADDR HOSTS: HOSTS receivers named after the LAN (a1, a2, ...).
_topo_receivers() {
	local lan=$1 gw=$2 hosts=$3 i name
	TOPO_RECV_LANS="${TOPO_RECV_LANS:+$TOPO_RECV_LANS }$lan"
	for i in $(seq 1 "$hosts"); do
		name="$lan$i"
		lab_host "$name"
		lab_attach "$name" eth0 "$lan" $((10 + i))
		lab_route "$name" default "$gw"
		TOPO_RECEIVERS="${TOPO_RECEIVERS:+$TOPO_RECEIVERS }$name"
	done
}

_topo_source() {
	lab_host s1
	lab_attach s1 eth0 src 10
	TOPO_SOURCE_ADDR=$(lab_addr s1 eth0)
}

# _topo_mroutes ROUTER IIF OIF...: routes every group of LAB_GROUPS from the source.
_topo_mroutes() {
	local router=$1 iif=$2 g
	shift 2
	for g in $LAB_GROUPS; do
		lab_mroute "$router" "$iif" "$TOPO_SOURCE_ADDR" "$g" "$@"
	done
}

# LAB_ROUTING=pim: FRR in every router instead, the static RP the first router's address on the
# source LAN (the core router: its (*,G) comes in where the source is).
_topo_start_routing() {
	local r rp gw
	case ${LAB_ROUTING:-smcroute} in
	smcroute | pim) ;;
	*) lab_die "LAB_ROUTING must be smcroute or pim, not '$LAB_ROUTING'" ;;
	esac
	TOPO_ROUTING=${LAB_ROUTING:-smcroute}
	if [ "$TOPO_ROUTING" = pim ]; then
		rp=$(lab_addr "${TOPO_ROUTERS%% *}" @src)
		for r in $TOPO_ROUTERS; do
			# pimd resolves no RPF over a default route (the RP stays "Unknown"): the
			# lab's addresses get a route of their own by the same gateway.
			gw=$(ip -n "$(lab_ns "$r")" route show default | awk '{ print $3; exit }')
			[ -z "$gw" ] || lab_route "$r" "$LAB_NET_PREFIX.0.0/15" "$gw"
			lab_pim_start "$r" "$rp"
		done
		return 0
	fi
	for r in $TOPO_ROUTERS; do
		lab_smcroute_start "$r"
	done
}

# lab_topo_routes_wait GROUP: with LAB_ROUTING=pim, waits (20 s at most) until the joins of the
# receivers (started and joined) have made, in every router on the way to them, a route for
# GROUP leaving by the interface that feeds each receiver LAN and each trunk above it. At once
# with static routes. 1 on timeout, with every router's routes shown.
lab_topo_routes_wait() {
	local group=$1 lan router ifname want="" r
	[ "$TOPO_ROUTING" = pim ] || return 0
	for lan in $TOPO_RECV_LANS; do
		while [ -n "$lan" ] && [ -n "${TOPO_FEED[$lan]:-}" ]; do
			want="$want ${TOPO_FEED[$lan]// /:}"
			lan=${TOPO_PARENT[$lan]:-}
		done
	done
	# shellcheck disable=SC2086 # one ROUTER:IFNAME a word
	lab_wait 20 "PIM routes for $group" _topo_routes_out "$group" $want && return 0
	for r in $TOPO_ROUTERS; do
		lab_log "$r: $(ip -n "$(lab_ns "$r")" mroute show | tr -s ' ' | tr '\n' ';')"
	done
	return 1
}

# _topo_routes_out GROUP ROUTER:IFNAME...: each router has a route for GROUP out of IFNAME.
_topo_routes_out() {
	local group=$1 x
	shift
	for x in "$@"; do
		ip -n "$(lab_ns "${x%%:*}")" mroute show 2>/dev/null |
			awk -v g="$group" -v i="${x#*:}" 'index($1, "," g ")") {
				o = 0
				for (k = 1; k <= NF; k++) if ($k == "Oifs:") o = 1; else if (o && ($k == i || index($k, i "(") == 1)) f = 1 }
				END { exit !f }' || return 1
	done
	return 0
}

# (a) one router, a source LAN and two receiver LANs.
lab_topo_one_router() {
	local hosts=${1:-2} n
	_topo_reset one-router
	_topo_lan src
	_topo_lan a src
	_topo_lan b src
	_topo_router r1
	lab_attach r1 eth0 src 1
	lab_attach r1 eth1 a 1
	lab_attach r1 eth2 b 1
	TOPO_FEED[src]=""
	TOPO_FEED[a]="r1 eth1"
	TOPO_FEED[b]="r1 eth2"
	_topo_source
	lab_route s1 default "$(lab_addr r1 eth0)"
	for n in a b; do
		_topo_receivers "$n" "$(lab_addr r1 @$n)" "$hosts"
	done
	_topo_mroutes r1 eth0 eth1 eth2
	_topo_start_routing
}

# (d) one router, one receiver LAN with HOSTS receivers (default 8).
lab_topo_lan() {
	local hosts=${1:-8}
	_topo_reset lan
	_topo_lan src
	_topo_lan a src
	_topo_router r1
	lab_attach r1 eth0 src 1
	lab_attach r1 eth1 a 1
	TOPO_FEED[src]=""
	TOPO_FEED[a]="r1 eth1"
	_topo_source
	lab_route s1 default "$(lab_addr r1 eth0)"
	_topo_receivers a "$(lab_addr r1 eth1)" "$hosts"
	_topo_mroutes r1 eth0 eth1
	_topo_start_routing
}

# (b) a chain of three routers; receivers behind the last one.
lab_topo_chain() {
	local hosts=${1:-2}
	_topo_reset chain
	_topo_lan src
	_topo_lan l1 src
	_topo_lan l2 l1
	_topo_lan a l2
	_topo_router r1
	_topo_router r2
	_topo_router r3
	lab_attach r1 eth0 src 1
	lab_attach r1 eth1 l1 1
	lab_attach r2 eth0 l1 2
	lab_attach r2 eth1 l2 1
	lab_attach r3 eth0 l2 2
	lab_attach r3 eth1 a 1
	TOPO_FEED[l1]="r1 eth1"
	TOPO_FEED[l2]="r2 eth1"
	TOPO_FEED[a]="r3 eth1"
	_topo_source
	lab_route s1 default "$(lab_addr r1 eth0)"
	_topo_receivers a "$(lab_addr r3 eth1)" "$hosts"
	# r1 reaches everything downstream through r2; r3 everything upstream through r2.
	lab_route r1 "$LAB_NET_PREFIX.0.0/15" "$(lab_addr r2 eth0)"
	lab_route r2 "$(lab_lan_prefix src)" "$(lab_addr r1 eth1)"
	lab_route r2 "$(lab_lan_prefix a)" "$(lab_addr r3 eth0)"
	lab_route r3 default "$(lab_addr r2 eth1)"
	_topo_mroutes r1 eth0 eth1
	_topo_mroutes r2 eth0 eth1
	_topo_mroutes r3 eth0 eth1
	_topo_start_routing
}

# (c) a tree: a core router, two edge routers, four receiver LANs with HOSTS receivers each.
lab_topo_tree() {
	local hosts=${1:-2} n
	_topo_reset tree
	_topo_lan src
	_topo_lan t1 src
	_topo_lan t2 src
	_topo_lan a t1
	_topo_lan b t1
	_topo_lan c t2
	_topo_lan d t2
	_topo_router core
	_topo_router e1
	_topo_router e2
	lab_attach core eth0 src 1
	lab_attach core eth1 t1 1
	lab_attach core eth2 t2 1
	lab_attach e1 eth0 t1 2
	lab_attach e1 eth1 a 1
	lab_attach e1 eth2 b 1
	lab_attach e2 eth0 t2 2
	lab_attach e2 eth1 c 1
	lab_attach e2 eth2 d 1
	TOPO_FEED[t1]="core eth1"
	TOPO_FEED[t2]="core eth2"
	TOPO_FEED[a]="e1 eth1"
	TOPO_FEED[b]="e1 eth2"
	TOPO_FEED[c]="e2 eth1"
	TOPO_FEED[d]="e2 eth2"
	_topo_source
	lab_route s1 default "$(lab_addr core eth0)"
	for n in a b; do
		_topo_receivers "$n" "$(lab_addr e1 @$n)" "$hosts"
		lab_route core "$(lab_lan_prefix "$n")" "$(lab_addr e1 eth0)"
	done
	for n in c d; do
		_topo_receivers "$n" "$(lab_addr e2 @$n)" "$hosts"
		lab_route core "$(lab_lan_prefix "$n")" "$(lab_addr e2 eth0)"
	done
	lab_route e1 default "$(lab_addr core eth1)"
	lab_route e2 default "$(lab_addr core eth2)"
	_topo_mroutes core eth0 eth1 eth2
	_topo_mroutes e1 eth0 eth1 eth2
	_topo_mroutes e2 eth0 eth1 eth2
	_topo_start_routing
}

# lab_topo_loss LAN SPEC [TYPES]: loss on the router interface that feeds LAN (see lab_loss).
lab_topo_loss() {
	local router ifname
	read -r router ifname <<<"${TOPO_FEED[$1]:-}"
	[ -n "$router" ] || lab_die "no router feeds LAN $1"
	lab_loss "$router" "$ifname" "$2" "${3:-odata}"
}

# lab_topo_loss_dropped LAN: packets dropped so far by the loss rules feeding LAN.
lab_topo_loss_dropped() {
	local router ifname
	read -r router ifname <<<"${TOPO_FEED[$1]:-}"
	# (the interface's column: ip6tables may leave the option column empty)
	ip netns exec "$(lab_ns "$router")" "$(lab_loss_ipt)" -t mangle -nvxL PL_LOSS 2>/dev/null |
		awk -v i="$ifname" '$3 == "DROP" { for (k = 4; k <= NF; k++) if ($k == i) { n += $1; break } }
			END { print n + 0 }'
}

# lab_topo_describe: one line per node with its addresses, for humans.
lab_topo_describe() {
	echo "topology $TOPO_NAME (run $LAB_ID)"
	awk '{ a[$1] = a[$1] sprintf(" %s=%s(%s)", $2, $4, $3) } END { for (n in a) print "  " n ":" a[n] }' \
		"$LAB_DIR/links" | sort
}
