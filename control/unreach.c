/*
 * Implosion prevention (RFC 3208 15): NAK_BO_IVL advertisement and tuning (15.2)
 * and failure containment with OPT_NBR_UNREACH (15.3).
 *
 * Tuning (optional, per interface when nak_probe_num is set): the advertised NAK_BO_IVL doubles
 * on the first duplicate NAK of a repair state on the interface and halves after nak_probe_num
 * new repair states there without one, within [nak_bo_ivl_min_us, nak_bo_ivl_max_us]. The RFC
 * keeps the value per TSI and interface; we keep it per interface, which serves the same
 * receivers for every TSI and costs no per-session memory.
 *
 * Containment: when one repair state has seen dup_nak_max duplicate NAKs on one interface, the
 * multicast path below it is assumed broken: NAKs of that TSI on that interface are confirmed
 * with unicast NCFs carrying OPT_NBR_UNREACH and OPT_PATH_NLA until a regular SPM (multicast
 * ones, as elsewhere, while the interface has no address of the TSI's family to send them from
 * and name in OPT_PATH_NLA: nak.c, cp_send_ncf). An NCF with
 * OPT_NBR_UNREACH sent by our upstream neighbour on the upstream interface and naming it in
 * OPT_PATH_NLA, or an SPM with it from our parent, suspends NAK forwarding for the TSI until a regular SPM; the NCF also makes us send a
 * special SPM (the last regular SPM_SQN and window, see below) down every interface of the TSI.
 */
#include <string.h>

#include "control/cp_internal.h"

uint32_t cp_advertised_nak_bo_ivl(const struct cp *cp, const struct cp_iface *ifp)
{
	const struct cp_if_config *cfg = cp_iface_config(cp, ifp);

	if (ifp != NULL && cfg->nak_probe_num != 0 && ifp->bo_ivl_cur != 0)
		return ifp->bo_ivl_cur;
	return cfg->nak_bo_ivl_us;
}

/* 15.2.1: NCFs MAY carry OPT_NAK_BO_IVL; ours carry the value the interface advertises. */
void cp_ncf_advertise(const struct cp *cp, const struct cp_session *s, const struct cp_iface *ifp,
	struct cp_action *ncf)
{
	uint32_t ivl = cp_advertised_nak_bo_ivl(cp, ifp);

	(void)s;
	if (ivl == 0)
		return;
	ncf->nak_bo_ivl = true;
	ncf->nak_bo_ivl_us = ivl;
	ncf->nak_bo_ivl_sqn = 0; /* not derived from a poll: usable at once (15.2.2) */
}

static void tune(struct cp *cp, struct cp_iface *ifp, const struct cp_if_config *cfg,
	struct cp_session *s, bool duplicate)
{
	uint32_t cur = ifp->bo_ivl_cur != 0 ? ifp->bo_ivl_cur : cfg->nak_bo_ivl_us;
	uint32_t lo = cfg->nak_bo_ivl_min_us, hi = cfg->nak_bo_ivl_max_us, next = cur;

	if (cur == 0)
		return; /* nothing advertised, nothing to tune */
	if (hi < lo)
		hi = lo;
	if (duplicate) {
		ifp->bo_probe = 0;
		next = cur > hi / 2 ? hi : cur * 2;
	} else if (++ifp->bo_probe >= cfg->nak_probe_num) {
		ifp->bo_probe = 0;
		next = cur / 2 < lo ? lo : cur / 2;
	}
	if (next == cur) {
		ifp->bo_ivl_cur = cur;
		return;
	}
	ifp->bo_ivl_cur = next;
	cp_count(cp, ifp, s, next > cur ? CP_C_NAK_BO_IVL_RAISED : CP_C_NAK_BO_IVL_LOWERED, 1);
	if (cp_log_enabled(cp, CP_LOG_EVENT))
		cp_logf(cp, CP_LOG_EVENT, "%s: NAK_BO_IVL %u -> %u us (%s)", ifp->name, cur, next,
			duplicate ? "duplicate NAK" : "no duplicates");
}

void cp_nak_seen(
	struct cp *cp, struct cp_session *s, struct cp_repair *r, struct cp_iface *ifp, bool added)
{
	const struct cp_if_config *cfg = cp_iface_config(cp, ifp);
	uint8_t slot = (uint8_t)ifp->slot;
	bool first;

	if (cfg->nak_probe_num == 0 && cfg->dup_nak_max == 0)
		return; /* neither tuning nor failure detection here: nothing to count */
	if (added) {
		if (cfg->nak_probe_num != 0)
			tune(cp, ifp, cfg, s, false);
		return;
	}
	/* a duplicate: counted for one interface per state (the first to repeat itself) */
	first = r->dup_count == 0 || r->dup_slot != slot;
	if (first) {
		r->dup_slot = slot;
		r->dup_count = 1;
		if (cfg->nak_probe_num != 0)
			tune(cp, ifp, cfg, s, true);
	} else if (r->dup_count < UINT8_MAX) {
		r->dup_count++;
	}
	if (cfg->dup_nak_max == 0 || r->dup_count < cfg->dup_nak_max)
		return;
	if (cp_session_ext(s) == NULL || (s->ext->unreach_mask & cp_iface_bit(ifp)) != 0)
		return;
	/* 15.3.1: the suppressing multicast tree below is assumed lost */
	s->ext->unreach_mask |= cp_iface_bit(ifp);
	cp_count(cp, ifp, s, CP_C_UNREACH_ASSUMED, 1);
	cp_log_repair(cp, CP_LOG_EVENT, s, r->sqn,
		"%u duplicate NAKs on %s: neighbour unreachable assumed, unicast NCFs until a "
		"regular SPM",
		r->dup_count, ifp->name);
}

static void suspend(struct cp *cp, struct cp_iface *in_if, struct cp_session *s, const char *what)
{
	char tsi[24];

	cp_count(cp, in_if, s, CP_C_UNREACH_RECEIVED, 1);
	if ((s->flags & CP_SESSION_SUSPENDED) != 0)
		return;
	s->flags |= CP_SESSION_SUSPENDED;
	if (cp_log_enabled(cp, CP_LOG_EVENT))
		cp_logf(cp, CP_LOG_EVENT,
			"tsi %s: %s with OPT_NBR_UNREACH from upstream: NAKs suspended until a "
			"regular SPM",
			cp_session_label(s, tsi, sizeof(tsi)), what);
}

void cp_spm_nbr_unreach(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, uint32_t sid, struct cp_result *out)
{
	struct cp_session *s = cp_session_at(cp, sid);

	if (in->in_ifindex != s->upstream_ifindex || !pgm_nla_equal(&in->ip->src, &s->source) ||
		!pgm_nla_equal(&in->ip->dst, &s->group)) {
		/* not the session's SPM (7.1, 10): ignored, and not passed on either */
		cp_count(cp, in_if, s, CP_C_UNREACH_NOT_UPSTREAM, 1);
		out->verdict = CP_DROP;
		return;
	}
	if (!pgm_nla_equal(&in->pkt->path, &s->upstream)) {
		/* 15.3.2: not from our parent: ignored, and not passed on either */
		cp_count(cp, in_if, s, CP_C_UNREACH_IGNORED, 1);
		out->verdict = CP_DROP;
		return;
	}
	if (in->out_ifindex == 0 || (s->flags & CP_SESSION_SUSPENDED) == 0)
		suspend(cp, in_if, s, "SPM");
	if (in->out_ifindex != 0)
		cp_spm_copy(cp, in, s, out_if, out); /* forwarded in the normal way */
}

void cp_ncf_nbr_unreach(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_session *s)
{
	bool was = (s->flags & CP_SESSION_SUSPENDED) != 0;

	/* 15.3.2: "from its upstream neighbour": sent by it, unicast, on the upstream interface;
	   OPT_PATH_NLA alone is what anyone below can copy from the SPMs' path */
	if (in->in_ifindex != s->upstream_ifindex || !pgm_nla_equal(&in->ip->src, &s->upstream)) {
		cp_count(cp, in_if, s, CP_C_UNREACH_NOT_UPSTREAM, 1);
		cp_log_repair(cp, CP_LOG_EVENT, s, in->pkt->sqn,
			"NCF with OPT_NBR_UNREACH not from the upstream neighbour on the upstream "
			"interface: ignored");
		return;
	}
	if (!pgm_opt_has(&in->pkt->opt, PGM_OPT_PATH_NLA) ||
		!pgm_nla_equal(&in->pkt->opt.path_nla, &s->upstream)) {
		cp_count(cp, in_if, s, CP_C_UNREACH_IGNORED, 1);
		cp_log_repair(cp, CP_LOG_EVENT, s, in->pkt->sqn,
			"NCF with OPT_NBR_UNREACH not from our upstream neighbour: ignored");
		return;
	}
	suspend(cp, in_if, s, "NCF");
	if (was)
		return; /* the special SPM went out when the mode began */
	/* 15.3.2: keep the receivers below from NAKing too */
	for (unsigned slot = 0; slot < CP_MAX_INTERFACES; slot++) {
		struct cp_iface *ifp = cp->slot_if[slot];
		struct cp_action act;

		if ((s->spm_copy_mask & ((uint64_t)1 << slot)) == 0 || ifp == NULL ||
			ifp->ifindex == s->upstream_ifindex || cp_if_addr_for(ifp, cp_session_afi(s), NULL)->afi == 0)
			continue;
		cp_action_as_source(cp, &act, CP_ACT_SPM, s, ifp);
		act.sqn = s->spm_sqn; /* SHOULD: the last regular SPM's */
		/* The RFC says SHOULD invalidate the window (TRAIL 0, LEAD 0x80000000), relying on
		 * receivers to ignore it in such SPMs; OpenPGM receivers ignore OPT_NBR_UNREACH and
		 * take that window, NAKing everything up to it. The last regular SPM's window is
		 * what a conforming receiver ignores and OpenPGM already knows. */
		act.trail = s->trail;
		act.lead = s->lead;
		act.path = *cp_if_addr_for(ifp, cp_session_afi(s), NULL);
		act.nbr_unreach = true;
		cp_emit(cp, &act);
		cp_count(cp, ifp, s, CP_C_UNREACH_SPM_SENT, 1);
		cp_count_out(ifp, s, PGM_SPM);
	}
}
