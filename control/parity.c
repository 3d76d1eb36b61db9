/*
 * Parity (on-demand FEC) repair state per transmission group (RFC 3208 11.6).
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
 * handled without state, as before. The events, told apart by those counts, are rows of
 * fsm.c's table; their actions are here.
 */
#include <stdio.h>
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
	return cp_session_find(cp, &s->tsi, cp_session_afi(s));
}

static void stateless(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, const struct cp_nak_step *steps, unsigned n)
{
	cp_count(cp, in_if, s, CP_C_PARITY_PASSTHROUGH, 1);
	/* the NAK upstream before the NCF, as for selective NAKs (cp_nak) */
	if ((s->flags & CP_SESSION_SUSPENDED) != 0)
		cp_count(cp, in_if, s, CP_C_NAK_SUSPENDED, 1);
	else
		cp_forward_naks(cp, in, s, steps, n);
	if (in->pkt->type == PGM_NAK)
		cp_send_ncf(cp, in, in_if, s, 0);
}

/* A parity NAK, NNAK or NCF being handled: what the actions of its entries' rows share. */
struct parity_run {
	struct cp_nak_step *step; /* NAKs: the entry at hand */
	uint32_t tgs;		  /* the transmission group size */
	uint32_t cnt;		  /* the packets the entry asks for or confirms, 1-based */
	uint64_t bit;		  /* NAKs: the arrival interface's slot */
	bool first;		  /* NAKs: the list's first entry, whose count the NCF carries */
	bool from_dlr;		  /* NNAKs: from the TSI's off-tree DLR */
	bool forward;		  /* NAKs, NNAKs: some entry goes on */
	uint32_t ncf_cnt;	  /* NAKs: the NCF's NAK_PKT_CNT, 0-based */
	char cnt_text[12], largest_text[12]; /* the numbers the rows' lines print */
	const char *arg[3];
};

/* The counts the rows' lines print: (count, interface, largest), or (count, largest) without
 * an interface; formatted only for a line that is written. */
static void parity_text(
	struct cp *cp, struct cp_fsm *x, const struct cp_parity *p, const char *ifname)
{
	struct parity_run *run = x->run;

	if (!cp_log_enabled(cp, CP_LOG_EVENT))
		return;
	snprintf(run->cnt_text, sizeof(run->cnt_text), "%u", run->cnt);
	snprintf(run->largest_text, sizeof(run->largest_text), "%u", p->largest);
	run->arg[0] = run->cnt_text;
	run->arg[1] = ifname != NULL ? ifname : run->largest_text;
	run->arg[2] = run->largest_text;
	x->arg = run->arg;
}

/* A parity NNAK is eliminated only where the largest known count exceeds its own; one from
 * the off-tree DLR for a group redirected to it always goes on (9.5.3.2). */
bool cp_fsm_parity_nnak(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;

	if (run->from_dlr && (x->r->flags & CP_REPAIR_DLR_OFF) != 0) {
		cp_count(cp, x->in_if, x->s, CP_C_DLR_NNAK, 1);
		run->forward = true;
	} else if (cp_parity_at(cp, cp_repair_parity_id(x->r))->largest <= run->cnt) {
		run->forward = true;
	}
	return true;
}

static void parity_nnak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, uint32_t sid, const struct cp_nak_step *steps, unsigned n,
	uint32_t tgs)
{
	struct parity_run run = {.tgs = tgs, .from_dlr = cp_from_offtree_dlr(s, in)};
	struct cp_fsm x = {.s = s, .sid = sid, .now = in->now, .in_if = in_if, .run = &run};

	for (unsigned i = 0; i < n; i++) {
		x.sqn = steps[i].sqn & ~(tgs - 1);
		run.cnt = (steps[i].sqn & (tgs - 1)) + 1;
		cp_fsm_state(cp, &x, cp_repair_live(cp, cp_parity_find(cp, sid, x.sqn), in->now));
		if (x.r == NULL)
			run.forward = true; /* no state: nothing to eliminate it, none made */
		else
			cp_repair_fsm(cp, &x, CP_EV_PARITY_NNAK);
	}
	if (run.forward)
		cp_forward_naks(cp, in, s, steps, n);
	else
		cp_count(cp, in_if, s, CP_C_NNAK_ELIMINATED, n);
}

/* The entry's interface is owed its count (11.6: the larger of the NAK's and the known one);
 * the entry goes on with the largest known count. */
static struct cp_parity *parity_listed(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;
	struct cp_repair *r = x->r;
	struct cp_parity *p = cp_parity_at(cp, cp_repair_parity_id(r));
	int slot = x->in_if->slot;
	bool added = (r->if_mask & run->bit) == 0;

	if (added || run->cnt > p->count[slot])
		p->count[slot] = (uint8_t)run->cnt;
	r->if_mask |= run->bit;
	cp_nak_seen(cp, x->s, r, x->in_if, added);
	if (run->first)
		run->ncf_cnt = p->count[slot] - 1u;
	if (run->cnt > p->largest)
		p->largest = (uint8_t)run->cnt;
	run->step->sqn = x->sqn | ((p->largest - 1u) & (run->tgs - 1));
	return p;
}

/* Upstream with the largest known count, repeated until a parity NCF covers it. */
static bool parity_nak_forwarded(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;
	struct cp_parity *p = parity_listed(cp, x);

	cp_repair_start_pending(cp, x->r, x->s, x->now);
	run->step->dest = (uint8_t)cp_nak_dest(cp, x->s, x->r);
	cp_repair_schedule(cp, x->id);
	run->forward = true;
	parity_text(cp, x, p, x->in_if->name);
	return true;
}

bool cp_fsm_parity_nak_first(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;

	if (!cp_fsm_create(cp, x, true)) {
		/* untracked: forwarded as it came, confirmed with its own count */
		cp_count(cp, x->in_if, x->s, CP_C_NAK_STATELESS, 1);
		run->forward = true;
		if (run->first)
			run->ncf_cnt = run->cnt - 1;
		return false;
	}
	cp_count(cp, x->in_if, x->s, CP_C_PARITY_NAK_UNIQUE, 1);
	return parity_nak_forwarded(cp, x);
}

bool cp_fsm_parity_nak(struct cp *cp, struct cp_fsm *x)
{
	return parity_nak_forwarded(cp, x);
}

/* 9.5.3.2: the DLR lacks it too: upstream for this group. */
bool cp_fsm_parity_nak_dlr_fallback(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	r->flags = (uint8_t)((r->flags & ~CP_REPAIR_DLR) | CP_REPAIR_NO_DLR);
	cp_count(cp, x->in_if, x->s, CP_C_DLR_NAK_FALLBACK, 1);
	return parity_nak_forwarded(cp, x);
}

/* Covered by the largest known count while the state eliminates (7.4). */
bool cp_fsm_parity_nak_duplicate(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;
	struct cp_parity *p = parity_listed(cp, x);
	uint8_t flags = x->r->flags;

	cp_count(cp, x->in_if, x->s, CP_C_PARITY_NAK_ELIMINATED, 1);
	run->step->dest = (flags & CP_REPAIR_DLR_UP)	? CP_DEST_DLR_UP
			  : (flags & CP_REPAIR_DLR_OFF) ? CP_DEST_DLR_OFF
							: CP_DEST_UPSTREAM;
	parity_text(cp, x, p, x->in_if->name);
	return true;
}

/* The event of a parity NAK entry for state r (NULL: none). */
static enum cp_repair_event parity_nak_event(struct cp *cp, const struct cp_repair *r,
	const struct parity_run *run, bool from_dlr, cp_time_t now)
{
	if (r == NULL)
		return CP_EV_PARITY_NAK;
	if (from_dlr && (r->flags & CP_REPAIR_DLR_OFF) != 0)
		return CP_EV_PARITY_NAK_FROM_DLR;
	if (cp_repair_eliminating(r, now) && run->cnt <= cp_parity_at(cp, cp_repair_parity_id(r))->largest)
		return CP_EV_PARITY_NAK_DUPLICATE;
	return CP_EV_PARITY_NAK;
}

void cp_parity_nak(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_nak_steps(pkt, steps);
	uint32_t tgs = cp_parity_tgs(s), sid = session_id(cp, s);
	struct parity_run run = {.tgs = tgs};
	struct cp_fsm x = {
		.s = s, .sid = sid, .now = in->now, .in_if = in_if, .run = &run, .nak = true};
	bool from_dlr;

	out->verdict = CP_DROP;
	if (tgs == 0) {
		stateless(cp, in, in_if, s, steps, n);
		return;
	}
	if (pkt->type == PGM_NNAK) {
		parity_nnak(cp, in, in_if, s, sid, steps, n, tgs);
		return;
	}
	/* states whose time is over go first, so the loop finds them gone */
	for (unsigned i = 0; i < n; i++)
		cp_repair_live(cp, cp_parity_find(cp, sid, steps[i].sqn & ~(tgs - 1)), in->now);
	from_dlr = cp_from_offtree_dlr(s, in);
	run.bit = cp_iface_bit(in_if);
	for (unsigned i = 0; i < n; i++) {
		struct cp_nak_step *st = &steps[i];

		x.sqn = st->sqn & ~(tgs - 1);
		x.arg = NULL;
		run.step = st;
		run.cnt = (st->sqn & (tgs - 1)) + 1;
		run.first = i == 0;
		cp_fsm_state(cp, &x, cp_parity_find(cp, sid, x.sqn));
		cp_repair_fsm(cp, &x, parity_nak_event(cp, x.r, &run, from_dlr, in->now));
	}
	/* the NAK upstream before the NCF, as for selective NAKs (cp_nak) */
	if (run.forward && (s->flags & CP_SESSION_SUSPENDED) != 0) {
		cp_count(cp, in_if, s, CP_C_NAK_SUSPENDED, 1);
	} else if (run.forward) {
		cp_forward_naks(cp, in, s, steps, n);
		cp_count(cp, in_if, s, CP_C_PARITY_NAK_FORWARDED, 1);
	} else {
		cp_count(cp, in_if, s, CP_C_NAK_ELIMINATED, n);
	}
	cp_send_ncf(cp, in, in_if, s, run.ncf_cnt);
	if (run.forward && (s->flags & CP_SESSION_SUSPENDED) == 0 && !from_dlr) {
		bool upstream = false;

		for (unsigned i = 0; i < n; i++)
			upstream = upstream || steps[i].dest == CP_DEST_UPSTREAM;
		if (upstream)
			cp_dlr_discover(cp, s, in->now);
	}
}

/* Confirmed, or (partially) anticipated: the largest known count rises to the NCF's. */
static bool parity_confirmed(struct cp *cp, struct cp_fsm *x)
{
	struct parity_run *run = x->run;
	struct cp_parity *p = cp_parity_at(cp, cp_repair_parity_id(x->r));

	if (run->cnt > p->largest)
		p->largest = (uint8_t)run->cnt;
	cp_repair_confirm(cp, x->r, x->s, x->now);
	cp_repair_schedule(cp, x->id);
	cp_count(cp, x->in_if, x->s, CP_C_PARITY_NCF, 1);
	parity_text(cp, x, p, NULL);
	return true;
}

bool cp_fsm_parity_ncf_anticipate(struct cp *cp, struct cp_fsm *x)
{
	if (!cp_fsm_create(cp, x, true))
		return false;
	x->r->flags |= CP_REPAIR_ANTICIPATED;
	return parity_confirmed(cp, x);
}

bool cp_fsm_parity_ncf(struct cp *cp, struct cp_fsm *x)
{
	return parity_confirmed(cp, x);
}

/* 11.6: it does not cover what we asked for: the NAK keeps being repeated. */
bool cp_fsm_parity_ncf_short(struct cp *cp, struct cp_fsm *x)
{
	parity_text(cp, x, cp_parity_at(cp, cp_repair_parity_id(x->r)), NULL);
	return true;
}

void cp_parity_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, struct cp_result *out)
{
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(in->pkt, sqns);
	uint32_t tgs = cp_parity_tgs(s), sid = session_id(cp, s);
	struct parity_run run = {.tgs = tgs};
	struct cp_fsm x = {.s = s, .sid = sid, .now = in->now, .in_if = in_if, .run = &run};

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
		x.sqn = sqns[i] & ~(tgs - 1);
		x.arg = NULL;
		run.cnt = (sqns[i] & (tgs - 1)) + 1;
		cp_fsm_state(cp, &x, cp_repair_live(cp, cp_parity_find(cp, sid, x.sqn), in->now));
		if (x.r == NULL && !cp_sqn_in_window(cp, s, x.sqn)) {
			cp_count(cp, in_if, s, CP_C_NCF_OUT_OF_WINDOW, 1); /* as ncf.c */
			continue;
		}
		cp_repair_fsm(cp, &x,
			x.r != NULL && run.cnt < cp_parity_at(cp, cp_repair_parity_id(x.r))->largest
				? CP_EV_PARITY_NCF_SHORT
				: CP_EV_PARITY_NCF);
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

/* The group's last parity RDATA copy that was owed: out of line, the other copies are many. */
static __attribute__((noinline)) void parity_repaired(
	struct cp *cp, const struct cp_packet *in, struct cp_session *s, uint32_t sid, uint32_t id)
{
	char text[12] = "";
	const char *arg[3] = {text};
	struct cp_repair *r = cp_repair_at(cp, id);
	struct cp_fsm x = {
		.s = s, .sid = sid, .id = id, .r = r, .sqn = r->sqn, .now = in->now, .arg = arg};

	if (cp_log_enabled(cp, CP_LOG_EVENT))
		snprintf(text, sizeof(text), "%u", in->pkt->sqn);
	cp_repair_fsm(cp, &x, CP_EV_PARITY_RDATA_REPAIRED);
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
	p = cp_parity_at(cp, cp_repair_parity_id(r));
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
	if ((r->if_mask & ~in_bit) == 0)
		parity_repaired(cp, in, s, sid, id);
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
	p = cp_parity_at(cp, cp_repair_parity_id(r));
	offset = tg_offset(s, tgs);
	if (p->largest > 0)
		p->largest--;
	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		struct cp_iface *ifp = cp->slot_if[slot];
		struct cp_action act;

		if (ifp == NULL || !owe_less(r, p, slot, offset))
			continue;
		cp_action_as_source(cp, &act, CP_ACT_RDATA, s, ifp);
		act.from_packet = true;
		act.packet = pkt;
		act.sqn = pkt->sqn;
		act.parity = true;
		cp_emit(cp, &act);
		cp_count(cp, ifp, s, CP_C_DLR_RDATA, 1);
		cp_count(cp, ifp, s, CP_C_PARITY_RDATA_FORWARDED, 1);
		cp_count_out(ifp, s, PGM_RDATA);
	}
	if (r->if_mask == 0) {
		struct cp_fsm x = {.s = s,
			.sid = r->session,
			.id = id,
			.r = r,
			.sqn = r->sqn,
			.now = in->now,
			.in_if = in_if};

		cp_repair_fsm(cp, &x, CP_EV_DLR_PARITY_REPAIRED);
	}
}
