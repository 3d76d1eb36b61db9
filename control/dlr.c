/*
 * The POLL child role (RFC 3208 14.5) and DLR discovery and redirection (9.5.3).
 *
 * Child role: POLLs from the TSI's upstream interface are matched against our RAND_NODE_ID under
 * POLL_MASK; a GENERAL poll schedules one POLR at a random time within POLL_BO_IVL, unicast to
 * POLL_PATH; a POLL with another POLL_SQN cancels it. POLLs are never forwarded (14.1).
 *
 * DLRs: an upstream DLR announces itself with a redirecting POLR multicast down the tree (the
 * data source's address, Router Alert) after the NCF our NAK provoked; off-tree DLRs answer our
 * POLLs of sub-type DLR with a unicast redirecting POLR. Later NAKs of the TSI go to the DLR,
 * the upstream one first; never to an off-tree DLR for an SQN NAKed on its own interface, nor
 * parity NAKs to a DLR without OPT_PARITY in its POLR. A DLR that does not confirm within
 * NAK_RPT_IVL is forgotten and the NAKs sent to it go upstream; an SQN the off-tree DLR NAKs
 * itself goes upstream. The off-tree DLR's NCFs and RDATA come unicast: the NCF is consumed, the
 * RDATA re-sourced (IP source = data source, destination = group, Router Alert) onto every
 * interface that asked for it. Those two and the redirect's timeout are rows of fsm.c's table,
 * their actions are here.
 */
#include <string.h>

#include "control/cp_internal.h"

#define PGM_POLL_GENERAL 0
#define PGM_POLL_DLR	 1

uint32_t cp_random32(struct cp *cp)
{
	uint64_t x = cp->rng;

	/* xorshift64*: fast, seedable, and good enough for back-off times and poll nonces */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	cp->rng = x;
	return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
}

struct cp_tnode *cp_polr_tnode(void *ctx, uint32_t id)
{
	/* only sessions with an ext are ever scheduled on the POLR wheel */
	return &cp_session_at(ctx, id)->ext->polr_timer;
}

static void session_udp_upstream(
	const struct cp_session *s, bool *udp, uint16_t *sport, uint16_t *dport)
{
	/* as our NAK repeats: the receivers' NAK encapsulation if seen, else the session's */
	*udp = false;
	*sport = *dport = 0;
	if ((s->flags & CP_SESSION_NAK_UDP) != 0) {
		*udp = true;
		*sport = s->nak_udp_sport;
		*dport = s->nak_udp_dport;
	} else if ((s->flags & CP_SESSION_UDP) != 0) {
		*udp = true;
		*sport = *dport = s->udp_dport;
	}
}

/* ---- the POLL child role (14.5) ---- */

static void polr_cancel(struct cp *cp, uint32_t sid, struct cp_session *s, const char *why)
{
	if (!cp_tnode_scheduled(&s->ext->polr_timer))
		return;
	cp_wheel_cancel(&cp->polr_wheel, sid);
	cp_count(cp, NULL, s, CP_C_POLR_CANCELLED, 1);
	cp_log_repair(cp, CP_LOG_EVENT, s, s->ext->poll_sqn, "POLR cancelled (%s)", why);
}

void cp_poll(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_session_ext *ext;
	struct cp_session *s;
	struct pgm_tsi tsi;
	uint64_t delay;
	uint32_t sid;

	out->verdict = CP_DROP; /* 14.1: network elements never forward POLLs */
	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_find(cp, &tsi, cp_packet_afi(in));
	if (sid == CP_NIL || in->in_ifindex != cp_session_at(cp, sid)->upstream_ifindex) {
		/* our parent polls down the tree; anything else is not our business */
		cp_count(cp, in_if, NULL, CP_C_POLL_NOT_UPSTREAM, 1);
		return;
	}
	s = cp_session_at(cp, sid);
	cp_count_in(NULL, s, PGM_POLL);
	if (!cp->cfg.poll_reply || (ext = cp_session_ext(s)) == NULL)
		return;
	if (ext->poll_seen && ext->poll_sqn == pkt->sqn && ext->poll_round == pkt->poll_round)
		return; /* another copy of the same POLL (forwarded copies, retransmission) */
	if (!ext->poll_seen || ext->poll_sqn != pkt->sqn) {
		/* a new poll aborts the old one, even one we do not match (14.4: abort) */
		polr_cancel(cp, sid, s, "new POLL_SQN");
		ext->poll_round0_seen = false;
	}
	ext->poll_seen = true;
	ext->poll_sqn = pkt->sqn;
	ext->poll_round = pkt->poll_round;
	if (pkt->poll_round == 0)
		ext->poll_round0_seen = true;
	if (((pkt->poll_rand ^ cp->node_id) & pkt->poll_mask) != 0) {
		cp_count(cp, in_if, s, CP_C_POLL_NO_MATCH, 1);
		return;
	}
	if (pkt->poll_round != 0 && !ext->poll_round0_seen) {
		cp_count(cp, in_if, s, CP_C_POLL_ROUND_UNSEEN, 1);
		return;
	}
	if (pkt->poll_s_type != PGM_POLL_GENERAL || pkt->path.afi == 0) {
		/* PGM_POLL_DLR: we are no DLR; unknown sub-types MUST NOT be answered */
		cp_count(cp, in_if, s, CP_C_POLL_NO_REPLY, 1);
		return;
	}
	ext->polr_dst = pkt->path;
	ext->polr_ifindex = in->in_ifindex;
	session_udp_upstream(s, &ext->polr_udp, &ext->polr_udp_sport, &ext->polr_udp_dport);
	/* a uniform time in [0, POLL_BO_IVL] */
	delay = ((uint64_t)cp_random32(cp) * ((uint64_t)pkt->poll_bo_ivl + 1)) >> 32;
	cp_wheel_schedule(&cp->polr_wheel, sid, in->now + delay);
	cp_count(cp, in_if, s, CP_C_POLR_SCHEDULED, 1);
	cp_log_repair(cp, CP_LOG_EVENT, s, pkt->sqn, "POLL round %u: POLR in %llu us",
		pkt->poll_round, (unsigned long long)delay);
}

void cp_polr_timer(struct cp *cp, uint32_t sid, cp_time_t now)
{
	struct cp_session *s = cp_session_at(cp, sid);
	struct cp_session_ext *ext = s->ext;
	struct cp_iface *ifp = cp_iface_find(cp, ext->polr_ifindex);
	struct cp_action act;

	(void)now;
	memset(&act, 0, sizeof(act));
	act.type = CP_ACT_POLR;
	act.ifindex = ext->polr_ifindex;
	act.ip_dst = ext->polr_dst; /* 14.5: to POLL_PATH, from our own address */
	act.udp = ext->polr_udp;
	act.udp_sport = ext->polr_udp_sport;
	act.udp_dport = ext->polr_udp_dport;
	act.tsi = s->tsi;
	act.data_dport = s->data_dport;
	act.sqn = ext->poll_sqn;
	act.poll_round = ext->poll_round;
	cp_emit(cp, &act);
	cp_count(cp, ifp, s, CP_C_POLR_SENT, 1);
	cp_count_out(ifp, s, PGM_POLR);
	cp_log_repair(cp, CP_LOG_TIMER, s, ext->poll_sqn, "POLR round %u sent", ext->poll_round);
}

/* ---- learning DLRs ---- */

static void dlr_learn(struct cp *cp, struct cp_session *s, struct cp_dlr *d, const char *kind,
	const struct cp_packet *in, struct cp_iface *in_if, enum cp_counter c)
{
	bool parity = pgm_packet_is_parity(in->pkt);
	char a[64];

	if (pgm_nla_equal(&d->addr, &in->pkt->opt.redirect) && d->ifindex == in->in_ifindex) {
		d->parity = parity;
		d->learned = in->now;
		return;
	}
	if (d->addr.afi != 0) {
		/* keep the DLR we use; another one is only a spare we do not track */
		cp_count(cp, in_if, s, CP_C_POLR_UNUSED, 1);
		return;
	}
	d->addr = in->pkt->opt.redirect;
	d->ifindex = in->in_ifindex;
	d->parity = parity;
	d->learned = in->now;
	cp_count(cp, in_if, s, c, 1);
	if (cp_log_enabled(cp, CP_LOG_EVENT)) {
		char tsi[24], ifname[CP_IFNAME_LEN + 8];

		cp_logf(cp, CP_LOG_EVENT, "tsi %s: %s DLR %s on %s learned%s",
			cp_session_label(s, tsi, sizeof(tsi)), kind,
			pgm_nla_format(&d->addr, a, sizeof(a)),
			cp_if_label(cp, d->ifindex, ifname, sizeof(ifname)),
			parity ? " (parity)" : "");
	}
}

void cp_polr(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	bool mcast = pgm_ip_dst_is_multicast(in->ip);
	struct cp_session_ext *ext;
	struct cp_session *s;
	struct pgm_tsi tsi;
	uint32_t sid;

	if (!mcast && (in->out_ifindex != 0 || !cp_is_local_address(cp, &in->ip->dst)))
		return; /* a POLR routed through us to someone else's poll */
	/* ours, or a redirecting POLR for the elements one hop below its DLR: consumed */
	out->verdict = CP_DROP;
	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_find(cp, &tsi, cp_packet_afi(in));
	if (sid == CP_NIL) {
		cp_count(cp, in_if, NULL, CP_C_POLR_UNUSED, 1);
		return;
	}
	s = cp_session_at(cp, sid);
	cp_count_in(NULL, s, PGM_POLR);
	if (!cp->cfg.dlr_redirect || !pgm_opt_has(&pkt->opt, PGM_OPT_REDIRECT) ||
		pkt->opt.redirect.afi == 0 || (ext = cp_session_ext(s)) == NULL) {
		cp_count(cp, in_if, s, CP_C_POLR_UNUSED, 1);
		return;
	}
	/* 9.5.2.1: an upstream DLR answers the NCF our parent sent on that link, multicast to the
	   group with the source's address (or, like NCFs made from OpenPGM receivers' NAKs, the
	   upstream neighbour's): the hosts below cannot redirect our NAKs */
	if (mcast && (in->in_ifindex != s->upstream_ifindex ||
			     !pgm_nla_equal(&in->ip->dst, &s->group) ||
			     (!pgm_nla_equal(&in->ip->src, &s->source) &&
				     !pgm_nla_equal(&in->ip->src, &s->upstream)))) {
		cp_count(cp, in_if, s, CP_C_POLR_NOT_UPSTREAM, 1);
		return;
	}
	if (!cp_nak_dest_usable(cp, &pkt->opt.redirect)) {
		/* NAKs go there: not to us, a group, loopback or nowhere (7.7, 10) */
		cp_count(cp, in_if, s, CP_C_DLR_BAD_ADDRESS, 1);
		return;
	}
	if (mcast) {
		dlr_learn(cp, s, &ext->up, "upstream", in, in_if, CP_C_DLR_UPSTREAM_LEARNED);
		return;
	}
	/* 9.5.2.2: an off-tree DLR answering our DLR poll, while that poll is open */
	if (ext->dlr_poll_sent == 0 || pkt->sqn != ext->dlr_poll_sqn ||
		in->now - ext->dlr_poll_sent > 2 * CP_MS(cp->cfg.dlr_poll_bo_ivl_ms) ||
		in->in_ifindex == s->upstream_ifindex) {
		cp_count(cp, in_if, s, CP_C_POLR_UNUSED, 1);
		return;
	}
	dlr_learn(cp, s, &ext->off, "off-tree", in, in_if, CP_C_DLR_OFFTREE_LEARNED);
}

/* 9.5.3.1: no DLR known for the TSI: poll the interfaces the TSI goes out on for off-tree ones. */
void cp_dlr_discover(struct cp *cp, struct cp_session *s, cp_time_t now)
{
	struct cp_session_ext *ext = s->ext;
	uint64_t mask = s->spm_copy_mask;
	bool sent = false;
	uint32_t sqn;

	if (!cp->cfg.dlr_redirect || !cp->cfg.dlr_discovery || mask == 0)
		return;
	if (ext != NULL && (ext->up.addr.afi != 0 || ext->off.addr.afi != 0))
		return; /* the upstream DLR is preferred anyway, and one off-tree DLR is enough */
	if (ext != NULL && ext->dlr_poll_sent != 0 &&
		now - ext->dlr_poll_sent < CP_MS(cp->cfg.dlr_poll_ivl_ms))
		return;
	if ((ext = cp_session_ext(s)) == NULL)
		return;
	sqn = ext->dlr_poll_sqn + 1;
	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		struct cp_iface *ifp = cp->slot_if[slot];
		struct cp_action act;

		if ((mask & ((uint64_t)1 << slot)) == 0 || ifp == NULL ||
			ifp->ifindex == s->upstream_ifindex || cp_if_addr_for(ifp, cp_session_afi(s), NULL)->afi == 0)
			continue;
		/* 14.4: the source's address, Router Alert, POLL_PATH = this interface */
		cp_action_as_source(cp, &act, CP_ACT_POLL, s, ifp);
		act.sqn = sqn;
		act.poll_s_type = PGM_POLL_DLR;
		act.path = *cp_if_addr_for(ifp, cp_session_afi(s), NULL);
		act.poll_bo_ivl_us = cp->cfg.dlr_poll_bo_ivl_ms * 1000u;
		act.poll_rand = cp_random32(cp);
		act.poll_mask = 0; /* deterministic: DLRs are few */
		cp_emit(cp, &act);
		cp_count(cp, ifp, s, CP_C_DLR_POLL_SENT, 1);
		cp_count_out(ifp, s, PGM_POLL);
		sent = true;
	}
	if (!sent)
		return;
	ext->dlr_poll_sqn = sqn;
	ext->dlr_poll_sent = now != 0 ? now : 1;
	cp_log_repair(cp, CP_LOG_EVENT, s, sqn, "POLL sub-type DLR sent (off-tree DLR discovery)");
}

/* ---- redirection ---- */

enum cp_nak_dest cp_nak_dest(struct cp *cp, struct cp_session *s, struct cp_repair *r)
{
	const struct cp_session_ext *ext = s->ext;
	bool parity = r != NULL && (r->flags & CP_REPAIR_PARITY) != 0;

	if (r != NULL)
		r->flags &= (uint8_t)~CP_REPAIR_DLR;
	if (!cp->cfg.dlr_redirect || ext == NULL || r == NULL || (r->flags & CP_REPAIR_NO_DLR) != 0)
		return CP_DEST_UPSTREAM;
	/* 9.5.3.2: upstream DLRs first; 9.5.3.1: parity only to DLRs that can send it */
	if (ext->up.addr.afi != 0 && (!parity || ext->up.parity)) {
		r->flags |= CP_REPAIR_DLR_UP;
		return CP_DEST_DLR_UP;
	}
	if (ext->off.addr.afi != 0 && (!parity || ext->off.parity)) {
		struct cp_iface *ifp = cp_iface_find(cp, ext->off.ifindex);

		if ((r->if_mask & cp_iface_bit(ifp)) != 0) {
			/* its own link lost it too: the DLR most likely lacks it */
			cp_count(cp, ifp, s, CP_C_DLR_OWN_INTERFACE, 1);
			return CP_DEST_UPSTREAM;
		}
		r->flags |= CP_REPAIR_DLR_OFF;
		return CP_DEST_DLR_OFF;
	}
	return CP_DEST_UPSTREAM;
}

bool cp_nak_dest_addr(
	const struct cp_session *s, enum cp_nak_dest dest, int *ifindex, struct pgm_nla *addr)
{
	const struct cp_dlr *d;

	if (dest == CP_DEST_UPSTREAM || s->ext == NULL) {
		*ifindex = s->upstream_ifindex;
		*addr = s->upstream;
		return true;
	}
	d = dest == CP_DEST_DLR_UP ? &s->ext->up : &s->ext->off;
	if (d->addr.afi == 0)
		return false;
	*ifindex = d->ifindex;
	*addr = d->addr;
	return true;
}

bool cp_from_offtree_dlr(const struct cp_session *s, const struct cp_packet *in)
{
	return s->ext != NULL && s->ext->off.addr.afi != 0 &&
	       in->in_ifindex == s->ext->off.ifindex &&
	       pgm_nla_equal(&in->ip->src, &s->ext->off.addr);
}

/*
 * Forget the TSI's DLR (flag CP_REPAIR_DLR_UP or _OFF): every NAK sent to it goes upstream,
 * with a fresh NAK_RPT_IVL; `send_now` queues the NAKs at once (only from cp_timers, which
 * flushes them).
 */
static void dlr_drop(struct cp *cp, uint32_t sid, uint8_t flag, cp_time_t now, bool send_now)
{
	struct cp_session *s = cp_session_at(cp, sid);
	struct cp_dlr *d = flag == CP_REPAIR_DLR_UP ? &s->ext->up : &s->ext->off;

	memset(d, 0, sizeof(*d));
	for (uint32_t next = s->repair_head; next != CP_NIL;) {
		uint32_t id = next;
		struct cp_repair *r = cp_repair_at(cp, id);

		next = r->sess_next;
		if ((r->flags & flag) == 0)
			continue;
		r->flags = (uint8_t)((r->flags & ~CP_REPAIR_DLR) | CP_REPAIR_NO_DLR);
		if (r->phase != CP_PHASE_PENDING)
			continue;
		cp_repair_start_pending(cp, r, s, now);
		if (send_now)
			cp_queue_repeat(cp, s, r);
		cp_repair_schedule(cp, id);
	}
}

static uint8_t dlr_flag(const struct cp_repair *r)
{
	return (r->flags & CP_REPAIR_DLR_UP) != 0 ? CP_REPAIR_DLR_UP : CP_REPAIR_DLR_OFF;
}

static const struct cp_dlr *dlr_of(const struct cp_session *s, uint8_t flag)
{
	return flag == CP_REPAIR_DLR_UP ? &s->ext->up : &s->ext->off;
}

const char *cp_dlr_name(
	const struct cp_session *s, const struct cp_repair *r, char *buf, size_t len)
{
	return pgm_nla_format(&dlr_of(s, dlr_flag(r))->addr, buf, len);
}

/* A redirected NAK ran out of NAK_RPT_IVL: the DLR never confirmed, its NAKs go upstream. */
bool cp_fsm_dlr_timeout(struct cp *cp, struct cp_fsm *x)
{
	uint8_t flag = dlr_flag(x->r);

	cp_count(cp, cp_iface_find(cp, dlr_of(x->s, flag)->ifindex), x->s, CP_C_DLR_TIMEOUT, 1);
	dlr_drop(cp, x->sid, flag, x->now, true);
	return true;
}

size_t cp_clear_dlrs(struct cp *cp, const struct pgm_nla *dlr)
{
	size_t n = 0;

	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t sid = cp_htab_head(&cp->session_tab, b); sid != CP_NIL;) {
			struct cp_session *s = cp_session_at(cp, sid);

			if (s->ext != NULL) {
				if (s->ext->up.addr.afi != 0 &&
					(dlr == NULL || pgm_nla_equal(&s->ext->up.addr, dlr))) {
					dlr_drop(cp, sid, CP_REPAIR_DLR_UP, cp->latest, false);
					n++;
				}
				if (s->ext->off.addr.afi != 0 &&
					(dlr == NULL || pgm_nla_equal(&s->ext->off.addr, dlr))) {
					dlr_drop(cp, sid, CP_REPAIR_DLR_OFF, cp->latest, false);
					n++;
				}
			}
			sid = s->hash_next;
		}
	}
	cp_count(cp, NULL, NULL, CP_C_DLR_CLEARED, n);
	return n;
}

/* ---- the off-tree DLR's unicast NCFs and RDATA (9.5.3.2) ---- */

static uint32_t state_for(struct cp *cp, uint32_t sid, const struct cp_session *s,
	const struct pgm_packet *pkt, uint32_t sqn)
{
	uint32_t tgs;

	if (!pgm_packet_is_parity(pkt))
		return cp_repair_find(cp, sid, sqn);
	tgs = cp_parity_tgs(s);
	return tgs != 0 ? cp_parity_find(cp, sid, sqn & ~(tgs - 1)) : CP_NIL;
}

void cp_offtree_dlr(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	struct cp_session *s;
	struct pgm_tsi tsi;
	struct cp_fsm x;
	uint32_t sid;
	unsigned n;

	out->verdict = CP_DROP;
	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_find(cp, &tsi, cp_packet_afi(in));
	s = cp_session_at(cp, sid); /* the callers found it */
	if (!cp_from_offtree_dlr(s, in)) {
		/* not from the DLR we asked: nothing of ours */
		cp_count(cp, in_if, s, CP_C_OFFTREE_DLR, 1);
		return;
	}
	x = (struct cp_fsm){.s = s, .sid = sid, .now = in->now, .in_if = in_if};
	if (pkt->type == PGM_NCF) {
		n = cp_packet_sqns(pkt, sqns);
		for (unsigned i = 0; i < n; i++) {
			cp_fsm_state(cp, &x, state_for(cp, sid, s, pkt, sqns[i]));
			x.sqn = sqns[i];
			/* only what we asked it for */
			if (x.r != NULL && (x.r->flags & CP_REPAIR_DLR_OFF) != 0)
				cp_repair_fsm(cp, &x, CP_EV_DLR_NCF);
		}
		return;
	}
	if (pgm_packet_is_parity(pkt)) {
		cp_parity_offtree_rdata(cp, in, in_if, s);
		return;
	}
	cp_fsm_state(cp, &x, cp_repair_find_live(cp, sid, pkt->sqn, in->now));
	if (x.r == NULL) {
		cp_count(cp, in_if, s, CP_C_RDATA_NO_STATE, 1);
		return;
	}
	x.sqn = pkt->sqn;
	x.run = &pkt;
	cp_repair_fsm(cp, &x, CP_EV_DLR_RDATA);
}

/* It keeps the DLR flag: RDATA and its NNAK are still to come from it. */
bool cp_fsm_dlr_confirm(struct cp *cp, struct cp_fsm *x)
{
	cp_repair_confirm(cp, x->r, x->s, x->now);
	cp_repair_schedule(cp, x->id);
	cp_count(cp, x->in_if, x->s, CP_C_DLR_NCF, 1);
	return true;
}

/* 9.5.3.2: re-sourced as if from the source, down the subtree, interceptable, onto every
 * interface still waiting for it; that ends the state. */
bool cp_fsm_dlr_rdata(struct cp *cp, struct cp_fsm *x)
{
	uint64_t waiting = x->r->if_mask & ~x->r->repaired_mask;

	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		struct cp_iface *ifp = cp->slot_if[slot];
		struct cp_action act;

		if ((waiting & ((uint64_t)1 << slot)) == 0 || ifp == NULL)
			continue;
		cp_action_as_source(cp, &act, CP_ACT_RDATA, x->s, ifp);
		act.from_packet = true;
		act.packet = *(const struct pgm_packet *const *)x->run; /* the DLR's RDATA */
		act.sqn = x->sqn;
		cp_emit(cp, &act);
		cp_count(cp, ifp, x->s, CP_C_DLR_RDATA, 1);
		cp_count(cp, ifp, x->s, CP_C_RDATA_FORWARDED, 1);
		cp_count_out(ifp, x->s, PGM_RDATA);
	}
	cp_repair_delete(cp, x->id, CP_C_REPAIR_COMPLETED);
	return true;
}
