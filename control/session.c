/*
 * Per-TSI source-path state and SPM processing (RFC 3208 7.1, 3.5, 8.1).
 *
 * A session is created by the first SPM of a TSI (GSI, SPORT). Each in-sequence SPM records the
 * upstream PGM neighbour (SPM_PATH), the upstream interface (where the SPM arrived), the
 * transmit window and the source and group from the IP header. The data plane hands over one
 * copy of each SPM per egress interface (router/assist/packet.c makes the copies from the
 * kernel's multicast route): the first copy updates the state, and every copy is forwarded
 * with SPM_PATH set to its egress interface's address.
 *
 * Identity (7.1, 10): the TSI is visible in every ODATA, so it names a session but does not
 * prove one. The first SPM pins the session's source and group, and its upstream interface
 * moves only to the incoming interface of the (S,G) route the data plane mirrors (a route
 * change), or without route information after CP_SPM_SILENCE_S without SPMs. SPMs from
 * elsewhere are dropped and counted and leave the state as it was, so they never make the
 * source's own SPMs out of sequence. An SPM whose path NLA cannot take NAKs is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

static uint64_t tsi_word(const struct pgm_tsi *tsi)
{
	uint64_t w = 0;

	for (unsigned i = 0; i < PGM_GSI_LEN; i++)
		w = w << 8 | tsi->gsi[i];
	return w << 16 | tsi->sport;
}

static uint32_t *session_link(void *ctx, uint32_t id)
{
	return &cp_session_at(ctx, id)->hash_next;
}

static uint64_t session_hash(void *ctx, uint32_t id)
{
	struct cp *cp = ctx;

	return cp_hash64(&cp->hash_key, cp_session_at(cp, id)->tsi_key);
}

static struct cp_tnode *session_tnode(void *ctx, uint32_t id)
{
	return &cp_session_at(ctx, id)->timer;
}

static struct cp_htab_ops session_ops(struct cp *cp)
{
	return (struct cp_htab_ops){.link = session_link, .hash = session_hash, .ctx = cp};
}

void cp_sessions_init(struct cp *cp)
{
	cp_pool_init(
		&cp->sessions, sizeof(struct cp_session), offsetof(struct cp_session, hash_next));
	cp_htab_init(&cp->session_tab, 64); /* doubles as it fills */
	cp->last_session = CP_NIL;
	cp_wheel_init(&cp->session_wheel, session_tnode, cp);
}

void cp_sessions_free(struct cp *cp)
{
	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t id = cp_htab_head(&cp->session_tab, b); id != CP_NIL;) {
			struct cp_session *s = cp_session_at(cp, id);

			free(s->ext);
			id = s->hash_next;
		}
	}
	cp_pool_destroy(&cp->sessions);
	cp_htab_destroy(&cp->session_tab);
}

char *cp_session_label(const struct cp_session *s, char *buf, size_t len)
{
	return pgm_tsi_format(&s->tsi, buf, len);
}

/* An IPv4 and an IPv6 session of the same TSI share a bucket: the family tells them apart. */
uint32_t cp_session_find(const struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi)
{
	uint64_t key = tsi_word(tsi);
	uint64_t h = cp_hash64(&cp->hash_key, key);

	for (uint32_t id = cp_htab_first(&cp->session_tab, h); id != CP_NIL;) {
		const struct cp_session *s = cp_session_at(cp, id);

		if (s->tsi_key == key && cp_session_afi(s) == afi)
			return id;
		id = s->hash_next;
	}
	return CP_NIL;
}

uint32_t cp_session_lookup(struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi)
{
	uint32_t id = cp->last_session;

	if (id != CP_NIL && cp_session_at(cp, id)->tsi_key == tsi_word(tsi) &&
		cp_session_afi(cp_session_at(cp, id)) == afi)
		return id;
	id = cp_session_find(cp, tsi, afi);
	if (id != CP_NIL)
		cp->last_session = id;
	return id;
}

static void session_schedule(struct cp *cp, uint32_t id)
{
	struct cp_session *s = cp_session_at(cp, id);

	if (cp->cfg.session_lifetime_s == 0)
		cp_wheel_cancel(&cp->session_wheel, id);
	else
		cp_wheel_schedule(
			&cp->session_wheel, id, s->last_spm + CP_SEC(cp->cfg.session_lifetime_s));
}

void cp_sessions_walk(
	const struct cp *cp, void (*fn)(struct cp *cp, uint32_t id, void *arg), void *arg)
{
	/* collect first: fn may delete the session it is given */
	uint32_t *ids, n = 0;

	if (cp->session_tab.count == 0)
		return;
	ids = malloc((size_t)cp->session_tab.count * sizeof(*ids));
	if (ids == NULL)
		return;
	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t id = cp_htab_head(&cp->session_tab, b); id != CP_NIL;
			id = cp_session_at(cp, id)->hash_next)
			ids[n++] = id;
	}
	for (uint32_t i = 0; i < n; i++)
		fn((struct cp *)cp, ids[i], arg);
	free(ids);
}

static void reschedule_one(struct cp *cp, uint32_t id, void *arg)
{
	(void)arg;
	session_schedule(cp, id);
}

void cp_sessions_reschedule(struct cp *cp)
{
	cp_sessions_walk(cp, reschedule_one, NULL);
}

void cp_session_delete(struct cp *cp, uint32_t id, enum cp_counter why)
{
	struct cp_session *s = cp_session_at(cp, id);
	enum cp_log_kind kind = why == CP_C_SESSIONS_EXPIRED ? CP_LOG_TIMER : CP_LOG_EVENT;
	char tsi[24];

	if (cp_log_enabled(cp, kind))
		cp_logf(cp, kind, "tsi %s: deleted (%s), %u repair states with it",
			cp_session_label(s, tsi, sizeof(tsi)), cp_counter_name(why),
			s->repair_count);
	cp_count(cp, NULL, NULL, why, 1);
	cp_session_clear_repairs(cp, id, CP_C_COUNT);
	cp_wheel_cancel(&cp->session_wheel, id);
	if (s->ext != NULL) {
		cp_wheel_cancel(&cp->polr_wheel, id);
		free(s->ext);
		s->ext = NULL;
	}
	cp_htab_remove(&cp->session_tab, &(struct cp_htab_ops){session_link, session_hash, cp}, id,
		session_hash(cp, id));
	if (cp->last_session == id)
		cp->last_session = CP_NIL;
	cp_pool_free(&cp->sessions, id);
}

/* Expiry is lazy: SPMs only move last_spm, and the timer re-arms itself when it fires early. */
void cp_session_timer(struct cp *cp, uint32_t id, cp_time_t now)
{
	struct cp_session *s = cp_session_at(cp, id);
	/* armed only while there is a lifetime: cp_set_config re-arms or cancels on a change */
	cp_time_t expires = s->last_spm + CP_SEC(cp->cfg.session_lifetime_s);

	if (expires > now) {
		cp_wheel_schedule(&cp->session_wheel, id, expires);
		return;
	}
	cp_session_delete(cp, id, CP_C_SESSIONS_EXPIRED);
}

static void remove_if_upstream(struct cp *cp, uint32_t id, void *arg)
{
	if (cp_session_at(cp, id)->upstream_ifindex == *(const int *)arg)
		cp_session_delete(cp, id, CP_C_SESSIONS_REMOVED);
}

/* Without its upstream interface a session can neither forward NAKs nor receive repairs. */
void cp_sessions_upstream_removed(struct cp *cp, int ifindex)
{
	cp_sessions_walk(cp, remove_if_upstream, &ifindex);
}

struct cp_session_ext *cp_session_ext(struct cp_session *s)
{
	if (s->ext == NULL) {
		s->ext = calloc(1, sizeof(*s->ext));
		if (s->ext != NULL)
			cp_tnode_init(&s->ext->polr_timer);
	}
	return s->ext;
}

static uint32_t session_create(
	struct cp *cp, const struct pgm_tsi *tsi, uint16_t afi, cp_time_t now)
{
	uint32_t id;
	struct cp_session *s;

	if (cp->lim.max_sessions != 0 && cp->sessions.live >= cp->lim.max_sessions)
		return CP_NIL;
	id = cp_pool_alloc(&cp->sessions);
	if (id == CP_NIL)
		return CP_NIL;
	s = cp_session_at(cp, id);
	s->tsi = *tsi;
	s->tsi_key = tsi_word(tsi);
	if (afi == PGM_AFI_IP6)
		s->flags |= CP_SESSION_IPV6;
	s->repair_head = s->repair_tail = CP_NIL;
	s->created = now;
	cp_tnode_init(&s->timer);
	{
		struct cp_htab_ops ops = session_ops(cp);

		cp_htab_insert(&cp->session_tab, &ops, id, session_hash(cp, id));
	}
	return id;
}

/* Records an in-sequence SPM (or the first one) in the session. */
static void spm_record(struct cp *cp, uint32_t id, const struct cp_packet *in,
	struct cp_iface *in_if, bool created)
{
	struct cp_session *s = cp_session_at(cp, id);
	const struct pgm_packet *spm = in->pkt;
	const struct pgm_ip *ip = in->ip;
	char tsi[24], a[64], b[64], ia[CP_IFNAME_LEN + 8], ib[CP_IFNAME_LEN + 8];

	bool log = cp_log_enabled(cp, CP_LOG_EVENT);

	if (created) {
		cp_count(cp, in_if, s, CP_C_SESSIONS_CREATED, 1);
		if (log)
			cp_logf(cp, CP_LOG_EVENT, "tsi %s: created by SPM %u, upstream %s on %s",
				cp_session_label(s, tsi, sizeof(tsi)), spm->sqn,
				pgm_nla_format(&spm->path, a, sizeof(a)),
				cp_if_label(cp, in->in_ifindex, ia, sizeof(ia)));
	} else if (s->upstream_ifindex != in->in_ifindex ||
		   !pgm_nla_equal(&s->upstream, &spm->path)) {
		cp_count(cp, in_if, s, CP_C_SPM_UPSTREAM_CHANGED, 1);
		if (log)
			cp_logf(cp, CP_LOG_EVENT,
				"tsi %s: SPM %u moves upstream %s on %s -> %s on %s",
				cp_session_label(s, tsi, sizeof(tsi)), spm->sqn,
				pgm_nla_format(&s->upstream, a, sizeof(a)),
				cp_if_label(cp, s->upstream_ifindex, ia, sizeof(ia)),
				pgm_nla_format(&spm->path, b, sizeof(b)),
				cp_if_label(cp, in->in_ifindex, ib, sizeof(ib)));
	}
	s->spm_sqn = spm->sqn;
	s->trail = spm->trail;
	s->lead = spm->lead;
	s->upstream = spm->path;
	s->upstream_ifindex = in->in_ifindex;
	s->source = ip->src;
	s->group = ip->dst;
	s->last_ttl = ip->ttl;
	s->data_dport = spm->dport;
	if (ip->udp) {
		s->flags |= CP_SESSION_UDP;
		s->udp_sport = ip->udp_sport;
		s->udp_dport = ip->udp_dport;
	} else {
		s->flags &= (uint8_t)~CP_SESSION_UDP;
		s->udp_sport = s->udp_dport = 0;
	}
	if (pgm_opt_has(&spm->opt, PGM_OPT_PARITY_PRM))
		s->parity_tgs = spm->opt.parity_tgs;
	if (pgm_opt_has(&spm->opt, PGM_OPT_CURR_TGSIZE) && cp_session_ext(s) != NULL)
		s->ext->curr_tgsize = spm->opt.curr_tgsize;
	s->spm_copy_mask = 0;
	s->last_spm = in->now;
	if (created || !cp_tnode_scheduled(&s->timer))
		session_schedule(cp, id);
	/* 15.3.2: a regular SPM ends the neighbour-unreachable mode, upstream and downstream */
	if ((s->flags & CP_SESSION_SUSPENDED) != 0 ||
		(s->ext != NULL && s->ext->unreach_mask != 0)) {
		s->flags &= (uint8_t)~CP_SESSION_SUSPENDED;
		if (s->ext != NULL)
			s->ext->unreach_mask = 0;
		if (log)
			cp_logf(cp, CP_LOG_EVENT,
				"tsi %s: regular SPM %u, neighbour-unreachable mode over",
				cp_session_label(s, tsi, sizeof(tsi)), spm->sqn);
	}
}

/* This copy's rewrite: SPM_PATH = the egress address, and our NAK_BO_IVL if configured. */
void cp_spm_copy(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	struct cp_iface *out_if, struct cp_result *out)
{
	uint32_t bo_ivl = cp_advertised_nak_bo_ivl(cp, out_if);

	const struct pgm_nla *path = cp_if_addr_for(out_if, in->ip->dst.afi, NULL);

	if (path->afi == 0) {
		/* we cannot name ourselves here: downstream NAKs will bypass this router */
		cp_count(cp, out_if, s, CP_C_SPM_NO_ADDRESS, 1);
		return;
	}
	s->spm_copy_mask |= cp_iface_bit(out_if);
	out->verdict = CP_ACCEPT_REWRITTEN;
	out->rewrite.spm_path = true;
	out->rewrite.path = *path;
	/* 15.2.1: an NE MUST remove or overwrite OPT_NAK_BO_IVL (the parent's value is for the
	   parent's links): overwritten with the interface's value, removed where it has none */
	if (bo_ivl != 0 && pgm_opt_has(&in->pkt->opt, PGM_OPT_NAK_BO_IVL)) {
		out->rewrite.nak_bo_ivl = true;
		out->rewrite.nak_bo_ivl_us = bo_ivl;
		out->rewrite.nak_bo_ivl_sqn = 0; /* not derived from a poll: usable at once */
	} else if (pgm_opt_has(&in->pkt->opt, PGM_OPT_NAK_BO_IVL)) {
		out->rewrite.nak_bo_ivl_remove = true;
	}
	cp_count(cp, out_if, s, CP_C_SPM_FORWARDED, 1);
	cp_count_out(out_if, s, PGM_SPM);
}

/*
 * Why a regular SPM for an existing session is not the session's, or CP_C_COUNT when it is
 * (ahead: its SPM_SQN's serial distance from the session's).
 *
 * The SQN bound: a source numbers its SPMs one by one (SPM_SQN, 3.6.1.1), so a gap is SPMs lost
 * on the way. Serial arithmetic (6.2) makes anything up to 2^31 - 1 ahead "in sequence", and
 * one SPM that far ahead would make the source's own for the next 2^31 SPMs look old. A
 * source sending 2,000 SPMs a second (the MSMQ profile's one per 50 packets at 100,000
 * packets/s) that lost every one of them for the 300 s of the session lifetime skips 600,000:
 * 2^20 covers that, and leaves serial comparisons 2^11 times the jump of room.
 *
 * The silence: the longest ambient SPM interval in the field is 30 s (TIBCO); after twice
 * that without an accepted SPM the source has gone or its path is broken, and what follows it
 * is taken as the session's (a route change without route information, a restarted source).
 */
static enum cp_counter spm_refusal(
	struct cp *cp, const struct cp_session *s, const struct cp_packet *in, int32_t ahead)
{
	bool silent = in->now >= s->last_spm && in->now - s->last_spm >= CP_SEC(CP_SPM_SILENCE_S);
	int rpf;

	if (!pgm_nla_equal(&in->ip->src, &s->source) || !pgm_nla_equal(&in->ip->dst, &s->group))
		return CP_C_SPM_FOREIGN;
	if (in->in_ifindex != s->upstream_ifindex) {
		/* asked only here: the common case costs no route lookup */
		rpf = cp->rpf != NULL ? cp->rpf(cp->rpf_ctx, &s->source, &s->group) : 0;
		if (rpf != 0 ? rpf != in->in_ifindex : !silent)
			return CP_C_SPM_NOT_RPF;
	}
	if (ahead <= 0)
		return CP_C_COUNT; /* not recorded: a copy, a repeat or out of sequence (below) */
	if (ahead > (int32_t)CP_SPM_SQN_JUMP_MAX && !silent)
		return CP_C_SPM_SQN_JUMP;
	/* the recorded path passed this already: only a new one is looked at */
	if (!pgm_nla_equal(&in->pkt->path, &s->upstream) && !cp_nak_dest_usable(cp, &in->pkt->path))
		return CP_C_SPM_BAD_PATH;
	return CP_C_COUNT;
}

static void spm_refused(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, enum cp_counter why)
{
	char tsi[24] = "new", src[64], grp[64], path[64], ifname[CP_IFNAME_LEN + 8];

	cp_count(cp, in_if, s, why, 1);
	if (!cp_log_enabled(cp, CP_LOG_EVENT))
		return;
	if (s != NULL)
		cp_session_label(s, tsi, sizeof(tsi));
	cp_logf(cp, CP_LOG_EVENT, "tsi %s: SPM %u %s > %s path %s on %s refused (%s)", tsi,
		in->pkt->sqn, pgm_nla_format(&in->ip->src, src, sizeof(src)),
		pgm_nla_format(&in->ip->dst, grp, sizeof(grp)),
		pgm_nla_format(&in->pkt->path, path, sizeof(path)),
		cp_if_label(cp, in->in_ifindex, ifname, sizeof(ifname)), cp_counter_name(why));
}

void cp_spm(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_result *out)
{
	enum cp_counter why;
	const struct pgm_packet *spm = in->pkt;
	struct pgm_tsi tsi;
	struct cp_session *s;
	uint32_t id;
	int32_t ahead;
	/* copies by interfaces without assist pass unchanged; the state is updated all the same */
	bool ours = in->out_ifindex == 0 || (out_if != NULL && out_if->assist);

	pgm_packet_tsi(spm, &tsi);
	id = cp_session_lookup(cp, &tsi, cp_packet_afi(in));
	if (id != CP_NIL && pgm_opt_has(&spm->opt, PGM_OPT_NBR_UNREACH)) {
		/* not a regular SPM: it carries the last regular SQN and no window (15.3.2) */
		cp_count_in(NULL, cp_session_at(cp, id), PGM_SPM);
		if (ours)
			cp_spm_nbr_unreach(cp, in, in_if, out_if, id, out);
		return;
	}
	if (id == CP_NIL) {
		if (!cp_nak_dest_usable(cp, &spm->path)) {
			spm_refused(cp, in, in_if, NULL, CP_C_SPM_BAD_PATH);
			if (ours)
				out->verdict = CP_DROP;
			return;
		}
		if (!cp_session_rate_ok(cp, in_if, in->now))
			return; /* untracked and counted, as at the limit below */
		id = session_create(cp, &tsi, cp_packet_afi(in), in->now);
		if (id == CP_NIL) {
			/* untracked, the SPM passes unchanged and the TSI works unassisted */
			cp_count(cp, in_if, NULL, CP_C_SESSION_LIMIT, 1);
			return;
		}
		s = cp_session_at(cp, id);
		cp_count_in(NULL, s, PGM_SPM);
		spm_record(cp, id, in, in_if, true);
	} else {
		s = cp_session_at(cp, id);
		cp_count_in(NULL, s, PGM_SPM);
		/* serial arithmetic (6.2): ahead by 1 .. 2^31 - 1 is in sequence */
		ahead = (int32_t)(spm->sqn - s->spm_sqn);
		why = spm_refusal(cp, s, in, ahead);
		if (why != CP_C_COUNT) {
			spm_refused(cp, in, in_if, s, why);
			if (ours)
				out->verdict = CP_DROP;
			return;
		}
		if (ahead > 0) {
			spm_record(cp, id, in, in_if, false);
		} else if (!ours) {
			/* not ours to judge */
		} else if (ahead < 0 || in->in_ifindex != s->upstream_ifindex) {
			cp_count(cp, in_if, s, CP_C_SPM_BAD_SQN, 1);
			out->verdict = CP_DROP;
			return;
		} else if (in->out_ifindex == 0 || (s->spm_copy_mask & cp_iface_bit(out_if)) != 0) {
			/* the same SPM again on this egress: the source or the path repeated it */
			cp_count(
				cp, out_if != NULL ? out_if : in_if, s, CP_C_SPM_DUPLICATE_COPY, 1);
			out->verdict = CP_DROP;
			return;
		}
	}
	if (!ours) {
		cp_count(cp, out_if != NULL ? out_if : in_if, s, CP_C_COPY_NOT_ASSISTED, 1);
		return;
	}
	if (in->out_ifindex == 0)
		return; /* seen once, before routing: nothing to rewrite */
	cp_spm_copy(cp, in, s, out_if, out);
}
