/*
 * NAK and NNAK reception (RFC 3208 7.2 confirmation, 7.3 forwarding, 7.4 elimination, 7.7
 * addressing, 9.3.3 NAK lists, 9.5.3.2 NNAKs).
 *
 * Every unicast NAK, duplicates included, is confirmed at once with an NCF on its arrival
 * interface (identical NCFs rate-limited per interface), adds that interface to the repair
 * state of each SQN it names, and is forwarded intact to the upstream neighbour unless every
 * SQN it names is being eliminated. NNAKs are never confirmed, retried, nor add an interface.
 * Here each SQN's event is named and its rows' actions are kept; what an event does in each
 * phase is fsm.c's table.
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

unsigned cp_nak_steps(const struct pgm_packet *pkt, struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST])
{
	unsigned n = 1;

	steps[0] = (struct cp_nak_step){.sqn = pkt->sqn, .id = CP_NIL};
	if (pgm_opt_has(&pkt->opt, PGM_OPT_NAK_LIST)) {
		for (unsigned i = 0; i < pkt->opt.nak_list_count && i < PGM_MAX_NAK_LIST; i++)
			steps[n++] = (struct cp_nak_step){
				.sqn = pgm_opt_nak_list_sqn(&pkt->opt, i), .id = CP_NIL};
	}
	return n;
}

bool cp_sqn_in_window(const struct cp *cp, const struct cp_session *s, uint32_t sqn)
{
	if (!cp->cfg.nak_window_check)
		return true;
	/* SPM_TRAIL 0 with SPM_LEAD 0x80000000 means no window information (8.1) */
	if (s->trail == 0 && s->lead == 0x80000000u)
		return true;
	/* an empty window has lead = trail - 1; anything wider than half the space is bogus */
	if (s->lead - s->trail + 1u > 0x80000000u)
		return true;
	return (int32_t)(sqn - s->trail) >= 0 && (int32_t)(sqn - s->lead) <= (int32_t)NAK_LEAD_SLACK;
}

/* Is the SPM window usable, and are all the SQNs inside it (leniently at the leading edge)? */
static bool in_window(const struct cp *cp, const struct cp_session *s,
	const struct cp_nak_step *steps, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		if (!cp_sqn_in_window(cp, s, steps[i].sqn))
			return false;
	}
	return true;
}

/*
 * 13.6 for a restarted router: NAKs of unknown TSIs an interface may solicit SPMs for per
 * second, and how many sources one NAK may ask. A restart learns its sessions from the first
 * NAK of each (not the sources' next ambient SPM, which ZeroMQ's send up to 30 s apart, after
 * its receivers gave up); a host on the link gets no more from us than it could ask of the
 * sources itself, at most ten NAKs' worth of SPMs a second, and costs us at most ten walks of
 * the routes, whatever it sends.
 */
#define SPMR_PER_SECOND	 10
#define SPMR_MAX_SOURCES 4

#define SPMR_PERIOD	 (CP_SEC(1) / SPMR_PER_SECOND)

/* a second's worth may go at once, as limits.c's session rate */
static bool spmr_rate_ok(struct cp_iface *ifp, cp_time_t now)
{
	if (ifp->spmr_tat > now + CP_SEC(1) - SPMR_PERIOD)
		return false;
	ifp->spmr_tat = (ifp->spmr_tat > now ? ifp->spmr_tat : now) + SPMR_PERIOD;
	return true;
}

/*
 * A unicast NAK for a TSI without source-path state: its receivers NAK us because of the SPMs
 * we forwarded, so we lost the state (a restart, kill -9 included) and must learn the session
 * before the receivers give up. The NAK is dropped (nothing to confirm it with: an NCF is
 * multicast from the source's address, which the NAK need not name, and upstream is unknown),
 * and its session's SPM is asked for with an SPMR, which the source MUST answer at once (13.6):
 * the receivers' next NAK finds the session. Only to sources whose mirrored multicast route
 * sends NAK_GRP out by the NAK's interface (in by another), so that the NAK's sender cannot
 * aim the SPMR anywhere else; NAK_SRC, when it is not ours (OpenPGM receivers name the SPM's
 * path, us), must be one of them.
 */
static void solicit_spm(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if)
{
	const struct pgm_packet *pkt = in->pkt;
	struct pgm_nla srcs[SPMR_MAX_SOURCES];
	struct cp_action act;
	struct cp_iface *up;
	struct pgm_tsi tsi;
	unsigned n, i;
	int ifindex;

	if (in_if == NULL || !in_if->assist || cp->route_sources == NULL)
		return;
	if (!spmr_rate_ok(in_if, in->now)) {
		/* before the walk of the routes: a flood of such NAKs costs a counter each */
		cp_count(cp, in_if, NULL, CP_C_SPMR_RATE_LIMITED, 1);
		return;
	}
	n = cp->route_sources(
		cp->route_sources_ctx, &pkt->nak_grp, in_if->ifindex, srcs, SPMR_MAX_SOURCES);
	if (n > SPMR_MAX_SOURCES)
		n = SPMR_MAX_SOURCES;
	if (n > 0 && cp_nak_dest_usable(cp, &pkt->nak_src)) {
		for (i = 0; i < n && !pgm_nla_equal(&srcs[i], &pkt->nak_src); i++)
			;
		srcs[0] = pkt->nak_src;
		n = i < n ? 1 : 0;
	}
	if (n == 0) {
		cp_count(cp, in_if, NULL, CP_C_SPMR_NO_ROUTE, 1);
		return;
	}
	pgm_packet_tsi(pkt, &tsi);
	for (i = 0; i < n; i++) {
		ifindex = cp->rpf != NULL ? cp->rpf(cp->rpf_ctx, &srcs[i], &pkt->nak_grp) : 0;
		if (ifindex == 0 || ifindex == in_if->ifindex) {
			cp_count(cp, in_if, NULL, CP_C_SPMR_NO_ROUTE, 1);
			continue;
		}
		memset(&act, 0, sizeof(act));
		act.type = CP_ACT_SPMR;
		act.ifindex = ifindex;
		act.ip_dst = srcs[i];
		act.from_packet = true; /* SPMR_TSI and ports from the NAK */
		act.packet = pkt;
		act.tsi = tsi;
		act.data_dport = pgm_packet_data_dport(pkt);
		if (in->ip->udp) {
			/* the source takes unicast PGM on the port the receivers NAK to */
			act.udp = true;
			act.udp_sport = in->ip->udp_sport;
			act.udp_dport = in->ip->udp_dport;
		}
		cp_emit(cp, &act);
		up = cp_iface_find(cp, ifindex);
		cp_count(cp, in_if, NULL, CP_C_SPMR_SENT, 1);
		cp_count_out(up, NULL, PGM_SPMR);
		if (cp_log_enabled(cp, CP_LOG_EVENT)) {
			char label[24], src[64], ifname[CP_IFNAME_LEN + 8];

			cp_logf(cp, CP_LOG_EVENT, "tsi %s: NAK on %s without source-path state: SPMR to %s",
				pgm_tsi_format(&tsi, label, sizeof(label)), cp_if_label(cp, in->in_ifindex, ifname, sizeof(ifname)),
				pgm_nla_format(&srcs[i], src, sizeof(src)));
		}
	}
}

/* The session of a NAK routed through us, marked with its arrival interface; NULL if none. */
static struct cp_session *transit_session(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_session *s;
	struct cp_session_ext *ext;
	struct pgm_tsi tsi;
	uint32_t sid;

	pgm_packet_tsi(pkt, &tsi);
	if ((sid = cp_session_find(cp, &tsi, cp_packet_afi(in))) == CP_NIL)
		return NULL;
	s = cp_session_at(cp, sid);
	if (in_if != NULL && in_if->assist && (ext = cp_session_ext(s)) != NULL)
		ext->transit_mask |= cp_iface_bit(in_if);
	return s;
}

/*
 * The checks NAKs and NNAKs share. Returns the session, or CP_NIL with the verdict set: multicast
 * copies and packets routed through pass, the rest is dropped and counted.
 */
static uint32_t upstream_packet_session(struct cp *cp, const struct cp_packet *in,
	struct cp_iface *in_if, enum cp_counter no_session, const struct cp_nak_step *steps,
	unsigned n, struct cp_result *out)
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
	if (in->out_ifindex != 0 || in->transit) {
		/* addressed beyond us, the kernel routes it: a receiver NAKing its source directly.
		   Its repairs find no interface of its in the repair state the source's NCF makes
		   here, and never reach it; counted per session and interface to find it. */
		cp_count(cp, in_if, transit_session(cp, in, in_if), CP_C_NAK_TRANSIT, 1);
		return CP_NIL;
	}
	out->verdict = CP_DROP;
	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_lookup(cp, &tsi, cp_packet_afi(in));
	if (sid == CP_NIL) {
		cp_count(cp, in_if, NULL, no_session, 1);
		if (pkt->type == PGM_NAK)
			solicit_spm(cp, in, in_if);
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
			(in_if == NULL ||
				!pgm_nla_equal(&pkt->nak_src,
					cp_if_addr_for(in_if, pkt->nak_src.afi, NULL))))) {
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
	if (!in_window(cp, s, steps, n)) {
		cp_count(cp, in_if, s, CP_C_NAK_OUT_OF_WINDOW, 1);
		return CP_NIL;
	}
	return sid;
}

/* One NAK or NNAK packet to dest with the steps' SQNs that go there: the TPDU intact when
 * `intact` (then they all do), else built from the SQNs. */
static void send_nak(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	enum cp_nak_dest dest, const struct cp_nak_step *steps, unsigned n, bool intact)
{
	enum cp_action_type type = in->pkt->type == PGM_NNAK ? CP_ACT_NNAK : CP_ACT_NAK;
	struct cp_iface *up;
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = type;
	if (!cp_nak_dest_addr(s, dest, &act.ifindex, &act.ip_dst))
		return;
	up = cp_iface_find(cp, act.ifindex);
	act.router_alert = in->ip->router_alert;
	act.from_packet = intact;
	act.packet = in->pkt;
	act.udp = in->ip->udp;
	act.udp_sport = in->ip->udp_sport;
	act.udp_dport = in->ip->udp_dport;
	act.tsi = s->tsi;
	act.data_dport = s->data_dport;
	for (unsigned i = 0, k = 0; i < n; i++) {
		if (steps[i].dest != dest)
			continue;
		if (k++ == 0)
			act.sqn = steps[i].sqn;
		else
			act.list[act.list_count++] = steps[i].sqn;
	}
	act.nak_src = s->source;
	act.nak_grp = in->pkt->nak_grp;
	/* the TPDU goes intact, but for a NAK_SRC naming us (OpenPGM receivers, see above) */
	act.nak_src_rewrite = intact && !pgm_nla_equal(&in->pkt->nak_src, &s->source);
	act.parity = pgm_packet_is_parity(in->pkt);
	act.opt_invalid_mask = intact ? cp_opx_invalid_mask(in->pkt) : 0;
	if (act.opt_invalid_mask != 0)
		cp_count(cp, up, s, CP_C_OPX_INVALIDATED, 1);
	if (act.parity && intact && n == 1) {
		/* 11.6: forwarded with the largest known count (the caller put it in the step) */
		act.tgs = cp_parity_tgs(s);
		act.pkt_cnt = act.sqn & (act.tgs - 1);
		act.pkt_cnt_rewrite = act.tgs != 0 && act.sqn != in->pkt->sqn;
	}
	cp_emit(cp, &act);
	cp_count(cp, up, s, type == CP_ACT_NNAK ? CP_C_NNAK_FORWARDED : CP_C_NAK_FORWARDED, 1);
	if (dest != CP_DEST_UPSTREAM)
		cp_count(cp, up, s, CP_C_NAK_REDIRECTED, 1);
	cp_count_out(up, s, type == CP_ACT_NNAK ? PGM_NNAK : PGM_NAK);
}

/*
 * The NAK goes upstream as it came (7.3, 7.7): our address as IP source, the neighbour's (or a
 * DLR's, 9.5.3.2) as destination, the TPDU intact. When its SQNs go to different places, each
 * place gets a NAK built with its SQNs.
 */
void cp_forward_naks(struct cp *cp, const struct cp_packet *in, struct cp_session *s,
	const struct cp_nak_step *steps, unsigned n)
{
	unsigned dests = 0;

	for (unsigned i = 0; i < n; i++)
		dests |= 1u << steps[i].dest;
	if ((dests & (dests - 1)) == 0) {
		/* parity lists carry rewritten counts in every entry: built (11.6) */
		send_nak(cp, in, s, (enum cp_nak_dest)steps[0].dest, steps, n,
			!(n > 1 && pgm_packet_is_parity(in->pkt)));
		return;
	}
	for (unsigned d = CP_DEST_UPSTREAM; d <= CP_DEST_DLR_OFF; d++) {
		if ((dests & 1u << d) != 0)
			send_nak(cp, in, s, (enum cp_nak_dest)d, steps, n, false);
	}
}

/*
 * The NCF for a NAK (7.2, 8.3, 9.3.3): multicast to the group on the arrival interface with the
 * data source as IP source and Router Alert (unless the interface's settings say otherwise);
 * built from the NAK with its list, ports swapped back to downstream form. Shared with the
 * parity seam.
 */
/*
 * 15.3.2: our address to send a unicast NCF from and to name in its OPT_PATH_NLA, when the
 * session's subtree below the interface is marked failed; NULL when it is not, or when the
 * interface has no address of the session's family (the NAKer then gets the multicast NCF, as on
 * any interface).
 */
static const struct pgm_nla *unreach_path(const struct cp_iface *in_if, const struct cp_session *s)
{
	const struct pgm_nla *own;

	if (s->ext == NULL || (s->ext->unreach_mask & cp_iface_bit(in_if)) == 0)
		return NULL;
	own = cp_if_addr_for(in_if, cp_session_afi(s), NULL);
	return own->afi != 0 ? own : NULL;
}

void cp_send_ncf(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_session *s, uint32_t parity_cnt)
{
	const struct pgm_nla *path = unreach_path(in_if, s);
	bool unreach = path != NULL;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_packet_sqns(in->pkt, sqns);
	struct cp_action act;

	memset(&act, 0, sizeof(act));
	act.type = CP_ACT_NCF;
	act.ifindex = in->in_ifindex;
	act.ip_src = s->source; /* 7.2: the ODATA source's NLA, whatever NAK_SRC says */
	act.ip_dst = in->pkt->nak_grp;
	act.router_alert = cp_iface_config(cp, in_if)->router_alert;
	act.from_packet = true;
	act.packet = in->pkt;
	if (unreach) {
		/* 15.3.2: multicast no longer reaches below: unicast to the NAKer, from us */
		act.ip_src.afi = 0;
		act.ip_dst = in->ip->src;
		act.nbr_unreach = true;
		act.path = *path;
	}
	if (unreach && in->ip->udp) {
		act.udp = true;
		act.udp_sport = in->ip->udp_dport;
		act.udp_dport = in->ip->udp_sport;
	} else if ((s->flags & CP_SESSION_UDP) != 0) {
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
	act.pkt_cnt = parity_cnt;
	act.tgs = cp_parity_tgs(s);
	cp_ncf_advertise(cp, s, in_if, &act);
	cp_emit(cp, &act);
	cp_count(cp, in_if, s, CP_C_NCF_SENT, 1);
	if (unreach)
		cp_count(cp, in_if, s, CP_C_UNREACH_NCF_SENT, 1);
	cp_count_out(in_if, s, PGM_NCF);
}

/*
 * 7.2 storm protection: the first NCF for a (TSI, SQN, interface) goes at once, identical ones
 * on that interface within ncf_ivl are withheld. Each state keeps one window start and the mask
 * of interfaces confirmed since; a window ends ncf_ivl after it started. So an interface gets at
 * most two NCFs for one SQN in any ncf_ivl, and usually one.
 */
static bool ncf_withheld(struct cp_repair *r, uint64_t bit, cp_time_t now, cp_time_t ivl)
{
	const struct cp_repair_ncf *n = cp_repair_ncf(r);

	return ivl != 0 && (n->mask & bit) != 0 && now - n->stamp < ivl;
}

static void ncf_mark(struct cp_repair *r, uint64_t bit, cp_time_t now, cp_time_t ivl)
{
	struct cp_repair_ncf *n = cp_repair_ncf(r);

	if (n->mask == 0 || now - n->stamp >= ivl) {
		n->mask = 0;
		n->stamp = now;
	}
	n->mask |= bit;
}

/* A NAK or NNAK being handled: what the actions of its SQNs' rows share. */
struct nak_run {
	struct cp_nak_step *step; /* the SQN at hand */
	uint64_t bit;		  /* the arrival interface's slot */
	uint32_t src_bits;	  /* its IP source in a repair state's filter (nak_srcs) */
	bool receiver;		  /* NAK_SRC names us: an OpenPGM receiver, not a router */
	bool from_dlr;		  /* it came from the TSI's off-tree DLR */
	bool forward;		  /* some SQN goes on (9.3.3) */
	bool ncf;		  /* some SQN wants it confirmed now (7.2) */
};

/*
 * NAKs that crossed the repair. Repair state goes once the RDATA went everywhere it was asked
 * for (7.8), and a receiver's NAK sent before the NCF or the RDATA reached it, arriving after
 * the RDATA went by, found none: it made new state and went upstream, and the source repaired
 * again (in a NAK storm of 128 OpenPGM receivers, 241 of 247 NAKs beyond the first at the
 * source; a second RDATA of a fragmented APDU crashes libpgm 5.3 receivers that do not need
 * it). So, with a crossing window, repaired state stays that long (REPAIRED), and a NAK for it
 * is told apart by who sends it:
 *  - on an interface that had its copy, from an IP source that had not NAKed the SQN here:
 *    it crossed the repair on the wire, its sender has the copy or will have it. Eliminated,
 *    confirmed (7.2), counted (nak-crossed-repair);
 *  - the same source again (a downstream router asking for another of its branches, a
 *    receiver whose repair was lost below us), another interface, or after the window: a new
 *    request, as without the window (7.8);
 *  - but the same source again naming us as NAK_SRC is an OpenPGM receiver (routers, ours
 *    included, send the source's NLA): it sends a NAK list and at once a single NAK for its
 *    first SQN, and when the single one is held up behind the repair (a loaded host) it is a
 *    crossing NAK too (e2e fragment-repair: the source repaired twice and libpgm crashed). A
 *    receiver asks again for a repair it lost only after its NAK_RDATA_IVL, hundreds of ms at
 *    least, well beyond the window.
 * The sources are remembered in 32 bits per state, two bits a source from a keyed hash, from
 * the state's first NAK on: a false positive calls a crossing NAK a new request, RFC 3208's
 * behaviour. What it cannot tell: a receiver that lost the RDATA as well and NAKs for the first
 * time within the window (it is confirmed, and its next NAK goes upstream), and a downstream
 * router that had no state when the RDATA passed it and NAKs for the first time within the
 * window (the same). Hence a window of a few round trips, not NAK_ELIM_IVL.
 */
uint32_t cp_nak_src_bits(const struct cp *cp, const struct pgm_nla *src)
{
	uint64_t w[2] = {0, 0};
	uint64_t h;

	memcpy(w, src->addr, sizeof(src->addr));
	h = cp_hash64(&cp->hash_key, w[0] ^ (w[1] * 0x9e3779b97f4a7c15u) ^ src->afi);
	return (uint32_t)1 << (h & 31) | (uint32_t)1 << (h >> 5 & 31);
}

/* The arrival interface asks for the SQN; unreach.c counts its duplicates (15.2, 15.3). */
static void nak_listed(struct cp *cp, struct cp_fsm *x, const struct nak_run *run)
{
	struct cp_repair *r = x->r;
	bool added = (r->if_mask & run->bit) == 0;

	r->if_mask |= run->bit;
	r->nak_srcs |= run->src_bits;
	cp_nak_seen(cp, x->s, r, x->in_if, added);
}

/* 7.3: the NAK goes upstream (or to a DLR, 9.5.3.2), repeated until an NCF confirms it. */
static bool nak_forwarded(struct cp *cp, struct cp_fsm *x)
{
	struct nak_run *run = x->run;

	nak_listed(cp, x, run);
	cp_repair_start_pending(cp, x->r, x->s, x->now);
	if (x->s->ext != NULL) /* no DLR without the extension */
		run->step->dest = (uint8_t)cp_nak_dest(cp, x->s, x->r);
	cp_repair_schedule(cp, x->id);
	run->forward = true;
	return true;
}

bool cp_fsm_nak_first(struct cp *cp, struct cp_fsm *x)
{
	struct nak_run *run = x->run;

	if (!cp_fsm_create(cp, x, false)) {
		/* a limit (limits.c) or no memory: confirmed and forwarded all the same, with
		   nothing to repeat it nor to eliminate its duplicates */
		cp_count(cp, x->in_if, x->s, CP_C_NAK_STATELESS, 1);
		run->step->untracked = true;
		run->step->dest = (uint8_t)cp_nak_dest(cp, x->s, NULL);
		run->forward = run->ncf = true;
		return false;
	}
	cp_count(cp, x->in_if, x->s, CP_C_NAK_UNIQUE, 1);
	return nak_forwarded(cp, x);
}

/* The repair went by: a new request, not a duplicate; interfaces still waiting for their copy
 * stay listed. */
bool cp_fsm_nak_after_repair(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	r->if_mask &= ~r->repaired_mask;
	r->repaired_mask = 0;
	cp_repair_ncf(r)->mask = 0;
	cp_count(cp, x->in_if, x->s, CP_C_NAK_UNIQUE, 1);
	return nak_forwarded(cp, x);
}

bool cp_fsm_nak_again(struct cp *cp, struct cp_fsm *x)
{
	return nak_forwarded(cp, x);
}

bool cp_fsm_nak_after_nnak(struct cp *cp, struct cp_fsm *x)
{
	cp_count(cp, x->in_if, x->s, CP_C_NAK_UNIQUE, 1);
	return nak_forwarded(cp, x);
}

/* 7.4: eliminated, but the interface is listed; the list goes where the NAK went if another
 * SQN takes it there. */
bool cp_fsm_nak_duplicate(struct cp *cp, struct cp_fsm *x)
{
	struct nak_run *run = x->run;
	uint8_t flags = x->r->flags;

	nak_listed(cp, x, run);
	run->step->dest = (flags & CP_REPAIR_DLR_UP)	? CP_DEST_DLR_UP
			  : (flags & CP_REPAIR_DLR_OFF) ? CP_DEST_DLR_OFF
							: CP_DEST_UPSTREAM;
	return true;
}

/* A NAK that crossed the repair: eliminated; its source is known from now on. Not a duplicate
 * for 15.2 and 15.3: nothing below failed. */
bool cp_fsm_nak_crossed(struct cp *cp, struct cp_fsm *x)
{
	struct nak_run *run = x->run;

	x->r->nak_srcs |= run->src_bits;
	cp_count(cp, x->in_if, x->s, CP_C_NAK_CROSSED_REPAIR, 1);
	run->step->dest = CP_DEST_UPSTREAM;
	return true;
}

/* 9.5.3.2: the DLR lacks it too: upstream for this SQN */
bool cp_fsm_nak_dlr_fallback(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	r->flags = (uint8_t)((r->flags & ~CP_REPAIR_DLR) | CP_REPAIR_NO_DLR);
	cp_count(cp, x->in_if, x->s, CP_C_DLR_NAK_FALLBACK, 1);
	cp_log_repair(cp, CP_LOG_EVENT, x->s, x->sqn,
		"NAK from the off-tree DLR it was redirected to: "
		"redirect dropped, forwarded upstream");
	return nak_forwarded(cp, x);
}

/*
 * Did the NAK cross the repair (see cp_nak_src_bits)? The rule is per interface, so it holds while
 * the repair is still forwarding as well (FORWARDING: copies went out on some interfaces, others
 * still wait for theirs): a NAK on an interface that had its copy is told apart the same way.
 * Repaired state lives just the window; a forwarding one counts it from its first copy (the
 * copies of one RDATA come together, and rdata_end is the linger from that copy).
 */
static bool nak_crossed(const struct cp *cp, const struct cp_session *s, const struct cp_repair *r,
	const struct nak_run *run, cp_time_t now)
{
	uint32_t cross_ms;

	if (r->phase != CP_PHASE_FORWARDING || (r->repaired_mask & run->bit) == 0 ||
		(!run->receiver && (r->nak_srcs & run->src_bits) == run->src_bits))
		return false;
	if ((r->flags & CP_REPAIR_HELD) != 0)
		return true;
	cross_ms = cp_crossing_ms(cp, s);
	return cross_ms != 0 &&
	       now + CP_MS(cp->cfg.rdata_linger_ms) < r->rdata_end + CP_MS(cross_ms);
}

/* The event of a NAK for state r (NULL: none). */
static enum cp_repair_event nak_event(const struct cp *cp, const struct cp_session *s,
	const struct cp_repair *r, const struct nak_run *run, cp_time_t now)
{
	if (r == NULL)
		return CP_EV_NAK;
	if (run->from_dlr && (r->flags & CP_REPAIR_DLR_OFF) != 0)
		return CP_EV_NAK_FROM_DLR;
	if (nak_crossed(cp, s, r, run, now))
		return CP_EV_NAK_CROSSED;
	return cp_repair_eliminating(r, now) ? CP_EV_NAK_DUPLICATE : CP_EV_NAK;
}

void cp_nak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_nak_steps(pkt, steps);
	const struct cp_if_config *if_cfg;
	struct nak_run run = {.step = NULL};
	struct cp_session *s;
	struct cp_fsm x;
	bool upstream = false;
	cp_time_t now = in->now, ncf_ivl;
	uint32_t sid;

	sid = upstream_packet_session(cp, in, in_if, CP_C_NAK_NO_SESSION, steps, n, out);
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
	run.from_dlr = cp_from_offtree_dlr(s, in);
	run.bit = cp_iface_bit(in_if);
	run.src_bits = cp_nak_src_bits(cp, &in->ip->src);
	run.receiver = !pgm_nla_equal(&pkt->nak_src, &s->source);
	if_cfg = cp_iface_config(cp, in_if);
	ncf_ivl = CP_MS(if_cfg->ncf_ivl_ms);
	x = (struct cp_fsm){
		.s = s, .sid = sid, .now = now, .in_if = in_if, .run = &run, .nak = true};
	for (unsigned i = 0; i < n; i++) {
		struct cp_nak_step *st = &steps[i];

		/* looked up as it comes: making room for one SQN's state may evict (limits.c) */
		st->id = cp_repair_find_live(cp, sid, st->sqn, now);
		cp_fsm_state(cp, &x, st->id);
		x.sqn = st->sqn;
		run.step = st;
		st->row = cp_repair_fsm(cp, &x, nak_event(cp, s, x.r, &run, now));
		if (st->row == NULL)
			continue;
		st->id = x.id;
		upstream = upstream || st->dest == CP_DEST_UPSTREAM;
		if (!ncf_withheld(x.r, run.bit, now, ncf_ivl))
			run.ncf = true;
	}

	/* 9.3.3: forwarded intact unless every SQN is eliminated (pending ones count as such);
	 * 15.3.2: not at all while our upstream neighbour is unreachable. Made before the NCF:
	 * the repair waits for it (the environment decides what leaves at once, assist output) */
	if (run.forward && (s->flags & CP_SESSION_SUSPENDED) != 0) {
		cp_count(cp, in_if, s, CP_C_NAK_SUSPENDED, 1);
		run.forward = false;
	} else if (run.forward) {
		cp_forward_naks(cp, in, s, steps, n);
	} else {
		cp_count(cp, in_if, s, CP_C_NAK_ELIMINATED, n);
	}

	/* 7.2: every NAK is confirmed at once, unless an identical NCF just went out there */
	if (run.ncf) {
		for (unsigned i = 0; i < n; i++) {
			if (steps[i].row != NULL)
				ncf_mark(cp_repair_at(cp, steps[i].id), run.bit, now, ncf_ivl);
		}
		cp_send_ncf(cp, in, in_if, s, 0);
	} else {
		cp_count(cp, in_if, s, CP_C_NCF_RATE_LIMITED, 1);
	}
	if (run.forward && upstream && !run.from_dlr)
		cp_dlr_discover(cp, s, now);

	if (cp_log_enabled(cp, CP_LOG_EVENT)) {
		char ifname[CP_IFNAME_LEN + 8];
		const char *arg[3] = {ifname,
			run.forward ? "duplicate, list forwarded for other SQNs" : "eliminated"};

		cp_if_label(cp, in->in_ifindex, ifname, sizeof(ifname));
		for (unsigned i = 0; i < n; i++) {
			if (steps[i].untracked)
				cp_log_repair(cp, CP_LOG_EVENT, s, steps[i].sqn,
					"NAK on %s: no room for state (forwarded)", ifname);
			else if (steps[i].row != NULL)
				cp_fsm_log(cp, s, steps[i].sqn, steps[i].row, arg);
		}
	}
}

/*
 * 9.5.3.2: NNAKs are forwarded only when no repair state exists for them (state they create is
 * flagged and lives NAK_ELIM_IVL); they are never confirmed, never retried, and never add their
 * interface. NNAKs from an off-tree DLR for repairs we requested from it are always forwarded:
 * they come before its RDATA, which the state is there for.
 */
bool cp_fsm_nnak_first(struct cp *cp, struct cp_fsm *x)
{
	const struct cp_if_config *cfg = cp_repair_config(cp, x->s);

	if (cfg->nak_elim_ivl_ms == 0)
		return false; /* it would live for no time at all */
	if (!cp_fsm_create(cp, x, false))
		return false;
	x->r->flags = CP_REPAIR_NNAK;
	x->r->elim_end = cp_deadline(x->now, cfg->nak_elim_ivl_ms);
	cp_repair_schedule(cp, x->id);
	return true;
}

bool cp_fsm_nnak_known(struct cp *cp, struct cp_fsm *x)
{
	struct nak_run *run = x->run;

	if (run->from_dlr && (x->r->flags & CP_REPAIR_DLR_OFF) != 0) {
		run->forward = true;
		cp_count(cp, x->in_if, x->s, CP_C_DLR_NNAK, 1);
	}
	return true;
}

void cp_nnak(
	struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	struct cp_nak_step steps[1 + PGM_MAX_NAK_LIST];
	unsigned n = cp_nak_steps(pkt, steps);
	struct nak_run run = {.step = NULL};
	struct cp_fsm x;
	struct cp_session *s;
	uint32_t sid;

	sid = upstream_packet_session(cp, in, in_if, CP_C_NNAK_NO_SESSION, steps, n, out);
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
	run.from_dlr = cp_from_offtree_dlr(s, in);
	x = (struct cp_fsm){.s = s, .sid = sid, .now = in->now, .in_if = in_if, .run = &run};
	for (unsigned i = 0; i < n; i++) {
		cp_fsm_state(cp, &x, cp_repair_find_live(cp, sid, steps[i].sqn, in->now));
		x.sqn = steps[i].sqn;
		if (x.r == NULL)
			run.forward = true;
		cp_repair_fsm(cp, &x, CP_EV_NNAK);
	}
	if (run.forward) {
		cp_forward_naks(cp, in, s, steps, n);
	} else {
		cp_count(cp, in_if, s, CP_C_NNAK_ELIMINATED, n);
		cp_log_repair(cp, CP_LOG_EVENT, s, steps[0].sqn,
			"NNAK: repair state exists (eliminated)");
	}
}
