/*
 * One-line summaries of parsed PGM packets for debug logs and replay output:
 *   "NAK 0a0b0c0d0e0f.1234 sqn 17 list 18,19 src 198.18.0.1 grp 239.192.0.1"
 * The TSI is the session's (upstream types have their ports swapped back, 8.3).
 */
#include <stdarg.h>
#include <stdio.h>

#include "dataplane/wire/pgm_wire.h"

struct line {
	char *buf;
	size_t len;
	size_t used; /* characters in buf, excluding the NUL; never above len - 1 */
};

static void add(struct line *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct line *l, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (l->len == 0 || l->used + 1 >= l->len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(l->buf + l->used, l->len - l->used, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	l->used += (size_t)n < l->len - l->used ? (size_t)n : l->len - l->used - 1;
}

static void add_nla(struct line *l, const char *label, const struct pgm_nla *nla)
{
	char text[64];

	add(l, " %s %s", label, pgm_nla_format(nla, text, sizeof(text)));
}

static void add_options(struct line *l, const struct pgm_packet *pkt)
{
	const struct pgm_options *o = &pkt->opt;
	unsigned i;
	bool first = true;

	for (i = 1; i < o->count && i < PGM_MAX_OPTIONS; i++) {
		if (o->type[i] == PGM_OPT_NAK_LIST)
			continue; /* printed as "list" */
		add(l, "%s%s", first ? " opts " : ",", pgm_opt_name(o->type[i]));
		first = false;
	}
	if (pgm_opt_has(o, PGM_OPT_FRAGMENT))
		add(l, " frag %u+%u/%u", o->frag_first_sqn, o->frag_offset, o->frag_apdu_len);
	if (pgm_opt_has(o, PGM_OPT_NAK_BO_IVL))
		add(l, " nak-bo-ivl %uus/%u", o->nak_bo_ivl, o->nak_bo_ivl_sqn);
	if (pgm_opt_has(o, PGM_OPT_PARITY_PRM))
		add(l, " tgs %u", o->parity_tgs);
	if (pgm_opt_has(o, PGM_OPT_REDIRECT))
		add_nla(l, "dlr", &o->redirect);
	if (pgm_opt_has(o, PGM_OPT_PATH_NLA))
		add_nla(l, "path-nla", &o->path_nla);
}

size_t pgm_packet_format(const struct pgm_packet *pkt, char *buf, size_t len)
{
	struct line l = {.buf = buf, .len = len};
	struct pgm_tsi tsi;
	char tsi_text[24];
	unsigned i;

	if (len == 0)
		return 0;
	buf[0] = '\0';
	pgm_packet_tsi(pkt, &tsi);
	add(&l, "%s %s", pgm_type_name(pkt->type),
		pgm_tsi_format(&tsi, tsi_text, sizeof(tsi_text)));
	switch (pkt->type) {
	case PGM_SPM:
		add(&l, " sqn %u trail %u lead %u", pkt->sqn, pkt->trail, pkt->lead);
		add_nla(&l, "path", &pkt->path);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		add(&l, " sqn %u trail %u len %u", pkt->sqn, pkt->trail, pkt->tsdu_len);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		add(&l, " sqn %u", pkt->sqn);
		for (i = 0; i < pkt->opt.nak_list_count; i++)
			add(&l, "%s%u", i == 0 ? " list " : ",",
				pgm_opt_nak_list_sqn(&pkt->opt, i));
		add_nla(&l, "src", &pkt->nak_src);
		add_nla(&l, "grp", &pkt->nak_grp);
		break;
	case PGM_POLL:
		add(&l, " sqn %u round %u s-type %u", pkt->sqn, pkt->poll_round, pkt->poll_s_type);
		add_nla(&l, "path", &pkt->path);
		add(&l, " bo-ivl %uus rand 0x%08x mask 0x%08x", pkt->poll_bo_ivl, pkt->poll_rand,
			pkt->poll_mask);
		break;
	case PGM_POLR:
		add(&l, " sqn %u round %u", pkt->sqn, pkt->polr_round);
		break;
	case PGM_ACK:
		add(&l, " rx-max %u bitmap 0x%08x", pkt->sqn, pkt->ack_bitmap);
		break;
	default:
		break;
	}
	if (pkt->opt_flags & PGM_OPT_PARITY)
		add(&l, (pkt->opt_flags & PGM_OPT_VAR_PKTLEN) ? " parity var-len" : " parity");
	add_options(&l, pkt);
	if (pkt->checksum == 0)
		add(&l, " no-checksum");
	return l.used;
}
