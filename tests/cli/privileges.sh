#!/bin/bash
# The daemon's privileges and the files it writes, for tests/cli/run.sh (as root, in a network
# namespace of its own): the drop to an unprivileged user for real (a system user created here
# and removed on exit), with the data plane set up again as that user; a failing drop stops the
# daemon; -n runs no `do` command; symlinks, FIFOs and files in the way are refused.
# Prints "ok NAME" or "FAIL NAME" per check.
#
#   tests/cli/privileges.sh DAEMON CLIENT
DAEMON=$1
CLIENT=$2
[ "$(id -u)" = 0 ] || { echo "skip privileges: needs root"; exit 0; }
# the daemons install interception rules: in a network namespace of our own
if [ -z "${PGMROUTER_PRIV_NETNS:-}" ]; then
	exec env PGMROUTER_PRIV_NETNS=1 unshare --net -- "$0" "$@"
fi
# shellcheck source-path=SCRIPTDIR source=../lab/lib.sh
. "$(dirname "$0")/../lab/lib.sh"
T=$(mktemp -d "${TMPDIR:-/tmp}/pc-priv.XXXXXX")
chmod 755 "$T"
U=pgmrt$$
DPID=""
cleanup() {
	[ -n "$DPID" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
	userdel "$U" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
ok() { echo "ok   $1"; }
bad() { echo "FAIL $1"; }
check() {
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}
status() { awk -v k="$2:" '$1 == k { $1 = ""; print substr($0, 2) }' "/proc/$1/status"; }

useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$U" ||
	{ bad "privileges: useradd $U"; exit 1; }
uid=$(id -u "$U")
# the configuration directory belongs to the daemon's user, as make install makes it
mkdir "$T/etc"
chown "$U" "$T/etc"
printf 'hostname p1\ninterface lo\n ip pgm router\n' >"$T/etc/p.conf"
S=$T/sock
check "privileges: the daemon starts with -u" lab_daemon_up 30 "$CLIENT" "$S" "$T/log" \
	"$DAEMON" -d -u "$U" -f "$T/etc/p.conf" -s "$S" -p "$T/pid"
DPID=$LAB_DAEMON_PID
check "privileges: runs as the user (uid, saved uid too)" test "$(status $DPID Uid)" = "$uid $uid $uid $uid"
check "privileges: CAP_NET_ADMIN and CAP_NET_RAW only (effective)" test "$(status $DPID CapEff)" = 0000000000003000
check "privileges: ... permitted" test "$(status $DPID CapPrm)" = 0000000000003000
check "privileges: ... bounding set" test "$(status $DPID CapBnd)" = 0000000000003000
check "privileges: ... ambient, for iptables and nft run as children" test "$(status $DPID CapAmb)" = 0000000000003000
check "privileges: no_new_privs" test "$(status $DPID NoNewPrivs)" = 1
check "privileges: the log says so" grep -q "running as user $U (uid $uid) with cap_net_admin,cap_net_raw, no_new_privs" "$T/log"
"$CLIENT" -s "$S" -c "configure terminal" -c "ip pgm router queue 114" -c "ip pgm router backend iptables" >"$T/out" 2>&1
check "privileges: the queue and its rules start again as the user (nftables, then iptables)" \
	grep -q "Interception backend iptables, queue 114" <("$CLIENT" -s "$S" -c "show ip pgm router dataplane")
"$CLIENT" -s "$S" -c "write memory" >"$T/out" 2>&1
check "files: write memory as the user" grep -qx "\[OK\]" "$T/out"
check "files: the saved configuration has mode 0640" test "$(stat -c %a "$T/etc/p.conf")" = 640
check "files: ... and the change" grep -qx "ip pgm router queue 114" "$T/etc/p.conf"
check "files: the pid file has mode 0644 and names the daemon" test "$(stat -c %a "$T/pid")" = 644 -a "$(cat "$T/pid")" = "$DPID"
chmod 1777 "$T"
ln -s "$T/etc/p.conf" "$T/link.pcap"
out=$("$CLIENT" -s "$S" -c "debug ip pgm router capture $T/link.pcap" 2>&1)
check "files: a capture file that is a symlink is refused" grep -q "a symbolic link" <(echo "$out")
check "files: ... and what it points to is untouched" grep -qx "ip pgm router queue 114" "$T/etc/p.conf"
mkfifo -m 666 "$T/fifo.pcap"
out=$(timeout 5 "$CLIENT" -s "$S" -c "debug ip pgm router capture $T/fifo.pcap" 2>&1)
check "files: a capture file that is a FIFO is refused at once" grep -q "not a regular file" <(echo "$out")
"$CLIENT" -s "$S" -c "debug ip pgm router capture $T/cap.pcap" -c "undebug all" >/dev/null
check "files: the capture file has mode 0600 and belongs to the user" test "$(stat -c %a:%U "$T/cap.pcap")" = "600:$U"
chmod 755 "$T"
kill "$DPID"
wait "$DPID"
check "privileges: a clean exit as the user (the rules removed)" test $? = 0
DPID=""

# a drop that cannot be done stops the daemon (no CAP_SETPCAP: the bounding set stays)
setpriv --bounding-set=-setpcap "$DAEMON" -d -u "$U" -f "$T/etc/p.conf" -s "$T/s2" -p "$T/pid2" >"$T/log2" 2>&1 &
DPID=$!
lab_poll_quiet 10 sh -c "! kill -0 $DPID"
check "privileges: a failing drop stops the daemon" sh -c "! kill -0 $DPID 2>/dev/null"
wait "$DPID" 2>/dev/null
DPID=""
check "privileges: ... saying why" grep -q "dropping privileges: dropping capability" "$T/log2"
"$DAEMON" -d -u nosuchuser$$ -f "$T/etc/p.conf" -s "$T/s3" -p "$T/pid3" >"$T/log3" 2>&1
check "privileges: -u with a user that does not exist stops the start" \
	grep -q "user nosuchuser$$ does not exist" "$T/log3"

# -n is a pure check: `do` commands are not run
printf 'hostname n1\ndo write memory\ndo clear ip pgm router traffic\n' >"$T/n.conf"
cp "$T/n.conf" "$T/n.orig"
touch -d "2020-01-01" "$T/n.conf"
"$DAEMON" -n -f "$T/n.conf" 2>"$T/n.err"
check "-n: a config with do commands is valid" test $? = 0
check "-n: do write memory does not rewrite the file" cmp -s "$T/n.conf" "$T/n.orig"
check "-n: ... nor touch it" test "$(stat -c %Y "$T/n.conf")" = "$(date -d 2020-01-01 +%s)"
printf 'hostname n1\ndo wrte memory\n' >"$T/n2.conf"
"$DAEMON" -n -f "$T/n2.conf" 2>"$T/n2.err"
check "-n: a bad do command is still reported" grep -q "n2.conf:2: " "$T/n2.err"

# files in the way
ln -s "$T/etc/p.conf" "$T/pidlink"
"$DAEMON" -d -f "$T/etc/p.conf" -s "$T/s4" -p "$T/pidlink" >"$T/log4" 2>&1
check "files: a pid file that is a symlink stops the start" test $? != 0
check "files: ... and what it points to is untouched" grep -qx "ip pgm router queue 114" "$T/etc/p.conf"
echo "precious" >"$T/notasocket"
"$DAEMON" -d -f "$T/etc/p.conf" -s "$T/notasocket" -p "$T/pid5" >"$T/log5" 2>&1
check "files: a control socket path holding a file stops the start" grep -q "exists and is not a socket" "$T/log5"
check "files: ... and the file stays" grep -qx precious "$T/notasocket"
mkfifo "$T/conf.fifo"
timeout 5 "$DAEMON" -n -f "$T/conf.fifo" 2>"$T/n3.err"
check "files: a configuration that is a FIFO is refused at once" test $? = 1
