#!/bin/bash
# Files the daemon writes: the capture file (`debug ip pgm router capture FILE`) given as a
# symbolic link to another file, and as a FIFO with no reader; `pgmrouterd -n` (a check) on a
# configuration that holds `do write memory`. Safe outcome: the link is not followed (its target
# stays as it was), nothing blocks (the command returns, root gets answers within 1 s and a
# receiver's NAK its NCF within 100 ms), and the checked file is left unchanged.
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_all
sec_start
legit_session
mkdir -p "$LAB_DIR/cap"

# ---- the capture file is a symbolic link to a file that is not the daemon's ----
printf 'precious: not a capture\n' >"$LAB_DIR/victim"
cp "$LAB_DIR/victim" "$LAB_DIR/victim.orig"
ln -s "$LAB_DIR/victim" "$LAB_DIR/cap/link.pcap"
cli "debug ip pgm router capture $LAB_DIR/cap/link.pcap" >"$LAB_DIR/link.out" 2>&1
legit_spm
probe
cli "no debug ip pgm router capture" >/dev/null 2>&1
figure "capture to a symlink: the command said '$(head -c 200 "$LAB_DIR/link.out" | tr '\n' ' ')'," \
	"the link's target is now $(stat -c %s "$LAB_DIR/victim") bytes (was $(stat -c %s "$LAB_DIR/victim.orig"))"
check "capture to a symlink: its target is unchanged" cmp -s "$LAB_DIR/victim" "$LAB_DIR/victim.orig"
check "and the link is still a link" test -L "$LAB_DIR/cap/link.pcap"

# ---- the capture file is a FIFO nobody reads ----
mkfifo "$LAB_DIR/cap/fifo.pcap"
# (the command's own time, taken by the subshell that runs it: the probe below takes longer)
(
	start=$(date +%s%N)
	timeout 10 ip netns exec "$(lab_ns r1)" "$(lab_cli_cmd)" -s "$SOCK" \
		-c "debug ip pgm router capture $LAB_DIR/cap/fifo.pcap" >"$LAB_DIR/fifo.out" 2>&1
	echo "$? $((($(date +%s%N) - start) / 1000000))" >"$LAB_DIR/fifo.rc"
) &
fifo_cli=$!
sleep 0.5
t0=$(date +%s%N)
timeout 5 ip netns exec "$(lab_ns r1)" "$(lab_cli_cmd)" -s "$SOCK" -c "show ip pgm router json" \
	>"$LAB_DIR/fifo.show" 2>&1
rc=$?
root_ms=$((($(date +%s%N) - t0) / 1000000))
probe
fifo_probe_ok=0
probe_ok && fifo_probe_ok=1
fifo_probe_text=$(probe_text)
wait $fifo_cli
read -r fifo_rc fifo_ms <"$LAB_DIR/fifo.rc" || { fifo_rc=none fifo_ms=none; }
# whatever happened, let a blocked daemon go on
timeout 1 cat "$LAB_DIR/cap/fifo.pcap" >/dev/null 2>&1
cli "no debug ip pgm router capture" >/dev/null 2>&1
figure "capture to a FIFO: the command returned after $fifo_ms ms (status $fifo_rc)," \
	"root's show meanwhile took $root_ms ms (status $rc); $fifo_probe_text"
fifo_quick() { [ "$fifo_rc" != 124 ] && [ "$fifo_rc" != none ] && [ "$fifo_ms" -lt 1000 ]; }
check "capture to a FIFO: the command returns within 1 s" fifo_quick
check "and root gets an answer within 1 s meanwhile" [ "$rc" = 0 -a "$root_ms" -lt 1000 ]
check "and a receiver's NAK its NCF: $fifo_probe_text" [ "$fifo_probe_ok" = 1 ]

# ---- pgmrouterd -n is a check: `do write memory` in the file must not rewrite it ----
{
	echo "hostname checked"
	echo "! a comment that write memory would not keep"
	echo "do write memory"
	echo "interface eth0"
	echo " ip pgm router"
} >"$LAB_DIR/check.conf"
cp "$LAB_DIR/check.conf" "$LAB_DIR/check.conf.orig"
lab_exec r1 timeout 10 "${DAEMON[@]}" -n -f "$LAB_DIR/check.conf" >"$LAB_DIR/check.out" 2>&1
rc=$?
figure "pgmrouterd -n on a file with 'do write memory': status $rc, the file is" \
	"$(cmp -s "$LAB_DIR/check.conf" "$LAB_DIR/check.conf.orig" && echo unchanged || echo rewritten)"
check "pgmrouterd -n ends within 10 s" [ "$rc" != 124 ]
check "and leaves the checked file unchanged" cmp -s "$LAB_DIR/check.conf" "$LAB_DIR/check.conf.orig"
finish
