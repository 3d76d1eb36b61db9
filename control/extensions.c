/*
 * Seams for the optional procedures that come later, each with the behaviour it has until then:
 *  - DLR redirection and the POLL/POLR child role (9.5, 14);
 *  - parity repair state per transmission group (11.6);
 *  - OPT_NBR_UNREACH failure containment (15.3);
 *  - NAK_BO_IVL advertisement in NCFs (15.2).
 */
#include "control/cp_internal.h"

/*
 * 14.1: an NE never forwards a POLL. As a PGM child (14.5) it will match POLL_RAND against its
 * RAND_NODE_ID and answer GENERAL polls with a POLR after a random back-off; until then the POLL
 * ends here.
 */
void cp_poll_child(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	(void)cp;
	(void)in;
	(void)in_if;
	out->verdict = CP_DROP;
}

/*
 * A POLR addressed to us answers a POLL we sent, or is a DLR's redirecting POLR (9.5.3: record
 * OPT_REDIRECT per TSI and send later NAKs there). Neither is implemented yet: consumed.
 */
void cp_polr_to_router(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	(void)cp;
	(void)in;
	(void)in_if;
	out->verdict = CP_DROP;
}

/*
 * Unicast NCF or RDATA to us comes from an off-tree DLR (9.5.3.2). Without redirection we never
 * asked one, so it is counted and dropped. Later: terminate the NCF; re-source the RDATA (IP
 * source = data source, destination = group, Router Alert) before constrained forwarding.
 */
void cp_offtree_dlr(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	(void)in;
	cp_count(cp, in_if, NULL, CP_C_OFFTREE_DLR, 1);
	out->verdict = CP_DROP;
}

/*
 * Parity NAKs (11.6) need state per transmission group with per-interface packet counts. Until
 * then they are handled without state: a NAK gets its (parity) NCF and goes upstream, an NNAK
 * goes upstream; nothing is eliminated.
 */
void cp_parity_nak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(in->pkt, sqns);

	cp_count(cp, in_if, s, CP_C_PARITY_PASSTHROUGH, 1);
	if (in->pkt->type == PGM_NAK)
		cp_send_ncf(cp, in, in_if, s, sqns, n);
	cp_forward_upstream(cp, in, s);
	out->verdict = CP_DROP;
}

/* Parity NCFs would confirm or anticipate transmission-group state; consumed meanwhile. */
void cp_parity_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	(void)in;
	cp_count(cp, in_if, s, CP_C_PARITY_PASSTHROUGH, 1);
	out->verdict = CP_DROP;
}

/* Without transmission-group state parity RDATA cannot be constrained: every copy goes. */
void cp_parity_rdata(struct cp *cp, const struct cp_packet *in, struct cp_iface *out_if,
	struct cp_session *s, struct cp_result *out)
{
	(void)in;
	cp_count(cp, out_if, s, CP_C_PARITY_PASSTHROUGH, 1);
	cp_count_out(out_if, s, PGM_RDATA);
	out->verdict = CP_ACCEPT;
}

/*
 * 15.3.2: an SPM with OPT_NBR_UNREACH from our parent suspends NAK forwarding for the TSI until
 * a regular SPM. Not implemented: it is forwarded like a regular SPM, which is what an element
 * without failure containment does.
 */
void cp_spm_nbr_unreach(struct cp *cp, struct cp_session *s, const struct pgm_packet *spm)
{
	char tsi[24];

	if (cp_log_enabled(cp, CP_LOG_EVENT))
		cp_logf(cp, CP_LOG_EVENT,
			"tsi %s: SPM %u carries OPT_NBR_UNREACH, handled as regular",
			cp_session_label(s, tsi, sizeof(tsi)), spm->sqn);
}

/*
 * 15.3.2: an NCF with OPT_NBR_UNREACH and OPT_PATH_NLA naming our upstream neighbour would stop
 * NAK forwarding and trigger a special SPM downstream. Not implemented: consumed.
 */
void cp_ncf_nbr_unreach(struct cp *cp, const struct cp_packet *in, struct cp_session *s)
{
	cp_log_repair(cp, CP_LOG_EVENT, s, in->pkt->sqn,
		"NCF with OPT_NBR_UNREACH: failure containment not supported, discarded");
}

/*
 * 15.2.1: NCFs MAY carry OPT_NAK_BO_IVL. An interface configured with a NAK_BO_IVL advertises it
 * (the same value its forwarded SPMs carry); adapting it to duplicate NAKs comes later.
 */
void cp_ncf_advertise(const struct cp *cp, const struct cp_session *s, const struct cp_iface *ifp,
	struct cp_action *ncf)
{
	const struct cp_if_config *cfg = cp_iface_config(cp, ifp);

	(void)s;
	if (cfg->nak_bo_ivl_us == 0)
		return;
	ncf->nak_bo_ivl = true;
	ncf->nak_bo_ivl_us = cfg->nak_bo_ivl_us;
	ncf->nak_bo_ivl_sqn = 0;
}
