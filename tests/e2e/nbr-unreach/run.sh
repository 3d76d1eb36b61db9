#!/bin/bash
# nbr-unreach: topology (c), the tree (core; e1 with LANs a, b; e2 with LANs c, d), 5 % ODATA
# loss into LAN a, one OpenPGM stream, PGM/IP. Two neighbour-unreachable events (RFC 3208 15.3),
# injected with tests/peers/pgm-inject since no peer produces them:
#   1. about 4 s in, core "detects" that multicast no longer reaches below it: a unicast NCF
#      with OPT_NBR_UNREACH and OPT_PATH_NLA = core's address on t1, to e1. e1 MUST stop
#      forwarding NAKs for the TSI until a regular SPM and MUST send a special SPM (OPT_NBR_UNREACH,
#      the last SPM_SQN, no window) down a and b. OpenPGM receivers ignore both options (they
#      keep NAKing), so e1 suspends their NAKs until the source's next SPM and the receivers'
#      repeated NAKs get the repairs afterwards.
#   2. about 2 s in, e1 has duplicate-nak-max 3 on LAN a and a host there sends the same NAK
#      4 times: e1 assumes its multicast to a is lost (15.3.1) and answers NAKs from a with
#      unicast NCFs carrying OPT_NBR_UNREACH and OPT_PATH_NLA (its address on a) until the next
#      regular SPM.
# Every receiver must complete either way. Without router assist both injections just reach a
# host that does not care.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"

TITLE="tree, 5 % ODATA loss into LAN a, an injected NBR_UNREACH NCF to e1 and duplicate NAKs past DUP_NAK_MAX on a"
TAG=pxunr
TOPOLOGY="tree 2"
GROUP=239.192.0.24
COUNT=${UNREACH_COUNT:-6000}
RATE=1000
LOSS="a:0.05"
SEGMENTS="spm rdata nak ncf"

scenario_router_config() {
	if [ "$1" = e1 ]; then
		lab_router_config "$1" | sed '$d' | sed 's/^ ip pgm router$/&\n ip pgm router duplicate-nak-max 3/'
		echo "end"
	else
		lab_router_config "$1"
	fi
}

# state_field ROUTER KEY: the first session's KEY from show ip pgm router state json.
state_field() {
	# shellcheck disable=SC2020 # two characters, each to a newline
	"$LAB_REPO/build/pgmrouter" -s "$(lab_router_sock "$1")" -c "show ip pgm router state json" \
		2>/dev/null | tr ',{' '\n\n' | awk -F: -v k="\"$2\"" '$1 == k { gsub(/"/, "", $2); print $2; exit }'
}

# hexaddr A.B.C.D: the address as 8 hex digits.
hexaddr() {
	local a b c d
	IFS=. read -r a b c d <<<"$1"
	printf '%02x%02x%02x%02x' "$a" "$b" "$c" "$d"
}

# The injections, in the background while the stream runs; results in $LAB_DIR/inject.log.
scenario_inject() {
	local variant=$1 tsi="" gsi=010203040506 sport=1234 lead=100 i core_t1 e1_t1 e1_a a1
	core_t1=$(lab_addr core @t1)
	e1_t1=$(lab_addr e1 @t1)
	e1_a=$(lab_addr e1 @a)
	a1=$(lab_addr a1 eth0)
	if [ "$variant" = with ]; then
		for i in $(seq 1 100); do
			tsi=$(state_field e1 tsi)
			[ -n "$tsi" ] && break
			sleep 0.1
		done
		gsi=${tsi%.*}
		sport=${tsi#*.}
	fi
	echo "tsi=$gsi.$sport"
	# The duplicate NAKs go first: while NAKs are suspended by the NBR_UNREACH NCF (until the
	# source's next SPM, seconds away) they would create no repair state to count against.
	sleep 2
	[ "$variant" = with ] && lead=$(state_field e1 lead)
	lab_exec a1 "$LAB_PEERS/pgm-inject" --src "$a1" --dst "$e1_a" --type nak \
		--gsi "$gsi" --sport 7500 --dport "$sport" --sqn $((lead > 20 ? lead - 20 : 1)) \
		--nak-src "$TOPO_SOURCE_ADDR" --nak-grp "$GROUP" --count 4 --interval-ms 5
	echo "duplicate NAKs sent"
	sleep 2
	lab_exec core "$LAB_PEERS/pgm-inject" --src "$core_t1" --dst "$e1_t1" --type ncf \
		--gsi "$gsi" --sport "$sport" --dport 7500 --sqn 1 \
		--nak-src "$TOPO_SOURCE_ADDR" --nak-grp "$GROUP" \
		--opt-raw "0b040000""0c080000$(hexaddr "$core_t1")"
	echo "unreach-ncf sent"
}

checks_common() {
	local dropped=$1
	e2e_check_all_complete
	e2e_check_loss_pct a "$dropped" "$COUNT" 3 7
	e2e_check "both injections went out" "$(grep -c '^sent [1-9]' "$LAB_DIR/inject.log")" -eq 2
}

checks_without() {
	:
}

checks_with() {
	e2e_check "e1 took the NCF from its upstream neighbour" "$(e2e_router_ev e1 unreach-received)" -eq 1
	e2e_check "e1 sent the special SPM down a and b" "$(e2e_router_ev e1 unreach-spm-sent)" -eq 2
	e2e_check "e1 suspended NAKs from a until the next SPM" "$(e2e_router_ev e1 nak-suspended)" -ge 1
	e2e_check "core did nothing of the kind" "$(e2e_router_ev core unreach-spm-sent)" -eq 0
	e2e_check "e1 assumed a failure on a (DUP_NAK_MAX)" "$(e2e_router_ev e1 unreach-assumed)" -ge 1
	e2e_check "e1 sent unicast NCFs with OPT_NBR_UNREACH" "$(e2e_router_ev e1 unreach-ncf-sent)" -ge 1
	e2e_check "e2 was not involved" "$(($(e2e_router_ev e2 unreach-received) + $(e2e_router_ev e2 unreach-ncf-sent)))" -eq 0
}

scenario_record() {
	e2e_record_events e1 unreach-received unreach-spm-sent nak-suspended unreach-assumed \
		unreach-ncf-sent
}

e2e_run
