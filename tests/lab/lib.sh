# shellcheck shell=bash
# Variables set here are read by the scripts that source this file:
# shellcheck disable=SC2034
#
# The pgmrouter namespace lab: topologies of network namespaces joined by veth links, plain
# kernel multicast forwarding (smcroute static routes), loss injection, per-segment packet
# counters per PGM type, process tracking and a cleanup that leaves nothing behind.
#
# Source it from bash:  . tests/lab/lib.sh; lab_init mytag; lab_topo_one_router; ...
#
# Model
#   node     a namespace that is a host or a router ("$LAB_ID-NAME")
#   LAN      a namespace holding one bridge, br0 ("$LAB_ID-lan-NAME"). Every segment is a LAN,
#            even a router-to-router link, so each segment has one place that sees every frame
#            once: the bridge's prerouting hook, where the per-type counters live. Each node
#            interface is a veth whose peer end is a port of that bridge. The bridge floods
#            everything (no multicast snooping, no MAC learning), so it behaves like a hub and a
#            capture on br0 sees the unicast NAKs too.
#   address  LAN number k (in creation order) is 198.18.k.0/24; a node's address on it is
#            198.18.k.HOST with HOST chosen by the caller (routers .1, .2; hosts .10 and up).
#
# Every name carries the run's unique id (LAB_ID, e.g. pl-e2e-3fa9c1), so parallel runs never
# collide. Everything made is recorded under LAB_DIR (a mktemp directory) and lab_cleanup,
# installed on EXIT, INT and TERM, removes it: processes first, then namespaces, then files.
# lab_cleanup is idempotent. A run left behind on purpose (demo --interactive) is removed with
# lab_teardown_id ID.
#
# Environment
#   LAB_VERBOSE=1   echo every command that changes the lab
#   LAB_KEEP=1      keep LAB_DIR (logs, configs) after cleanup and print where it is
#   ROUTER_CMD      router daemon command (default: build/pgmrouterd of this tree)
#   LAB_IDS_FILE    lab_init appends each run's id to it (for lab_leftovers)
#   LAB_IPV6=1      an IPv6 lab: every namespace has IPv6 (duplicate address detection off, so
#                   addresses are usable at once), lab_attach gives IPv6 addresses only
#                   (2001:db8:k::HOST/64 on LAN k), routes, loss and counters are IPv6's; the
#                   groups (lab_groups) are then IPv6 groups (ff0e::/16)
#   LAB_ROUTING     how the topology builders make multicast routes: smcroute (default: static
#                   (S,G) routes, installed before anything is sent) or pim (FRR's zebra and pimd
#                   in every router: PIM-SM, IGMP, a static RP; routes come with joins and data)

LAB_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
LAB_PEERS="$LAB_REPO/build/peers"
LAB_NET_PREFIX=198.18
LAB_NET6_PREFIX=2001:db8
LAB_IPV6=${LAB_IPV6:-0}
LAB_FRR_DIR=${LAB_FRR_DIR:-/usr/lib/frr}
# UDP ports whose datagrams the counters decode as PGM: OpenPGM's UDP encapsulation as the
# scenarios use it (3055 unicast, 3056 multicast) and ZeroMQ epgm (5555).
LAB_PGM_UDP_PORTS=${LAB_PGM_UDP_PORTS:-"3055 3056 5555"}
LAB_GROUPS=${LAB_GROUPS:-239.192.0.1}
LAB_ID=""
LAB_DIR=""
LAB_PID=""
LAB_LAN_NEXT=1

# PGM packet types (RFC 3208 section 8, type nibble) and the counter names used for them.
LAB_PGM_TYPES="spm:0 poll:1 polr:2 odata:4 rdata:5 nak:8 nnak:9 ncf:10 spmr:12 ack:13"
LAB_COUNTERS="spm poll polr odata rdata nak naklist nnak ncf spmr ack other"

lab_log() { echo "lab: $*" >&2; }
lab_die() {
	echo "lab: error: $*" >&2
	exit 1
}
lab_run() {
	[ "${LAB_VERBOSE:-0}" = 1 ] && echo "+ $*" >&2
	"$@"
}

# lab_init TAG: starts a run. TAG (letters/digits, up to 8) names it in LAB_ID. LAB_TAG_PREFIX
# (letters/digits) goes before every TAG, to keep parallel runs of the same scenarios apart.
lab_init() {
	local tag=${LAB_TAG_PREFIX:-}${1:-lab} hex cmd
	[ "$(id -u)" = 0 ] || lab_die "the lab needs root (network namespaces)"
	for cmd in ip nft iptables smcrouted; do
		command -v "$cmd" >/dev/null || lab_die "missing command: $cmd"
	done
	case $tag in *[!a-z0-9]* | "") lab_die "bad lab tag '$tag'" ;; esac
	[ ${#tag} -le 8 ] || lab_die "lab tag '$tag' longer than 8"
	while :; do
		hex=$(od -An -N3 -tx1 /dev/urandom | tr -d ' \n')
		LAB_ID="pl-$tag-$hex"
		ip netns list 2>/dev/null | grep -q "^$LAB_ID-" || break
	done
	LAB_DIR=$(mktemp -d -t "$LAB_ID.XXXXXX") || lab_die "mktemp failed"
	# The test runners check afterwards that none of their runs left anything behind.
	[ -n "${LAB_IDS_FILE:-}" ] && echo "$LAB_ID" >>"$LAB_IDS_FILE"
	: >"$LAB_DIR/namespaces"
	: >"$LAB_DIR/pids"
	: >"$LAB_DIR/links"
	LAB_LAN_NEXT=1
	trap 'lab_cleanup' EXIT
	trap 'lab_cleanup; trap - INT; kill -INT $$' INT
	trap 'lab_cleanup; trap - TERM; kill -TERM $$' TERM
	[ "${LAB_VERBOSE:-0}" = 1 ] && lab_log "run $LAB_ID in $LAB_DIR"
	return 0
}

# lab_groups GROUP...: the multicast groups the topology builders route (default 239.192.0.1).
lab_groups() { LAB_GROUPS="$*"; }

lab_ns() { echo "$LAB_ID-$1"; }
lab_lan_ns() { echo "$LAB_ID-lan-$1"; }

# lab_exec NODE CMD...: runs CMD inside the node's namespace.
lab_exec() {
	local node=$1
	shift
	ip netns exec "$(lab_ns "$node")" "$@"
}

lab_lan_exec() {
	local lan=$1
	shift
	ip netns exec "$(lab_lan_ns "$lan")" "$@"
}

_lab_netns_add() {
	lab_run ip netns add "$1" || lab_die "cannot create namespace $1"
	echo "$1" >>"$LAB_DIR/namespaces"
	ip -n "$1" link set lo up
	# Quiet, predictable namespaces: no IPv6 chatter (unless the lab is IPv6's, then no
	# duplicate address detection), no reverse-path filtering.
	ip netns exec "$1" sysctl -qw net.ipv4.conf.all.rp_filter=0 \
		net.ipv4.conf.default.rp_filter=0 >/dev/null
	if [ "$LAB_IPV6" = 1 ]; then
		ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
			net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.all.accept_dad=0 \
			net.ipv6.conf.default.accept_dad=0 >/dev/null
	else
		ip netns exec "$1" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 \
			net.ipv6.conf.default.disable_ipv6=1 >/dev/null
	fi
}

# lab_host NAME: a host namespace.
lab_host() {
	_lab_netns_add "$(lab_ns "$1")"
	echo host >"$LAB_DIR/role.$1"
}

# lab_router NAME: a router namespace, unicast forwarding on. Multicast forwarding comes from
# smcroute (lab_smcroute_start), which owns the kernel's multicast routing socket.
lab_router() {
	local ns
	ns=$(lab_ns "$1")
	_lab_netns_add "$ns"
	ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 >/dev/null
	[ "$LAB_IPV6" = 1 ] && ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 >/dev/null
	echo router >"$LAB_DIR/role.$1"
	: >"$LAB_DIR/mroutes.$1"
}

# lab_lan NAME: a segment: a LAN namespace with a hub-like bridge and the per-type counters.
lab_lan() {
	local name=$1 ns
	ns=$(lab_lan_ns "$name")
	[ -e "$LAB_DIR/lan.$name" ] && lab_die "LAN $name exists"
	[ "$LAB_LAN_NEXT" -le 255 ] || lab_die "too many LANs"
	_lab_netns_add "$ns"
	ip -n "$ns" link add br0 type bridge mcast_snooping 0 ageing_time 0 stp_state 0 ||
		lab_die "cannot create the bridge of LAN $name"
	ip -n "$ns" link set br0 up
	echo "$LAB_LAN_NEXT 0" >"$LAB_DIR/lan.$name"
	LAB_LAN_NEXT=$((LAB_LAN_NEXT + 1))
	_lab_counters_install "$ns" || lab_die "cannot install the counters of LAN $name"
}

# lab_lan_number LAN: the k of 198.18.k.0/24.
lab_lan_number() {
	local num _
	read -r num _ <"$LAB_DIR/lan.$1" || lab_die "no LAN $1"
	echo "$num"
}

lab_lan_prefix() {
	if [ "$LAB_IPV6" = 1 ]; then
		echo "$LAB_NET6_PREFIX:$(lab_lan_number "$1")::/64"
	else
		echo "$LAB_NET_PREFIX.$(lab_lan_number "$1").0/24"
	fi
}
lab_lans() { (cd "$LAB_DIR" && for f in lan.*; do [ -e "$f" ] && echo "${f#lan.}"; done); }

# lab_attach NODE IFNAME LAN HOST: connects NODE to LAN through interface IFNAME with address
# 198.18.k.HOST/24 (LAB_IPV6=1: 2001:db8:k::HOST/64, HOST written as is), and waits until the
# interface is up.
lab_attach() {
	local node=$1 ifname=$2 lan=$3 host=$4 ns lns num ports addr
	ns=$(lab_ns "$node")
	lns=$(lab_lan_ns "$lan")
	read -r num ports <"$LAB_DIR/lan.$lan" || lab_die "no LAN $lan"
	ports=$((ports + 1))
	echo "$num $ports" >"$LAB_DIR/lan.$lan"
	addr="$LAB_NET_PREFIX.$num.$host"
	[ "$LAB_IPV6" = 1 ] && addr="$LAB_NET6_PREFIX:$num::$host"
	# Created inside the node's namespace with its peer moved straight into the LAN's: nothing
	# ever appears in the namespace this script runs in.
	lab_run ip -n "$ns" link add "$ifname" type veth peer name "p$ports" netns "$lns" ||
		lab_die "cannot link $node:$ifname to LAN $lan"
	ip -n "$lns" link set "p$ports" master br0 up
	if [ "$LAB_IPV6" = 1 ]; then
		ip -n "$ns" -6 addr add "$addr/64" dev "$ifname" nodad
	else
		ip -n "$ns" addr add "$addr/24" dev "$ifname"
	fi
	ip -n "$ns" link set "$ifname" up
	echo "$node $ifname $lan $addr p$ports" >>"$LAB_DIR/links"
	lab_wait 5 "$node:$ifname up" _lab_if_running "$ns" "$ifname"
}

_lab_if_running() {
	ip -n "$1" -o link show dev "$2" 2>/dev/null | grep -q 'state UP'
}

# lab_link NODE_A IF_A ADDR_A NODE_B IF_B ADDR_B: a plain veth pair between two nodes, no LAN
# between them: the point-to-point links of the namespace tests (tests/ns), where what one end
# sends is exactly what the other receives. ADDR is an address with its prefix length
# (198.18.1.2/24), or "-" for none; the caller chooses it. Recorded among the links with "-" for
# the LAN (lab_addr NODE IFNAME finds the addresses); waits until the link is up.
lab_link() {
	local na=$1 ia=$2 aa=$3 nb=$4 ib=$5 ab=$6 nsa nsb
	nsa=$(lab_ns "$na")
	nsb=$(lab_ns "$nb")
	lab_run ip -n "$nsa" link add "$ia" type veth peer name "$ib" netns "$nsb" ||
		lab_die "cannot link $na:$ia to $nb:$ib"
	[ "$aa" = - ] || ip -n "$nsa" addr add "$aa" dev "$ia"
	[ "$ab" = - ] || ip -n "$nsb" addr add "$ab" dev "$ib"
	ip -n "$nsa" link set "$ia" up
	ip -n "$nsb" link set "$ib" up
	echo "$na $ia - ${aa%/*} $nb:$ib" >>"$LAB_DIR/links"
	echo "$nb $ib - ${ab%/*} $na:$ia" >>"$LAB_DIR/links"
	lab_wait 5 "$na:$ia up" _lab_if_running "$nsa" "$ia"
}

# lab_addr NODE IFNAME or lab_addr NODE @LAN: the node's address on an interface or a LAN.
lab_addr() {
	local node=$1 where=$2
	if [ "${where#@}" != "$where" ]; then
		awk -v n="$node" -v l="${where#@}" '$1 == n && $3 == l { print $4; exit }' \
			"$LAB_DIR/links"
	else
		awk -v n="$node" -v i="$where" '$1 == n && $2 == i { print $4; exit }' \
			"$LAB_DIR/links"
	fi
}

# lab_if NODE LAN: the node's interface on LAN.
lab_if() {
	awk -v n="$1" -v l="$2" '$1 == n && $3 == l { print $2; exit }' "$LAB_DIR/links"
}

# lab_node_lan NODE: the LAN of a host's first interface.
lab_node_lan() {
	awk -v n="$1" '$1 == n { print $3; exit }' "$LAB_DIR/links"
}

# lab_route NODE PREFIX VIA: a static unicast route; PREFIX may be "default". An IPv6 VIA makes
# it an IPv6 route.
lab_route() {
	local f=-4
	case $3 in *:*) f=-6 ;; esac
	lab_run ip -n "$(lab_ns "$1")" $f route add "$2" via "$3" ||
		lab_die "cannot add route $2 via $3 in $1"
}

# lab_ipv6 NODE: IPv6 on in NODE's namespace (the lab's namespaces start without it), with
# duplicate address detection off so that addresses are usable at once, and forwarding on in a
# router (the multicast forwarding comes with smcroute's IPv6 routes). Call it before the node's
# links are made.
lab_ipv6() {
	local ns
	ns=$(lab_ns "$1")
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=0 \
		net.ipv6.conf.default.disable_ipv6=0 net.ipv6.conf.all.accept_dad=0 \
		net.ipv6.conf.default.accept_dad=0 >/dev/null || lab_die "no IPv6 in $1"
	if [ -e "$LAB_DIR/mroutes.$1" ]; then
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.forwarding=1 >/dev/null
	fi
}

# lab_addr6 NODE IFNAME ADDR/LEN: an IPv6 address on the interface, usable at once (nodad).
lab_addr6() {
	lab_run ip -n "$(lab_ns "$1")" -6 addr add "$3" dev "$2" nodad ||
		lab_die "cannot add $3 to $1:$2"
	echo "$1 $2 ${3%/*}" >>"$LAB_DIR/addrs6"
}

# lab_addr6_of NODE IFNAME: the IPv6 address lab_addr6 gave the interface.
lab_addr6_of() {
	awk -v n="$1" -v i="$2" '$1 == n && $2 == i { print $3; exit }' "$LAB_DIR/addrs6" 2>/dev/null
}

# lab_mroute ROUTER IIF SOURCE GROUP OIF...: a source-specific static multicast route for
# smcroute. Source-specific, because a (*,G) route is only made on the first packet and the
# kernel holds just a few packets meanwhile: the first SPMs would be lost. SOURCE and GROUP may
# be IPv6 addresses (the router then needs lab_ipv6).
lab_mroute() {
	local router=$1 iif=$2 source=$3 group=$4
	shift 4
	[ -e "$LAB_DIR/mroutes.$router" ] || lab_die "$router is not a router"
	echo "mroute from $iif source $source group $group to $*" >>"$LAB_DIR/mroutes.$router"
}

# lab_smcroute_start ROUTER: writes the router's smcroute.conf, starts smcrouted and waits until
# the kernel holds every (S,G) route.
lab_smcroute_start() {
	local router=$1 conf want ifs
	conf="$LAB_DIR/smcroute.$router.conf"
	ifs=$(awk '{ print $3; for (i = 9; i <= NF; i++) print $i }' "$LAB_DIR/mroutes.$router" |
		sort -u)
	{
		echo "# generated by the pgmrouter lab"
		for i in $ifs; do echo "phyint $i enable"; done
		cat "$LAB_DIR/mroutes.$router"
	} >"$conf"
	want=$(wc -l <"$LAB_DIR/mroutes.$router")
	lab_spawn "$router" "$LAB_DIR/smcroute.$router.log" smcrouted -n -N -f "$conf" \
		-P "$LAB_DIR/smcroute.$router.pid" -u "$LAB_DIR/smcroute.$router.sock" -l info
	echo "$LAB_PID" >"$LAB_DIR/smcroute.$router.spawned"
	lab_wait 10 "smcroute routes in $router" _lab_mroutes_installed "$router" "$want" || {
		cat "$LAB_DIR/smcroute.$router.log" >&2
		lab_die "smcroute did not install $want routes in $router"
	}
}

# lab_pim_start ROUTER RP: FRR in ROUTER: zebra and pimd, each in the foreground under the lab's
# process tracking (no watchfrr, no system service), with their own config, vty socket directory
# and zebra socket under LAB_DIR/frr.ROUTER. PIM-SM and IGMP on every interface of the router,
# RP the static rendezvous point of every group. Returns once pimd answers on its vty; routes
# come later, with the receivers' joins and the first data (lab_topo_routes_wait).
lab_pim_start() {
	local router=$1 rp=$2 dir ifs i
	if [ ! -x "$LAB_FRR_DIR/pimd" ] || [ ! -x "$LAB_FRR_DIR/zebra" ] || ! command -v vtysh >/dev/null; then
		lab_die "routes by PIM need FRR (Debian package frr): no $LAB_FRR_DIR/pimd"
	fi
	dir="$LAB_DIR/frr.$router"
	mkdir -p "$dir"
	ifs=$(awk -v n="$router" '$1 == n { print $2 }' "$LAB_DIR/links")
	echo "hostname $router" >"$dir/zebra.conf"
	{
		echo "hostname $router"
		for i in $ifs; do printf 'interface %s\n ip pim\n ip igmp\n' "$i"; done
	} >"$dir/pimd.conf"
	# The daemons drop to the user frr: it must reach its own directory inside LAB_DIR.
	chmod 711 "$LAB_DIR"
	chown -R frr:frr "$dir"
	lab_spawn "$router" "$dir/zebra.log" "$LAB_FRR_DIR/zebra" -u frr -g frr -f "$dir/zebra.conf" \
		-i "$dir/zebra.pid" -z "$dir/zserv.api" --vty_socket "$dir" -P 0 --log stdout
	lab_wait 10 "zebra in $router" test -S "$dir/zserv.api" || {
		cat "$dir/zebra.log" >&2
		lab_die "zebra did not start in $router"
	}
	lab_spawn "$router" "$dir/pimd.log" "$LAB_FRR_DIR/pimd" -u frr -g frr -f "$dir/pimd.conf" \
		-i "$dir/pimd.pid" -z "$dir/zserv.api" --vty_socket "$dir" -P 0 --log stdout
	lab_wait 10 "pimd in $router" _lab_pim_answers "$router" || {
		cat "$dir/pimd.log" >&2
		lab_die "pimd did not start in $router"
	}
	# pimd refuses a static RP it has no unicast path to yet ("No Path to RP"): given once
	# zebra has told it the routes, again until it holds.
	lab_wait 10 "the RP in $router" _lab_pim_rp "$router" "$rp" || {
		cat "$dir/pimd.log" >&2
		lab_die "pimd in $router did not take the RP $rp"
	}
}

_lab_pim_rp() {
	lab_pim_vtysh "$1" -c "configure terminal" -c "ip pim rp $2 224.0.0.0/4" >/dev/null
	lab_pim_vtysh "$1" -c "show running-config" | grep -q "^ip pim rp $2 "
}

# lab_pim_vtysh ROUTER ARGS...: FRR's vtysh on the router's daemons (quiet on stderr).
lab_pim_vtysh() {
	local router=$1
	shift
	lab_exec "$router" vtysh --vty_socket "$LAB_DIR/frr.$router" "$@" 2>/dev/null
}

_lab_pim_answers() {
	lab_pim_vtysh "$1" -c "show ip pim interface" >/dev/null
}

_lab_mroutes_installed() {
	local n
	n=$({
		ip -n "$(lab_ns "$1")" mroute show 2>/dev/null
		ip -n "$(lab_ns "$1")" -6 mroute show 2>/dev/null
	} | grep -c 'Iif:')
	[ "$n" -ge "$2" ]
}

# lab_spawn NODE LOG CMD...: starts CMD in the background inside NODE (a node or "lan:NAME"),
# stdout and stderr to LOG, and records it for cleanup. The pid is left in LAB_PID (call it
# directly, not in $(...), or the record is lost).
lab_spawn() {
	local node=$1 log=$2 ns
	shift 2
	case $node in
	lan:*) ns=$(lab_lan_ns "${node#lan:}") ;;
	*) ns=$(lab_ns "$node") ;;
	esac
	[ "${LAB_VERBOSE:-0}" = 1 ] && echo "+ [$node] $*" >&2
	# ip netns exec execs the command, so $! is the command's own pid.
	ip netns exec "$ns" "$@" >"$log" 2>&1 </dev/null &
	LAB_PID=$!
	echo "$LAB_PID $ns $1" >>"$LAB_DIR/pids"
}

# lab_spawn_ready NODE LOG READY CMD...: lab_spawn, then waits (10 s at most) until CMD has
# created the file READY, which CMD must be told of (the peers' and tools' --ready FILE); a READY
# left by an earlier start is removed first. Stops waiting when CMD exits first. On failure
# shows LOG and returns 1. The pid is left in LAB_PID (call it directly, as lab_spawn).
lab_spawn_ready() {
	local node=$1 log=$2 ready=$3
	shift 3
	rm -f "$ready"
	lab_spawn "$node" "$log" "$@"
	lab_wait 10 "$(basename "$1") ready in $node" _lab_ready "$ready" "$LAB_PID" &&
		[ -e "$ready" ] && return 0
	lab_log "$(basename "$1") in $node did not start; its output:"
	sed 's/^/    /' "$log" >&2
	return 1
}

_lab_ready() {
	[ -e "$1" ] || ! kill -0 "$2" 2>/dev/null || _lab_is_zombie "$2"
}

# lab_wait SECONDS WHAT CMD...: polls CMD every 50 ms until it succeeds; 1 on timeout, with a
# message naming WHAT.
lab_wait() {
	local limit=$1 what=$2
	shift 2
	_lab_poll "$limit" "$@" && return 0
	lab_log "timeout after ${limit}s waiting for $what"
	return 1
}

# lab_poll SECONDS CMD...: the same without a word, CMD's standard error discarded: for
# conditions that fail for a while as a rule, whose caller reports the outcome itself (the
# namespace tests' checks: check TEXT lab_poll 10 CMD...).
lab_poll() {
	_lab_poll "$@" 2>/dev/null
}

# lab_poll_quiet SECONDS CMD...: the same with CMD's output discarded as well.
lab_poll_quiet() {
	_lab_poll "$@" >/dev/null 2>&1
}

# lab_daemon_up SECONDS CLIENT SOCKET LOG CMD...: runs CMD (a daemon serving SOCKET, in the
# foreground) in the background, its output appended to LOG, and waits up to SECONDS until
# CLIENT gets an answer on SOCKET. Sets LAB_DAEMON_PID; false when it never answered.
lab_daemon_up() {
	local secs=$1 client=$2 sock=$3 log=$4
	shift 4
	"$@" >>"$log" 2>&1 &
	LAB_DAEMON_PID=$!
	lab_poll_quiet "$secs" "$client" -s "$sock" -c "show version"
}

_lab_poll() {
	local limit=$1 end
	shift
	end=$(($(date +%s%N) + limit * 1000000000))
	until "$@"; do
		[ "$(date +%s%N)" -ge "$end" ] && return 1
		sleep 0.05
	done
	return 0
}

# lab_wait_file_line SECONDS FILE REGEX: waits until FILE has a line matching REGEX.
lab_wait_file_line() {
	lab_wait "$1" "'$3' in $(basename "$2")" grep -qE "$3" "$2"
}

# lab_wait_pid PID SECONDS: waits for a process started by lab_spawn to exit and returns its exit
# status; on timeout kills it and returns 124.
lab_wait_pid() {
	local pid=$1 limit=$2 end rc
	end=$(($(date +%s%N) + limit * 1000000000))
	while kill -0 "$pid" 2>/dev/null; do
		if ! _lab_is_zombie "$pid" && [ "$(date +%s%N)" -ge "$end" ]; then
			kill -TERM "$pid" 2>/dev/null
			sleep 0.5
			kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			return 124
		fi
		_lab_is_zombie "$pid" && break
		sleep 0.05
	done
	wait "$pid" 2>/dev/null
	rc=$?
	return $rc
}

_lab_is_zombie() {
	[ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" = Z ]
}

# lab_stop PID: asks a spawned process to end (TERM), waits up to 5 s, then kills it.
lab_stop() {
	local pid=$1 i
	kill -TERM "$pid" 2>/dev/null || return 0
	for i in $(seq 1 100); do
		kill -0 "$pid" 2>/dev/null || break
		_lab_is_zombie "$pid" && break
		sleep 0.05
	done
	kill -KILL "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	return 0
}

# The router daemon -----------------------------------------------------------------------------

lab_router_cmd() { echo "${ROUTER_CMD:-$LAB_REPO/build/pgmrouterd}"; }
lab_cli_cmd() { echo "$LAB_REPO/build/pgmrouter"; }

# lab_router_available: true when the router daemon binary exists.
lab_router_available() {
	local cmd
	read -r cmd _ <<<"$(lab_router_cmd)"
	[ -x "$cmd" ]
}

lab_router_sock() { echo "$LAB_DIR/pgmrouterd.$1.sock"; }

# lab_router_config ROUTER: the lab's default startup config for pgmrouterd in ROUTER, on stdout:
# router assist on every interface the topology gave the router, and PGM over UDP on the ports
# the lab's peers use (OpenPGM with one port for both directions, 3055; ZeroMQ epgm, 5555). Every
# timer keeps its default (ncf-interval 50 ms, NCF TTL 255, ...).
lab_router_config() {
	local router=$1 ifname
	echo "! pgmrouterd startup config for $router, generated by the lab"
	echo "hostname $router"
	echo "ip pgm router udp-encapsulation ports 3055 5555"
	awk -v n="$router" '$1 == n { print $2 }' "$LAB_DIR/links" | while read -r ifname; do
		echo "interface $ifname"
		echo " ip pgm router"
	done
	echo "end"
}

# lab_router_start ROUTER CONF [ARG...]: starts the router daemon in ROUTER's namespace with
# startup config CONF (ROUTER_CMD -d -f CONF -s SOCK ARG..., log in LAB_DIR/pgmrouterd.ROUTER.log),
# records it for cleanup and waits until its control socket answers that router assist runs
# (show ip pgm router json: "running":true). The pid is left in LAB_PID.
# A control socket left by a daemon that was killed stays: the daemon replaces it itself
# (tests/ns/router_restart.sh checks that). The log of an earlier daemon in ROUTER is kept as
# LOG.1, LOG.2, ...
lab_router_start() {
	local router=$1 conf=$2 sock cmd log n
	shift 2
	sock=$(lab_router_sock "$router")
	log="$LAB_DIR/pgmrouterd.$router.log"
	if lab_router_running "$router"; then
		lab_log "pgmrouterd already runs in $router"
		return 1
	fi
	read -r -a cmd <<<"$(lab_router_cmd)"
	if [ -e "$log" ]; then # a restart: keep the earlier log as LOG.1, LOG.2, ...
		n=1
		while [ -e "$log.$n" ]; do n=$((n + 1)); done
		mv "$log" "$log.$n"
	fi
	lab_spawn "$router" "$log" "${cmd[@]}" -d -f "$conf" -s "$sock" "$@"
	echo "$LAB_PID" >"$LAB_DIR/pgmrouterd.$router.pid"
	if ! lab_wait 10 "pgmrouterd control socket in $router" _lab_router_answers "$router" ||
		! lab_router_running "$router"; then
		lab_log "pgmrouterd in $router did not come up; its log:"
		sed 's/^/    /' "$log" >&2
		return 1
	fi
}

_lab_router_answers() {
	lab_router_running "$1" || return 0 # died: stop waiting, the caller reports it
	[ -S "$(lab_router_sock "$1")" ] &&
		lab_router_cli "$1" "show ip pgm router json" 2>/dev/null | grep -q '"running":true'
}

# lab_router_running ROUTER: true while the daemon started in ROUTER is alive.
lab_router_running() {
	local pid
	pid=$(cat "$LAB_DIR/pgmrouterd.$1.pid" 2>/dev/null) || return 1
	kill -0 "$pid" 2>/dev/null && ! _lab_is_zombie "$pid"
}

# lab_router_pid ROUTER: the pid of the daemon started last in ROUTER.
lab_router_pid() { cat "$LAB_DIR/pgmrouterd.$1.pid" 2>/dev/null; }

# lab_router_kill ROUTER [SIGNAL]: sends SIGNAL (default KILL) to ROUTER's daemon and waits until
# it is gone (at most 5 s). Its interception rules stay behind on SIGKILL: they carry
# --queue-bypass, so the kernel forwards on without a queue reader.
lab_router_kill() {
	local router=$1 sig=${2:-KILL} pid
	pid=$(lab_router_pid "$router") || return 1
	kill -"$sig" "$pid" 2>/dev/null || return 1
	lab_wait_pid "$pid" 5 >/dev/null
	! lab_router_running "$router"
}

# lab_router_cli ROUTER COMMAND...: runs each COMMAND (one argument each) through a pgmrouter
# session on ROUTER's control socket, inside the router's namespace; output on stdout.
lab_router_cli() {
	local router=$1 c
	local -a args=()
	shift
	for c in "$@"; do args+=(-c "$c"); done
	ip netns exec "$(lab_ns "$router")" "$(lab_cli_cmd)" -s "$(lab_router_sock "$router")" \
		"${args[@]}"
}

# lab_router_rules ROUTER: the interception rules pgmrouterd installed in ROUTER, without their
# counters, for comparisons across restarts: its nftables table as nft lists it, or the
# iptables-save lines of its chains and jumps (whichever backend it uses, dataplane/rules.h).
# Its queue rules are the lines with "queue num" or "NFQUEUE". The elements of its dynamic sets
# (the policing meters' sources and interfaces, which come and go with traffic) are left out.
lab_router_rules() {
	lab_exec "$1" nft list table ip pgmrouter 2>/dev/null | grep -v '^#' |
		sed 's/counter packets [0-9]* bytes [0-9]*/counter/' |
		awk '$1 == "set" { dyn = 0 } /flags .*dynamic/ { dyn = 1 }
			dyn && $1 == "elements" { skip = 1 }
			skip { if (/}/) skip = 0; next } { print }'
	lab_exec "$1" iptables-save -t mangle 2>/dev/null | grep -E '^(-A|:)[^ ]* ?.*PGMROUTER' |
		sed 's/\[[0-9]*:[0-9]*\]//'
}

# Loss injection -------------------------------------------------------------------------------

# lab_loss NODE IFNAME SPEC [TYPES]: drops PGM packets leaving NODE through IFNAME, in the mangle
# table's POSTROUTING chain (after any FORWARD verdict, so a router's own rules cannot bypass it).
#   SPEC   a probability (0.05: random 5 %) or nth:N (deterministic, every Nth packet)
#   TYPES  odata (default) or all; rdata, nak, ncf, spm also work (one type)
# Both PGM over IP (protocol 113) and PGM over UDP (LAB_PGM_UDP_PORTS) are matched. LAB_IPV6=1:
# the same in ip6tables (PGM as the upper layer after any extension headers; the type matched
# where there are none, as in ODATA).
lab_loss() {
	local node=$1 ifname=$2 spec=$3 types=${4:-odata} ns stat type_num="" ports ipt=iptables
	local at_ip="0>>22&0x3C@4>>24&0x0F" at_udp="0>>22&0x3C@12>>24&0x0F"
	ns=$(lab_ns "$node")
	case $spec in
	nth:*) stat=(-m statistic --mode nth --every "${spec#nth:}" --packet 0) ;;
	*) stat=(-m statistic --mode random --probability "$spec") ;;
	esac
	if [ "$types" != all ]; then
		type_num=$(_lab_type_number "$types") || lab_die "unknown PGM type $types"
	fi
	if [ "$LAB_IPV6" = 1 ]; then
		ipt=ip6tables
		at_ip="44>>24&0x0F"
		at_udp="52>>24&0x0F"
	fi
	if ! ip netns exec "$ns" $ipt -t mangle -nL PL_LOSS >/dev/null 2>&1; then
		ip netns exec "$ns" $ipt -t mangle -N PL_LOSS
		ip netns exec "$ns" $ipt -t mangle -A POSTROUTING -j PL_LOSS
	fi
	ports=$(echo "$LAB_PGM_UDP_PORTS" | tr ' ' ',')
	if [ -n "$type_num" ]; then
		# u32: jump over the IP header (IHL), then test the type nibble of the PGM header,
		# byte 4 of it, after the 8-byte UDP header for the encapsulated form. Only where
		# that header is (! -f: not a second or later IP fragment; the port match of the UDP
		# rule already fails there): dropping a datagram's first fragment loses it.
		local nofrag=(! -f)
		[ "$LAB_IPV6" = 1 ] && nofrag=() # ip6tables has no -f; the lab sends no fragments
		lab_run ip netns exec "$ns" $ipt -t mangle -A PL_LOSS -o "$ifname" -p 113 "${nofrag[@]}" \
			-m u32 --u32 "$at_ip=$type_num" "${stat[@]}" -j DROP
		lab_run ip netns exec "$ns" $ipt -t mangle -A PL_LOSS -o "$ifname" -p udp \
			-m multiport --dports "$ports" \
			-m u32 --u32 "$at_udp=$type_num" "${stat[@]}" -j DROP
	else
		lab_run ip netns exec "$ns" $ipt -t mangle -A PL_LOSS -o "$ifname" -p 113 \
			"${stat[@]}" -j DROP
		lab_run ip netns exec "$ns" $ipt -t mangle -A PL_LOSS -o "$ifname" -p udp \
			-m multiport --dports "$ports" "${stat[@]}" -j DROP
	fi
}

# lab_delay NODE MS: delays every PGM packet NODE sends (PGM over IP and over UDP to the lab's
# ports) by MS milliseconds, in order, as if it sat far away: tests/peers/nfq-delay holds them
# in netfilter queue 7 of the node's mangle OUTPUT chain (--queue-bypass: should the delayer
# end, packets pass at once). There is no netem on these kernels.
lab_delay() {
	local node=$1 ms=$2 ns ports
	ns=$(lab_ns "$node")
	ports=$(echo "$LAB_PGM_UDP_PORTS" | tr ' ' ',')
	lab_spawn_ready "$node" "$LAB_DIR/delay.$node.log" "$LAB_DIR/delay.$node.ready" \
		"$LAB_PEERS/nfq-delay" --queue 7 --delay-ms "$ms" --timeout 3600 \
		--ready "$LAB_DIR/delay.$node.ready" || return 1
	lab_run ip netns exec "$ns" iptables -t mangle -A OUTPUT -p 113 \
		-j NFQUEUE --queue-num 7 --queue-bypass
	lab_run ip netns exec "$ns" iptables -t mangle -A OUTPUT -p udp -m multiport \
		--dports "$ports" -j NFQUEUE --queue-num 7 --queue-bypass
}

# lab_loss_ipt: the command of the loss rules (iptables, or ip6tables in an IPv6 lab).
lab_loss_ipt() { if [ "$LAB_IPV6" = 1 ]; then echo ip6tables; else echo iptables; fi; }

# lab_loss_dropped NODE: packets dropped so far by NODE's loss rules.
lab_loss_dropped() {
	ip netns exec "$(lab_ns "$1")" "$(lab_loss_ipt)" -t mangle -nvxL PL_LOSS 2>/dev/null |
		awk '$3 == "DROP" { n += $1 } END { print n + 0 }'
}

lab_loss_clear() {
	ip netns exec "$(lab_ns "$1")" "$(lab_loss_ipt)" -t mangle -F PL_LOSS 2>/dev/null
	return 0
}

_lab_type_number() {
	local t
	for t in $LAB_PGM_TYPES; do
		if [ "${t%%:*}" = "$1" ]; then
			echo "${t#*:}"
			return 0
		fi
	done
	return 1
}

# Counters -------------------------------------------------------------------------------------

# One nft table per LAN, bridge family, prerouting: every frame entering the bridge from any port,
# that is every frame on the segment, exactly once. The type is the low nibble of byte 4 of the
# PGM header (after the 8-byte UDP header when encapsulated); an IP fragment other than the first
# counts for nothing (its datagram is counted by the first). naklist counts the NAKs that carry
# options (OpenPGM puts OPT_NAK_LIST there); they are counted in nak too.
_lab_counters_install() {
	local ns=$1 c t name num ports enc off
	ports=$(echo "$LAB_PGM_UDP_PORTS" | tr ' ' ',')
	{
		echo "table bridge pl_count {"
		echo "  set pgm_udp_ports { type inet_service; elements = { $ports } }"
		for c in $LAB_COUNTERS; do echo "  counter $c { }"; done
		# off: bit offset of the PGM header from the transport header.
		for enc in ip:0 udp:64; do
			off=${enc#*:}
			echo "  chain type_${enc%%:*} {"
			for t in $LAB_PGM_TYPES; do
				name=${t%%:*}
				num=${t#*:}
				if [ "$name" = nak ]; then
					echo "    @th,$((off + 36)),4 $num @th,$((off + 47)),1 1 counter name naklist"
				fi
				echo "    @th,$((off + 36)),4 $num counter name $name return"
			done
			echo "    counter name other"
			echo "  }"
		done
		echo "  chain count {"
		echo "    type filter hook prerouting priority -300; policy accept;"
		# a datagram is counted by its first IP fragment; the others carry no header
		echo "    ip frag-off & 0x1fff != 0 return"
		echo "    ip protocol 113 jump type_ip"
		# IPv6: PGM as the upper layer after any extension headers (the transport header
		# offset is the upper layer's)
		echo "    ether type ip6 meta l4proto 113 jump type_ip"
		echo "    udp dport @pgm_udp_ports jump type_udp"
		echo "  }"
		echo "}"
	} >"$LAB_DIR/counters.nft"
	ip netns exec "$ns" nft -f "$LAB_DIR/counters.nft"
}

# lab_counts LAN: every counter of the segment as "spm=N odata=N ...".
lab_counts() {
	lab_lan_exec "$1" nft list counters table bridge pl_count 2>/dev/null | awk '
		$1 == "counter" { name = $2 }
		$1 == "packets" { printf "%s%s=%s", sep, name, $2; sep = " " }
		END { print "" }'
}

# lab_count LAN TYPE: one counter of the segment.
lab_count() {
	lab_counts "$1" | tr ' ' '\n' | awk -F= -v k="$2" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }'
}

lab_counts_reset() {
	lab_lan_exec "$1" nft reset counters table bridge pl_count >/dev/null
}

# lab_kv KEY LINE: the value of KEY in a key=value line.
lab_kv() {
	echo "$2" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print substr($0, length(k) + 2); exit }'
}

# lab_result FILE: the last summary line ("result=...") a peer wrote.
lab_result() {
	grep '^result=' "$1" 2>/dev/null | tail -n 1
}

# Captures -------------------------------------------------------------------------------------

# lab_capture_start LAN FILE [FILTER]: captures whole frames on the LAN's bridge with dumpcap
# (pcap format). The pid is left in LAB_PID; stop it with lab_capture_stop PID.
lab_capture_start() {
	local lan=$1 file=$2 filter=${3:-"ip proto 113 or udp or ip6 proto 113 or ip6 proto 0"} log
	log="$LAB_DIR/dumpcap.$lan.$(basename "$file").log"
	lab_spawn "lan:$lan" "$log" dumpcap -q -P -s 0 -i br0 -f "$filter" -w "$file"
	lab_wait 10 "dumpcap on LAN $lan" _lab_capture_running "$file" "$LAB_PID" || {
		cat "$log" >&2
		return 1
	}
}

_lab_capture_running() {
	kill -0 "$2" 2>/dev/null || return 1
	[ -s "$1" ]
}

lab_capture_stop() {
	kill -INT "$1" 2>/dev/null
	lab_wait_pid "$1" 10 >/dev/null
	return 0
}

# Cleanup --------------------------------------------------------------------------------------

# lab_cleanup: ends every process the run started, deletes every namespace it made and its
# files. Safe to call more than once, and from a trap.
lab_cleanup() {
	local pid ns rest i
	[ -n "$LAB_DIR" ] && [ -d "$LAB_DIR" ] || return 0
	# Processes first, by recorded pid, only if they still live in this run's namespace.
	if [ -s "$LAB_DIR/pids" ]; then
		while read -r pid ns rest; do
			_lab_pid_in_ns "$pid" "$ns" && kill -TERM "$pid" 2>/dev/null
		done <"$LAB_DIR/pids"
		for i in $(seq 1 60); do
			_lab_any_alive "$LAB_DIR/pids" || break
			sleep 0.05
		done
		while read -r pid ns rest; do
			_lab_pid_in_ns "$pid" "$ns" && kill -KILL "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
		done <"$LAB_DIR/pids"
	fi
	# Then the namespaces, with anything still running inside them.
	while read -r ns; do
		_lab_netns_destroy "$ns"
	done < <(tac "$LAB_DIR/namespaces" 2>/dev/null)
	if [ "${LAB_KEEP:-0}" = 1 ]; then
		lab_log "kept $LAB_DIR"
	else
		rm -rf "$LAB_DIR"
	fi
	LAB_DIR=""
	return 0
}

# _lab_pid_in_ns PID NS: the process lives in the namespace (the same nsfs inode; no command to
# run, so cleanup stays quick with many processes and many namespaces on the machine).
_lab_pid_in_ns() {
	[ -d "/proc/$1" ] && [ "/proc/$1/ns/net" -ef "/run/netns/$2" ]
}

_lab_any_alive() {
	local pid ns rest
	while read -r pid ns rest; do
		if _lab_pid_in_ns "$pid" "$ns" && ! _lab_is_zombie "$pid"; then
			return 0
		fi
	done <"$1"
	return 1
}

_lab_netns_destroy() {
	local ns=$1 pid
	[ -e "/run/netns/$ns" ] || return 0
	for pid in $(ip netns pids "$ns" 2>/dev/null); do
		kill -KILL "$pid" 2>/dev/null
	done
	ip netns del "$ns" 2>/dev/null || lab_log "could not delete namespace $ns"
}

# lab_teardown_id ID: removes a run that was left running on purpose (all namespaces named
# ID-*, their processes, and the run's temp directory).
lab_teardown_id() {
	local id=$1 ns tmp
	case $id in pl-*-??????) ;; *) lab_die "not a lab run id: $id" ;; esac
	for ns in $(ip netns list 2>/dev/null | awk '{ print $1 }' | grep "^$id-"); do
		_lab_netns_destroy "$ns"
	done
	tmp=$(dirname "$(mktemp -u -t x.XXXXXX)")
	for d in "$tmp/$id".??????; do
		[ -d "$d" ] && rm -rf "$d"
	done
	return 0
}

# lab_leftovers [IDS_FILE]: prints the namespaces that the runs whose ids IDS_FILE lists (one a
# line, LAB_IDS_FILE) left behind, or without it those of any lab run (pl-*); true when none.
lab_leftovers() {
	local left
	if [ -n "${1:-}" ]; then
		left=$(ip netns list 2>/dev/null | awk '{ print $1 }' |
			grep -F -f <(sed '/^$/d; s/$/-/' "$1") | grep -E '^pl-')
	else
		left=$(ip netns list 2>/dev/null | awk '{ print $1 }' | grep '^pl-')
	fi
	[ -z "$left" ] && return 0
	awk '{ print "leftover namespace: " $0 }' <<<"$left"
	return 1
}

# shellcheck source-path=SCRIPTDIR source=topo.sh
. "$LAB_REPO/tests/lab/topo.sh"

# lab_suite TAG TIMEOUT [NAME...]: the runner of a directory of lab scripts (tests/ns,
# tests/security; call it from that directory): each script (every *.sh but run.sh and
# lib*.sh, or the NAMEs given) runs alone, bounded by TIMEOUT seconds (each cleans up on exit,
# INT and TERM; timeout sends TERM), with a line "=== TAG: NAME passed (N s)" or "FAILED", then
# a summary. False when any failed or left a namespace behind.
lab_suite() {
	local tag=$1 limit=$2 t name start passed=0 failed="" ids
	local -a tests=()
	shift 2
	if [ $# -gt 0 ]; then
		for t in "$@"; do tests+=("./${t%.sh}.sh"); done
	else
		for t in ./*.sh; do
			case $t in ./run.sh | ./lib*.sh) ;; *) tests+=("$t") ;; esac
		done
	fi
	# the lab ids of every script (lab_init); other work may run labs of its own meanwhile
	ids=$(mktemp -t "pl-$tag-ids.XXXXXX") || return 1
	for t in "${tests[@]}"; do
		name=$(basename "$t" .sh)
		start=$(date +%s)
		if LAB_IDS_FILE=$ids timeout "$limit" bash "$t"; then
			passed=$((passed + 1))
			echo "=== $tag: $name passed ($(($(date +%s) - start)) s)"
		else
			failed="$failed $name"
			echo "=== $tag: $name FAILED ($(($(date +%s) - start)) s)"
		fi
	done
	echo "=== $tag: $passed of ${#tests[@]} scripts passed"
	if ! lab_leftovers "$ids"; then
		echo "=== $tag: the scripts left namespaces behind"
		failed="$failed (leftovers)"
	fi
	rm -f "$ids"
	if [ -n "$failed" ]; then
		echo "=== $tag: FAILED:$failed"
		return 1
	fi
	return 0
}
