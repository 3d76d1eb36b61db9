#!/bin/bash
# Runs in the scratch root of tests/deb/run.sh: installs /deb-test/pgmrouter.deb with dpkg and
# checks the files, the user, the unit, the shipped example, the daemon under the unit's
# capability bounding set, reinstall and purge. Prints "N passed, N failed".
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin LC_ALL=C
passed=0
failed=0
ok() {
	echo "ok: $*"
	passed=$((passed + 1))
}
bad() {
	echo "FAIL: $*"
	failed=$((failed + 1))
}
check() { # check DESCRIPTION COMMAND...
	local what=$1
	shift
	if "$@" >/tmp/check.out 2>&1; then ok "$what"; else
		bad "$what"
		sed 's/^/    /' /tmp/check.out | head -n 20
	fi
}
finish() {
	echo "deb: $passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit
}

# A fresh start even where this machine had the package or the user.
dpkg --purge pgmrouter >/dev/null 2>&1
userdel pgmrouter >/dev/null 2>&1
groupdel pgmrouter >/dev/null 2>&1
rm -rf /etc/pgmrouter

check "dpkg -i installs the package" dpkg -i /deb-test/pgmrouter.deb
dpkg-query -W -f='${Status}' pgmrouter | grep -q "install ok installed" || {
	bad "package not installed"
	finish
}

for f in /usr/sbin/pgmrouterd /usr/bin/pgmrouter; do
	check "$f executable" test -x "$f"
done
for f in /usr/share/man/man8/pgmrouterd.8.gz /usr/share/man/man8/pgmrouter.8.gz \
	/etc/pgmrouter/pgmrouterd.conf.example /usr/share/doc/pgmrouter/examples/pgmrouterd.conf \
	/usr/share/doc/pgmrouter/copyright /lib/systemd/system/pgmrouterd.service \
	/usr/share/snmp/mibs/PGM-MIB.txt; do
	check "$f shipped" test -s "$f"
done
check "the example is a conffile" \
	sh -c "dpkg-query -W -f='\${Conffiles}' pgmrouter | grep -q /etc/pgmrouter/pgmrouterd.conf.example"
check "man pages render" sh -c 'man -l /usr/share/man/man8/pgmrouterd.8.gz | grep -q "router assist" &&
	man -l /usr/share/man/man8/pgmrouter.8.gz | grep -q pgmrouter'
check "the MIB module PGM-MIB with pgmNetworkElement" sh -c \
	'grep -q "^PGM-MIB DEFINITIONS ::= BEGIN" /usr/share/snmp/mibs/PGM-MIB.txt &&
	grep -q "^pgmNetworkElement" /usr/share/snmp/mibs/PGM-MIB.txt'
# Debian ships SNMPv2-SMI, which the module imports, only in snmp-mibs-downloader (non-free).
if command -v snmptranslate >/dev/null && MIBS= snmptranslate -m SNMPv2-SMI -On SNMPv2-SMI::experimental >/dev/null 2>&1; then
	check "the MIB parses: pgmNeEnable is .1.3.6.1.3.112.1.1.1" sh -c \
		'[ "$(MIBS= snmptranslate -m PGM-MIB -On PGM-MIB::pgmNeEnable)" = .1.3.6.1.3.112.1.1.1 ]'
else
	echo "skip: snmptranslate of PGM-MIB (no SNMPv2-SMI)"
fi

# The system user and group, and the configuration directory the daemon writes.
check "system user pgmrouter" sh -c 'u=$(getent passwd pgmrouter) &&
	uid=$(echo "$u" | cut -d: -f3) && [ "$uid" -lt 1000 ] &&
	echo "$u" | grep -q ":/nonexistent:/usr/sbin/nologin$"'
check "group pgmrouter, the user's primary group" sh -c \
	'[ "$(id -gn pgmrouter)" = pgmrouter ]'
check "/etc/pgmrouter is pgmrouter:pgmrouter 0750" sh -c \
	'[ "$(stat -c %U:%G:%a /etc/pgmrouter)" = pgmrouter:pgmrouter:750 ]'

# The unit: enabled, verified, its condition and commands pointing at what was installed.
check "unit enabled" test -L /etc/systemd/system/multi-user.target.wants/pgmrouterd.service
unit=/lib/systemd/system/pgmrouterd.service
check "unit's ExecStart and ExecStartPre name the installed daemon" sh -c "
	grep -q '^ExecStart=/usr/sbin/pgmrouterd -f /etc/pgmrouter/pgmrouterd.conf\$' $unit &&
	grep -q '^ExecStartPre=/usr/sbin/pgmrouterd -n -f /etc/pgmrouter/pgmrouterd.conf\$' $unit &&
	grep -q '^ConditionPathExists=/etc/pgmrouter/pgmrouterd.conf\$' $unit"
if command -v systemd-analyze >/dev/null; then
	check "systemd-analyze verify" sh -c "systemd-analyze verify $unit 2>&1 | tee /dev/stderr | \
		(! grep -q pgmrouterd)"
else
	echo "skip: systemd-analyze verify (no systemd-analyze)"
fi

# The shipped example checks clean; a bad line does not (-n really checks).
check "pgmrouterd -n on the shipped example" \
	pgmrouterd -n -f /etc/pgmrouter/pgmrouterd.conf.example
printf 'interface eth1\n ip pgm router nak-repeat-rate 0\n' >/tmp/bad.conf
check "pgmrouterd -n refuses a bad line with FILE:LINE" sh -c \
	'! pgmrouterd -n -f /tmp/bad.conf 2>/tmp/bad.err && grep -q "^/tmp/bad.conf:2:" /tmp/bad.err'

# The daemon as the unit starts it: its capability bounding set and no_new_privs (setpriv),
# the example as its configuration, in a network namespace of its own. It must drop to user
# pgmrouter with CAP_NET_ADMIN and CAP_NET_RAW only, serve the CLI, and `write memory` into
# the directory postinst handed it.
bounding=$(sed -n 's/^CapabilityBoundingSet=//p' $unit | tr 'A-Z ' 'a-z,' | sed 's/cap_//g; s/,/,+/g')
pid=""
start_daemon() {
	pid=""
	rm -f /run/pgmrouterd.sock /run/pgmrouterd.pid
	unshare --net setpriv --bounding-set=-all,+"$bounding" --no-new-privs \
		/usr/sbin/pgmrouterd -f /etc/pgmrouter/pgmrouterd.conf >/tmp/daemon.out 2>&1 || return 1
	for _ in $(seq 50); do
		[ -S /run/pgmrouterd.sock ] && pid=$(cat /run/pgmrouterd.pid 2>/dev/null) && return 0
		sleep 0.1
	done
	return 1
}
stop_daemon() {
	kill -TERM "$pid"
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	return 1
}
cp /etc/pgmrouter/pgmrouterd.conf.example /etc/pgmrouter/pgmrouterd.conf
if start_daemon; then
	ok "daemon started under CapabilityBoundingSet=${bounding//+/} and NoNewPrivileges"
	check "daemon runs as pgmrouter with CAP_NET_ADMIN and CAP_NET_RAW only" sh -c "
		grep -q '^Uid:\s*$(id -u pgmrouter)\s' /proc/$pid/status &&
		grep -q '^CapEff:\s*0000000000003000$' /proc/$pid/status &&
		grep -q '^CapBnd:\s*0000000000003000$' /proc/$pid/status"
	check "pgmrouter answers: show ip pgm router shows it running" sh -c \
		'pgmrouter -c "show ip pgm router" | grep -q "running"'
	check "write memory as the daemon's user" sh -c '
		pgmrouter -c "configure terminal" -c "hostname deb-test" -c end -c "write memory" &&
		grep -q "^hostname deb-test" /etc/pgmrouter/pgmrouterd.conf &&
		[ "$(stat -c %U /etc/pgmrouter/pgmrouterd.conf)" = pgmrouter ]'
	check "daemon exits on SIGTERM" stop_daemon
	# A restart (a reboot) reads the file the daemon wrote, as root with the bounding set.
	if start_daemon; then
		check "restarted from the file write memory left" sh -c \
			'pgmrouter -c "show running-config" | grep -q "^hostname deb-test"'
		stop_daemon
	else
		bad "daemon did not start again from the file write memory left"
		sed 's/^/    /' /tmp/daemon.out
	fi
else
	bad "daemon did not start under the unit's bounding set"
	sed 's/^/    /' /tmp/daemon.out
fi

check "dpkg -i again (reinstall)" dpkg -i /deb-test/pgmrouter.deb
check "the configuration survives a reinstall" grep -q "^hostname deb-test" /etc/pgmrouter/pgmrouterd.conf
check "dpkg --purge" dpkg --purge pgmrouter
check "purge removed the files and the configuration" sh -c '! test -e /usr/sbin/pgmrouterd &&
	! test -e /etc/pgmrouter/pgmrouterd.conf && ! test -e /etc/pgmrouter &&
	! test -e /etc/systemd/system/multi-user.target.wants/pgmrouterd.service'
check "purge kept the system user and group" sh -c 'getent passwd pgmrouter && getent group pgmrouter'
finish
