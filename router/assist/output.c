/*
 * What the control plane originates: each action encoded (control/encode.c), wrapped in the IP
 * header of its destination's family and handed to the environment's output.
 */
#include <stdio.h>

#include "router/assist/assist_internal.h"

static void print_action(
	struct assist *a, const struct cp_action *act, const uint8_t *tpdu, size_t len)
{
	struct pgm_packet pkt;
	char ifname[CP_IFNAME_LEN], dst[64], src[64], summary[512];

	if (pgm_parse(tpdu, len, 0, &pkt) == PGM_ERR_OK)
		pgm_packet_format(&pkt, summary, sizeof(summary));
	else
		snprintf(summary, sizeof(summary), "(%zu bytes, does not parse)", len);
	if (act->ip_src.afi != 0)
		pgm_nla_format(&act->ip_src, src, sizeof(src));
	else
		snprintf(src, sizeof(src), "own address");
	assist_line(a, LOG_CAT_PACKETS, "  send %s on %s %s > %s%s%s: %s",
		cp_action_name(act->type), assist_ifname(a, act->ifindex, ifname, sizeof(ifname)),
		src, pgm_nla_format(&act->ip_dst, dst, sizeof(dst)), act->router_alert ? " RA" : "",
		act->from_packet ? " (from packet)" : "", summary);
}

static bool nla_is_multicast(const struct pgm_nla *a)
{
	size_t len = pgm_nla_len(a);

	return (len == 4 && (a->addr[0] & 0xf0) == 0xe0) || (len == 16 && a->addr[0] == 0xff);
}

/*
 * The router's own address on ifindex in dst's family (NAKs upstream, SPMRs, POLRs, NCFs with
 * OPT_NBR_UNREACH). Over IPv6 the one the kernel would choose for dst (the environment's
 * source): a link-local address towards a link-local neighbour, which is what an SPM's path NLA
 * carries when the upstream router took its interface's link-local address, a global one
 * towards a global one; else the interface's address the core holds, when of the family.
 */
static bool own_address(struct assist *a, const struct cp_action *act, struct pgm_nla *src)
{
	if (act->ip_dst.afi == PGM_AFI_IP6 && a->env.source != NULL &&
		a->env.source(a->env.ctx, act->ifindex, &act->ip_dst, src) && src->afi == PGM_AFI_IP6)
		return true;
	return cp_if_addr(a->cp, act->ifindex, src) && src->afi == act->ip_dst.afi;
}

/*
 * What leaves at once, ahead of what its receive round queued, and in the order the core made it
 * (issue 27; tests/bench/README, "The NAK upstream ahead of its NCF"):
 *  - a NAK (or NNAK) forwarded upstream for a NAK received, the first since the environment last
 *    sent its queue: the repair waits for it at the source, while the NCF only has to come
 *    before the receivers' NAK_RPT_IVL (seconds). The core makes it before its NCF, so it is not
 *    held up by the NCF's multicast onto a LAN of receivers;
 *  - every NCF (a receiver waiting for it re-NAKs).
 * The rest, a batch's other NAKs upstream among it, leaves at the batch's end, one sendmmsg()
 * per output socket before its verdicts: under load a batch holds many NAKs, and their NCFs do
 * not wait behind a send of each NAK upstream. The timers' repeats are batched as before.
 */
static bool leaves_first(struct assist *a, const struct cp_action *act)
{
	if (act->type == CP_ACT_NCF)
		return true;
	if ((act->type != CP_ACT_NAK && act->type != CP_ACT_NNAK) || act->packet == NULL ||
		a->nak_went_first)
		return false;
	a->nak_went_first = true;
	return true;
}

void assist_on_action(void *ctx, const struct cp_action *act)
{
	struct assist *a = ctx;
	struct pgm_ip_params p = {0};
	size_t tpdu_len, len;
	bool first;
	int rc;

	tpdu_len = cp_action_tpdu(act, a->tpdu, sizeof(a->tpdu));
	if (tpdu_len == 0) {
		a->stats.build_failed++;
		if (assist_wants(a, LOG_CAT_DATAPLANE))
			assist_line(a, LOG_CAT_DATAPLANE, "action %s on if %d could not be built",
				cp_action_name(act->type), act->ifindex);
		return;
	}
	if (act->ip_src.afi != 0) {
		p.src = act->ip_src;
	} else if (!own_address(a, act, &p.src)) {
		a->stats.no_source_addr++;
		if (assist_wants(a, LOG_CAT_DATAPLANE))
			assist_line(a, LOG_CAT_DATAPLANE, "no IPv%d address on if %d to send from",
				act->ip_dst.afi == PGM_AFI_IP6 ? 6 : 4, act->ifindex);
		return;
	}
	p.dst = act->ip_dst;
	/* what goes down one hop to the group gets the NCF TTL (IPv6: hop limit); unicast (NCFs
	 * with OPT_NBR_UNREACH, NAKs, POLRs) the unicast one */
	p.ttl = nla_is_multicast(&act->ip_dst) ? (uint8_t)a->conf.g.ncf_ttl : ASSIST_UNICAST_TTL;
	p.router_alert = act->router_alert;
	p.udp = act->udp;
	p.udp_sport = act->udp_sport;
	p.udp_dport = act->udp_dport;
	len = pgm_build_ip(a->txbuf, sizeof(a->txbuf), &p, a->tpdu, tpdu_len);
	if (len == 0) {
		a->stats.build_failed++;
		return;
	}
	if (assist_wants(a, LOG_CAT_PACKETS))
		print_action(a, act, a->tpdu, tpdu_len);
	first = leaves_first(a, act);
	if (first && a->env.send_first != NULL)
		rc = a->env.send_first(a->env.ctx, act->ifindex, a->txbuf, len, 0);
	else
		rc = a->env.send(a->env.ctx, act->ifindex, a->txbuf, len, 0);
	if (rc < 0)
		a->stats.send_failed++;
	else if (rc > 0)
		a->stats.originated++; /* queued: counted when sent (assist_count_sent) */
	else if (first && a->env.send_now != NULL)
		a->env.send_now(a->env.ctx);
}
