/*
 * NCF reception (RFC 3208 7.3 confirmation, 7.5 anticipation, 9.3.3 lists; digest 3.8).
 *
 * An NCF from the upstream interface confirms a pending NAK for its (TSI, SQN), or creates
 * anticipated state with no interfaces (restarting the timers of state that exists). NCFs from
 * other interfaces are discarded without creating state. An NE never forwards NCFs; NCFs of
 * sessions this router does not know pass, so PGM keeps working unassisted for them. Unicast NCFs
 * come from an off-tree DLR (dlr.c) or carry OPT_NBR_UNREACH (unreach.c).
 */
#include "control/cp_internal.h"

static void ncf_sqn(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, uint32_t sid,
	uint32_t sqn)
{
	struct cp_session *s = cp_session_at(cp, sid);
	struct cp_repair *r;
	uint32_t id = cp_repair_find_live(cp, sid, sqn, in->now);
	enum cp_repair_phase before;

	if (id == CP_NIL) {
		id = cp_repair_create(cp, sid, sqn, in->now);
		if (id == CP_NIL) {
			cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
			return;
		}
		r = cp_repair_at(cp, id);
		r->flags = CP_REPAIR_ANTICIPATED;
		cp_repair_confirm(cp, r, s, in->now);
		cp_repair_schedule(cp, id);
		cp_count(cp, in_if, s, CP_C_NCF_ANTICIPATED, 1);
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn, "NCF in NONE -> OUTSTANDING (anticipated)");
		return;
	}
	r = cp_repair_at(cp, id);
	before = r->phase;
	switch (before) {
	case CP_PHASE_PENDING:
		cp_count(cp, in_if, s, CP_C_NCF_CONFIRMED, 1);
		break;
	case CP_PHASE_FORWARDING:
		/* the RDATA went by and another one is coming: wait for it with the interfaces
		 * that have not had theirs */
		r->if_mask &= ~r->repaired_mask;
		r->repaired_mask = 0;
		if (r->if_mask == 0)
			r->flags |= CP_REPAIR_ANTICIPATED;
		cp_count(cp, in_if, s, CP_C_NCF_ANTICIPATED, 1);
		break;
	case CP_PHASE_OUTSTANDING:
		if ((r->flags & CP_REPAIR_NNAK) != 0)
			r->flags = CP_REPAIR_ANTICIPATED; /* someone did NAK upstream */
		cp_count(cp, in_if, s, CP_C_NCF_ANTICIPATED, 1);
		break;
	}
	cp_repair_confirm(cp, r, s, in->now);
	cp_repair_schedule(cp, id);
	cp_log_repair(cp, CP_LOG_EVENT, s, sqn, "NCF in %s -> OUTSTANDING (%s)",
		cp_phase_name(before),
		before == CP_PHASE_PENDING ? "confirmed" : "timers restarted, anticipated");
}

void cp_ncf(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(pkt, sqns);
	struct cp_session *s;
	struct pgm_tsi tsi;
	uint32_t sid;

	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_lookup(cp, &tsi);
	if (sid == CP_NIL) {
		cp_count(cp, in_if, NULL, CP_C_NCF_NO_SESSION, 1);
		return;
	}
	s = cp_session_at(cp, sid);
	out->verdict = CP_DROP; /* hop by hop: never forwarded */
	cp_count_in(NULL, s, PGM_NCF);
	cp_count(cp, in_if, s, CP_C_NCF_RECEIVED, n);
	if (pgm_opt_has(&pkt->opt, PGM_OPT_NBR_UNREACH)) {
		cp_ncf_nbr_unreach(cp, in, in_if, s);
		return;
	}
	if (!pgm_ip_dst_is_multicast(in->ip)) {
		cp_offtree_dlr(cp, in, in_if, out);
		return;
	}
	if (pgm_packet_is_parity(pkt)) {
		cp_parity_ncf(cp, in, in_if, s, out);
		return;
	}
	if (in->in_ifindex != s->upstream_ifindex) {
		/* 7.5: not where we would send NAKs, so it confirms nothing of ours */
		cp_count(cp, in_if, s, CP_C_NCF_DISCARDED, n);
		cp_log_repair(cp, CP_LOG_EVENT, s, sqns[0],
			"NCF off the upstream interface: discarded, no state");
		return;
	}
	for (unsigned i = 0; i < n; i++)
		ncf_sqn(cp, in, in_if, sid, sqns[i]);
}
