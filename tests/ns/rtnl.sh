#!/bin/bash
# The rtnetlink table follows the kernel: the start-up dump, interfaces that appear later,
# addresses added and removed (the primary IPv4 address, the SPM path NLA, reported when it
# changes, secondary promotion included), IPv6 addresses, up/down, renames with the old name,
# MTU changes and removal.
. "$(dirname "$0")/lib.sh"
need "$HARNESS"
lab_host a
lab_host b
# The lab's namespaces run without IPv6; a's IPv6 addresses are under test here.
lab_exec a sysctl -qw net.ipv6.conf.all.disable_ipv6=0 net.ipv6.conf.default.disable_ipv6=0
lab_link a x0 198.18.20.1/24 b y0 198.18.20.2/24
O="$LAB_DIR/rtnl.out"
lab_spawn_ready a "$O" "$LAB_DIR/rtnl.ready" "$HARNESS" rtnl --timeout 60 \
	--ready "$LAB_DIR/rtnl.ready" || exit 1
RT=$LAB_PID
check "dump: lo and x0 with its primary address" sh -c "
	grep -q '^if-added index=1 name=lo up=1' $O &&
	grep -q '^if-added index=[0-9]* name=x0 up=1 running=1 mtu=1500' $O &&
	grep -q '^addr-added name=x0 addr=198.18.20.1/24' $O"
check "dump done with 2 interfaces" grep -q '^dump-done interfaces=2' "$O"

# An interface that appears later, gets addresses, goes up.
ip link add x1 netns "$(lab_ns a)" type veth peer name y1 netns "$(lab_ns b)"
check "new interface reported" lab_poll 5 grep -q '^if-added index=[0-9]* name=x1 up=0' "$O"
lab_exec a ip addr add 198.18.21.1/24 dev x1
check "its first IPv4 address becomes primary" lab_poll 5 sh -c "
	grep -q '^addr-added name=x1 addr=198.18.21.1/24' $O &&
	grep -q '^  now index=[0-9]* name=x1 .*primary4=198.18.21.1\$' $O"
lab_exec a ip addr add 198.18.21.9/24 dev x1
check "a second address in the subnet is a secondary: no primary change" lab_poll 5 sh -c "
	grep -q '^addr-added name=x1 addr=198.18.21.9/24' $O &&
	[ \$(grep -c 'name=x1 changes=primary4, ' $O) = 1 ]"
lab_exec a sysctl -qw net.ipv4.conf.x1.promote_secondaries=1
lab_exec a ip addr del 198.18.21.1/24 dev x1
check "deleting the primary promotes the secondary (primary change reported)" lab_poll 5 sh -c "
	grep -q '^addr-removed name=x1 addr=198.18.21.1/24' $O &&
	grep -q '^  now index=[0-9]* name=x1 .*primary4=198.18.21.9\$' $O"
lab_exec a ip -6 addr add 2001:db8:20::1/64 dev x1 nodad
check "IPv6 address reported" lab_poll 5 grep -q '^addr-added name=x1 addr=2001:db8:20::1/64' "$O"
lab_exec a ip link set x1 up
ip -n "$(lab_ns b)" link set y1 up
check "up and running reported" lab_poll 5 sh -c "
	grep -q '^if-changed index=[0-9]* name=x1 changes=up,' $O &&
	grep -q '^  now index=[0-9]* name=x1 up=1 running=1' $O"

# Rename (down first: the kernel refuses renaming a running interface), MTU, removal.
lab_exec a ip link set x1 down
lab_exec a ip link set x1 name pgm-renamed
check "rename reported with the old name" \
	lab_poll 5 grep -q '^if-changed index=[0-9]* name=pgm-renamed changes=name, old=x1' "$O"
lab_exec a ip link set pgm-renamed mtu 1400
check "MTU change reported" lab_poll 5 sh -c "
	grep -q '^if-changed index=[0-9]* name=pgm-renamed changes=mtu, ' $O"
lab_exec a ip addr flush dev pgm-renamed
check "address flush: the primary goes away" lab_poll 5 \
	grep -q '^  now index=[0-9]* name=pgm-renamed .*primary4=-$' "$O"
lab_exec a ip link del pgm-renamed
check "removal reported" lab_poll 5 grep -q '^if-removed index=[0-9]* name=pgm-renamed' "$O"
kill "$RT"
ended "$RT" 5
check "no malformed messages" grep -q '^stats .* malformed=0' "$O"
finish
