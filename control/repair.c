/*
 * Repair state per (TSI, SQN) and its timers (RFC 3208 7.2-7.5, 7.8).
 *
 *   PENDING      a NAK went upstream; repeated every 1/NAK_RPT_RTE until an NCF confirms it or
 *                NAK_RPT_IVL runs out (the state is then deleted: nak-retry-expired).
 *   OUTSTANDING  confirmed (or anticipated from an unsolicited NCF): duplicates are discarded
 *                while NAK_ELIM_IVL runs; the state waits NAK_RDATA_IVL for the RDATA.
 *   FORWARDING   the RDATA arrived; copies go to the listed interfaces, and the state is deleted
 *                when each had its copy (or kept for the crossing window, below), or when
 *                rdata_linger runs out.
 *
 * The state machine in fsm.c adds three phases: NONE, no state; NNAK, OUTSTANDING state an
 * NNAK created, which eliminates no NAK and lives NAK_ELIM_IVL (9.5.3.2); and REPAIRED,
 * FORWARDING state whose every interface had its copy, kept for the crossing window
 * (nak-crossing-interval): it forwards nothing more (7.8) and eliminates only the NAKs that
 * crossed the repair on the wire (nak.c), then goes. Its table's rows are
 * the only transitions, and the only place that sets a state's phase; the timers' actions are
 * here. Each state has one timer node in the wheel, armed at the earliest of its deadlines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

/* Buckets at rest (at least 16: a block's SQNs take consecutive ones). The table doubles as it
   fills; kept small, the walks over it (shows, statistics, checks) cost nothing when idle. */
#define CP_REPAIR_BUCKETS_MIN 64

/* Session ids stay below 2^31 (CP_POOL_MAX_ID): bit 63 keys parity state apart. */
static inline uint64_t repair_word(uint32_t session, uint32_t sqn, bool parity)
{
	return (uint64_t)session << 32 | (uint64_t)parity << 63 | sqn;
}

/*
 * The keyed hash of an SQN block, remembered for the last block asked: a NAK that finds no state
 * and the state it then creates, the SQNs of one NAK list, the NCF and RDATA of a burst and the
 * expiry of its states each hash a block once, not once per lookup. The memo changes no hash.
 */
static uint64_t repair_block_hash(struct cp *cp, uint64_t word)
{
	if (!cp->repair_memo.valid || cp->repair_memo.word != word) {
		cp->repair_memo.word = word;
		cp->repair_memo.hash = cp_hash64(&cp->hash_key, word);
		cp->repair_memo.valid = true;
	}
	return cp->repair_memo.hash;
}

/*
 * The bucket of a state: the keyed hash of its TSI and SQN block (SQN / 16), with the SQN's
 * place in the block as the lowest bits. Consecutive SQNs of a TSI land in consecutive buckets,
 * so a loss burst's NAKs, the NCFs confirming them and the RDATA repairing them touch one cache
 * line of buckets per 16 SQNs, not one each (under a NAK flood, a table of 60,000 states missed
 * the caches on nearly every lookup). Which blocks collide stays as unpredictable as before.
 */
static inline uint64_t repair_key_hash(struct cp *cp, uint32_t session, uint32_t sqn, bool parity)
{
	return repair_block_hash(cp, repair_word(session, sqn >> 4, parity)) << 4 | (sqn & 15);
}

static uint32_t *repair_link(void *ctx, uint32_t id)
{
	return &cp_repair_at(ctx, id)->hash_next;
}

static uint64_t repair_hash(void *ctx, uint32_t id)
{
	struct cp *cp = ctx;
	const struct cp_repair *r = cp_repair_at(cp, id);

	return repair_key_hash(cp, r->session, r->sqn, (r->flags & CP_REPAIR_PARITY) != 0);
}

static struct cp_tnode *repair_tnode(void *ctx, uint32_t id)
{
	return &cp_repair_at(ctx, id)->timer;
}

void cp_repairs_init(struct cp *cp)
{
	cp_pool_init(&cp->repairs, sizeof(struct cp_repair), offsetof(struct cp_repair, hash_next));
	cp_htab_init(&cp->repair_tab, CP_REPAIR_BUCKETS_MIN);
	cp->last_repair = CP_NIL;
	cp_wheel_init(&cp->repair_wheel, repair_tnode, cp);
	cp_pool_init(&cp->parities, sizeof(struct cp_parity), offsetof(struct cp_parity, link));
	cp_fsm_init(cp);
}

void cp_repairs_free(struct cp *cp)
{
	cp_pool_destroy(&cp->parities);
	cp_pool_destroy(&cp->repairs);
	cp_htab_destroy(&cp->repair_tab);
}

void cp_log_repair(struct cp *cp, enum cp_log_kind kind, const struct cp_session *s, uint32_t sqn,
	const char *fmt, ...)
{
	char tsi[24], msg[400];
	va_list ap;

	if (!cp_log_enabled(cp, kind))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	cp_logf(cp, kind, "tsi %s sqn %u: %s", cp_session_label(s, tsi, sizeof(tsi)), sqn, msg);
}

static uint32_t repair_find(struct cp *cp, uint32_t session, uint32_t sqn, bool parity)
{
	uint64_t h = repair_key_hash(cp, session, sqn, parity);
	uint8_t want = parity ? CP_REPAIR_PARITY : 0;

	for (uint32_t id = cp_htab_first(&cp->repair_tab, h); id != CP_NIL;) {
		const struct cp_repair *r = cp_repair_at(cp, id);

		if (r->sqn == sqn && r->session == session && (r->flags & CP_REPAIR_PARITY) == want)
			return id;
		id = r->hash_next;
	}
	return CP_NIL;
}

uint32_t cp_repair_find(struct cp *cp, uint32_t session, uint32_t sqn)
{
	return repair_find(cp, session, sqn, false);
}

uint32_t cp_parity_find(struct cp *cp, uint32_t session, uint32_t tg_sqn)
{
	return repair_find(cp, session, tg_sqn, true);
}

uint32_t cp_repair_create_kind(struct cp *cp, uint32_t session, uint32_t sqn, cp_time_t now,
	bool parity, struct cp_iface *in_if, bool nak)
{
	struct cp_session *s = cp_session_at(cp, session);
	struct cp_htab_ops ops = {repair_link, repair_hash, cp};
	unsigned owner = in_if != NULL && in_if->slot >= 0 ? (unsigned)in_if->slot : CP_OWNER_NONE;
	struct cp_repair *r;
	uint32_t id, pid = CP_NIL;

	if (!cp_repair_room(cp, session, in_if, owner, nak))
		return CP_NIL;
	if (parity && (pid = cp_pool_alloc(&cp->parities)) == CP_NIL) {
		cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
		return CP_NIL;
	}
	id = cp_pool_alloc(&cp->repairs);
	if (id == CP_NIL) {
		if (pid != CP_NIL)
			cp_pool_free(&cp->parities, pid);
		cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
		return CP_NIL;
	}
	r = cp_repair_at(cp, id);
	r->session = session;
	r->sqn = sqn;
	r->created = now;
	r->owner = (uint8_t)owner;
	cp_repair_listed(cp, id, nak);
	if (parity) {
		cp_repair_set_parity_id(r, pid);
	}
	cp_tnode_init(&r->timer);
	r->sess_prev = CP_NIL;
	r->sess_next = s->repair_head;
	if (s->repair_head != CP_NIL)
		cp_repair_at(cp, s->repair_head)->sess_prev = id;
	else
		s->repair_tail = id;
	s->repair_head = id;
	s->repair_count++;
	cp_htab_insert(&cp->repair_tab, &ops, id, repair_hash(cp, id));
	return id;
}

void cp_repair_delete(struct cp *cp, uint32_t id, enum cp_counter why)
{
	struct cp_repair *r = cp_repair_at(cp, id);
	struct cp_session *s = cp_session_at(cp, r->session);
	struct cp_htab_ops ops = {repair_link, repair_hash, cp};

	if (why != CP_C_COUNT)
		cp_count(cp, NULL, s, why, 1);
	if (cp->last_repair == id)
		cp->last_repair = CP_NIL;
	if (r->sess_prev != CP_NIL)
		cp_repair_at(cp, r->sess_prev)->sess_next = r->sess_next;
	else
		s->repair_head = r->sess_next;
	if (r->sess_next != CP_NIL)
		cp_repair_at(cp, r->sess_next)->sess_prev = r->sess_prev;
	else
		s->repair_tail = r->sess_prev;
	s->repair_count--;
	cp_repair_unlisted(cp, id);
	cp_htab_remove(&cp->repair_tab, &ops, id, repair_hash(cp, id));
	cp_wheel_cancel(&cp->repair_wheel, id);
	if ((r->flags & CP_REPAIR_PARITY) != 0)
		cp_pool_free(&cp->parities, cp_repair_parity_id(r));
	cp_pool_free(&cp->repairs, id);
	if (cp->repair_tab.count == 0 && cp->repair_tab.mask + 1 > CP_REPAIR_BUCKETS_MIN) {
		/* the storm is over: give the buckets back too (the pool already did) */
		struct cp_htab small;

		if (cp_htab_init(&small, CP_REPAIR_BUCKETS_MIN) == 0) {
			cp_htab_destroy(&cp->repair_tab);
			cp->repair_tab = small;
		}
	}
}

static inline cp_time_t earlier(cp_time_t a, cp_time_t b)
{
	if (a == 0)
		return b;
	if (b == 0)
		return a;
	return a < b ? a : b;
}

/* Every phase has an end (rpt_end, rdata_end, or elim_end for NNAK state), so d is never 0. */
void cp_repair_schedule(struct cp *cp, uint32_t id)
{
	struct cp_repair *r = cp_repair_at(cp, id);
	cp_time_t d = earlier(earlier(r->rpt_next, r->rpt_end), earlier(r->rdata_end, r->elim_end));

	if (!cp_tnode_scheduled(&r->timer) || r->timer.deadline != d)
		cp_wheel_schedule(&cp->repair_wheel, id, d);
}

static cp_time_t repeat_period(const struct cp_if_config *cfg)
{
	return cfg->nak_rpt_rate != 0 ? CP_SEC(1) / cfg->nak_rpt_rate : 0;
}

/* A NAK was just forwarded upstream: repeat it until confirmed or NAK_RPT_IVL runs out. These
 * are PENDING's timers; the phase is the machine's to set (fsm.c). */
void cp_repair_start_pending(
	struct cp *cp, struct cp_repair *r, const struct cp_session *s, cp_time_t now)
{
	const struct cp_if_config *cfg = cp_repair_config(cp, s);
	cp_time_t period = repeat_period(cfg);

	r->flags &= (uint8_t) ~(CP_REPAIR_ANTICIPATED | CP_REPAIR_NNAK | CP_REPAIR_HELD);
	r->rpt_end = cp_deadline(now, cfg->nak_rpt_ivl_ms);
	r->rpt_next = period != 0 && now + period < r->rpt_end ? now + period : 0;
	/* 7.8: NAK_RDATA_IVL counts from the most recent forwarding; the next NCF restarts it */
	r->rdata_end = 0;
	r->elim_end = 0;
}

/* A matching NCF (or an unsolicited one): (re)start NAK_RDATA_IVL and NAK_ELIM_IVL (7.4, 7.5),
 * OUTSTANDING's timers. */
void cp_repair_confirm(
	struct cp *cp, struct cp_repair *r, const struct cp_session *s, cp_time_t now)
{
	const struct cp_if_config *cfg = cp_repair_config(cp, s);

	r->flags &= (uint8_t) ~(CP_REPAIR_NNAK | CP_REPAIR_HELD);
	r->rpt_next = r->rpt_end = 0;
	r->rdata_end = cp_deadline(now, cfg->nak_rdata_ivl_ms);
	r->elim_end = cfg->nak_elim_ivl_ms != 0 ? cp_deadline(now, cfg->nak_elim_ivl_ms) : 0;
}

uint32_t cp_crossing_ms(const struct cp *cp, const struct cp_session *s)
{
	const struct cp_if_config *cfg = cp_repair_config(cp, s);

	return cfg->nak_cross_ivl_ms < cfg->nak_elim_ivl_ms ? cfg->nak_cross_ivl_ms
							    : cfg->nak_elim_ivl_ms;
}

/* Would a duplicate NAK arriving now be discarded (7.4)? NNAK state never eliminates (9.5.3.2). */
bool cp_repair_eliminating(const struct cp_repair *r, cp_time_t now)
{
	if ((r->flags & CP_REPAIR_NNAK) != 0)
		return false;
	switch (r->phase) {
	case CP_PHASE_PENDING:
		return true;
	case CP_PHASE_OUTSTANDING:
		return r->elim_end != 0 && now < r->elim_end;
	default:
		return false;
	}
}

/*
 * The event of the deadline that ends the state by `now`, or CP_EV_COUNT while it lives. What a
 * deadline means depends on the phase: rdata_end is NAK_RDATA_IVL in OUTSTANDING and the linger
 * in FORWARDING.
 */
static enum cp_repair_event repair_over(const struct cp_repair *r, cp_time_t now)
{
	switch (r->phase) {
	case CP_PHASE_PENDING:
		/* a redirected NAK is not over at NAK_RPT_IVL: it goes upstream (DLR_TIMEOUT) */
		if (r->rpt_end != 0 && r->rpt_end <= now && (r->flags & CP_REPAIR_DLR) == 0)
			return CP_EV_NAK_RPT_IVL;
		break;
	case CP_PHASE_OUTSTANDING:
		if ((r->flags & CP_REPAIR_NNAK) != 0) {
			/* 9.5.3.2: state created by an NNAK exists only for NAK_ELIM_IVL */
			if (r->elim_end <= now)
				return CP_EV_NAK_ELIM_IVL;
		} else if (r->rdata_end != 0 && r->rdata_end <= now) {
			return CP_EV_NAK_RDATA_IVL;
		}
		break;
	case CP_PHASE_FORWARDING:
		/* rdata_end: the linger, or once every interface is repaired the crossing window */
		if (r->rdata_end <= now)
			return (r->flags & CP_REPAIR_HELD) != 0 ? CP_EV_CROSSING_OVER
								: CP_EV_LINGER;
		break;
	}
	return CP_EV_COUNT;
}

/* A timer event of state id. Out of line: the packet paths look states up for every packet,
 * and find them over only now and then. */
static __attribute__((noinline)) const struct cp_fsm_row *repair_timer_event(
	struct cp *cp, uint32_t id, cp_time_t now, enum cp_repair_event ev, const char *const *arg)
{
	struct cp_repair *r = cp_repair_at(cp, id);
	struct cp_fsm x = {
		.s = cp_session_at(cp, r->session),
		.sid = r->session,
		.id = id,
		.r = r,
		.sqn = r->sqn,
		.now = now,
		.arg = arg,
	};

	return cp_repair_fsm(cp, &x, ev);
}

uint32_t cp_repair_live(struct cp *cp, uint32_t id, cp_time_t now)
{
	enum cp_repair_event ev;

	if (id == CP_NIL)
		return CP_NIL;
	ev = repair_over(cp_repair_at(cp, id), now);
	if (ev == CP_EV_COUNT || repair_timer_event(cp, id, now, ev, NULL) == NULL)
		return id;
	return CP_NIL;
}

uint32_t cp_repair_find_live(struct cp *cp, uint32_t session, uint32_t sqn, cp_time_t now)
{
	uint32_t id = cp->last_repair;
	const struct cp_repair *r;
	enum cp_repair_event ev;

	/* the last hit is never parity state: cp_repair_find() does not find that */
	if (id == CP_NIL || (r = cp_repair_at(cp, id))->sqn != sqn || r->session != session) {
		id = cp_repair_find(cp, session, sqn);
		if (id == CP_NIL)
			return CP_NIL;
		cp->last_repair = id;
	}
	ev = repair_over(cp_repair_at(cp, id), now);
	if (ev == CP_EV_COUNT || repair_timer_event(cp, id, now, ev, NULL) == NULL)
		return id;
	return CP_NIL;
}

void cp_queue_repeat(struct cp *cp, struct cp_session *s, struct cp_repair *r)
{
	uint8_t dest, parity = (r->flags & CP_REPAIR_PARITY) != 0;
	uint32_t sqn = r->sqn;

	if ((s->flags & CP_SESSION_SUSPENDED) != 0) {
		cp_count(cp, NULL, s, CP_C_NAK_SUSPENDED, 1);
		return;
	}
	/* repeats go where the NAK went; a DLR dropped meanwhile leaves them upstream */
	dest = CP_DEST_UPSTREAM;
	if ((r->flags & CP_REPAIR_DLR_UP) != 0 && s->ext != NULL && s->ext->up.addr.afi != 0)
		dest = CP_DEST_DLR_UP;
	else if ((r->flags & CP_REPAIR_DLR_OFF) != 0 && s->ext != NULL && s->ext->off.addr.afi != 0)
		dest = CP_DEST_DLR_OFF;
	else
		r->flags &= (uint8_t)~CP_REPAIR_DLR;
	if (parity) {
		/* 11.6: the largest known count, 0-based on the wire */
		uint32_t tgs = cp_parity_tgs(s);
		uint8_t largest = cp_parity_at(cp, cp_repair_parity_id(r))->largest;

		if (tgs == 0 || largest == 0)
			return;
		sqn |= (uint32_t)(largest - 1) & (tgs - 1);
	}
	if (cp->repeat_count == cp->repeat_cap) {
		size_t cap = cp->repeat_cap ? 2 * cp->repeat_cap : 256;
		struct cp_repeat *rep = realloc(cp->repeats, cap * sizeof(*rep));

		if (rep == NULL)
			return; /* this repeat is lost; the next one is scheduled regardless */
		cp->repeats = rep;
		cp->repeat_cap = cap;
	}
	cp->repeats[cp->repeat_count++] = (struct cp_repeat){
		.session = r->session,
		.sqn = sqn,
		.order = sqn - s->trail,
		.dest = dest,
		.parity = parity,
	};
}

bool cp_fsm_nak_repeat(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;
	cp_time_t period = repeat_period(cp_repair_config(cp, x->s));

	cp_queue_repeat(cp, x->s, r);
	r->rpt_next = period != 0 ? r->rpt_next + period : 0;
	if (r->rpt_next != 0 && r->rpt_next <= x->now)
		r->rpt_next =
			x->now + period; /* timers ran late: keep the rate, skip the backlog */
	if (r->rpt_next >= r->rpt_end)
		r->rpt_next = 0;
	return true;
}

/* 7.4: duplicate NAKs go upstream again from now on */
bool cp_fsm_elimination_over(struct cp *cp, struct cp_fsm *x)
{
	(void)cp;
	x->r->elim_end = 0;
	return true;
}

bool cp_fsm_retry_expired(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_delete(cp, x->id, CP_C_NAK_RETRY_EXPIRED);
	return true;
}

bool cp_fsm_repair_expired(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_delete(cp, x->id, CP_C_REPAIR_EXPIRED);
	return true;
}

bool cp_fsm_linger_expired(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_delete(cp, x->id, CP_C_REPAIR_LINGER_EXPIRED);
	return true;
}

bool cp_fsm_repair_completed(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_delete(cp, x->id, CP_C_REPAIR_COMPLETED);
	return true;
}

/* Every interface had its copy: the repair is complete (counted now), and the state stays for
 * the crossing window, forwarding nothing more (7.8), to know the NAKs that crossed it. */
bool cp_fsm_repair_held(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	cp_count(cp, NULL, x->s, CP_C_REPAIR_COMPLETED, 1);
	r->flags |= CP_REPAIR_HELD;
	r->rpt_next = r->rpt_end = r->elim_end = 0;
	r->rdata_end = cp_deadline(x->now, cp_crossing_ms(cp, x->s));
	cp_repair_schedule(cp, x->id);
	return true;
}

/* The crossing window is over: the repair was counted when it completed. */
bool cp_fsm_crossing_over(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_delete(cp, x->id, CP_C_COUNT);
	return true;
}

/*
 * The state's timer ran: the events of the deadlines that passed, each a row of the table. A
 * deadline that ends the state comes first; the others can pass together.
 */
void cp_repair_timer(struct cp *cp, uint32_t id, cp_time_t now)
{
	struct cp_repair *r = cp_repair_at(cp, id);
	enum cp_repair_event ev = repair_over(r, now);

	if (ev != CP_EV_COUNT) {
		repair_timer_event(cp, id, now, ev, NULL);
		return;
	}
	if (r->phase == CP_PHASE_PENDING && (r->flags & CP_REPAIR_DLR) != 0 && r->rpt_end != 0 &&
		r->rpt_end <= now) {
		char dlr[64];
		const char *arg[3] = {
			cp_dlr_name(cp_session_at(cp, r->session), r, dlr, sizeof(dlr))};

		/* the DLR never confirmed: dropped for the whole TSI, its NAKs restart upstream */
		repair_timer_event(cp, id, now, CP_EV_DLR_TIMEOUT, arg);
		return;
	}
	if (r->phase == CP_PHASE_OUTSTANDING && r->elim_end != 0 && r->elim_end <= now)
		repair_timer_event(cp, id, now, CP_EV_NAK_ELIM_IVL, NULL);
	if (r->phase == CP_PHASE_PENDING && r->rpt_next != 0 && r->rpt_next <= now)
		repair_timer_event(cp, id, now, CP_EV_NAK_RPT_RTE, NULL);
	cp_repair_schedule(cp, id);
}

static int repeat_cmp(const void *a, const void *b)
{
	const struct cp_repeat *x = a, *y = b;

	if (x->session != y->session)
		return x->session < y->session ? -1 : 1;
	if (x->parity != y->parity)
		return x->parity < y->parity ? -1 : 1;
	if (x->dest != y->dest)
		return x->dest < y->dest ? -1 : 1;
	if (x->order != y->order)
		return x->order < y->order ? -1 : 1;
	return 0;
}

static void send_repeat(
	struct cp *cp, struct cp_session *s, const struct cp_repeat *rep, unsigned n)
{
	struct cp_iface *up;
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = CP_ACT_NAK;
	if (!cp_nak_dest_addr(s, (enum cp_nak_dest)rep[0].dest, &act.ifindex, &act.ip_dst))
		return;
	up = cp_iface_find(cp, act.ifindex);
	act.parity = rep[0].parity != 0;
	act.tsi = s->tsi;
	act.data_dport = s->data_dport;
	act.sqn = rep[0].sqn;
	act.list_count = n - 1;
	for (unsigned i = 1; i < n; i++)
		act.list[i - 1] = rep[i].sqn;
	act.nak_src = s->source;
	act.nak_grp = s->group;
	if ((s->flags & CP_SESSION_NAK_UDP) != 0) {
		act.udp = true;
		act.udp_sport = s->nak_udp_sport;
		act.udp_dport = s->nak_udp_dport;
	} else if ((s->flags & CP_SESSION_UDP) != 0) {
		act.udp = true;
		act.udp_sport = s->udp_dport;
		act.udp_dport = s->udp_dport;
	}
	cp_emit(cp, &act);
	cp_count(cp, up, s, CP_C_NAK_RETRANSMITTED, n);
	if (rep[0].dest != CP_DEST_UPSTREAM)
		cp_count(cp, up, s, CP_C_NAK_REDIRECTED, 1);
	cp_count_out(up, s, PGM_NAK);
}

/*
 * The NAKs due in this cp_timers run, grouped per TSI into NAK lists (9.3): header SQN plus up
 * to 62, in sequence order. A list never wraps numerically, so strict parsers accept it.
 */
void cp_repairs_flush_repeats(struct cp *cp)
{
	size_t i = 0, used = cp->repeat_count;

	if (used != 0)
		qsort(cp->repeats, used, sizeof(*cp->repeats), repeat_cmp);
	while (i < cp->repeat_count) {
		struct cp_session *s = cp_session_at(cp, cp->repeats[i].session);
		unsigned n = 1;

		while (i + n < cp->repeat_count && n < 1 + PGM_MAX_NAK_LIST &&
			cp->repeats[i + n].session == cp->repeats[i].session &&
			cp->repeats[i + n].parity == cp->repeats[i].parity &&
			cp->repeats[i + n].dest == cp->repeats[i].dest &&
			cp->repeats[i + n].sqn > cp->repeats[i + n - 1].sqn)
			n++;
		send_repeat(cp, s, &cp->repeats[i], n);
		i += n;
	}
	cp->repeat_count = 0;
	/*
	 * A burst of repeats is over: keep the steady-state buffer small. A burst may span several
	 * runs, the timer wheel moving a bounded number of timers per run (cp_internal.h): its
	 * buffer goes too once a run uses less than a quarter of it.
	 */
	if (cp->repeat_cap > 4096 || (cp->repeat_cap > 256 && used < cp->repeat_cap / 4)) {
		free(cp->repeats);
		cp->repeats = NULL;
		cp->repeat_cap = 0;
	}
}

/* An interface lost its slot: it no longer requests anything. */
void cp_repairs_drop_slot(struct cp *cp, int slot)
{
	uint64_t keep = ~((uint64_t)1 << slot);

	cp_limits_drop_slot(cp, slot);
	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t sid = cp_htab_head(&cp->session_tab, b); sid != CP_NIL;) {
			struct cp_session *s = cp_session_at(cp, sid);

			s->spm_copy_mask &= keep;
			if (s->ext != NULL) /* the next holder of the slot has not failed (15.3) */
				s->ext->unreach_mask &= keep;
			for (uint32_t id = s->repair_head; id != CP_NIL;) {
				struct cp_repair *r = cp_repair_at(cp, id);

				r->if_mask &= keep;
				r->repaired_mask &= keep;
				if (r->dup_slot == slot)
					r->dup_count = 0;
				if ((r->flags & CP_REPAIR_PARITY) != 0)
					cp_parity_at(cp, cp_repair_parity_id(r))->count[slot] = 0;
				else
					cp_repair_ncf(r)->mask &= keep;
				if (r->owner == slot)
					r->owner = CP_OWNER_NONE;
				id = r->sess_next;
			}
			sid = s->hash_next;
		}
	}
}

void cp_repair_kind_broken(const struct cp_repair *r, const char *what)
{
	fprintf(stderr, "pgmrouter control plane: %s (repair state sqn %u, flags %#x)\n", what,
		r->sqn, r->flags);
	abort();
}

size_t cp_session_clear_repairs(struct cp *cp, uint32_t session, enum cp_counter why)
{
	size_t n = 0;

	while (cp_session_at(cp, session)->repair_head != CP_NIL) {
		cp_repair_delete(cp, cp_session_at(cp, session)->repair_head, why);
		n++;
	}
	return n;
}
