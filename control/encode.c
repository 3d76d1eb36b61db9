/*
 * Encoding the core's actions into TPDUs with the codec (dataplane/wire): the one place that
 * turns the control plane's decisions into PGM bytes, so the data plane, the replay and the
 * tests send and print the same packets.
 */
#include <string.h>

#include "control/control.h"

const char *cp_action_name(enum cp_action_type type)
{
	static const char *const names[] = {
		[CP_ACT_NCF] = "NCF",
		[CP_ACT_NAK] = "NAK",
		[CP_ACT_NNAK] = "NNAK",
		[CP_ACT_POLR] = "POLR",
		[CP_ACT_RDATA] = "RDATA",
		[CP_ACT_SPM] = "SPM",
		[CP_ACT_POLL] = "POLL",
		[CP_ACT_SPMR] = "SPMR",
	};

	return (unsigned)type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

/* Header fields for a downstream (SPM, POLL) or upstream (POLR) packet of the action's TSI. */
static void action_header(const struct cp_action *a, bool upstream, struct pgm_header_params *hdr)
{
	hdr->sport = upstream ? a->data_dport : a->tsi.sport;
	hdr->dport = upstream ? a->tsi.sport : a->data_dport;
	memcpy(hdr->gsi, a->tsi.gsi, PGM_GSI_LEN);
}

/* A copy of the action's packet (forwarded NAK/NNAK, re-sourced RDATA), rewritten. */
static size_t copy_tpdu(
	const struct cp_action *a, const struct pgm_packet *pkt, uint8_t *tpdu, size_t cap)
{
	if (pkt->tpdu_len > cap)
		return 0;
	memcpy(tpdu, pkt->tpdu, pkt->tpdu_len);
	if (a->nak_src_rewrite && !pgm_rewrite_nak_src(tpdu, pkt, &a->nak_src))
		return 0;
	if (a->pkt_cnt_rewrite && !pgm_rewrite_parity_pkt_cnt(tpdu, pkt, a->tgs, a->pkt_cnt))
		return 0;
	if (a->opt_invalid_mask != 0 && !pgm_rewrite_opts_invalid(tpdu, pkt, a->opt_invalid_mask))
		return 0;
	return pkt->tpdu_len;
}

/* An NCF: made from the NAK it answers (the NAK's own list), else from the fields. */
static size_t ncf_tpdu(const struct cp_action *a, const struct pgm_packet *nak, uint8_t *tpdu,
	size_t cap, struct pgm_build_options *o)
{
	size_t len;

	if (a->nak_bo_ivl) {
		o->nak_bo_ivl = true;
		o->nak_bo_ivl_us = a->nak_bo_ivl_us;
		o->nak_bo_ivl_sqn = a->nak_bo_ivl_sqn;
	}
	if (a->nbr_unreach) {
		/* 15.3.2: a unicast NCF says multicast does not reach below us */
		o->nbr_unreach = true;
		o->path_nla = &a->path;
	}
	if (nak == NULL)
		return pgm_build_ncf_for_tsi(
			tpdu, cap, &a->tsi, a->data_dport, a->sqn, &a->nak_src, &a->nak_grp, o);
	/* a NAK without options: its own bytes, ports swapped and type changed */
	if (!a->nak_bo_ivl && !a->nbr_unreach &&
		(len = pgm_build_ncf_from_plain_nak(tpdu, cap, nak)) != 0)
		return len;
	o->nak_list = NULL;
	o->nak_list_count = 0;
	o->extra_header_flags = 0;
	if (pgm_packet_is_parity(nak) && a->tgs != 0)
		return pgm_build_ncf_from_nak_tgs(tpdu, cap, nak, a->tgs, a->pkt_cnt, o);
	return pgm_build_ncf_from_nak(tpdu, cap, nak, 0, o);
}

size_t cp_action_tpdu(const struct cp_action *a, uint8_t *tpdu, size_t cap)
{
	const struct pgm_packet *pkt = a->from_packet ? a->packet : NULL;
	struct pgm_build_options o = {0};
	struct pgm_header_params hdr;

	if (a->from_packet && pkt == NULL)
		return 0;
	o.nak_list = a->list;
	o.nak_list_count = a->list_count;
	if (a->parity)
		o.extra_header_flags = PGM_OPT_PARITY;
	switch (a->type) {
	case CP_ACT_NCF:
		return ncf_tpdu(a, pkt, tpdu, cap, &o);
	case CP_ACT_NAK:
	case CP_ACT_NNAK:
		if (pkt != NULL)
			return copy_tpdu(a, pkt, tpdu, cap);
		return pgm_build_nak_for_tsi(tpdu, cap, a->type == CP_ACT_NAK ? PGM_NAK : PGM_NNAK,
			&a->tsi, a->data_dport, a->sqn, &a->nak_src, &a->nak_grp, &o);
	case CP_ACT_RDATA:
		/* an off-tree DLR's repair, "as if from the source": the TPDU unchanged */
		return pkt != NULL && pkt->type == PGM_RDATA ? copy_tpdu(a, pkt, tpdu, cap) : 0;
	case CP_ACT_POLR:
		action_header(a, true, &hdr);
		return pgm_build_polr(tpdu, cap, &hdr, a->sqn, a->poll_round, NULL);
	case CP_ACT_POLL:
		action_header(a, false, &hdr);
		return pgm_build_poll(tpdu, cap, &hdr, a->sqn, a->poll_round, a->poll_s_type,
			&a->path, a->poll_bo_ivl_us, a->poll_rand, a->poll_mask, NULL);
	case CP_ACT_SPMR:
		action_header(a, true, &hdr);
		return pgm_build_spmr(tpdu, cap, &hdr, NULL);
	case CP_ACT_SPM:
		memset(&o, 0, sizeof(o));
		o.nbr_unreach = a->nbr_unreach;
		action_header(a, false, &hdr);
		return pgm_build_spm(tpdu, cap, &hdr, a->sqn, a->trail, a->lead, &a->path, &o);
	default:
		return 0;
	}
}
