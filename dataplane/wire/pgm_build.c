/*
 * Building PGM packets (RFC 3208 sections 8, 9, 11.8, 12.7, 13.6, 14.7, 15.4), rewriting them in
 * place with incremental checksums (RFC 1624), and wrapping them in IPv4, IPv6 and UDP.
 *
 * Builders check structure, not meaning: every NLA needs a known family, a NAK list at most 62
 * entries, every length must fit its field and the buffer. Values (list order, parity group
 * sizes) are written as given, so tests can make packets the parser must reject.
 */
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static bool nla_valid(const struct pgm_nla *nla)
{
	return nla != NULL && pgm_nla_len(nla) != 0;
}

/* ---- a bounded writer ---- */

struct writer {
	uint8_t *out;
	size_t cap;
	size_t pos;
	bool overflow;
};

static uint8_t *w_reserve(struct writer *w, size_t n)
{
	uint8_t *p;

	if (w->overflow || n > w->cap - w->pos) {
		w->overflow = true;
		return NULL;
	}
	p = w->out + w->pos;
	memset(p, 0, n);
	w->pos += n;
	return p;
}

static void w_u16(struct writer *w, uint16_t v)
{
	uint8_t *p = w_reserve(w, 2);

	if (p != NULL)
		put16(p, v);
}

static void w_u32(struct writer *w, uint32_t v)
{
	uint8_t *p = w_reserve(w, 4);

	if (p != NULL)
		put32(p, v);
}

static void w_bytes(struct writer *w, const void *src, size_t n)
{
	uint8_t *p = w_reserve(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

/* An NLA as packet bodies and options carry it: AFI, reserved, address. */
static void w_nla(struct writer *w, const struct pgm_nla *nla)
{
	w_u16(w, nla->afi);
	w_u16(w, 0);
	w_bytes(w, nla->addr, pgm_nla_len(nla));
}

/* ---- options ---- */

struct opt_list {
	struct writer *w;
	size_t start; /* OPT_LENGTH offset */
	size_t last;  /* offset of the last option written, 0 if none */
	bool network; /* a network-significant option was written */
};

/* Opens an option of total length len; the value follows. byte2 holds F and OPX. */
static void opt_begin(struct opt_list *l, unsigned type, size_t len, uint8_t byte2, uint8_t byte3)
{
	uint8_t *p;

	if (len < 4 || len > 255) {
		l->w->overflow = true;
		return;
	}
	l->last = l->w->pos;
	p = w_reserve(l->w, 4);
	if (p == NULL)
		return;
	p[0] = (uint8_t)type;
	p[1] = (uint8_t)len;
	p[2] = byte2;
	p[3] = byte3;
}

/* Walks raw options; returns the offset of the last one, or -1 if they do not tile exactly. */
static long raw_last_option(const uint8_t *raw, size_t len)
{
	size_t pos = 0;
	long last = -1;

	while (pos < len) {
		if (len - pos < 4 || raw[pos + 1] < 4 || raw[pos + 1] > len - pos)
			return -1;
		last = (long)pos;
		pos += raw[pos + 1];
	}
	return last;
}

/*
 * Options a builder appends, network-significant ones first (9.1), in an order that matches
 * OpenPGM where both have them (SPM: PARITY_PRM, CRQST, FIN). Returns false on invalid
 * parameters; overflow is reported by the writer.
 */
static bool write_options(
	struct writer *w, unsigned type, const struct pgm_build_options *o, uint8_t *header_flags)
{
	struct opt_list l = {.w = w};
	unsigned i;
	long raw_last = -1;

	if (o == NULL)
		return true;
	if (o->nak_list_count > PGM_MAX_NAK_LIST || (o->nak_list_count > 0 && o->nak_list == NULL))
		return false;
	if ((o->redirect != NULL && !nla_valid(o->redirect)) ||
		(o->path_nla != NULL && !nla_valid(o->path_nla)) ||
		(o->cr && !nla_valid(o->cr_rcvr)))
		return false;
	if (o->raw_len > 0) {
		if (o->raw == NULL)
			return false;
		raw_last = raw_last_option(o->raw, o->raw_len);
		if (raw_last < 0)
			return false;
	}
	*header_flags |= o->extra_header_flags;
	if (!(o->nak_list_count > 0 || o->nak_bo_ivl || o->nak_bo_rng || o->redirect != NULL ||
		    o->parity_prm || o->crqst || o->cr || o->nbr_unreach || o->path_nla != NULL ||
		    o->curr_tgsize || o->fragment || o->join || o->parity_grp || o->syn || o->fin ||
		    o->rst || o->raw_len > 0))
		return true;

	l.start = w->pos;
	opt_begin(&l, PGM_OPT_LENGTH, 4, 0, 0);
	l.last = 0;
	/* network-significant */
	if (o->nak_list_count > 0) {
		opt_begin(&l, PGM_OPT_NAK_LIST, 4 + 4 * o->nak_list_count, 0, 0);
		for (i = 0; i < o->nak_list_count; i++)
			w_u32(w, o->nak_list[i]);
		l.network = true;
	}
	if (o->nak_bo_ivl) {
		opt_begin(&l, PGM_OPT_NAK_BO_IVL, 12, 0, 0);
		w_u32(w, o->nak_bo_ivl_us);
		w_u32(w, o->nak_bo_ivl_sqn);
		l.network = true;
	}
	if (o->nak_bo_rng) {
		opt_begin(&l, PGM_OPT_NAK_BO_RNG, 12, 0, 0);
		w_u32(w, o->nak_bo_max_us);
		w_u32(w, o->nak_bo_min_us);
		l.network = true;
	}
	if (o->redirect != NULL) {
		opt_begin(&l, PGM_OPT_REDIRECT, 8 + pgm_nla_len(o->redirect), 0, 0);
		w_nla(w, o->redirect);
		l.network = true;
	}
	if (o->parity_prm) {
		opt_begin(&l, PGM_OPT_PARITY_PRM, 8, 0, o->parity_prm_flags);
		w_u32(w, o->parity_tgs);
		l.network = true;
	}
	if (o->crqst) {
		opt_begin(&l, PGM_OPT_CRQST, 4, 0, o->crqst_flags);
		l.network = true;
	}
	if (o->cr) {
		opt_begin(&l, PGM_OPT_CR, 20 + pgm_nla_len(o->cr_rcvr), 0, o->cr_flags);
		w_u32(w, o->cr_lead);
		w_u16(w, o->cr_ne_wl);
		w_u16(w, o->cr_ne_wp);
		w_u16(w, o->cr_rx_wp);
		w_u16(w, 0);
		w_nla(w, o->cr_rcvr);
		l.network = true;
	}
	if (o->nbr_unreach) {
		opt_begin(&l, PGM_OPT_NBR_UNREACH, 4, 0, 0);
		l.network = true;
	}
	if (o->path_nla != NULL) {
		opt_begin(&l, PGM_OPT_PATH_NLA, 4 + pgm_nla_len(o->path_nla), 0, 0);
		w_bytes(w, o->path_nla->addr, pgm_nla_len(o->path_nla));
		l.network = true;
	}
	if (o->curr_tgsize) {
		/* 11.8.3: network-significant except on ODATA; last of the significant ones, so
		 * the order holds either way. */
		opt_begin(&l, PGM_OPT_CURR_TGSIZE, 8, 0, 0);
		w_u32(w, o->curr_tgsize_value);
		if (type != PGM_ODATA)
			l.network = true;
	}
	/* receiver-significant */
	if (o->fragment) {
		opt_begin(&l, PGM_OPT_FRAGMENT, 16, 0, 0);
		w_u32(w, o->frag_first_sqn);
		w_u32(w, o->frag_offset);
		w_u32(w, o->frag_apdu_len);
	}
	if (o->join) {
		opt_begin(&l, PGM_OPT_JOIN, 8, 0, 0);
		w_u32(w, o->join_min_sqn);
	}
	if (o->parity_grp) {
		opt_begin(&l, PGM_OPT_PARITY_GRP, 8, 0, 0);
		w_u32(w, o->parity_grp_value);
	}
	if (o->syn)
		opt_begin(&l, PGM_OPT_SYN, 4, 0, 0);
	if (o->fin)
		opt_begin(&l, PGM_OPT_FIN, 4, 0, 0);
	if (o->rst)
		opt_begin(&l, PGM_OPT_RST, 4, 0, o->rst_flags);
	if (o->raw_len > 0) {
		size_t raw_start = w->pos;

		w_bytes(w, o->raw, o->raw_len);
		l.last = raw_start + (size_t)raw_last;
	}
	if (w->overflow)
		return true;
	if (w->pos - l.start > 0xffff) {
		w->overflow = true;
		return true;
	}
	put16(w->out + l.start + 2, (uint16_t)(w->pos - l.start));
	if (l.last != 0)
		w->out[l.last] |= PGM_OPT_END;
	*header_flags |= PGM_OPT_PRESENT;
	if (l.network)
		*header_flags |= PGM_OPT_NETWORK;
	return true;
}

/* ---- packets ---- */

/* Writes the common header; the options flags, TSDU length and checksum are finished later. */
static void write_header(struct writer *w, unsigned type, const struct pgm_header_params *hdr)
{
	uint8_t *p = w_reserve(w, PGM_HEADER_LEN);

	if (p == NULL)
		return;
	put16(p, hdr->sport);
	put16(p + 2, hdr->dport);
	p[4] = (uint8_t)type;
	memcpy(p + 8, hdr->gsi, PGM_GSI_LEN);
}

/* Completes a TPDU whose body is written: options, TSDU, header flags, length, checksum. */
static size_t finish(struct writer *w, unsigned type, const struct pgm_build_options *o,
	const void *tsdu, size_t tsdu_len)
{
	uint8_t header_flags = 0;

	if (!write_options(w, type, o, &header_flags))
		return 0;
	if (tsdu_len > 0) {
		if (tsdu == NULL)
			return 0;
		w_bytes(w, tsdu, tsdu_len);
	}
	if (w->overflow || w->pos > 0xffff)
		return 0;
	w->out[5] = header_flags;
	put16(w->out + 14, (uint16_t)tsdu_len);
	pgm_checksum_set(w->out, w->pos);
	return w->pos;
}

size_t pgm_build_spm(uint8_t *out, size_t cap, const struct pgm_header_params *hdr,
	uint32_t spm_sqn, uint32_t trail, uint32_t lead, const struct pgm_nla *path,
	const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	if (!nla_valid(path))
		return 0;
	write_header(&w, PGM_SPM, hdr);
	w_u32(&w, spm_sqn);
	w_u32(&w, trail);
	w_u32(&w, lead);
	w_nla(&w, path);
	return finish(&w, PGM_SPM, o, NULL, 0);
}

size_t pgm_build_data(uint8_t *out, size_t cap, unsigned type, const struct pgm_header_params *hdr,
	uint32_t sqn, uint32_t trail, const void *tsdu, size_t tsdu_len,
	const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	if ((type != PGM_ODATA && type != PGM_RDATA) || tsdu_len > 0xffff)
		return 0;
	write_header(&w, type, hdr);
	w_u32(&w, sqn);
	w_u32(&w, trail);
	return finish(&w, type, o, tsdu, tsdu_len);
}

size_t pgm_build_nak(uint8_t *out, size_t cap, unsigned type, const struct pgm_header_params *hdr,
	uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	if ((type != PGM_NAK && type != PGM_NNAK && type != PGM_NCF) || !nla_valid(src) ||
		!nla_valid(grp))
		return 0;
	write_header(&w, type, hdr);
	w_u32(&w, sqn);
	w_nla(&w, src);
	w_nla(&w, grp);
	return finish(&w, type, o, NULL, 0);
}

size_t pgm_build_poll(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t sqn,
	uint16_t round, uint16_t s_type, const struct pgm_nla *path, uint32_t bo_ivl_us,
	uint32_t rand, uint32_t mask, const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	if (!nla_valid(path))
		return 0;
	write_header(&w, PGM_POLL, hdr);
	w_u32(&w, sqn);
	w_u16(&w, round);
	w_u16(&w, s_type);
	w_nla(&w, path);
	w_u32(&w, bo_ivl_us);
	w_u32(&w, rand);
	w_u32(&w, mask);
	return finish(&w, PGM_POLL, o, NULL, 0);
}

size_t pgm_build_polr(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t sqn,
	uint16_t round, const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	write_header(&w, PGM_POLR, hdr);
	w_u32(&w, sqn);
	w_u16(&w, round);
	w_u16(&w, 0);
	return finish(&w, PGM_POLR, o, NULL, 0);
}

size_t pgm_build_spmr(uint8_t *out, size_t cap, const struct pgm_header_params *hdr,
	const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	write_header(&w, PGM_SPMR, hdr);
	return finish(&w, PGM_SPMR, o, NULL, 0);
}

size_t pgm_build_ack(uint8_t *out, size_t cap, const struct pgm_header_params *hdr, uint32_t rx_max,
	uint32_t bitmap, const struct pgm_build_options *o)
{
	struct writer w = {.out = out, .cap = cap};

	write_header(&w, PGM_ACK, hdr);
	w_u32(&w, rx_max);
	w_u32(&w, bitmap);
	return finish(&w, PGM_ACK, o, NULL, 0);
}

/*
 * 11.6: a parity NCF carries NCF_PKT_CNT = max(NAK_PKT_CNT, known count). Without the group
 * size the PKT_CNT field's width is unknown, but replacing the bits of the smallest power of two
 * above pkt_cnt is exact: pkt_cnt < TGS, so those bits lie inside PKT_CNT, and a NAK_PKT_CNT
 * not above pkt_cnt has no bits beyond them.
 */
static bool parity_ncf_sqn(uint32_t nak_sqn, uint32_t pkt_cnt, uint32_t *sqn)
{
	uint32_t mask = 0;

	if (pkt_cnt >= 128) /* TGS is at most 128 (PGM_ERR_PARITY_TGS) */
		return false;
	while (mask < pkt_cnt)
		mask = mask << 1 | 1;
	if ((nak_sqn & mask) > pkt_cnt)
		return false; /* the NAK asked for more than pkt_cnt */
	*sqn = (nak_sqn & ~mask) | pkt_cnt;
	return true;
}

size_t pgm_build_ncf_from_nak(uint8_t *out, size_t cap, const struct pgm_packet *nak,
	uint32_t parity_pkt_cnt, const struct pgm_build_options *o)
{
	struct pgm_build_options opts;
	struct pgm_header_params hdr;
	uint32_t list[PGM_MAX_NAK_LIST];
	uint32_t sqn = nak->sqn;
	unsigned i;

	if (nak->type != PGM_NAK)
		return 0;
	if (o != NULL)
		opts = *o;
	else
		memset(&opts, 0, sizeof(opts));
	/* 8.3: the NCF goes downstream, so its ports are the data-source port then the
	 * data-destination port, the NAK's swapped back. */
	hdr.sport = nak->dport;
	hdr.dport = nak->sport;
	memcpy(hdr.gsi, nak->gsi, PGM_GSI_LEN);
	/* 9.3.3: the same list, its option header written clean (OPX 00, reserved bits 0): the
	 * NAK's byte 2 is not copied, as OpenPGM leaves it uninitialized (seen: 0x01, 0xcf). */
	for (i = 0; i < nak->opt.nak_list_count; i++)
		list[i] = pgm_opt_nak_list_sqn(&nak->opt, i);
	opts.nak_list = nak->opt.nak_list_count > 0 ? list : NULL;
	opts.nak_list_count = nak->opt.nak_list_count;
	/* 11.6: a parity NAK gets a parity NCF. */
	if (pgm_packet_is_parity(nak)) {
		opts.extra_header_flags |= nak->opt_flags & (PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN);
		if (!parity_ncf_sqn(nak->sqn, parity_pkt_cnt, &sqn))
			return 0;
	}
	return pgm_build_nak(out, cap, PGM_NCF, &hdr, sqn, &nak->nak_src, &nak->nak_grp, &opts);
}

size_t pgm_build_ncf_from_plain_nak(uint8_t *out, size_t cap, const struct pgm_packet *nak)
{
	size_t src_at = PGM_HEADER_LEN + 4, grp_at, len = nak->tpdu_len;
	uint16_t sport;

	if (nak->type != PGM_NAK || nak->opt_flags != 0 || nak->tsdu_len != 0 || len > cap ||
		!nla_valid(&nak->nak_src) || !nla_valid(&nak->nak_grp))
		return 0;
	grp_at = src_at + 4 + pgm_nla_len(&nak->nak_src);
	if (len != grp_at + 4 + pgm_nla_len(&nak->nak_grp) || get16(nak->tpdu + src_at + 2) != 0 ||
		get16(nak->tpdu + grp_at + 2) != 0)
		return 0;
	memcpy(out, nak->tpdu, len);
	/* 8.3: downstream port order */
	sport = get16(out);
	put16(out, get16(out + 2));
	put16(out + 2, sport);
	out[4] = PGM_NCF;
	pgm_checksum_set(out, len);
	return len;
}

size_t pgm_build_ncf_from_nak_tgs(uint8_t *out, size_t cap, const struct pgm_packet *nak,
	uint32_t tgs, uint32_t pkt_cnt, const struct pgm_build_options *o)
{
	uint32_t nak_cnt;

	if (!pgm_packet_is_parity(nak))
		return pgm_build_ncf_from_nak(out, cap, nak, 0, o);
	if (tgs < 2 || tgs > 128 || (tgs & (tgs - 1)) != 0 || pkt_cnt >= tgs)
		return 0;
	/* 11.6: NCF_PKT_CNT = max(NAK_PKT_CNT, the count known for the interface). */
	nak_cnt = nak->sqn & (tgs - 1);
	return pgm_build_ncf_from_nak(out, cap, nak, nak_cnt > pkt_cnt ? nak_cnt : pkt_cnt, o);
}

size_t pgm_build_nak_for_tsi(uint8_t *out, size_t cap, unsigned type, const struct pgm_tsi *tsi,
	uint16_t data_dport, uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o)
{
	struct pgm_header_params hdr;

	if (type != PGM_NAK && type != PGM_NNAK)
		return 0;
	/* 8.3: NAKs go upstream: SPORT = data-destination port, DPORT = data-source port. */
	hdr.sport = data_dport;
	hdr.dport = tsi->sport;
	memcpy(hdr.gsi, tsi->gsi, PGM_GSI_LEN);
	return pgm_build_nak(out, cap, type, &hdr, sqn, src, grp, o);
}

size_t pgm_build_ncf_for_tsi(uint8_t *out, size_t cap, const struct pgm_tsi *tsi,
	uint16_t data_dport, uint32_t sqn, const struct pgm_nla *src, const struct pgm_nla *grp,
	const struct pgm_build_options *o)
{
	struct pgm_header_params hdr;

	hdr.sport = tsi->sport;
	hdr.dport = data_dport;
	memcpy(hdr.gsi, tsi->gsi, PGM_GSI_LEN);
	return pgm_build_nak(out, cap, PGM_NCF, &hdr, sqn, src, grp, o);
}

/* ---- re-serialization of a parsed packet ---- */

/* One parsed option, re-encoded from the parsed values in wire order. */
static void serialize_option(struct opt_list *l, const struct pgm_packet *pkt, unsigned i)
{
	const struct pgm_options *o = &pkt->opt;
	struct writer *w = l->w;
	unsigned type = o->type[i];
	uint8_t b2 = o->flags[i], b3 = o->specific[i];
	unsigned k;

	switch (pgm_opt_bit(type) < 0 ? PGM_OPT_INVALID : type) {
	case PGM_OPT_FRAGMENT:
		opt_begin(l, type, 16, b2, b3);
		w_u32(w, o->frag_first_sqn);
		w_u32(w, o->frag_offset);
		w_u32(w, o->frag_apdu_len);
		break;
	case PGM_OPT_NAK_LIST:
		opt_begin(l, type, 4 + 4u * o->nak_list_count, b2, b3);
		for (k = 0; k < o->nak_list_count; k++)
			w_u32(w, pgm_opt_nak_list_sqn(o, k));
		break;
	case PGM_OPT_JOIN:
		opt_begin(l, type, 8, b2, b3);
		w_u32(w, o->join_min_sqn);
		break;
	case PGM_OPT_NAK_BO_IVL:
		opt_begin(l, type, 12, b2, b3);
		w_u32(w, o->nak_bo_ivl);
		w_u32(w, o->nak_bo_ivl_sqn);
		break;
	case PGM_OPT_NAK_BO_RNG:
		opt_begin(l, type, 12, b2, b3);
		w_u32(w, o->nak_bo_max);
		w_u32(w, o->nak_bo_min);
		break;
	case PGM_OPT_REDIRECT:
		opt_begin(l, type, 8 + pgm_nla_len(&o->redirect), b2, b3);
		w_nla(w, &o->redirect);
		break;
	case PGM_OPT_PARITY_PRM:
		opt_begin(l, type, 8, b2, o->parity_prm_flags);
		w_u32(w, o->parity_tgs);
		break;
	case PGM_OPT_PARITY_GRP:
		opt_begin(l, type, 8, b2, b3);
		w_u32(w, o->parity_grp);
		break;
	case PGM_OPT_CURR_TGSIZE:
		opt_begin(l, type, 8, b2, b3);
		w_u32(w, o->curr_tgsize);
		break;
	case PGM_OPT_PATH_NLA:
		opt_begin(l, type, 4 + pgm_nla_len(&o->path_nla), b2, b3);
		w_bytes(w, o->path_nla.addr, pgm_nla_len(&o->path_nla));
		break;
	case PGM_OPT_RST:
		opt_begin(l, type, 4, b2, o->rst_flags);
		break;
	case PGM_OPT_CRQST:
		opt_begin(l, type, 4, b2, o->crqst_flags);
		break;
	case PGM_OPT_CR:
		opt_begin(l, type, 20 + pgm_nla_len(&o->cr_rcvr), b2, o->cr_flags);
		w_u32(w, o->cr_lead);
		w_u16(w, o->cr_ne_wl);
		w_u16(w, o->cr_ne_wp);
		w_u16(w, o->cr_rx_wp);
		w_u16(w, 0);
		w_nla(w, &o->cr_rcvr);
		break;
	case PGM_OPT_PGMCC_DATA:
	case PGM_OPT_PGMCC_FEEDBACK:
		opt_begin(l, type, 12 + pgm_nla_len(&o->pgmcc_nla), b2, b3);
		w_u32(w, o->pgmcc_tstamp);
		w_u16(w, o->pgmcc_nla.afi);
		w_u16(w, type == PGM_OPT_PGMCC_FEEDBACK ? o->pgmcc_loss_rate : 0);
		w_bytes(w, o->pgmcc_nla.addr, pgm_nla_len(&o->pgmcc_nla));
		break;
	case PGM_OPT_INVALID: {
		/* Unknown and invalidated options are opaque: their bytes are all we have. */
		const uint8_t *src = pkt->tpdu + o->offset[i];

		opt_begin(l, type, src[1], b2, b3);
		w_bytes(w, src + 4, src[1] - 4u);
		break;
	}
	default: /* OPT_NBR_UNREACH, OPT_SYN, OPT_FIN: header only */
		opt_begin(l, type, 4, b2, b3);
		break;
	}
}

size_t pgm_packet_serialize(uint8_t *out, size_t cap, const struct pgm_packet *pkt)
{
	struct writer w = {.out = out, .cap = cap};
	struct pgm_header_params hdr = {.sport = pkt->sport, .dport = pkt->dport};
	unsigned i;

	memcpy(hdr.gsi, pkt->gsi, PGM_GSI_LEN);
	write_header(&w, pkt->type, &hdr);
	switch (pkt->type) {
	case PGM_SPM:
		w_u32(&w, pkt->sqn);
		w_u32(&w, pkt->trail);
		w_u32(&w, pkt->lead);
		w_nla(&w, &pkt->path);
		break;
	case PGM_POLL:
		w_u32(&w, pkt->sqn);
		w_u16(&w, pkt->poll_round);
		w_u16(&w, pkt->poll_s_type);
		w_nla(&w, &pkt->path);
		w_u32(&w, pkt->poll_bo_ivl);
		w_u32(&w, pkt->poll_rand);
		w_u32(&w, pkt->poll_mask);
		break;
	case PGM_POLR:
		w_u32(&w, pkt->sqn);
		w_u16(&w, pkt->polr_round);
		w_u16(&w, 0);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		w_u32(&w, pkt->sqn);
		w_u32(&w, pkt->trail);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		w_u32(&w, pkt->sqn);
		w_nla(&w, &pkt->nak_src);
		w_nla(&w, &pkt->nak_grp);
		break;
	case PGM_ACK:
		w_u32(&w, pkt->sqn);
		w_u32(&w, pkt->ack_bitmap);
		break;
	case PGM_SPMR:
		break;
	default:
		return 0;
	}
	if (pkt->opt.count > 0) {
		struct opt_list l = {.w = &w, .start = w.pos};

		opt_begin(&l, PGM_OPT_LENGTH, 4, 0, 0);
		for (i = 1; i < pkt->opt.count && i < PGM_MAX_OPTIONS; i++)
			serialize_option(&l, pkt, i);
		if (!w.overflow) {
			put16(out + l.start + 2, (uint16_t)(w.pos - l.start));
			if (l.last != l.start)
				out[l.last] |= PGM_OPT_END;
		}
	}
	if (pkt->tsdu_len > 0 && pkt->tsdu != NULL)
		w_bytes(&w, pkt->tsdu, pkt->tsdu_len);
	if (w.overflow || w.pos > 0xffff)
		return 0;
	out[5] = pkt->opt_flags;
	put16(out + 14, pkt->tsdu_len);
	/* A packet sent without a checksum is re-serialized without one. */
	if (pkt->checksum != 0)
		pgm_checksum_set(out, w.pos);
	return w.pos;
}

/* ---- in-place rewrites ---- */

/*
 * Replaces n bytes at off with src and updates the PGM checksum incrementally (RFC 1624).
 * Options may sit at odd offsets, so the change is widened to whole 16-bit words, and a
 * trailing odd byte pairs with the zero pad the checksum assumes.
 */
static void rewrite_bytes(uint8_t *tpdu, size_t tpdu_len, size_t off, const void *src, size_t n)
{
	uint8_t old_words[24], new_words[24];
	size_t start = off & ~(size_t)1, end = (off + n + 1) & ~(size_t)1;
	size_t words = (end - start) / 2, i;
	uint16_t csum = get16(tpdu + 6);

	if (end <= tpdu_len)
		memcpy(old_words, tpdu + start, end - start);
	else
		for (i = 0; i < end - start; i++)
			old_words[i] = start + i < tpdu_len ? tpdu[start + i] : 0;
	memcpy(new_words, old_words, end - start);
	memcpy(new_words + (off - start), src, n);
	memcpy(tpdu + off, src, n);
	if (csum == 0)
		return; /* sent without a checksum: stays without */
	csum = pgm_csum_update(csum, old_words, new_words, words);
	put16(tpdu + 6, csum);
}

/* Offset of the first option of a type in the parsed list, or 0. */
static size_t option_offset(const struct pgm_packet *pkt, unsigned type)
{
	unsigned i;

	for (i = 0; i < pkt->opt.count && i < PGM_MAX_OPTIONS; i++)
		if (pkt->opt.type[i] == type)
			return pkt->opt.offset[i];
	return 0;
}

bool pgm_rewrite_spm_path(uint8_t *tpdu, const struct pgm_packet *spm, const struct pgm_nla *path)
{
	size_t len = pgm_nla_len(path);

	/* 7.1: same family as the original, so the packet's layout does not move. */
	if (spm->type != PGM_SPM || len == 0 || path->afi != spm->path.afi ||
		spm->path_offset == 0 || spm->path_offset + len > spm->tpdu_len)
		return false;
	rewrite_bytes(tpdu, spm->tpdu_len, spm->path_offset, path->addr, len);
	return true;
}

bool pgm_rewrite_nak_src(uint8_t *tpdu, const struct pgm_packet *nak, const struct pgm_nla *src)
{
	size_t len = pgm_nla_len(src);

	/* 8.3: NAK_SRC's address follows the SQN and the AFI word, at byte 24 in every family. */
	if ((nak->type != PGM_NAK && nak->type != PGM_NNAK && nak->type != PGM_NCF) || len == 0 ||
		src->afi != nak->nak_src.afi || 24 + len > nak->tpdu_len)
		return false;
	rewrite_bytes(tpdu, nak->tpdu_len, 24, src->addr, len);
	return true;
}

bool pgm_rewrite_nak_bo_ivl(
	uint8_t *tpdu, const struct pgm_packet *pkt, uint32_t ivl_us, uint32_t ivl_sqn)
{
	size_t off = option_offset(pkt, PGM_OPT_NAK_BO_IVL);
	uint8_t value[8];

	if (off == 0 || off + 12 > pkt->tpdu_len)
		return false;
	put32(value, ivl_us);
	put32(value + 4, ivl_sqn);
	rewrite_bytes(tpdu, pkt->tpdu_len, off + 4, value, sizeof(value));
	return true;
}

size_t pgm_remove_nak_bo_ivl(
	uint8_t *datagram, size_t len, const struct pgm_ip *ip, const struct pgm_packet *spm)
{
	uint8_t *tpdu = datagram + ip->pgm_offset;
	size_t tlen = ip->pgm_len, start, cut, total;
	unsigned i;

	if (spm->type != PGM_SPM || spm->tpdu_len != tlen || spm->opt_offset == 0 ||
		(size_t)ip->pgm_offset + tlen != len)
		return 0;
	for (i = 1; i < spm->opt.count && i < PGM_MAX_OPTIONS; i++)
		if (spm->opt.type[i] == PGM_OPT_NAK_BO_IVL)
			break;
	if (i >= spm->opt.count || i >= PGM_MAX_OPTIONS)
		return 0;
	start = spm->opt.offset[i];
	cut = tpdu[start + 1];
	total = get16(tpdu + spm->opt_offset + 2);
	if (cut < 4 || start + cut > tlen || total < 4 + cut || spm->opt_offset + total > tlen)
		return 0;
	if (total == 4 + cut) {
		/* nothing else: the option extension goes, and with it the O and N bits */
		start = spm->opt_offset;
		cut = total;
		tpdu[5] &= (uint8_t)~(PGM_OPT_PRESENT | PGM_OPT_NETWORK);
	} else {
		if (tpdu[spm->opt.offset[i]] & PGM_OPT_END)
			tpdu[spm->opt.offset[i - 1]] |= PGM_OPT_END;
		put16(tpdu + spm->opt_offset + 2, (uint16_t)(total - cut));
	}
	memmove(tpdu + start, tpdu + start + cut, tlen - start - cut);
	tlen -= cut;
	len -= cut;
	if (get16(tpdu + 6) != 0)
		pgm_checksum_set(tpdu, tlen);
	if (ip->version == 4) {
		size_t ihl = (size_t)(datagram[0] & 0x0f) * 4;

		put16(datagram + 2, (uint16_t)len);
		put16(datagram + 10, 0);
		put16(datagram + 10, pgm_ip_header_checksum(datagram, ihl));
	} else {
		put16(datagram + 4, (uint16_t)(len - 40));
	}
	if (ip->udp) {
		struct pgm_ip shorter = *ip;

		shorter.pgm_len = (uint16_t)tlen;
		put16(tpdu - 8 + 4, (uint16_t)(tlen + 8));
		pgm_ip_fix_udp_checksum(datagram, &shorter);
	}
	return len;
}

bool pgm_rewrite_parity_pkt_cnt(
	uint8_t *tpdu, const struct pgm_packet *nak, uint32_t tgs, uint32_t pkt_cnt)
{
	uint8_t value[4];
	uint32_t sqn;

	/* 11.6: only parity NAK-type packets carry a PKT_CNT, below a power-of-2 group size. */
	if ((nak->type != PGM_NAK && nak->type != PGM_NNAK && nak->type != PGM_NCF) ||
		!pgm_packet_is_parity(nak) || tgs < 2 || tgs > 128 || (tgs & (tgs - 1)) != 0 ||
		pkt_cnt >= tgs || nak->tpdu_len < 20)
		return false;
	sqn = (nak->sqn & ~(tgs - 1)) | pkt_cnt;
	put32(value, sqn);
	rewrite_bytes(tpdu, nak->tpdu_len, 16, value, sizeof(value));
	return true;
}

bool pgm_rewrite_opt_invalid(uint8_t *tpdu, const struct pgm_packet *pkt, unsigned index)
{
	size_t off;
	uint8_t type_byte;

	/* 9: OPX applies to options the element does not understand; renaming a known option
	 * (or OPT_LENGTH) would change the packet's meaning. */
	if (index == 0 || index >= pkt->opt.count || index >= PGM_MAX_OPTIONS ||
		pgm_opt_bit(pkt->opt.type[index]) >= 0)
		return false;
	off = pkt->opt.offset[index];
	if (off >= pkt->tpdu_len)
		return false;
	type_byte = (uint8_t)((tpdu[off] & PGM_OPT_END) | PGM_OPT_INVALID);
	rewrite_bytes(tpdu, pkt->tpdu_len, off, &type_byte, 1);
	return true;
}

bool pgm_rewrite_opts_invalid(uint8_t *tpdu, const struct pgm_packet *pkt, unsigned mask)
{
	for (; mask != 0; mask &= mask - 1)
		if (!pgm_rewrite_opt_invalid(tpdu, pkt, (unsigned)__builtin_ctz(mask)))
			return false;
	return true;
}

/* ---- IP and UDP ---- */

#define IPV4_HEADER_LEN 20
#define IPV6_HEADER_LEN 40
#define IPV6_HBH_RA_LEN 8 /* next header, length 0, the RA option (4), PadN (2) */
#define UDP_HEADER_LEN	8

size_t pgm_build_ip(uint8_t *out, size_t cap, const struct pgm_ip_params *p, const uint8_t *tpdu,
	size_t tpdu_len)
{
	size_t ip_len, udp_len = p->udp ? UDP_HEADER_LEN : 0, total;
	uint8_t *h = out;
	struct pgm_ip ip;

	if (p->src.afi != p->dst.afi || !nla_valid(&p->src))
		return 0;
	if (p->src.afi == PGM_AFI_IP) {
		ip_len = IPV4_HEADER_LEN + (p->router_alert ? 4 : 0);
		total = ip_len + udp_len + tpdu_len;
		if (total > 0xffff || total > cap)
			return 0;
	} else {
		ip_len = IPV6_HEADER_LEN + (p->router_alert ? IPV6_HBH_RA_LEN : 0);
		total = ip_len + udp_len + tpdu_len;
		if (total - IPV6_HEADER_LEN > 0xffff || total > cap)
			return 0;
	}
	/* The TPDU may already sit where it belongs, so move it before writing headers. */
	memmove(out + ip_len + udp_len, tpdu, tpdu_len);
	memset(out, 0, ip_len + udp_len);
	if (p->src.afi == PGM_AFI_IP) {
		h[0] = (uint8_t)(0x40 | ip_len / 4);
		h[1] = p->tos;
		put16(h + 2, (uint16_t)total);
		put16(h + 4, p->id);
		h[8] = p->ttl;
		h[9] = p->udp ? 17 : IPPROTO_PGM_NUMBER;
		memcpy(h + 12, p->src.addr, 4);
		memcpy(h + 16, p->dst.addr, 4);
		if (p->router_alert) {
			h[20] = 148; /* RFC 2113: copied, class 0, number 20 */
			h[21] = 4;
		}
		/* The IP header checksum has no "0 means none": plain complement. */
		put16(h + 10, pgm_ip_header_checksum(h, ip_len));
	} else {
		uint8_t proto = p->udp ? 17 : IPPROTO_PGM_NUMBER;

		put32(h, 0x60000000u | (uint32_t)p->tos << 20);
		put16(h + 4, (uint16_t)(total - IPV6_HEADER_LEN));
		h[6] = p->router_alert ? 0 /* hop-by-hop options */ : proto;
		h[7] = p->ttl;
		memcpy(h + 8, p->src.addr, 16);
		memcpy(h + 24, p->dst.addr, 16);
		if (p->router_alert) {
			/* RFC 2711: type 5 (skip if unknown, never changes en route), 2 bytes of
			   value; the header padded to 8 bytes with a PadN of none */
			h[40] = proto;
			h[41] = 0;
			h[42] = 5;
			h[43] = 2;
			put16(h + 44, PGM_IPV6_ROUTER_ALERT_VALUE);
			h[46] = 1;
			h[47] = 0;
		}
	}
	if (p->udp) {
		uint8_t *u = out + ip_len;

		put16(u, p->udp_sport);
		put16(u + 2, p->udp_dport);
		put16(u + 4, (uint16_t)(udp_len + tpdu_len));
		put16(u + 6, 0xffff); /* any non-zero value: "a checksum is wanted" */
		memset(&ip, 0, sizeof(ip));
		ip.version = p->src.afi == PGM_AFI_IP ? 4 : 6;
		ip.udp = true;
		ip.src = p->src;
		ip.dst = p->dst;
		ip.pgm_offset = (uint16_t)(ip_len + udp_len);
		ip.pgm_len = (uint16_t)tpdu_len;
		pgm_ip_fix_udp_checksum(out, &ip);
	}
	return total;
}
