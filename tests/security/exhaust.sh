#!/bin/bash
# Memory without bound, and repairs stopped for everyone at the limit (RFC 3208 7.5; the issue's
# "bounded memory by default, shared fairly"). From attacker hosts: NAKs for 1 M distinct SQNs
# of the legitimate session (from m1, LAN x, a downstream LAN of it), SPMs of 200 k distinct TSIs (LAN x), 100 k
# NCFs with NAK lists anticipating 6.3 M SQNs of the legitimate session (from su, on the
# upstream LAN), each flood bounded in time. Safe outcome: the daemon's RSS (VmRSS, sampled every
# 50 ms) stays under its memory budget (as the daemon shows it, else 256 MB), and the
# legitimate session's NAKs, probed throughout, get NCFs within 100 ms and are forwarded once.
# A flood is stopped as soon as the budget is passed: the outcome is known and the machine's
# memory is shared.
. "$(dirname "$0")/lib.sh"
sec_need
sec_topo
sniff_lan src "ip proto 113 and ip src host $R_SRC"
sniff_lan a "ip proto 113 and not ip dst host $G2 and not ip dst host $G3"
sniff_lan b "ip proto 113 and not ip dst host $G2 and not ip dst host $G3"
sec_start
legit_session
BUDGET_MB=$(budget_mb)
LIMIT_KB=$((BUDGET_MB * 1024))
figure "budget ${BUDGET_MB} MB; RSS before the floods $(rss_kb "$DAEMON_PID") kB"
probe
check "before the floods: $(probe_text)" probe_ok
rss_watch_start "$DAEMON_PID" "$LIMIT_KB"

# phase NAME SECONDS NODE FLOOD-ARGS...: one flood, probes while it runs and once after.
phase() {
	local name=$1 secs=$2 node=$3 bad=0 worst=0 n=0
	shift 3
	flood "$node" "$name" -T "$secs" "$@"
	while kill -0 "$FLOOD_PID" 2>/dev/null && ! _lab_is_zombie "$FLOOD_PID"; do
		probe
		n=$((n + 1))
		probe_ok || { bad=$((bad + 1)); log "  during $name: $(probe_text)"; }
		[ "$PROBE_NCF_MS" = none ] && worst=none
		[ "$worst" != none ] && worst=$(python3 -c "print(max($worst, $PROBE_NCF_MS))")
	done
	lab_wait_pid "$FLOOD_PID" 5 >/dev/null
	probe
	n=$((n + 1))
	probe_ok || { bad=$((bad + 1)); log "  after $name: $(probe_text)"; }
	figure "$name: $(grep -E '^sent|sent=' "$LAB_DIR/flood.$name.log" | tail -1)"
	figure "$name: RSS now $(rss_kb "$DAEMON_PID") kB, max so far $(awk '$2 > m { m = $2 } END { print m + 0 }' "$LAB_DIR/rss") kB;" \
		"$bad of $n probes failed, worst NCF delay $worst ms"
	check "$name: every probe's NAK confirmed within $NCF_LIMIT_MS ms and forwarded once ($bad of $n failed)" \
		[ "$bad" = 0 ]
	check "$name: RSS stayed under ${BUDGET_MB} MB" [ ! -e "$LAB_DIR/rss.over" ]
}

# (SQNs past the window's leading edge, as a receiver may NAK them, and not the probes')
phase nak-flood 10 m1 -s $M1 -d $R_X -m nak --gsi-base 1 --sport 1234 --dport 7500 \
	--tsis 1 --nak-list 62 --nla-src $S1 --nla-grp $G --sqn-start 100001 -n 15874 -r 20000
phase spm-flood 15 m1 -s $M1 -d $G3 -m spm --gsi-base 0x7777 --tsis 200000 -n 200000 -r 50000
phase ncf-flood 15 su -s $SU -d $G -m ncf --gsi-base 1 --sport 1234 --dport 7500 --tsis 1 \
	--nak-list 62 --nla-src $S1 --nla-grp $G --sqn-start 200000 -n 100000 -r 25000
rss_watch_stop
figure "RSS max $((RSS_MAX_KB / 1024)) MB over the floods (budget $BUDGET_MB MB)"
check "the daemon lived through the floods" lab_router_running r1
check "RSS max $((RSS_MAX_KB / 1024)) MB under the budget of $BUDGET_MB MB" [ "$RSS_MAX_KB" -le "$LIMIT_KB" ]
finish
