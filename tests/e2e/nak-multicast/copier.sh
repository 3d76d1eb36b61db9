#!/bin/bash
# Microsoft-style NAK copies, for the nak-multicast scenario: run in a host on a receiver LAN.
# For every unicast NAK it sees on the LAN (the bridge floods every frame to every port) it
# multicasts a copy to the NAK's group with IP TTL 1 and the NAKing receiver's IP source, as
# MS-PGM receivers do for their neighbours, and writes "copied SQN" to standard output.
#
#   copier.sh PEERS_DIR IFNAME DPORT SECONDS READY_FILE
#
# DPORT is the session's data-destination port (the NAK's source port on the wire).
peers=$1 ifname=$2 dport=$3 seconds=$4 ready=$5

"$peers/pgm-sniff" --if "$ifname" --in --timeout "$seconds" --ready "$ready" \
	--filter "ip proto 113 and not ip multicast" 2>/dev/null |
	while read -r line; do
		case $line in *" type=NAK | NAK "*) ;; *) continue ;; esac
		# pgm src=A dst=B ttl=T ... type=NAK | NAK GSI.SPORT sqn N [list X,Y] src S grp G
		src=${line#pgm src=}
		src=${src%% *}
		read -r tsi _ sqn rest <<<"${line#*| NAK }"
		list=""
		case $rest in "list "*)
			list=${rest#list }
			list=${list%% *}
			;;
		esac
		nak_src=${rest#*src }
		nak_src=${nak_src%% *}
		grp=${rest#*grp }
		grp=${grp%% *}
		if "$peers/pgm-inject" --src "$src" --dst "$grp" --type nak --gsi "${tsi%.*}" \
			--sport "$dport" --dport "${tsi##*.}" --sqn "$sqn" ${list:+--list "$list"} \
			--nak-src "$nak_src" --nak-grp "$grp" --ttl 1 --if "$ifname" >/dev/null; then
			echo "copied $sqn${list:+,$list}"
		fi
	done
