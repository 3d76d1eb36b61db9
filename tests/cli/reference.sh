#!/bin/bash
# Records the example sessions of the README (CLI reference) from a real pgmrouterd: the lab's
# one-router topology (tests/lab), router assist configured through the interactive client,
# then an OpenPGM stream with 5 % ODATA loss into LAN a (and 30 % of the source's RDATA lost on
# its way to the router), read from the router during and after.
#
#   tests/cli/reference.sh [OUTDIR]     as root, with python3 (tests/cli/term-session.py drives
#                                       the interactive client); prints where the transcripts are
#
#   s1 - src - r1 -+- a: a1 a2    (r1 eth0 198.18.1.1, eth1 198.18.2.1, eth2 198.18.3.1)
#                  +- b: b1 b2
repo=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/pgm-reference.XXXXXX")}
mkdir -p "$out" || exit 1
# shellcheck source=../lab/lib.sh
. "$repo/tests/lab/lib.sh"
[ -x "$LAB_PEERS/pgm-send" ] || lab_die "build the peers first (make tools)"
GROUP=239.192.0.1
COUNT=6000
RATE=500
lab_init clref
lab_groups "$GROUP"
lab_topo_one_router 2
printf 'hostname r1\nend\n' >"$LAB_DIR/r1.conf"
lab_router_start r1 "$LAB_DIR/r1.conf" || exit 1
session() { python3 "$repo/tests/cli/term-session.py" "$repo/build/pgmrouter" "$(lab_router_sock r1)"; }

session >"$out/configure.txt" <<'X'
enable
terminal length 0
show ip pgm router
configure terminal
interface eth1
description receivers a1 a2
ip pgm router
ip pgm router nak-repeat-interval 1000
do show ip pgm router interface eth1
interface eth2
description receivers b1 b2
ip pgm router
interface eth0
description source s1
ip pgm router
exit
ip pgm router max-rexmit-states 100000
end
show running-config
show ip pgm router
show ip pgm router interface
write memory
X

lab_topo_loss a 0.05 odata
# and a third of the source's repairs, so that repair state waits for RDATA now and then
lab_loss s1 eth0 0.3 rdata
pids=()
for r in $TOPO_RECEIVERS; do
	lab_spawn "$r" "$LAB_DIR/$r.out" "$LAB_PEERS/pgm-recv" -n "$(lab_addr "$r" eth0);$GROUP" \
		-c "$COUNT" -T 60 --progress 500
	pids+=("$LAB_PID")
done
for r in $TOPO_RECEIVERS; do
	lab_wait_file_line 10 "$LAB_DIR/$r.out" '^event=ready' || lab_die "$r did not start"
done
lab_spawn s1 "$LAB_DIR/s1.out" "$LAB_PEERS/pgm-send" -n "$TOPO_SOURCE_ADDR;$GROUP" -c "$COUNT" \
	-r "$RATE" -T 60
spid=$LAB_PID
# a few seconds into the stream (2000 messages), while repairs are going on
lab_wait_file_line 30 "$LAB_DIR/a1.out" '^event=progress.* messages=[2-9][0-9]{3} ' ||
	lab_die "the stream did not get going"
session >"$out/during.txt" <<'X'
enable
terminal length 0
show ip pgm router
show ip pgm router state
X
for p in "${pids[@]}"; do lab_wait_pid "$p" 60 >/dev/null; done
lab_stop "$spid"
{
	for r in $TOPO_RECEIVERS; do echo "$r: $(lab_result "$LAB_DIR/$r.out")"; done
	echo "ODATA dropped into a: $(lab_topo_loss_dropped a)"
	echo "RDATA dropped by s1: $(lab_loss_dropped s1)"
	for lan in $TOPO_LANS; do echo "$lan: $(lab_counts "$lan")"; done
} >"$out/results.txt"
session >"$out/after.txt" <<'X'
enable
terminal length 0
show ip pgm router
show ip pgm router state verbose
show ip pgm router traffic
show ip pgm router traffic eth1 verbose | include ^  (nak|ncf|rdata|repair)
show ip pgm router interface eth2 verbose
show ip pgm router dataplane
clear ip pgm router traffic
show ip pgm router traffic eth1
X
echo "transcripts in $out"
