/*
 * Constrained RDATA forwarding (RFC 3208 7.8).
 *
 * The data plane hands over one copy of an RDATA per egress interface (router/assist/packet.c
 * makes the copies from the kernel's multicast route). A copy is accepted only if its
 * egress interface asked for the repair (is in the repair state's interface set) and is not the
 * interface the RDATA came from. The first copy moves the state to FORWARDING; the state is
 * deleted once every listed interface had its copy (with a crossing window on, it is kept that
 * long first, forwarding nothing more: REPAIRED, see nak.c), or after rdata_linger when some
 * listed interface never gets one (say, multicast routing no longer sends the group there). The
 * first copy and the last one are the state's events (fsm.c); the copies between change nothing
 * but the interfaces repaired.
 */
#include "control/cp_internal.h"

bool cp_fsm_rdata_forward(struct cp *cp, struct cp_fsm *x)
{
	struct cp_repair *r = x->r;

	r->rpt_next = r->rpt_end = r->elim_end = 0;
	r->rdata_end = cp_deadline(x->now, cp->cfg.rdata_linger_ms);
	return true;
}

/* Anticipated only: nobody here asked, and it is answered now. */
bool cp_fsm_rdata_unrequested(struct cp *cp, struct cp_fsm *x)
{
	cp_count(cp, x->out_if, x->s, CP_C_RDATA_NO_STATE, 1);
	cp_repair_delete(cp, x->id, CP_C_COUNT);
	return true;
}

static const struct cp_fsm_row *rdata_event(struct cp *cp, const struct cp_packet *in,
	struct cp_iface *in_if, struct cp_iface *out_if, struct cp_session *s, uint32_t sid,
	uint32_t id, struct cp_repair *r, enum cp_repair_event ev)
{
	struct cp_fsm x = {
		.s = s,
		.sid = sid,
		.id = id,
		.r = r,
		.sqn = in->pkt->sqn,
		.now = in->now,
		.in_if = in_if,
		.out_if = out_if,
	};

	return cp_repair_fsm(cp, &x, ev);
}

void cp_rdata(struct cp *cp, const struct cp_packet *in, struct cp_iface *in_if,
	struct cp_iface *out_if, struct cp_result *out)
{
	const struct pgm_packet *pkt = in->pkt;
	const struct cp_fsm_row *row = NULL;
	struct cp_session *s;
	struct cp_repair *r;
	struct pgm_tsi tsi;
	uint64_t bit, in_bit, waiting;
	uint32_t sid, id;

	pgm_packet_tsi(pkt, &tsi);
	sid = cp_session_lookup(cp, &tsi, cp_packet_afi(in));
	if (sid == CP_NIL) {
		/* we never rewrote this TSI's SPMs, so its receivers did not NAK through us */
		cp_count(cp, in_if, NULL, CP_C_RDATA_NO_SESSION, 1);
		return;
	}
	s = cp_session_at(cp, sid);
	cp_count_in(NULL, s, PGM_RDATA);
	if (in->out_ifindex == 0) {
		/* unicast to us: an off-tree DLR's repair (9.5.3.2); multicast seen once: no
		 * egress to decide on, the kernel routes it */
		if (!pgm_ip_dst_is_multicast(in->ip))
			cp_offtree_dlr(cp, in, in_if, out);
		return;
	}
	out->verdict = CP_DROP;
	if (in->in_ifindex != s->upstream_ifindex) {
		/* repairs come down the tree (off-tree DLRs unicast theirs to us) */
		cp_count(cp, in_if, s, CP_C_RDATA_NOT_UPSTREAM, 1);
		return;
	}
	if (pgm_packet_is_parity(pkt)) {
		cp_parity_rdata(cp, in, in_if, out_if, s, out);
		return;
	}
	id = cp_repair_find_live(cp, sid, pkt->sqn, in->now);
	if (id == CP_NIL) {
		cp_count(cp, out_if, s, CP_C_RDATA_NO_STATE, 1);
		return;
	}
	r = cp_repair_at(cp, id);
	bit = cp_iface_bit(out_if);
	in_bit = cp_iface_bit(in_if);
	if (r->phase != CP_PHASE_FORWARDING) {
		row = rdata_event(cp, in, in_if, out_if, s, sid, id, r,
			(r->if_mask & ~in_bit) == 0 ? CP_EV_RDATA_UNREQUESTED : CP_EV_RDATA);
		if (row == NULL || row->next == CP_FSM_NONE)
			return;
	}
	if ((r->if_mask & bit) == 0 || bit == in_bit) {
		cp_count(cp, out_if, s, CP_C_RDATA_NO_INTERFACE, 1);
	} else if ((r->repaired_mask & bit) != 0) {
		cp_count(cp, out_if, s, CP_C_RDATA_DUPLICATE, 1);
	} else {
		r->repaired_mask |= bit;
		out->verdict = CP_ACCEPT;
		cp_count(cp, out_if, s, CP_C_RDATA_FORWARDED, 1);
		cp_count_out(out_if, s, PGM_RDATA);
	}
	waiting = r->if_mask & ~in_bit & ~r->repaired_mask;
	if (waiting == 0 && (r->flags & CP_REPAIR_HELD) == 0)
		rdata_event(cp, in, in_if, out_if, s, sid, id, r,
			cp_crossing_ms(cp, s) != 0 ? CP_EV_RDATA_REPAIRED_HOLD
						   : CP_EV_RDATA_REPAIRED);
	else if (row != NULL) /* the first copy set the linger; later ones change no deadline */
		cp_repair_schedule(cp, id);
}
