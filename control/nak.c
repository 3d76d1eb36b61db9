/*
 * NAK and NNAK reception (RFC 3208 7.2 confirmation, 7.3 forwarding, 7.4 elimination, 7.7
 * addressing, 9.3.3 NAK lists, 9.5.3.2 NNAKs; digest 3.5-3.7, 3.10, 3.11).
 *
 * Every unicast NAK, duplicates included, is confirmed at once with an NCF on its arrival
 * interface (identical NCFs rate-limited per interface), adds that interface to the repair
 * state of each SQN it names, and is forwarded intact to the upstream neighbour unless every
 * SQN it names is being eliminated. NNAKs are never confirmed, retried, nor add an interface.
 */
#include <string.h>

#include "control/cp_internal.h"

/*
 * How far beyond the last SPM_LEAD a NAK may reach. SPMs lag the data (ambient SPMs come every
 * few seconds), so the leading edge is a hint, not a bound: 2^24 SQNs is minutes of data at
 * high rates, yet rejects all but 1/256 of randomly chosen SQNs.
 */
#define NAK_LEAD_SLACK (1u << 24)

unsigned cp_packet_sqns(const struct pgm_packet *pkt, uint32_t sqns[1 + PGM_MAX_NAK_LIST])
{
	unsigned n = 1;

	sqns[0] = pkt->sqn;
	if (pgm_opt_has(&pkt->opt, PGM_OPT_NAK_LIST)) {
		for (unsigned i = 0; i < pkt->opt.nak_list_count && i < PGM_MAX_NAK_LIST; i++)
			sqns[n++] = pgm_opt_nak_list_sqn(&pkt->opt, i);
	}
	return n;
}

/* Is the SPM window usable, and are all the SQNs inside it (leniently at the leading edge)? */
static bool in_window(
	const struct cp *cp, const struct cp_session *s, const uint32_t *sqns, unsigned n)
{
	if (!cp->cfg.nak_window_check)
		return true;
	/* SPM_TRAIL 0 with SPM_LEAD 0x80000000 means no window information (digest 2.1) */
	if (s->trail == 0 && s->lead == 0x80000000u)
		return true;
	/* an empty window has lead = trail - 1; anything wider than half the space is bogus */
	if (s->lead - s->trail + 1u > 0x80000000u)
		return true;
	for (unsigned i = 0; i < n; i++) {
		if ((int32_t)(sqns[i] - s->trail) < 0)
			return false;
		if ((int32_t)(sqns[i] - s->lead) > (int32_t)NAK_LEAD_SLACK)
			return false;
	}
	return true;
}

/*
 * The checks NAKs and NNAKs share. Returns the session, or CP_NIL with the verdict set: multicast
 * copies and packets routed through pass, the rest is dropped and counted.
 */
static uint32_t upstream_packet_session(struct cp *cp, const struct cp_packet *in,
	struct cp_iface *in_if, enum cp_counter no_session, const uint32_t *sqns, unsigned n,
	struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_session *s;
	struct pgm_tsi tsi;
	uint32_t sid;

	if (pgm_ip_dst_is_multicast(in->ip)) {
		/* receivers' multicast NAKs (MS-PGM: TTL 1, always) are for their neighbours */
		cp_count(cp, in_if, NULL, CP_C_NAK_MULTICAST, 1);
		return CP_NIL;
	}
	if (in->out_ifindex != 0) {
		/* a forwarded copy: addressed beyond us, the kernel routes it */
		cp_count(cp, in_if, NULL, CP_C_NAK_TRANSIT, 1);
		return CP_NIL;
	}
	out->verdict = CP_DROP;
	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_find(cp, &tsi);
	if (sid == CP_NIL) {
		cp_count(cp, in_if, NULL, no_session, 1);
		return CP_NIL;
	}
	s = cp_session_at(cp, sid);
	cp_count_in(NULL, s, pkt->type);
	/*
	 * 7.7: the source and group NLAs name the session; the source checks them too. OpenPGM
	 * receivers put the SPM's path NLA in NAK_SRC instead of the source's address, so behind
	 * this router their NAKs name our address on the arrival interface: accepted, and sent
	 * upstream with the source's address (forward_upstream), since OpenPGM sources reject
	 * NAKs whose NAK_SRC is not theirs.
	 */
	if (!pgm_nla_equal(&pkt->nak_grp, &s->group) ||
		(!pgm_nla_equal(&pkt->nak_src, &s->source) &&
			(in_if == NULL || !pgm_nla_equal(&pkt->nak_src, &in_if->addr)))) {
		cp_count(cp, in_if, s, CP_C_NAK_ADDRESS_MISMATCH, 1);
		return CP_NIL;
	}
	if (!pgm_nla_equal(&pkt->nak_src, &s->source))
		cp_count(cp, in_if, s, CP_C_NAK_SRC_PATH, 1);
	if (pkt->opt.nak_list_unordered)
		cp_count(cp, in_if, s, CP_C_NAK_LIST_UNORDERED, 1);
	if (in->in_ifindex == s->upstream_ifindex) {
		/* misrouted: repairs come from there, they cannot be sent back there */
		cp_count(cp, in_if, s, CP_C_NAK_UPSTREAM_INTERFACE, 1);
		return CP_NIL;
	}
	if (!in_window(cp, s, sqns, n)) {
		cp_count(cp, in_if, s, CP_C_NAK_OUT_OF_WINDOW, 1);
		return CP_NIL;
	}
	return sid;
}

/* The NAK goes upstream as it came (7.3, 7.7): our address as IP source, the neighbour's as
 * destination, the TPDU intact. */
static void forward_upstream(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	enum cp_action_type type, const uint32_t *sqns, unsigned n)
{
	struct cp_iface *up = cp_iface_find(cp, s->upstream_ifindex);
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = type;
	act.ifindex = s->upstream_ifindex;
	act.ip_dst = s->upstream;
	act.router_alert = in->ip->router_alert;
	act.from_packet = true;
	act.udp = in->ip->udp;
	act.udp_sport = in->ip->udp_sport;
	act.udp_dport = in->ip->udp_dport;
	act.tsi = s->tsi;
	act.data_dport = s->data_dport;
	act.sqn = sqns[0];
	act.list_count = n - 1;
	memcpy(act.list, sqns + 1, (n - 1) * sizeof(*sqns));
	act.nak_src = s->source;
	act.nak_grp = in->pkt->nak_grp;
	/* the TPDU goes intact, but for a NAK_SRC naming us (OpenPGM receivers, see above) */
	act.nak_src_rewrite = !pgm_nla_equal(&in->pkt->nak_src, &s->source);
	act.parity = pgm_packet_is_parity(in->pkt);
	act.opt_invalid_mask = cp_opx_invalid_mask(in->pkt);
	if (act.opt_invalid_mask != 0)
		cp_count(cp, up, s, CP_C_OPX_INVALIDATED, 1);
	cp_emit(cp, &act);
	cp_count(cp, up, s, type == CP_ACT_NNAK ? CP_C_NNAK_FORWARDED : CP_C_NAK_FORWARDED, 1);
	cp_count_out(up, s, type == CP_ACT_NNAK ? PGM_NNAK : PGM_NAK);
}

/*
 * The NCF for a NAK (7.2, 8.3, 9.3.3): multicast to the group on the arrival interface with the
 * data source as IP source and Router Alert; built from the NAK with its list, ports swapped
 * back to downstream form. Shared with the parity seam.
 */
void cp_send_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, const uint32_t *sqns, unsigned n)
{
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = CP_ACT_NCF;
	act.ifindex = in->in_ifindex;
	act.ip_src = s->source; /* 7.2: the ODATA source's NLA, whatever NAK_SRC says */
	act.ip_dst = in->pkt->nak_grp;
	act.router_alert = true;
	act.from_packet = true;
	if ((s->flags & CP_SESSION_UDP) != 0) {
		act.udp = true;
		act.udp_sport = s->udp_sport;
		act.udp_dport = s->udp_dport;
	} else if (in->ip->udp) {
		act.udp = true;
		act.udp_sport = in->ip->udp_dport;
		act.udp_dport = in->ip->udp_sport;
	}
	act.tsi = s->tsi;
	act.data_dport = s->data_dport;
	act.sqn = sqns[0];
	act.list_count = n - 1;
	memcpy(act.list, sqns + 1, (n - 1) * sizeof(*sqns));
	act.nak_src = in->pkt->nak_src;
	act.nak_grp = in->pkt->nak_grp;
	act.parity = pgm_packet_is_parity(in->pkt);
	if (act.parity && s->parity_tgs != 0)
		act.pkt_cnt = sqns[0] & (s->parity_tgs - 1);
	cp_ncf_advertise(cp, s, in_if, &act);
	cp_emit(cp, &act);
	cp_count(cp, in_if, s, CP_C_NCF_SENT, 1);
	cp_count_out(in_if, s, PGM_NCF);
}

/*
 * 7.2 storm protection: the first NCF for a (TSI, SQN, interface) goes at once, identical ones
 * on that interface within ncf_ivl are withheld. Each state keeps one window start and the mask
 * of interfaces confirmed since; a window ends ncf_ivl after it started. So an interface gets at
 * most two NCFs for one SQN in any ncf_ivl, and usually one.
 */
static bool ncf_withheld(const struct cp_repair *r, uint64_t bit, cp_time_t now, cp_time_t ivl)
{
	return ivl != 0 && (r->ncf_mask & bit) != 0 && now - r->ncf_stamp < ivl;
}

static void ncf_mark(struct cp_repair *r, uint64_t bit, cp_time_t now, cp_time_t ivl)
{
	if (r->ncf_mask == 0 || now - r->ncf_stamp >= ivl) {
		r->ncf_mask = 0;
		r->ncf_stamp = now;
	}
	r->ncf_mask |= bit;
}

/* What happened to each SQN of a NAK, for the debug log once the NAK's fate is known. */
enum sqn_outcome { SQN_NEW, SQN_RENEWED, SQN_DUPLICATE, SQN_REFORWARDED, SQN_UNTRACKED };

static void log_nak(struct cp *cp, const struct cp_session *s, const char *ifname, uint32_t sqn,
	enum sqn_outcome what, enum cp_repair_phase before, bool forwarded, bool nnak_state)
{
	switch (what) {
	case SQN_NEW:
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn, "NAK on %s in NONE -> PENDING (forwarded)",
			ifname);
		break;
	case SQN_RENEWED:
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn,
			"NAK on %s in FORWARDING -> PENDING (forwarded, new request after repair)",
			ifname);
		break;
	case SQN_DUPLICATE:
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn, "NAK on %s in %s -> %s (%s)", ifname,
			cp_phase_name(before), cp_phase_name(before),
			forwarded ? "duplicate, list forwarded for other SQNs" : "eliminated");
		break;
	case SQN_REFORWARDED:
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn,
			"NAK on %s in %s -> PENDING (forwarded, %s)", ifname, cp_phase_name(before),
			nnak_state ? "state was NNAK-created" : "elimination over");
		break;
	case SQN_UNTRACKED:
		cp_log_repair(cp, CP_LOG_EVENT, s, sqn,
			"NAK on %s: no memory for state (forwarded)", ifname);
		break;
	}
}

void cp_nak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST], ids[1 + PGM_MAX_NAK_LIST];
	uint8_t outcome[1 + PGM_MAX_NAK_LIST], before[1 + PGM_MAX_NAK_LIST];
	uint8_t was_nnak[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(pkt, sqns), missing = 0;
	const struct cp_if_config *if_cfg;
	struct cp_session *s;
	bool forward = false, ncf = false;
	cp_time_t now = in->now, ncf_ivl;
	uint64_t bit;
	uint32_t sid;

	sid = upstream_packet_session(cp, in, in_if, CP_C_NAK_NO_SESSION, sqns, n, out);
	if (sid == CP_NIL) {
		if (out->verdict == CP_DROP)
			cp_count(cp, in_if, NULL, CP_C_NAK_RECEIVED, n);
		return;
	}
	s = cp_session_at(cp, sid);
	cp_count(cp, in_if, s, CP_C_NAK_RECEIVED, n);
	if (in_if == NULL || !in_if->assist) {
		cp_count(cp, in_if, s, CP_C_NAK_NOT_ASSISTED, 1);
		return;
	}
	if (in->ip->udp) {
		s->flags |= CP_SESSION_NAK_UDP;
		s->nak_udp_sport = in->ip->udp_sport;
		s->nak_udp_dport = in->ip->udp_dport;
	}
	if (pgm_packet_is_parity(pkt)) {
		cp_parity_nak(cp, in, in_if, s, out);
		return;
	}

	for (unsigned i = 0; i < n; i++) {
		ids[i] = cp_repair_find_live(cp, sid, sqns[i], now);
		if (ids[i] == CP_NIL)
			missing++;
	}
	/* all or nothing: the single NCF answers every SQN of the NAK */
	if (missing != 0 && cp_repair_limit_reached(cp, missing)) {
		cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
		return;
	}

	bit = cp_iface_bit(in_if);
	if_cfg = cp_iface_config(cp, in_if);
	ncf_ivl = CP_MS(if_cfg->ncf_ivl_ms);
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = ids[i];
		struct cp_repair *r;

		was_nnak[i] = 0;
		if (id == CP_NIL && n > 1) /* the same SQN twice in one list: made above */
			id = cp_repair_find(cp, sid, sqns[i]);
		if (id == CP_NIL) {
			id = cp_repair_create(cp, sid, sqns[i], now);
			if (id == CP_NIL) {
				outcome[i] = SQN_UNTRACKED;
				forward = ncf = true;
				continue;
			}
			r = cp_repair_at(cp, id);
			before[i] = CP_PHASE_PENDING;
			outcome[i] = SQN_NEW;
			cp_count(cp, in_if, s, CP_C_NAK_UNIQUE, 1);
		} else {
			r = cp_repair_at(cp, id);
			before[i] = r->phase;
			was_nnak[i] = (r->flags & CP_REPAIR_NNAK) != 0;
			if (r->phase == CP_PHASE_FORWARDING) {
				/* the repair went by: a new request, not a duplicate; interfaces
				 * still waiting for their copy stay listed */
				r->if_mask &= ~r->repaired_mask;
				r->repaired_mask = r->ncf_mask = 0;
				outcome[i] = SQN_RENEWED;
				cp_count(cp, in_if, s, CP_C_NAK_UNIQUE, 1);
			} else if (cp_repair_eliminating(r, now)) {
				outcome[i] = SQN_DUPLICATE;
			} else {
				outcome[i] = SQN_REFORWARDED;
				if (was_nnak[i])
					cp_count(cp, in_if, s, CP_C_NAK_UNIQUE, 1);
			}
		}
		r->if_mask |= bit;
		if (outcome[i] != SQN_DUPLICATE) {
			cp_repair_start_pending(cp, r, s, now);
			cp_repair_schedule(cp, id);
			forward = true;
		}
		if (!ncf_withheld(r, bit, now, ncf_ivl))
			ncf = true;
		ids[i] = id;
	}

	/* 7.2: every NAK is confirmed at once, unless an identical NCF just went out there */
	if (ncf) {
		for (unsigned i = 0; i < n; i++) {
			if (outcome[i] != SQN_UNTRACKED)
				ncf_mark(cp_repair_at(cp, ids[i]), bit, now, ncf_ivl);
		}
		cp_send_ncf(cp, in, in_if, s, sqns, n);
	} else {
		cp_count(cp, in_if, s, CP_C_NCF_RATE_LIMITED, 1);
	}

	/* 9.3.3: forwarded intact unless every SQN is eliminated (pending ones count as such) */
	if (forward)
		forward_upstream(cp, in, s, CP_ACT_NAK, sqns, n);
	else
		cp_count(cp, in_if, s, CP_C_NAK_ELIMINATED, n);

	if (cp_log_enabled(cp, CP_LOG_EVENT)) {
		char ifname[CP_IFNAME_LEN + 8];

		cp_if_label(cp, in->in_ifindex, ifname, sizeof(ifname));
		for (unsigned i = 0; i < n; i++)
			log_nak(cp, s, ifname, sqns[i], (enum sqn_outcome)outcome[i],
				(enum cp_repair_phase)before[i], forward,
				outcome[i] == SQN_REFORWARDED && was_nnak[i]);
	}
}

/*
 * 9.5.3.2: NNAKs are forwarded only when no repair state exists for them (state they create is
 * flagged and lives NAK_ELIM_IVL); they are never confirmed, never retried, and never add their
 * interface. (NNAKs for repairs requested from an off-tree DLR are always forwarded: that comes
 * with DLR redirection, see extensions.c.)
 */
void cp_nnak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(pkt, sqns);
	const struct cp_if_config *cfg;
	struct cp_session *s;
	bool forward = false;
	uint32_t sid;

	sid = upstream_packet_session(cp, in, in_if, CP_C_NNAK_NO_SESSION, sqns, n, out);
	if (sid == CP_NIL) {
		if (out->verdict == CP_DROP)
			cp_count(cp, in_if, NULL, CP_C_NNAK_RECEIVED, n);
		return;
	}
	s = cp_session_at(cp, sid);
	cp_count(cp, in_if, s, CP_C_NNAK_RECEIVED, n);
	if (pgm_packet_is_parity(pkt)) {
		cp_parity_nak(cp, in, in_if, s, out);
		return;
	}
	cfg = cp_repair_config(cp, s);
	for (unsigned i = 0; i < n; i++) {
		uint32_t id = cp_repair_find_live(cp, sid, sqns[i], in->now);
		struct cp_repair *r;

		if (id != CP_NIL)
			continue;
		forward = true;
		if (cfg->nak_elim_ivl_ms == 0)
			continue; /* it would live for no time at all */
		id = cp_repair_create(cp, sid, sqns[i], in->now);
		if (id == CP_NIL) {
			cp_count(cp, in_if, s, CP_C_REPAIR_LIMIT, 1);
			continue;
		}
		r = cp_repair_at(cp, id);
		r->phase = CP_PHASE_OUTSTANDING;
		r->flags = CP_REPAIR_NNAK;
		r->elim_end = cp_deadline(in->now, cfg->nak_elim_ivl_ms);
		cp_repair_schedule(cp, id);
		cp_log_repair(cp, CP_LOG_EVENT, s, sqns[i],
			"NNAK in NONE -> OUTSTANDING (NNAK state, forwarded)");
	}
	if (forward) {
		forward_upstream(cp, in, s, CP_ACT_NNAK, sqns, n);
	} else {
		cp_count(cp, in_if, s, CP_C_NNAK_ELIMINATED, n);
		cp_log_repair(
			cp, CP_LOG_EVENT, s, sqns[0], "NNAK: repair state exists (eliminated)");
	}
}

/* Forwarding for the parity seam, which has no state yet. */
void cp_forward_upstream(struct cp *cp, const struct cp_packet *in, struct cp_session *s)
{
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(in->pkt, sqns);

	forward_upstream(cp, in, s, in->pkt->type == PGM_NNAK ? CP_ACT_NNAK : CP_ACT_NAK, sqns, n);
}
