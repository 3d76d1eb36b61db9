/*
 * NCF reception (RFC 3208 7.3 confirmation, 7.5 anticipation, 9.3.3 lists).
 *
 * An NCF from the upstream interface confirms a pending NAK for its (TSI, SQN), or creates
 * anticipated state with no interfaces (restarting the timers of state that exists), only for
 * SQNs in the session's window and when its NAK_SRC and NAK_GRP are the session's. NCFs from
 * other interfaces are discarded without creating state. An NE never forwards NCFs; NCFs of
 * sessions this router does not know pass, so PGM keeps working unassisted for them. Unicast NCFs
 * come from an off-tree DLR (dlr.c) or carry OPT_NBR_UNREACH (unreach.c). What an NCF does in
 * each phase is fsm.c's table; the actions of its rows are here.
 */
#include "control/cp_internal.h"

/* The state's timers restart: NAK_RDATA_IVL and NAK_ELIM_IVL (7.4, 7.5). */
static bool confirmed(struct cp *cp, struct cp_fsm *x, enum cp_counter c)
{
	cp_count(cp, x->in_if, x->s, c, 1);
	cp_repair_confirm(cp, x->r, x->s, x->now);
	cp_repair_schedule(cp, x->id);
	return true;
}

/* 7.5: an NCF for an SQN without state anticipates the NAKs for it: state with no interfaces. */
bool cp_fsm_ncf_anticipate(struct cp *cp, struct cp_fsm *x)
{
	if (!cp_fsm_create(cp, x, false))
		return false; /* counted: limits.c */
	x->r->flags = CP_REPAIR_ANTICIPATED;
	return confirmed(cp, x, CP_C_NCF_ANTICIPATED);
}

bool cp_fsm_ncf_confirm(struct cp *cp, struct cp_fsm *x)
{
	return confirmed(cp, x, CP_C_NCF_CONFIRMED);
}

bool cp_fsm_ncf_restart(struct cp *cp, struct cp_fsm *x)
{
	return confirmed(cp, x, CP_C_NCF_ANTICIPATED);
}

/* someone did NAK upstream: the state eliminates from now on */
bool cp_fsm_ncf_after_nnak(struct cp *cp, struct cp_fsm *x)
{
	x->r->flags = CP_REPAIR_ANTICIPATED;
	return confirmed(cp, x, CP_C_NCF_ANTICIPATED);
}

/* The RDATA went by and another one is coming: wait for it with the interfaces that have not
 * had theirs. */
bool cp_fsm_ncf_after_repair(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	r->if_mask &= ~r->repaired_mask;
	r->repaired_mask = 0;
	if (r->if_mask == 0)
		r->flags |= CP_REPAIR_ANTICIPATED;
	return confirmed(cp, x, CP_C_NCF_ANTICIPATED);
}

static void ncf_sqn(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, uint32_t sid,
	uint32_t sqn)
{
	struct cp_fsm x = {
		.s = cp_session_at(cp, sid),
		.sid = sid,
		.sqn = sqn,
		.now = in->now,
		.in_if = in_if,
	};

	cp_fsm_state(cp, &x, cp_repair_find_live(cp, sid, sqn, in->now));
	if (x.r == NULL && !cp_sqn_in_window(cp, x.s, sqn)) {
		/* 10: state for SQNs the source cannot repair is memory anyone upstream can fill */
		cp_count(cp, in_if, x.s, CP_C_NCF_OUT_OF_WINDOW, 1);
		return;
	}
	cp_repair_fsm(cp, &x, CP_EV_NCF);
}

/* 7.5: an NCF is for the session when it names its group and its source, or the upstream
 * neighbour (NCFs made from OpenPGM receivers' NAKs carry the path NLA they NAKed to). */
static bool ncf_addresses_match(const struct cp_session *s, const struct pgm_packet *pkt)
{
	return pgm_nla_equal(&pkt->nak_grp, &s->group) &&
	       (pgm_nla_equal(&pkt->nak_src, &s->source) ||
		       pgm_nla_equal(&pkt->nak_src, &s->upstream));
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
	sid = cp_session_lookup(cp, &tsi, cp_packet_afi(in));
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
	if (!ncf_addresses_match(s, pkt)) {
		cp_count(cp, in_if, s, CP_C_NCF_ADDRESS_MISMATCH, 1);
		cp_log_repair(cp, CP_LOG_EVENT, s, sqns[0],
			"NCF naming another source or group: discarded, no state");
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
