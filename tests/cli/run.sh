#!/bin/bash
# The CLI tests: golden transcripts of the command engine, the client against a running daemon,
# and abusive clients against the ASan daemon (fd and memory leaks).
#
#   tests/cli/run.sh            run everything, print a summary, exit non-zero on any failure
#   tests/cli/run.sh --update   regenerate tests/cli/*.out from tests/cli/*.in
#
# Everything runs on a unix socket in a temporary directory; daemons started here are stopped
# on exit, even on failure.
cd "$(dirname "$0")/../.." || exit 1
# The daemons started here bind a netfilter queue and install interception rules: as root, run
# everything in a network namespace of our own so the host's rules are never touched.
if [ "$(id -u)" = 0 ] && [ -z "${PGMROUTER_CLI_NETNS:-}" ]; then
	exec env PGMROUTER_CLI_NETNS=1 unshare --net -- "$0" "$@"
fi
# shellcheck source=tests/lab/lib.sh
. tests/lab/lib.sh
B=build
DRIVER=$B/tests/cli-driver
ABUSE=$B/tests/cli-abuse
CLIENT=$B/pgmrouter
DAEMON=$B/pgmrouterd
ASAN_DAEMON=$B/asan/pgmrouterd

passed=0
failed=0
failures=""
ok() { passed=$((passed + 1)); echo "ok   $1"; }
bad() { failed=$((failed + 1)); failures="$failures
  $1"; echo "FAIL $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
	local name=$1; shift
	if "$@"; then ok "$name"; else bad "$name"; fi
}

# ---- golden transcripts ----
if [ "$1" = "--update" ]; then
	for in in tests/cli/*.in; do
		"$DRIVER" "$in" >"${in%.in}.out" 2>/dev/null || { echo "driver failed on $in"; exit 1; }
		echo "updated ${in%.in}.out"
	done
	exit 0
fi

T=$(mktemp -d "${TMPDIR:-/tmp}/pc-cli.XXXXXX")
chmod 755 "$T"
DPIDS=""
cleanup() {
	for p in $DPIDS; do kill "$p" 2>/dev/null; done
	for p in $DPIDS; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

for in in tests/cli/*.in; do
	out=${in%.in}.out
	name="transcript $(basename "$in" .in)"
	if [ ! -f "$out" ]; then
		bad "$name (no $out; run make cli-update)"
		continue
	fi
	if "$DRIVER" "$in" >"$T/transcript" 2>"$T/transcript.err" && diff -u "$out" "$T/transcript" >"$T/diff"; then
		ok "$name"
	else
		bad "$name"
		head -40 "$T/diff"
	fi
done

# the same transcripts through the engine built with ASan and UBSan
ASAN_DRIVER=$B/asan/tests/cli-driver
for in in tests/cli/*.in; do
	name="transcript $(basename "$in" .in) under ASan"
	if ASAN_OPTIONS=detect_leaks=1 "$ASAN_DRIVER" "$in" >"$T/transcript" 2>"$T/transcript.err" &&
		cmp -s "${in%.in}.out" "$T/transcript" && ! grep -q "Sanitizer" "$T/transcript.err"; then
		ok "$name"
	else
		bad "$name"
		grep -A20 "Sanitizer" "$T/transcript.err" | head -40
	fi
done

# random lines through execute, `?` and TAB in every mode, under ASan
for seed in 1 2 3; do
	if ASAN_OPTIONS=detect_leaks=1 "$ASAN_DRIVER" --fuzz 30000 $seed >"$T/fuzz" 2>"$T/fuzz.err" &&
		! grep -q "Sanitizer\|runtime error" "$T/fuzz.err"; then
		ok "engine fuzz under ASan, seed $seed: $(tail -1 "$T/fuzz")"
	else
		bad "engine fuzz under ASan, seed $seed"
		grep -A20 "Sanitizer\|runtime error" "$T/fuzz.err" | head -40
	fi
done

# ---- the shows' two renderings, and the README's defaults ----
# shows.out has every show as text and as JSON at the same moment (its transcript test above
# proved it is what the engine prints now)
check_script() {
	local name=$1; shift
	if "$@" >"$T/script" 2>&1; then
		ok "$name: $(tail -1 "$T/script")"
	else
		bad "$name"
		head -20 "$T/script"
	fi
}
check_script "shows: the JSON holds every number of the text" python3 tests/cli/shows.py tests/cli/shows.out
check_script "README: the defaults table is the settings table's" \
	python3 tests/cli/readme_defaults.py tests/cli/shows.out README.md
# Debian's python3 has python3-prometheus-client's OpenMetrics parser; another python3 (a
# virtual environment) gets the script's own strict check
METRICS_PY=python3
/usr/bin/python3 -c "import prometheus_client" 2>/dev/null && METRICS_PY=/usr/bin/python3
check_script "metrics: OpenMetrics, every value the JSON's" \
	$METRICS_PY tests/cli/metrics.py tests/cli/metrics.out

# ---- helpers for daemon tests ----

# start BINARY CONFIG SOCKET [extra switches]: runs a daemon in the foreground, sets DPID
start() {
	local bin=$1 conf=$2 sock=$3; shift 3
	# each daemon in a network namespace of its own: two would contend for one netfilter queue
	local -a netns=()
	[ "$(id -u)" = 0 ] && netns=(unshare --net --)
	# generous: the ASan daemon needs about 30 s for the 20,000-interface config on a busy machine
	lab_daemon_up 90 "$CLIENT" "$sock" "$T/daemon.log" \
		"${netns[@]}" "$bin" -d -f "$conf" -s "$sock" -p "$sock.pid" "$@"
	local rc=$?
	DPID=$LAB_DAEMON_PID
	DPIDS="$DPIDS $DPID"
	return $rc
}

stop() { # stop PID: SIGTERM and wait; returns the daemon's exit status
	kill -TERM "$1" 2>/dev/null
	wait "$1"
}

nfds() { ls "/proc/$1/fd" | wc -l; }

body() { # the running config without the show banner
	sed '1,3d'
}

# ---- the client against a running daemon ----

S=$T/sock
cat >"$T/startup.conf" <<'EOF'
! test startup configuration
hostname t1
interface eth0
 description first
!
interface eth1
!
end
EOF
if start "$DAEMON" "$T/startup.conf" "$S"; then
	ok "daemon starts and answers"
else
	bad "daemon starts and answers"
	cat "$T/daemon.log"
	echo "cli-test: $passed passed, $((failed)) failed (daemon would not start)"
	exit 1
fi
D=$DPID

out=$("$CLIENT" -s "$S" -c "enable" -c "configure terminal" -c "hostname t2" -c "interface eth7" \
	-c "description seventh" -c "end" -c "show running-config | include hostname|eth7")
rc=$?
check "-c: several commands in one session" test $rc = 0 -a "$out" = "Enter configuration commands, one per line.  End with CNTL/Z.
hostname t2
interface eth7"

out=$("$CLIENT" -s "$S" -c "show version | include uptime" -c "sh ip pgm" -c "show history")
rc=$?
check "-c: a failing command makes the exit status non-zero" test $rc != 0
check "-c: the failing command is echoed with the caret under it" \
	grep -qxF "t2#sh ip pgm
      ^
% Invalid input detected at '^' marker." <(echo "$out")
check "-c: commands after a failure still run" grep -qx "  show history" <(echo "$out")

out=$("$CLIENT" -s "$S" -c "show version | include uptime
show history")
check "-c: a command with embedded newlines runs line by line" \
	test "$(echo "$out" | grep -c '^  show')" = 2

out=$("$CLIENT" -s "$S" -c "exit" -c "show version")
rc=$?
check "-c: exit ends the session, later commands are not run" test $rc = 0 -a -z "$out"

out=$(printf 'show running-config | include description\nconfigure terminal\ninterface eth0\n description changed\nend\nshow running-config | include description\n' | "$CLIENT" -s "$S")
rc=$?
check "stdin: piped lines run in order without prompts" test $rc = 0 -a "$out" = " description first
 description seventh
Enter configuration commands, one per line.  End with CNTL/Z.
 description changed
 description seventh"

printf 'show version\nshow bogus\n' | "$CLIENT" -s "$S" >/dev/null
check "stdin: a failing line makes the exit status non-zero" test $? != 0

"$CLIENT" -s "$T/nonexistent" -c "show version" 2>"$T/err"
rc=$?
check "client: no daemon is a clear error" test $rc != 0
check "client: the error names the socket" grep -q "cannot connect to $T/nonexistent" "$T/err"

# the interactive client on a pseudo-terminal
{ echo "hostname t9"; for i in 1 2 3 4 5 6 7 8; do printf 'interface p%d\n description pty %d\n' $i $i; done; } >"$T/pty.conf"
start "$DAEMON" "$T/pty.conf" "$T/psock"
PD=$DPID
"$B/tests/cli-pty" "$CLIENT" "$T/psock" >"$T/pty.out" 2>&1
cat "$T/pty.out"
passed=$((passed + $(grep -c '^ok' "$T/pty.out")))
n=$(grep -c '^FAIL' "$T/pty.out")
[ "$n" -gt 0 ] && { failed=$((failed + n)); failures="$failures
$(grep '^FAIL' "$T/pty.out" | sed 's/^/  /')"; }
grep -q '^ok   pty: exit ends' "$T/pty.out" || { failed=$((failed + 1)); failures="$failures
  pty: did not run to the end"; }
stop "$PD"

# write memory: atomic, equal to the running config, no temporary files left
"$CLIENT" -s "$S" -c "write memory" >"$T/wr.out"
check "write memory reports [OK]" grep -qx "\[OK\]" "$T/wr.out"
"$CLIENT" -s "$S" -c "show running-config" | body >"$T/running"
check "write memory: the file is the running config" cmp -s "$T/running" "$T/startup.conf"
check "write memory: no temporary file left" test "$(ls "$T" | grep -c 'startup.conf.tmp')" = 0
"$CLIENT" -s "$S" -c "show startup-config" >"$T/startup.shown"
check "show startup-config prints the file" cmp -s "$T/startup.shown" "$T/startup.conf"
check "the written config is valid (-n)" "$DAEMON" -n -f "$T/startup.conf"

# round trip: load -> show -> load -> show gives identical output
cp "$T/running" "$T/rt-real.conf"
ln -s rt-real.conf "$T/rt.conf"
start "$DAEMON" "$T/rt.conf" "$T/sock2"
D2=$DPID
"$CLIENT" -s "$T/sock2" -c "show running-config" | body >"$T/running2"
check "round trip: load -> show running-config -> load is identical" cmp -s "$T/running" "$T/running2"
"$CLIENT" -s "$T/sock2" -c "configure terminal" -c "hostname linked" -c "end" -c "write memory" >/dev/null
check "write memory: a symlinked config stays a symlink to the new file" \
	test -L "$T/rt.conf" -a "$(head -2 "$T/rt-real.conf" | tail -1)" = "hostname linked"
stop "$D2"

# SIGHUP: re-read the startup config; what it no longer has goes away
cat >"$T/startup.conf" <<'EOF'
hostname t3
interface eth1
 description reloaded
interface eth9
 bogus command
EOF
kill -HUP "$D"
lab_poll_quiet 10 sh -c "'$CLIENT' -s '$S' -c 'show running-config' | grep -q 'hostname t3'"
"$CLIENT" -s "$S" -c "show running-config" | body >"$T/reloaded"
check "SIGHUP: the new config is applied and the old one removed" test "$(cat "$T/reloaded")" = "!
hostname t3
!
interface eth1
 description reloaded
!
interface eth9
!
end"
check "SIGHUP: bad lines are logged as FILE:LINE" grep -q "startup.conf:5: Invalid input at 'bogus'" "$T/daemon.log"

# debug and terminal monitor
"$ABUSE" monitor "$S" 10 "hostname t4" >"$T/monitor.out" 2>&1 &
MON=$!
lab_poll_quiet 10 grep -q "monitor: ready" "$T/monitor.out"
"$CLIENT" -s "$S" -c "debug ip pgm router events" -c "configure terminal" -c "hostname t4" >/dev/null
wait "$MON"
check "terminal monitor: debug lines reach the monitoring session" grep -q "vty .*: hostname t4" "$T/monitor.out"
out=$("$CLIENT" -s "$S" -c "show debugging")
check "show debugging lists the categories on" test "$out" = "PGM router debugging status:
  PGM router events debugging is on"
"$CLIENT" -s "$S" -c "debug ip pgm router" -c "no debug ip pgm router timers" >/dev/null
check "debug without a category: all but the one switched off" \
	test "$("$CLIENT" -s "$S" -c "show debugging" | grep -c 'is on')" = 3
"$CLIENT" -s "$S" -c "undebug all" >/dev/null
check "undebug all" test "$("$CLIENT" -s "$S" -c "show debugging" | grep -c 'is on')" = 0
"$CLIENT" -s "$S" -c "debug all" -c "no debug all" >/dev/null
check "no debug all" test "$("$CLIENT" -s "$S" -c "show debugging" | grep -c 'is on')" = 0
"$CLIENT" -s "$S" -c "debug ip pgm router packets" -c "show running-config" >"$T/dbg"
check "debug state is not in the running config" test "$(grep -c debug "$T/dbg")" = 0
"$CLIENT" -s "$S" -c "undebug all" -c "debug ip pgm router capture $T/cap.pcap max-size 1" >/dev/null
check "capture: show debugging lists it" \
	grep -qxF "  PGM router packet capture to $T/cap.pcap is on" <("$CLIENT" -s "$S" -c "show debugging")
"$CLIENT" -s "$S" -c "undebug all" >/dev/null
check "capture: undebug all stops it" \
	test "$("$CLIENT" -s "$S" -c "show debugging")" = "PGM router debugging status:"
check "capture: the closed file holds a pcap header" test "$(stat -c %s "$T/cap.pcap")" -ge 24
out=$("$CLIENT" -s "$S" -c "debug ip pgm router capture cap.pcap" 2>&1)
check "capture: a relative path is refused" test $? != 0 -a "$out" = "% Give the capture file as an absolute path"

# access: read-only group member, refused outsider (the group is given with -g)
stop "$D"
check "SIGTERM: clean exit" test $? = 0
check "SIGTERM: socket removed" test ! -e "$S"
check "SIGTERM: pid file removed" test ! -e "$S.pid"
printf 'hostname t5\n' >"$T/ro.conf"
if [ "$(id -u)" != 0 ]; then
	echo "skip access tests: they switch users and need root"
else
	printf 'hostname t5\n' >"$T/ro.conf"
	start "$DAEMON" "$T/ro.conf" "$S" -g nogroup
	D=$DPID
	check "socket mode 0660" test "$(stat -c %a "$S")" = 660
	check "socket group is the access group" test "$(stat -c %G "$S")" = nogroup
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CLIENT" -s "$S" -c "show version | include uptime" 2>&1)
	check "read-only: a group member can show" test "$out" = "t5 uptime is 0 days, 0 hours, 0 minutes"
	out=$(setpriv --reuid=65534 --regid=65534 --clear-groups "$CLIENT" -s "$S" -c "enable" -c "configure terminal" 2>&1)
	rc=$?
	check "read-only: enable is refused" test $rc != 0
	check "read-only: the refusal says why" grep -q "% Access denied: read-only session" <(echo "$out")
	check "read-only: the session starts and stays in exec mode" grep -q "^t5>configure terminal" <(echo "$out")
	setpriv --reuid=65534 --regid=4242 --clear-groups "$CLIENT" -s "$S" -c "show version" >/dev/null 2>"$T/err"
	check "outsider: the socket's mode keeps others out" grep -q "Permission denied" "$T/err"
	chmod 666 "$S"
	setpriv --reuid=65534 --regid=4242 --clear-groups "$CLIENT" -s "$S" -c "show version" >/dev/null 2>"$T/err"
	rc=$?
	check "outsider: refused by credentials even when the mode lets it in" test $rc != 0
	check "outsider: told why" grep -q "% Access denied: uid 65534 is neither root nor in group nogroup" "$T/err"
	stop "$D"

	# sessions: a cap per user, slots only root can take, idle sessions closed
	chmod 660 "$S"
	start "$DAEMON" "$T/ro.conf" "$T/csock" -g nogroup
	D=$DPID
	out=$(setpriv --reuid=60001 --regid=65534 --clear-groups "$ABUSE" hold "$T/csock" 12 0)
	echo "     ($out)"
	check "sessions: at most 8 per user" test "$out" = "hold: 8 taken, 4 refused, 0 errors; last refusal: % Too many sessions for uid 60001 (at most 8)"
	HOLDERS=""
	for u in $(seq 60010 60026); do
		setpriv --reuid=$u --regid=65534 --clear-groups "$ABUSE" hold "$T/csock" 8 60 >"$T/hold.$u" 2>&1 &
		HOLDERS="$HOLDERS $!"
	done
	held() { test "$(cat "$T"/hold.* | grep -o '^hold: [0-9]*' | awk '{ n += $2 } END { print n }')" = 124; }
	check "sessions: other users take 124 of the 128 slots" lab_poll_quiet 30 held
	out=$(timeout 5 "$CLIENT" -s "$T/csock" -c "show version" 2>&1 | head -1)
	check "sessions: root still gets in while other users hold every other slot" grep -q "^t5 uptime\|^pgmrouter " <(echo "$out")
	for p in $HOLDERS; do kill -USR1 "$p"; done
	wait $HOLDERS
	"$CLIENT" -s "$T/csock" -c "configure terminal" -c "line vty idle-timeout 2" >/dev/null
	out=$("$ABUSE" idle "$T/csock" 6 2>&1)
	echo "     ($out)"
	check "sessions: an idle session is closed (line vty idle-timeout 2)" grep -q "^idle: closed by the daemon after [23]\." <(echo "$out")
	check "sessions: the idle timeout is in the running config" \
		grep -qx "line vty idle-timeout 2" <("$CLIENT" -s "$T/csock" -c "show running-config")
	stop "$D"

	# out of file descriptors: the waiting clients are told, the daemon does not spin
	unshare --net -- prlimit --nofile=48:48 "$DAEMON" -d -f "$T/ro.conf" -s "$T/fsock" -p "$T/fsock.pid" >>"$T/daemon.log" 2>&1 &
	D=$!
	DPIDS="$DPIDS $D"
	lab_poll_quiet 30 "$CLIENT" -s "$T/fsock" -c "show version"
	"$ABUSE" hold "$T/fsock" 60 30 >"$T/fdhold" 2>&1 &
	HOLD=$!
	lab_poll_quiet 20 test -s "$T/fdhold"
	c0=$(awk '{ print $14 + $15 }' "/proc/$D/stat")
	sleep 2
	c1=$(awk '{ print $14 + $15 }' "/proc/$D/stat")
	echo "     ($(cat "$T/fdhold"); daemon CPU $((c1 - c0)) ticks in 2 s)"
	check "fds: out of file descriptors, clients are refused with a reason" grep -q "refused.*Too many open files" "$T/fdhold"
	check "fds: out of file descriptors, the daemon does not spin (< 10 ticks in 2 s)" test $((c1 - c0)) -lt 10
	kill -USR1 "$HOLD"
	wait "$HOLD"
	check "fds: the daemon answers again once clients leave" lab_poll_quiet 10 "$CLIENT" -s "$T/fsock" -c "show version"
	stop "$D"

	# privileges and the files the daemon writes (a system user created and removed there)
	tests/cli/privileges.sh "$DAEMON" "$CLIENT" >"$T/priv.out" 2>&1
	cat "$T/priv.out"
	passed=$((passed + $(grep -c '^ok' "$T/priv.out")))
	n=$(grep -c '^FAIL' "$T/priv.out")
	[ "$n" -gt 0 ] && { failed=$((failed + n)); failures="$failures
$(grep '^FAIL' "$T/priv.out" | sed 's/^/  /')"; }
	grep -q "configuration that is a FIFO" "$T/priv.out" || { failed=$((failed + 1)); failures="$failures
  privileges: did not run to the end"; }

fi

# -n: FILE:LINE for every bad line
cat >"$T/bad.conf" <<'EOF'
hostname ok
interface eth0
 descrption x
interface eth0/1
hostname
! fine
hostname a/b
EOF
"$DAEMON" -n -f "$T/bad.conf" 2>"$T/n.err"
rc=$?
check "-n: a bad config exits non-zero" test $rc != 0
check "-n: every bad line as FILE:LINE: message" test "$(grep -c "^$T/bad.conf:[0-9]*: " "$T/n.err")" = 4
check "-n: line numbers" test "$(grep -o "^$T/bad.conf:[0-9]*" "$T/n.err" | cut -d: -f2 | tr '\n' ' ')" = "3 4 5 7 "
"$DAEMON" -n -f "$T/nonexistent.conf" 2>/dev/null
check "-n: a missing -f file is an error" test $? != 0
"$DAEMON" -d -f "$T/nonexistent.conf" -s "$T/sock3" -p "$T/sock3.pid" 2>/dev/null
check "a missing -f file stops the daemon" test $? != 0
"$DAEMON" -n -f "$T/ro.conf" 2>/dev/null
check "-n: a good config exits 0" test $? = 0

# daemonized start: the parent returns once the socket is up; SIGTERM cleans up
"$DAEMON" -f "$T/ro.conf" -s "$T/sock4" -p "$T/sock4.pid"
rc=$?
check "daemon mode: the parent exits 0 with the socket ready" test $rc = 0 -a -S "$T/sock4"
BGPID=$(cat "$T/sock4.pid" 2>/dev/null)
check "daemon mode: pid file names the daemon" test -n "$BGPID" -a -d "/proc/$BGPID"
"$DAEMON" -f "$T/ro.conf" -s "$T/sock4" -p "$T/sock5.pid" 2>"$T/err"
check "a second daemon on the same socket is refused" grep -q "already listening" "$T/err"
[ -n "$BGPID" ] && kill -TERM "$BGPID"
# the socket goes first, the pid file after the interception rules are removed (iptables runs,
# slow on a busy machine): wait for both
lab_poll_quiet 60 test ! -e "$T/sock4" -a ! -e "$T/sock4.pid"
check "daemon mode: SIGTERM removes the socket and the pid file" test ! -e "$T/sock4" -a ! -e "$T/sock4.pid"

# ---- abuse against the ASan daemon ----

# a large configuration so that show running-config is about 1 MB
{
	echo "hostname big"
	for i in $(seq 1 20000); do
		printf 'interface e%d\n description a description long enough to make a large config\n' "$i"
	done
} >"$T/big.conf"
export ASAN_OPTIONS=detect_leaks=1:log_path=$T/asan
export UBSAN_OPTIONS=print_stacktrace=1:log_path=$T/ubsan
S=$T/asock
if start "$ASAN_DAEMON" "$T/big.conf" "$S"; then ok "ASan daemon starts"; else bad "ASan daemon starts"; fi
D=$DPID
fd_before=$(nfds "$D")
size=$("$CLIENT" -s "$S" -c "show running-config" | wc -c)
check "long output arrives complete (${size} bytes)" test "$size" -gt 1000000

check "abuse: a 1 MB line" "$ABUSE" longline "$S" 1048576
head -c 1048576 /dev/zero | tr '\0' 'x' >"$T/longline"
echo >>"$T/longline"
"$CLIENT" -s "$S" <"$T/longline" >"$T/ll.out"
check "abuse: a 1 MB line through the client is refused" grep -q "Line too long" "$T/ll.out"
check "abuse: a client that never says hello is dropped" "$ABUSE" silent "$S"
check "abuse: binary garbage" "$ABUSE" garbage "$S" 65536
check "abuse: binary garbage after hello" "$ABUSE" garbage "$S" 65536 hello
check "abuse: the daemon still answers after garbage" timeout 30 "$CLIENT" -s "$S" -c "show version" >/dev/null

# output filters run in the client: a pathological regular expression sent by a raw client (the
# daemon would take seconds and a gigabyte compiling it) does not hold the daemon
"$ABUSE" exec "$S" "show version | include ((a{1,100}){1,100}){1,100}" >"$T/regex.out" 2>&1 &
REGEX=$!
sleep 0.3
t0=$(date +%s%N)
timeout 30 "$CLIENT" -s "$S" -c "show version" >/dev/null
t1=$(date +%s%N)
echo "     (show version answered in $(((t1 - t0) / 1000000)) ms while a client sent a pathological regex)"
check "filters: a pathological regex does not stall the daemon (< 3 s; it held it 9 s)" test $(((t1 - t0) / 1000000)) -lt 3000
wait "$REGEX"
out=$("$CLIENT" -s "$S" -c "show version | include upt[i]me" 2>&1)
check "filters: the client applies them" grep -q "^big uptime is" <(echo "$out")
check "filters: the daemon links no regular expression engine" sh -c "! nm '$DAEMON' | grep -q regcomp"

"$ABUSE" noread "$S" 60 10 >"$T/noread.out" 2>&1 &
NOREAD=$!
lab_poll_quiet 10 grep -q "not reading" "$T/noread.out"
check "abuse: 50 sessions at once while one never reads" "$ABUSE" many "$S" 50
# debug lines for the stalled monitoring session until its queue is full
{
	echo "debug ip pgm router events"
	echo "configure terminal"
	for i in $(seq 1 25000); do echo "hostname big"; done
	echo "end"
	echo "undebug all"
} >"$T/cfgloop"
"$CLIENT" -s "$S" <"$T/cfgloop" >/dev/null
"$CLIENT" -s "$S" -c "show users" >"$T/users"
stalled() { grep -E '^ +[0-9]' "$T/users" | awk '$5 == "yes"'; }
echo "     (stalled session: $(stalled))"
check "abuse: the stalled session's queue is bounded (<= 1 MiB + 16 KiB)" \
	awk '{ q = $6 } END { exit !(q > 0 && q <= 1048576 + 16384) }' <(stalled)
check "abuse: monitor lines to the stalled session are dropped and counted" \
	awk '$7 > 0 { found = 1 } END { exit !found }' <(stalled)
t0=$(date +%s%N)
check "abuse: the daemon stays responsive while a client stalls" timeout 30 "$CLIENT" -s "$S" -c "show version" >/dev/null
t1=$(date +%s%N)
echo "     (show version answered in $(((t1 - t0) / 1000000)) ms while a client stalls)"
kill -USR1 "$NOREAD" 2>/dev/null
wait "$NOREAD"
rc=$?
grep "noread:" "$T/noread.out" | tail -2 | sed 's/^/     /'
check "abuse: the stalled client then gets every reply whole and is told of dropped monitor lines" \
	test $rc = 0

for i in $(seq 1 10); do "$ABUSE" killmid "$S"; done
check "abuse: clients killed mid-reply" timeout 30 "$CLIENT" -s "$S" -c "show version" >/dev/null
sessions_left() { test "$("$CLIENT" -s "$S" -c "show users" | grep -c '^ *[* ] *[0-9]')" = 1; }
check "abuse: every abusive session is gone" lab_poll_quiet 20 sessions_left
check "abuse: no fd leak ($fd_before fds before)" lab_poll_quiet 20 test "$(nfds "$D")" = "$fd_before"
echo "     (fds before $fd_before, after $(nfds "$D"))"
stop "$D"
rc=$?
check "ASan daemon: clean exit after the abuse" test $rc = 0
if ls "$T"/asan* "$T"/ubsan* >/dev/null 2>&1; then
	bad "ASan daemon: no leak or error report"
	cat "$T"/asan* "$T"/ubsan* | head -60
else
	ok "ASan daemon: no leak or error report"
fi

echo
if [ $failed -ne 0 ]; then
	echo "failed:$failures"
	cat "$T/daemon.log" | tail -20
fi
echo "cli-test: $passed passed, $failed failed"
[ $failed -eq 0 ]
