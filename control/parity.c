/*
 * Parity (on-demand FEC) repair state per transmission group (RFC 3208 11.6; digest 3.12).
 *
 * A parity NAK asks for PKT_CNT + 1 parity packets of the group TG_SQN (the low log2(TGS) bits of
 * its SQN hold the 0-based count). State is kept per (TSI, TG_SQN) with the count each interface
 * is owed (the "known packet count", stored 1-based) and the largest known count:
 *  - a NAK adds or raises its interface's count and gets a parity NCF carrying that count; it is
 *    eliminated only while NAK_ELIM_IVL runs (or the NAK is pending) and its count is no larger
 *    than the largest known; otherwise it goes upstream with the largest known count;
 *  - a parity NCF from upstream confirms pending state only when its count covers the largest
 *    known, and otherwise anticipates (raising the largest known count: partial anticipation);
 *  - each parity RDATA decrements the largest known count once and the count of each interface
 *    it is forwarded on; an interface leaves the state when its count falls to the group-size
 *    offset (max TGS - OPT_CURR_TGSIZE, 0 for full groups), the state when none is left;
 *  - a parity NNAK is eliminated only if the state's largest known count exceeds its count.
 * Without a usable group size (OPT_PARITY_PRM) counts cannot be read and parity packets are
 * handled without state, as before.
 */
#include <string.h>

#include "control/cp_internal.h"

uint32_t cp_parity_tgs(const struct cp_session *s)
{
	uint32_t t = s->parity_tgs;

	return t >= 2 && t <= 128 && (t & (t - 1)) == 0 ? t : 0;
}

static uint32_t tg_offset(const struct cp_session *s, uint32_t tgs)
{
	uint32_t cur = s->ext != NULL ? s->ext->curr_tgsize : 0;

	return cur != 0 && cur < tgs ? tgs - cur : 0;
}

static uint32_t session_id(const struct cp *cp, const struct cp_session *s)
{
	return cp_session_find(cp, &s->tsi);
}

static void stateless(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, const struct cp_nak_step *steps, unsigned n)
{
	cp_count(cp, in_if, s, CP_C_PARITY_PASSTHROUGH, 1);
	if (in->pkt->type == PGM_NAK)
		cp_send_ncf(cp, in, in_if, s, 0);
	if ((s->flags & CP_SESSION_SUSPENDED) != 0)
		cp_count(cp, in_if, s, CP_C_NAK_SUSPENDED, 1);
	else
		cp_forward_naks(cp, in, s, steps, n);
}

static void parity_nnak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, uint32_t sid, const struct cp_nak_step *steps, unsigned n,
	uint32_t tgs)
{
	bool forward = false, from_dlr = cp_from_offtree_dlr(s, in);

	for (unsigned i = 0; i < n; i++) {
		uint32_t cnt = (steps[i].sqn & (tgs - 1)) + 1;
		uint32_t id = cp_repair_live(
			cp, cp_parity_find(cp, sid, steps[i].sqn & ~(tgs - 1)), in->now);
		struct cp_repair *r;

		if (id == CP_NIL) {
			forward = true;
			continue;
		}
		r = cp_repair_at(cp, id);
		if (from_dlr && (r->flags & CP_REPAIR_DLR_OFF) != 0) {
			cp_count(cp, in_if, s, CP_C_DLR_NNAK, 1);
			forward = true;
		} else if (cp_parity_at(cp, r->parity)->largest <= cnt) {
			forward = true;
		}
	}
	if (forward)
		cp_forward_naks(cp, in, s, steps, n);
	else
		cp_count(cp, in_if, s, CP_C_NNAK_ELIMINATED, n);
}

void cp_parity_nak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_nak_steps(pkt, steps), missing = 0;
	uint32_t tgs = cp_parity_tgs(s), sid = session_id(cp, s), ncf_cnt = 0;
	bool forward = false, from_dlr;
	uint64_t bit;
	int slot;

	out->verdict = CP_DROP;
	if (tgs == 0) {
		stateless(cp, in, in_if, s, steps, n);
		return;
	}
	if (pkt->type == PGM_NNAK) {
		parity_nnak(cp, in, in_if, s, sid, steps, n, tgs);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		if (cp_repair_live(cp, cp_parity_find(cp, sid, steps[i].sqn & ~(tgs - 1)),
			    in->now) == CP_NIL)
			missing++;
	}
	if (missing != 0 && cp_repair_limit_reached(cp, missing)) {
		cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
		return;
	}
	from_dlr = cp_from_offtree_dlr(s, in);
	bit = cp_iface_bit(in_if);
	slot = in_if->slot;
	for (unsigned i = 0; i < n; i++) {
		struct cp_nak_step *st = &steps[i];
		uint32_t tg = st->sqn & ~(tgs - 1), cnt = (st->sqn & (tgs - 1)) + 1;
		uint32_t id = cp_parity_find(cp, sid, tg);
		struct cp_parity *p;
		struct cp_repair *r;
		bool created = false, added, eliminate;

		if (id == CP_NIL) {
			id = cp_repair_create_kind(cp, sid, tg, in->now, true);
			if (id == CP_NIL) {
				forward = true; /* untracked, forwarded as it came */
				ncf_cnt = i == 0 ? cnt - 1 : ncf_cnt;
				continue;
			}
			created = true;
			cp_count(cp, in_if, s, CP_C_PARITY_NAK_UNIQUE, 1);
		}
		r = cp_repair_at(cp, id);
		p = cp_parity_at(cp, r->parity);
		added = (r->if_mask & bit) == 0;
		if (from_dlr && (r->flags & CP_REPAIR_DLR_OFF) != 0) {
			r->flags = (uint8_t)((r->flags & ~CP_REPAIR_DLR) | CP_REPAIR_NO_DLR);
			cp_count(cp, in_if, s, CP_C_DLR_NAK_FALLBACK, 1);
			eliminate = false;
		} else {
			eliminate =
				!created && cp_repair_eliminating(r, in->now) && cnt <= p->largest;
		}
		if (added || cnt > p->count[slot])
			p->count[slot] = (uint8_t)cnt;
		r->if_mask |= bit;
		cp_nak_seen(cp, s, r, in_if, added);
		if (i == 0)
			ncf_cnt = p->count[slot] - 1u; /* 11.6: max(NAK_PKT_CNT, the known count) */
		if (cnt > p->largest)
			p->largest = (uint8_t)cnt;
		st->sqn = tg | ((p->largest - 1u) & (tgs - 1));
		if (eliminate) {
			cp_count(cp, in_if, s, CP_C_PARITY_NAK_ELIMINATED, 1);
			st->dest = (r->flags & CP_REPAIR_DLR_UP)    ? CP_DEST_DLR_UP
				   : (r->flags & CP_REPAIR_DLR_OFF) ? CP_DEST_DLR_OFF
								    : CP_DEST_UPSTREAM;
			cp_log_repair(cp, CP_LOG_EVENT, s, tg,
				"parity NAK for %u on %s: eliminated (largest known %u)", cnt,
				in_if->name, p->largest);
			continue;
		}
		cp_repair_start_pending(cp, r, s, in->now);
		st->dest = (uint8_t)cp_nak_dest(cp, s, r);
		cp_repair_schedule(cp, id);
		forward = true;
		cp_log_repair(cp, CP_LOG_EVENT, s, tg,
			"parity NAK for %u on %s -> PENDING (forwarded for %u)", cnt, in_if->name,
			p->largest);
	}
	cp_send_ncf(cp, in, in_if, s, ncf_cnt);
	if (forward && (s->flags & CP_SESSION_SUSPENDED) != 0) {
		cp_count(cp, in_if, s, CP_C_NAK_SUSPENDED, 1);
	} else if (forward) {
		bool upstream = false;

		cp_forward_naks(cp, in, s, steps, n);
		cp_count(cp, in_if, s, CP_C_PARITY_NAK_FORWARDED, 1);
		for (unsigned i = 0; i < n; i++)
			upstream = upstream || steps[i].dest == CP_DEST_UPSTREAM;
		if (upstream && !from_dlr)
			cp_dlr_discover(cp, s, in->now);
	} else {
		cp_count(cp, in_if, s, CP_C_NAK_ELIMINATED, n);
	}
}

void cp_parity_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(in->pkt, sqns);
	uint32_t tgs = cp_parity_tgs(s), sid = session_id(cp, s);

	out->verdict = CP_DROP;
	if (tgs == 0) {
		cp_count(cp, in_if, s, CP_C_PARITY_PASSTHROUGH, 1);
		return;
	}
	if (in->in_ifindex != s->upstream_ifindex) {
		cp_count(cp, in_if, s, CP_C_NCF_DISCARDED, n);
		return;
	}
	for (unsigned i = 0; i < n; i++) {
		uint32_t tg = sqns[i] & ~(tgs - 1), cnt = (sqns[i] & (tgs - 1)) + 1;
		uint32_t id = cp_repair_live(cp, cp_parity_find(cp, sid, tg), in->now);
		struct cp_parity *p;
		struct cp_repair *r;

		if (id == CP_NIL) {
			id = cp_repair_create_kind(cp, sid, tg, in->now, true);
			if (id == CP_NIL) {
				cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
				continue;
			}
			r = cp_repair_at(cp, id);
			r->flags |= CP_REPAIR_ANTICIPATED;
		}
		r = cp_repair_at(cp, id);
		p = cp_parity_at(cp, r->parity);
		if (r->phase == CP_PHASE_PENDING && cnt < p->largest) {
			/* 11.6: it does not cover what we asked for: keep repeating */
			cp_log_repair(cp, CP_LOG_EVENT, s, tg,
				"parity NCF for %u in PENDING: below %u, still pending", cnt,
				p->largest);
			continue;
		}
		if (cnt > p->largest)
			p->largest = (uint8_t)cnt; /* (partial) anticipation */
		cp_repair_confirm(cp, r, s, in->now);
		cp_repair_schedule(cp, id);
		cp_count(cp, in_if, s, CP_C_PARITY_NCF, 1);
		cp_log_repair(cp, CP_LOG_EVENT, s, tg,
			"parity NCF for %u -> OUTSTANDING (largest %u)", cnt, p->largest);
	}
}

/* A new parity RDATA (not another copy of the one being counted): the largest count drops. */
static void rdata_begin(struct cp_repair *r, struct cp_parity *p, uint32_t sqn, uint64_t bit)
{
	if (p->have_rdata && p->last_rdata_sqn == sqn && (r->repaired_mask & bit) == 0)
		return;
	if (p->largest > 0)
		p->largest--;
	r->repaired_mask = 0;
	p->last_rdata_sqn = sqn;
	p->have_rdata = true;
}

/* One packet owed less on slot; false when it was owed nothing. */
static bool owe_less(struct cp_repair *r, struct cp_parity *p, unsigned slot, uint32_t offset)
{
	uint64_t bit = (uint64_t)1 << slot;

	if ((r->if_mask & bit) == 0 || p->count[slot] <= offset)
		return false;
	p->count[slot]--;
	if (p->count[slot] <= offset) {
		r->if_mask &= ~bit;
		p->count[slot] = 0;
	}
	return true;
}

void cp_parity_rdata(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_session *s, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t tgs = cp_parity_tgs(s), sid, id;
	uint64_t bit = cp_iface_bit(out_if), in_bit = cp_iface_bit(in_if);
	struct cp_parity *p;
	struct cp_repair *r;

	if (tgs == 0) {
		/* without the group size the counts cannot be kept: every copy goes */
		cp_count(cp, out_if, s, CP_C_PARITY_PASSTHROUGH, 1);
		cp_count_out(out_if, s, PGM_RDATA);
		out->verdict = CP_ACCEPT;
		return;
	}
	if (pgm_opt_has(&pkt->opt, PGM_OPT_CURR_TGSIZE) && cp_session_ext(s) != NULL)
		s->ext->curr_tgsize = pkt->opt.curr_tgsize;
	sid = session_id(cp, s);
	id = cp_repair_live(cp, cp_parity_find(cp, sid, pkt->sqn & ~(tgs - 1)), in->now);
	if (id == CP_NIL) {
		cp_count(cp, out_if, s, CP_C_PARITY_RDATA_DROPPED, 1);
		return;
	}
	r = cp_repair_at(cp, id);
	p = cp_parity_at(cp, r->parity);
	rdata_begin(r, p, pkt->sqn, bit);
	if (bit != in_bit && (r->repaired_mask & bit) == 0 &&
		owe_less(r, p, (unsigned)out_if->slot, tg_offset(s, tgs))) {
		r->repaired_mask |= bit;
		out->verdict = CP_ACCEPT;
		cp_count(cp, out_if, s, CP_C_PARITY_RDATA_FORWARDED, 1);
		cp_count_out(out_if, s, PGM_RDATA);
	} else {
		cp_count(cp, out_if, s, CP_C_PARITY_RDATA_DROPPED, 1);
	}
	if ((r->if_mask & ~in_bit) == 0) {
		cp_log_repair(cp, CP_LOG_EVENT, s, r->sqn,
			"parity RDATA %u: every interface repaired, deleted", pkt->sqn);
		cp_repair_delete(cp, id, CP_C_REPAIR_COMPLETED);
	}
}

void cp_parity_offtree_rdata(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_session *s)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t tgs = cp_parity_tgs(s), id, offset;
	struct cp_parity *p;
	struct cp_repair *r;

	id = tgs != 0 ? cp_repair_live(cp,
				cp_parity_find(cp, session_id(cp, s), pkt->sqn & ~(tgs - 1)),
				in->now)
		      : CP_NIL;
	if (id == CP_NIL) {
		cp_count(cp, in_if, s, CP_C_PARITY_RDATA_DROPPED, 1);
		return;
	}
	r = cp_repair_at(cp, id);
	p = cp_parity_at(cp, r->parity);
	offset = tg_offset(s, tgs);
	if (p->largest > 0)
		p->largest--;
	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		struct cp_iface *ifp = cp->slot_if[slot];
		struct cp_action act;

		if (ifp == NULL || !owe_less(r, p, slot, offset))
			continue;
		cp_action_as_source(&act, CP_ACT_RDATA, s, ifp->ifindex);
		act.from_packet = true;
		act.sqn = pkt->sqn;
		act.parity = true;
		cp_emit(cp, &act);
		cp_count(cp, ifp, s, CP_C_DLR_RDATA, 1);
		cp_count(cp, ifp, s, CP_C_PARITY_RDATA_FORWARDED, 1);
		cp_count_out(ifp, s, PGM_RDATA);
	}
	if (r->if_mask == 0)
		cp_repair_delete(cp, id, CP_C_REPAIR_COMPLETED);
}
