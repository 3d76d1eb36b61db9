#!/bin/bash
# NAKs of the OpenPGM form. OpenPGM receivers put the SPM's path NLA (the router's own address on
# their LAN) in NAK_SRC instead of the source's address, and OpenPGM sources reject NAKs whose
# NAK_SRC is not their own address; OpenPGM's NAK lists are not in increasing order. The router
# is expected to accept both, confirm with an NCF, and forward one NAK upstream whose NAK_SRC is
# the session's source. Checked over IP and over UDP (ports 3055/3056, as OpenPGM sends them).
. "$(dirname "$0")/lib_router.sh"
router_need
topo_router
sniffers || exit 1
router_conf "$LAB_DIR/r.conf" "ip pgm router nak-repeat-interval 60000" "ip pgm router nak-repeat-rate 5" \
	"ip pgm router ncf-interval 0"
router_start "$LAB_DIR/r.conf" || exit 1

# Two sessions: 010203040506 over IP, 0a0b0c0d0e0f over UDP.
IPG=010203040506
UDPG=0a0b0c0d0e0f
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --gsi $IPG --sqn 1 --trail 1 --lead 50
inj src s0 --src $SRC_ADDR --dst $GROUP --type spm --gsi $UDPG --sqn 1 --trail 1 --lead 50 --udp
check "r1 learns the router's address $D1_ADDR as the path NLA of both sessions" lab_poll 10 eval "
	[ \$(grep -Ec 'type=SPM \| SPM ($IPG|$UDPG)\.1234 .* path $D1_ADDR ' $LAB_DIR/r1.sniff) = 2 ]"
check "the router holds both sessions" lab_poll 5 jtrue "show ip pgm router state json" "len(sess) == 2"

# NAKs the daemon took in on IF, well-formed or not.
handled() {
	jval "show ip pgm router traffic json" "ifs['$1']['received']['NAK'] + sum(ifs['$1']['errors'].values())"
}

# openpgm_case WHAT GSI SQN ALL [ARGS]: a NAK for SQN from r1 to the router (ALL: every SQN it
# asks for, as an alternation); expects one NCF on r1, one NAK forwarded upstream, and every NAK
# upstream for these SQNs (the forward and the timer's repeats, which the router rebuilds with
# the list sorted) from the router's upstream address with NAK_SRC = the source.
openpgm_case() {
	local what gsi sqn all ncf_re good_up any_up before fwd
	what=$1
	gsi=$2
	sqn=$3
	all=$4
	shift 4
	before=$(handled d1)
	fwd=$(ev up0 nak-forwarded)
	inj r1 dn --src $R1_ADDR --dst $D1_ADDR --type nak --gsi "$gsi" --sqn "$sqn" --nak-grp $GROUP "$@"
	check "$what: the daemon saw the NAK" lab_poll 10 eval '[ $(handled d1) -gt $before ]'
	ncf_re="^pgm src=$SRC_ADDR dst=$GROUP .* csum=ok type=NCF \| NCF $gsi\.1234 sqn $sqn "
	any_up="^pgm src=$UP_ADDR dst=$SRC_ADDR .*type=NAK \| NAK $gsi\.1234 sqn ($all) "
	good_up="^pgm src=$UP_ADDR dst=$SRC_ADDR .* csum=ok type=NAK \| NAK $gsi\.1234 sqn ($all) (list [0-9,]+ )?src $SRC_ADDR grp $GROUP "
	sync_wire
	check "$what: NCF on r1's segment" seen_is r1 "$ncf_re" 1
	check "$what: forwarded upstream once" test "$(ev up0 nak-forwarded)" = $((fwd + 1))
	grep -E -- "$any_up" "$LAB_DIR/src.sniff" >"$LAB_DIR/up.case"
	check "$what: upstream NAK from $UP_ADDR with NAK_SRC rewritten to the source $SRC_ADDR" eval "
		[ $(wc -l <"$LAB_DIR/up.case") -ge 1 ] &&
		[ $(count_lines "$LAB_DIR/up.case" "$good_up") = $(wc -l <"$LAB_DIR/up.case") ]"
	check "$what: the first upstream NAK is the receiver's, SQN $sqn first" \
		eval "head -1 '$LAB_DIR/up.case' | grep -q 'sqn $sqn '"
	check "$what: no NAK upstream carries the router's address as NAK_SRC" \
		seen_is src "^pgm src=$UP_ADDR .*type=NAK .* src $D1_ADDR " 0
}

openpgm_case "NAK_SRC = router ($D1_ADDR), over IP" $IPG 5 5 --nak-src $D1_ADDR
openpgm_case "NAK_SRC = router, over UDP" $UDPG 5 5 --nak-src $D1_ADDR --udp
check "NAK_SRC = router: not counted as an address mismatch" \
	jtrue "show ip pgm router traffic json" "ifs['d1']['events']['nak-address-mismatch'] == 0"
openpgm_case "NAK list in OpenPGM's order (9 then 7,8), NAK_SRC = source, over IP" $IPG 9 '9|7|8' \
	--nak-src $SRC_ADDR --list 7,8
check "unsorted NAK list: not counted as malformed" \
	jtrue "show ip pgm router traffic json" "ifs['d1']['errors']['nak-list-order'] == 0"
openpgm_case "OpenPGM's full form: NAK_SRC = router and list 19 then 17,18, over UDP" $UDPG 19 '19|17|18' \
	--nak-src $D1_ADDR --list 17,18 --udp
check "the unsorted lists are forwarded with every SQN" eval "
	[ $(seen src "type=NAK \| NAK $IPG\.1234 sqn 9 list [0-9,]*7") -ge 1 ] &&
	[ $(seen src "type=NAK \| NAK $UDPG\.1234 sqn 19 list [0-9,]*17") -ge 1 ]"
check "state: repair states for every SQN asked (5, 7, 8, 9 and 5, 17, 18, 19)" \
	jtrue "show ip pgm router state json" \
	"sorted((s['tsi'][:12], r['sqn']) for s in sess for r in s['repairs']) == sorted([('$IPG', x) for x in (5, 7, 8, 9)] + [('$UDPG', x) for x in (5, 17, 18, 19)])"
check "the daemon is still running" kill -0 "$DAEMON_PID"
if [ "$NS_FAILS" -gt 0 ]; then
	log "d1 counters: $(jval "show ip pgm router traffic json" \
		"{k: v for k, v in list(ifs['d1']['events'].items()) + list(ifs['d1']['errors'].items()) if v}")"
fi
finish
