/*
 * Names and small value helpers of the wire codec: error, type and option names, NLAs, TSIs.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

static const char *const err_names[PGM_ERR_COUNT] = {
#define PGM_ERR_NAME(sym, name, desc) [PGM_ERR_##sym] = name,
	PGM_ERRORS(PGM_ERR_NAME)
#undef PGM_ERR_NAME
};

static const char *const err_descriptions[PGM_ERR_COUNT] = {
#define PGM_ERR_DESC(sym, name, desc) [PGM_ERR_##sym] = desc,
	PGM_ERRORS(PGM_ERR_DESC)
#undef PGM_ERR_DESC
};

const char *pgm_err_name(enum pgm_err err)
{
	return (unsigned)err < PGM_ERR_COUNT ? err_names[err] : "unknown-error";
}

const char *pgm_err_description(enum pgm_err err)
{
	return (unsigned)err < PGM_ERR_COUNT ? err_descriptions[err] : "unknown error";
}

const char *pgm_type_name(unsigned type)
{
	static const char *const names[PGM_TYPE_COUNT] = {
		[PGM_SPM] = "SPM",
		[PGM_POLL] = "POLL",
		[PGM_POLR] = "POLR",
		[0x03] = "type-0x3",
		[PGM_ODATA] = "ODATA",
		[PGM_RDATA] = "RDATA",
		[0x06] = "type-0x6",
		[0x07] = "type-0x7",
		[PGM_NAK] = "NAK",
		[PGM_NNAK] = "NNAK",
		[PGM_NCF] = "NCF",
		[0x0b] = "type-0xb",
		[PGM_SPMR] = "SPMR",
		[PGM_ACK] = "ACK",
		[0x0e] = "type-0xe",
		[0x0f] = "type-0xf",
	};

	return type < PGM_TYPE_COUNT ? names[type] : "type-invalid";
}

const char *pgm_opt_name(unsigned opt_type)
{
	/* per thread: the codec runs in every worker */
	static _Thread_local char unknown[16];

	switch (opt_type & PGM_OPT_TYPE_MASK) {
	case PGM_OPT_LENGTH: return "OPT_LENGTH";
	case PGM_OPT_FRAGMENT: return "OPT_FRAGMENT";
	case PGM_OPT_NAK_LIST: return "OPT_NAK_LIST";
	case PGM_OPT_JOIN: return "OPT_JOIN";
	case PGM_OPT_NAK_BO_IVL: return "OPT_NAK_BO_IVL";
	case PGM_OPT_NAK_BO_RNG: return "OPT_NAK_BO_RNG";
	case PGM_OPT_REDIRECT: return "OPT_REDIRECT";
	case PGM_OPT_PARITY_PRM: return "OPT_PARITY_PRM";
	case PGM_OPT_PARITY_GRP: return "OPT_PARITY_GRP";
	case PGM_OPT_CURR_TGSIZE: return "OPT_CURR_TGSIZE";
	case PGM_OPT_NBR_UNREACH: return "OPT_NBR_UNREACH";
	case PGM_OPT_PATH_NLA: return "OPT_PATH_NLA";
	case PGM_OPT_SYN: return "OPT_SYN";
	case PGM_OPT_FIN: return "OPT_FIN";
	case PGM_OPT_RST: return "OPT_RST";
	case PGM_OPT_CR: return "OPT_CR";
	case PGM_OPT_CRQST: return "OPT_CRQST";
	case PGM_OPT_PGMCC_DATA: return "OPT_PGMCC_DATA";
	case PGM_OPT_PGMCC_FEEDBACK: return "OPT_PGMCC_FEEDBACK";
	case PGM_OPT_INVALID: return "OPT_INVALID";
	default:
		snprintf(unknown, sizeof(unknown), "OPT_0x%02x", opt_type & PGM_OPT_TYPE_MASK);
		return unknown;
	}
}

size_t pgm_nla_len(const struct pgm_nla *nla)
{
	switch (nla->afi) {
	case PGM_AFI_IP: return 4;
	case PGM_AFI_IP6: return 16;
	default: return 0;
	}
}

bool pgm_nla_equal(const struct pgm_nla *a, const struct pgm_nla *b)
{
	return a->afi == b->afi && memcmp(a->addr, b->addr, pgm_nla_len(a)) == 0;
}

void pgm_nla_from_ip4(struct pgm_nla *nla, const void *addr4)
{
	memset(nla, 0, sizeof(*nla));
	nla->afi = PGM_AFI_IP;
	memcpy(nla->addr, addr4, 4);
}

char *pgm_nla_format(const struct pgm_nla *nla, char *buf, size_t len)
{
	int family = nla->afi == PGM_AFI_IP ? AF_INET : nla->afi == PGM_AFI_IP6 ? AF_INET6 : 0;

	if (len == 0)
		return buf;
	if (family == 0 || inet_ntop(family, nla->addr, buf, (socklen_t)len) == NULL)
		snprintf(buf, len, "-");
	return buf;
}

bool pgm_nla_parse(struct pgm_nla *nla, const char *text)
{
	memset(nla, 0, sizeof(*nla));
	if (inet_pton(AF_INET, text, nla->addr) == 1) {
		nla->afi = PGM_AFI_IP;
		return true;
	}
	if (inet_pton(AF_INET6, text, nla->addr) == 1) {
		nla->afi = PGM_AFI_IP6;
		return true;
	}
	memset(nla, 0, sizeof(*nla));
	return false;
}

bool pgm_tsi_equal(const struct pgm_tsi *a, const struct pgm_tsi *b)
{
	return a->sport == b->sport && memcmp(a->gsi, b->gsi, PGM_GSI_LEN) == 0;
}

char *pgm_tsi_format(const struct pgm_tsi *tsi, char *buf, size_t len)
{
	snprintf(buf, len, "%02x%02x%02x%02x%02x%02x.%u", tsi->gsi[0], tsi->gsi[1], tsi->gsi[2],
		tsi->gsi[3], tsi->gsi[4], tsi->gsi[5], tsi->sport);
	return buf;
}

void pgm_udp_ports_default(struct pgm_udp_ports *ports)
{
	memset(ports, 0, sizeof(*ports));
	ports->enabled = true;
	ports->ucast_port = PGM_DEFAULT_UDP_UCAST_PORT;
	ports->mcast_port = PGM_DEFAULT_UDP_MCAST_PORT;
}

static int port_range_cmp(const void *a, const void *b)
{
	const struct pgm_port_range *x = a, *y = b;

	return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi > y->hi) - (x->hi < y->hi);
}

static bool port_number(const char *p, const char **end, uint16_t *port)
{
	unsigned long v = 0;
	const char *q = p;

	while (*q >= '0' && *q <= '9' && q - p < 6)
		v = v * 10 + (unsigned long)(*q++ - '0');
	*end = q;
	if (q == p || v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

int pgm_port_set_parse(const char *text, struct pgm_port_set *set, char *err, size_t errlen)
{
	struct pgm_port_range r[64];
	unsigned n = 0, m = 0;

	for (const char *p = text;;) {
		const char *end;
		uint16_t lo, hi;

		while (*p == ' ' || *p == '\t' || *p == ',')
			p++;
		if (*p == '\0')
			break;
		if (!port_number(p, &end, &lo)) {
			snprintf(err, errlen, "bad port at '%.16s' (ports are 1-65535)", p);
			return -1;
		}
		hi = lo;
		if (*end == '-' && !port_number(end + 1, &end, &hi)) {
			snprintf(err, errlen, "bad range at '%.16s' (LO-HI, 1-65535)", p);
			return -1;
		}
		if (*end != '\0' && *end != ' ' && *end != '\t' && *end != ',') {
			snprintf(err, errlen, "bad port at '%.16s' (ports are 1-65535)", p);
			return -1;
		}
		if (hi < lo) {
			snprintf(err, errlen, "range %u-%u runs backwards", lo, hi);
			return -1;
		}
		if (n == sizeof(r) / sizeof(r[0])) {
			snprintf(err, errlen, "more than %d ports", PGM_PORT_SET_MAX);
			return -1;
		}
		r[n++] = (struct pgm_port_range){lo, hi};
		p = end;
	}
	if (n == 0) {
		snprintf(err, errlen, "no port");
		return -1;
	}
	qsort(r, n, sizeof(r[0]), port_range_cmp);
	for (unsigned i = 1; i < n; i++) {
		if ((unsigned)r[i].lo <= (unsigned)r[m].hi + 1) {
			if (r[i].hi > r[m].hi)
				r[m].hi = r[i].hi;
		} else {
			r[++m] = r[i];
		}
	}
	set->n = m + 1;
	if (set->n > PGM_PORT_SET_MAX)
		set->n = PGM_PORT_SET_MAX + 1; /* only to fail the weight below */
	else
		memcpy(set->r, r, set->n * sizeof(r[0]));
	if (set->n > PGM_PORT_SET_MAX || pgm_port_set_weight(set) > PGM_PORT_SET_MAX) {
		snprintf(err, errlen, "more than %d ports (a range counts two)", PGM_PORT_SET_MAX);
		set->n = 0;
		return -1;
	}
	return 0;
}

char *pgm_port_set_format(const struct pgm_port_set *set, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < set->n && off < len; i++) {
		const struct pgm_port_range *r = &set->r[i];
		const char *sep = i ? " " : "";
		int k;

		if (r->lo == r->hi)
			k = snprintf(buf + off, len - off, "%s%u", sep, r->lo);
		else
			k = snprintf(buf + off, len - off, "%s%u%s%u", sep, r->lo,
				r->hi == r->lo + 1 ? " " : "-", r->hi);
		if (k < 0)
			break;
		off += (size_t)k;
	}
	return buf;
}

bool pgm_port_set_has(const struct pgm_port_set *set, uint16_t port)
{
	for (unsigned i = 0; i < set->n; i++)
		if (port >= set->r[i].lo && port <= set->r[i].hi)
			return true;
	return false;
}

unsigned pgm_port_set_weight(const struct pgm_port_set *set)
{
	unsigned w = 0;

	for (unsigned i = 0; i < set->n; i++)
		w += set->r[i].lo == set->r[i].hi ? 1 : 2;
	return w;
}

bool pgm_type_is_upstream(unsigned type)
{
	return type == PGM_NAK || type == PGM_NNAK || type == PGM_SPMR || type == PGM_POLR ||
	       type == PGM_ACK;
}

void pgm_packet_tsi(const struct pgm_packet *pkt, struct pgm_tsi *tsi)
{
	memcpy(tsi->gsi, pkt->gsi, PGM_GSI_LEN);
	tsi->sport = pgm_type_is_upstream(pkt->type) ? pkt->dport : pkt->sport;
}

uint16_t pgm_packet_data_dport(const struct pgm_packet *pkt)
{
	return pgm_type_is_upstream(pkt->type) ? pkt->sport : pkt->dport;
}

bool pgm_packet_is_parity(const struct pgm_packet *pkt)
{
	return (pkt->opt_flags & PGM_OPT_PARITY) != 0;
}

bool pgm_ip_dst_is_multicast(const struct pgm_ip *ip)
{
	if (ip->dst.afi == PGM_AFI_IP)
		return (ip->dst.addr[0] & 0xf0) == 0xe0;
	if (ip->dst.afi == PGM_AFI_IP6)
		return ip->dst.addr[0] == 0xff;
	return false;
}

int pgm_opt_bit(unsigned opt_type)
{
	switch (opt_type & PGM_OPT_TYPE_MASK) {
	case PGM_OPT_LENGTH: return 0;
	case PGM_OPT_FRAGMENT: return 1;
	case PGM_OPT_NAK_LIST: return 2;
	case PGM_OPT_JOIN: return 3;
	case PGM_OPT_NAK_BO_IVL: return 4;
	case PGM_OPT_NAK_BO_RNG: return 5;
	case PGM_OPT_REDIRECT: return 7;
	case PGM_OPT_PARITY_PRM: return 8;
	case PGM_OPT_PARITY_GRP: return 9;
	case PGM_OPT_CURR_TGSIZE: return 10;
	case PGM_OPT_NBR_UNREACH: return 11;
	case PGM_OPT_PATH_NLA: return 12;
	case PGM_OPT_SYN: return 13;
	case PGM_OPT_FIN: return 14;
	case PGM_OPT_RST: return 15;
	case PGM_OPT_CR: return 16;
	case PGM_OPT_CRQST: return 17;
	case PGM_OPT_PGMCC_DATA: return 18;
	case PGM_OPT_PGMCC_FEEDBACK: return 19;
	case PGM_OPT_INVALID: return 20;
	default: return -1;
	}
}

bool pgm_opt_has(const struct pgm_options *opts, unsigned opt_type)
{
	int bit = pgm_opt_bit(opt_type);

	return bit >= 0 && (opts->present & (1u << bit)) != 0;
}

uint32_t pgm_opt_nak_list_sqn(const struct pgm_options *opts, unsigned index)
{
	const uint8_t *p;

	if (opts->nak_list == NULL || index >= opts->nak_list_count)
		return 0;
	p = opts->nak_list + 4u * index;
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
