/*
 * libFuzzer target for the wire codec. Every input is tried as a PGM TPDU and as an IP datagram
 * (with and without UDP encapsulation ports, with and without checksum verification). Every
 * packet that parses is formatted, re-serialized and re-parsed, rewritten on a copy, and NAKs
 * are turned into NCFs; the invariants below trap on any violation.
 *
 * IPv4 datagrams also go through the fragmenter (fuzz_fragments).
 *
 * Seed mode (used by tests/fuzz/run.sh): with PGM_FUZZ_SEED_DIR set, the binary writes sample
 * packets of every type and family into that directory, plus the datagrams of the pcap files
 * named in PGM_FUZZ_SEED_PCAPS (space-separated), and exits.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/lib/pgm_pcap_check.h"
#include "dataplane/wire/ipfrag.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/fuzz/fuzz.h"


static const struct pgm_udp_ports encap_ports = {.enabled = true,
	.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
	.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* A parsed packet with everything that points into its buffer, and the unspecified entries
 * of the per-option arrays, cleared for comparisons. */
static void normalize(struct pgm_packet *p)
{
	unsigned i;

	size_t end_of_arrays = offsetof(struct pgm_packet, opt.specific) + sizeof(p->opt.specific);

	for (i = p->opt.count; i < PGM_MAX_OPTIONS; i++) {
		p->opt.offset[i] = 0;
		p->opt.type[i] = 0;
		p->opt.flags[i] = 0;
		p->opt.specific[i] = 0;
	}
	memset((uint8_t *)p + end_of_arrays, 0, sizeof(*p) - end_of_arrays); /* tail padding */
	p->tpdu = NULL;
	p->tsdu = NULL;
	p->opt.nak_list = NULL;
	p->checksum = 0;
}

static void check_structure(const uint8_t *tpdu, size_t len, const struct pgm_packet *p)
{
	const struct pgm_options *o = &p->opt;
	unsigned i;

	CHECK(p->tpdu == tpdu && p->tpdu_len == len);
	CHECK(o->count <= PGM_MAX_OPTIONS);
	CHECK(o->nak_list_count <= PGM_MAX_NAK_LIST);
	if (o->count > 0) {
		CHECK(p->opt_offset >= PGM_HEADER_LEN && o->offset[0] == p->opt_offset);
		CHECK((size_t)p->opt_offset + o->total_len <= len);
		for (i = 0; i < o->count; i++) {
			CHECK(o->offset[i] + 4u <= (size_t)p->opt_offset + o->total_len);
			CHECK(i == 0 || o->offset[i] > o->offset[i - 1]);
			CHECK(o->type[i] == (tpdu[o->offset[i]] & PGM_OPT_TYPE_MASK));
		}
		CHECK(tpdu[o->offset[o->count - 1]] & PGM_OPT_END);
	} else {
		CHECK(p->opt_offset == 0);
	}
	if (o->nak_list != NULL)
		CHECK(o->nak_list >= tpdu && o->nak_list + 4 * o->nak_list_count <= tpdu + len);
	if (p->type == PGM_ODATA || p->type == PGM_RDATA) {
		CHECK(p->tsdu != NULL && p->tsdu + p->tsdu_len == tpdu + len);
		CHECK(p->checksum != 0);
	} else {
		CHECK(p->tsdu == NULL && p->tsdu_len == 0);
	}
	if (p->path_offset != 0)
		CHECK(p->path_offset + pgm_nla_len(&p->path) <= len);
}

/* parse(serialize(p)) == p, and serialize is a fixed point. */
static void check_serialize(
	const uint8_t *tpdu, size_t len, const struct pgm_packet *p, unsigned flags)
{
	static uint8_t out[65536], again[65536];
	struct pgm_packet q, a, b;
	size_t n, m;

	n = pgm_packet_serialize(out, sizeof(out), p);
	CHECK(n == len);
	CHECK(pgm_parse(out, n, flags & ~PGM_PARSE_NO_CHECKSUM, &q) == PGM_ERR_OK);
	/* memcpy, not assignment: parse zeroes the padding, and the comparison covers it */
	memcpy(&a, p, sizeof(a));
	memcpy(&b, &q, sizeof(b));
	normalize(&a);
	normalize(&b);
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	if (p->tsdu_len > 0)
		CHECK(memcmp(p->tsdu, q.tsdu, p->tsdu_len) == 0);
	if (p->opt.nak_list_count > 0)
		CHECK(memcmp(p->opt.nak_list, q.opt.nak_list, 4u * p->opt.nak_list_count) == 0);
	m = pgm_packet_serialize(again, sizeof(again), &q);
	CHECK(m == n && memcmp(out, again, n) == 0);
	(void)tpdu;
}

/* Every rewrite that applies, on a copy with a valid checksum; checksums stay right. */
static void check_rewrites(
	const uint8_t *tpdu, size_t len, const struct pgm_packet *p, unsigned flags)
{
	static uint8_t copy[65536];
	unsigned verify = flags & ~PGM_PARSE_NO_CHECKSUM;
	struct pgm_packet c, r;
	unsigned i;

	memcpy(copy, tpdu, len);
	if (p->checksum != 0)
		pgm_checksum_set(copy, len);
	CHECK(pgm_parse(copy, len, verify, &c) == PGM_ERR_OK);

	if (c.type == PGM_SPM) {
		struct pgm_nla path = c.path;

		path.addr[0] ^= 0xa5;
		path.addr[pgm_nla_len(&path) - 1] ^= 0x3c;
		CHECK(pgm_rewrite_spm_path(copy, &c, &path));
		CHECK(pgm_parse(copy, len, verify, &r) == PGM_ERR_OK);
		CHECK(pgm_nla_equal(&r.path, &path));
	} else {
		CHECK(!pgm_rewrite_spm_path(copy, &c, &c.path));
	}
	if (pgm_opt_has(&c.opt, PGM_OPT_NAK_BO_IVL)) {
		uint32_t ivl = c.sqn ^ 0x5a5a5a5a, sqn = ~c.sqn;

		CHECK(pgm_rewrite_nak_bo_ivl(copy, &c, ivl, sqn));
		CHECK(pgm_parse(copy, len, verify, &r) == PGM_ERR_OK);
		CHECK(r.opt.nak_bo_ivl == ivl && r.opt.nak_bo_ivl_sqn == sqn);
	} else {
		CHECK(!pgm_rewrite_nak_bo_ivl(copy, &c, 1, 2));
	}
	if (pgm_packet_is_parity(&c) &&
		(c.type == PGM_NAK || c.type == PGM_NNAK || c.type == PGM_NCF) &&
		c.opt.nak_list_count == 0) {
		uint32_t tgs = 2u << (c.sqn % 7), cnt = (c.sqn >> 8) % tgs;

		CHECK(pgm_rewrite_parity_pkt_cnt(copy, &c, tgs, cnt));
		CHECK(pgm_parse(copy, len, verify, &r) == PGM_ERR_OK);
		CHECK(r.sqn == ((c.sqn & ~(tgs - 1)) | cnt));
	}
	for (i = 0; i < c.opt.count; i++) {
		bool unknown = i > 0 && pgm_opt_bit(c.opt.type[i]) < 0;

		CHECK(pgm_rewrite_opt_invalid(copy, &c, i) == unknown);
	}
	CHECK(pgm_parse(copy, len, verify | PGM_PARSE_IGNORE_OPX, &r) == PGM_ERR_OK);
	CHECK(r.opt.unknown == 0);
	if (c.checksum != 0)
		CHECK(get16(copy + 6) == pgm_checksum(copy, len));
	else
		CHECK(get16(copy + 6) == 0);
}

/* An NCF for every NAK: downstream ports, same SQN, NLAs and list. */
static void check_ncf(const struct pgm_packet *nak)
{
	static uint8_t out[65536];
	struct pgm_nla me = {.afi = PGM_AFI_IP, .addr = {198, 18, 1, 1}};
	struct pgm_build_options o = {
		.nak_bo_ivl = true, .nak_bo_ivl_us = 1000, .nbr_unreach = true, .path_nla = &me};
	struct pgm_packet ncf;
	enum pgm_err err;
	unsigned i;
	size_t n;

	if (pgm_packet_is_parity(nak))
		n = pgm_build_ncf_from_nak_tgs(
			out, sizeof(out), nak, 128, 127, nak->sqn & 1 ? &o : NULL);
	else
		n = pgm_build_ncf_from_nak(out, sizeof(out), nak, 0, nak->sqn & 1 ? &o : NULL);
	CHECK(n > 0);
	err = pgm_parse(out, n, 0, &ncf);
	/* raising a parity count can move the header SQN past a listed one */
	if (pgm_packet_is_parity(nak) && err == PGM_ERR_NAK_LIST_ORDER)
		return;
	CHECK(err == PGM_ERR_OK);
	CHECK(ncf.type == PGM_NCF);
	CHECK(ncf.sport == nak->dport && ncf.dport == nak->sport);
	CHECK(memcmp(ncf.gsi, nak->gsi, PGM_GSI_LEN) == 0);
	CHECK(pgm_nla_equal(&ncf.nak_src, &nak->nak_src));
	CHECK(pgm_nla_equal(&ncf.nak_grp, &nak->nak_grp));
	CHECK(pgm_packet_is_parity(&ncf) == pgm_packet_is_parity(nak));
	if (pgm_packet_is_parity(nak))
		CHECK(ncf.sqn == (nak->sqn | 127));
	else
		CHECK(ncf.sqn == nak->sqn);
	CHECK(ncf.opt.nak_list_count == nak->opt.nak_list_count);
	for (i = 0; i < nak->opt.nak_list_count; i++)
		CHECK(pgm_opt_nak_list_sqn(&ncf.opt, i) == pgm_opt_nak_list_sqn(&nak->opt, i));
}

static void check_packet(
	const uint8_t *tpdu, size_t len, const struct pgm_packet *p, unsigned flags)
{
	char line[2048];
	size_t n;

	check_structure(tpdu, len, p);
	n = pgm_packet_format(p, line, sizeof(line));
	CHECK(n < sizeof(line) && strlen(line) == n && n > 0);
	n = pgm_packet_format(p, line, 7);
	CHECK(n < 7 && strlen(line) == n);
	check_serialize(tpdu, len, p, flags);
	check_rewrites(tpdu, len, p, flags);
	if (p->type == PGM_NAK)
		check_ncf(p);
}

static void fuzz_tpdu(const uint8_t *data, size_t size)
{
	static const unsigned flag_sets[] = {0, PGM_PARSE_NO_CHECKSUM,
		PGM_PARSE_NO_CHECKSUM | PGM_PARSE_IGNORE_OPX,
		PGM_PARSE_NO_CHECKSUM | PGM_PARSE_STRICT_OPTIONS};
	struct pgm_packet p;
	unsigned i;

	for (i = 0; i < sizeof(flag_sets) / sizeof(flag_sets[0]); i++) {
		enum pgm_err err = pgm_parse(data, size, flag_sets[i], &p);

		CHECK((unsigned)err < PGM_ERR_COUNT);
		if (err == PGM_ERR_OK)
			check_packet(data, size, &p, flag_sets[i]);
		else if (err != PGM_ERR_SHORT_HEADER && size >= PGM_HEADER_LEN && size <= 0xffff)
			CHECK(p.tpdu == data && p.type == (data[4] & 0x0f));
	}
}

static void fuzz_datagram(
	const uint8_t *data, size_t size, const struct pgm_udp_ports *ports, unsigned flags)
{
	static uint8_t copy[65536 + 64];
	struct pgm_packet p;
	struct pgm_ip ip;
	enum pgm_err err = pgm_parse_datagram(data, size, ports, flags, &ip, &p);

	CHECK((unsigned)err < PGM_ERR_COUNT);
	if (err != PGM_ERR_OK)
		return;
	CHECK(ip.version == 4 || ip.version == 6);
	CHECK(ip.ip_header_len <= ip.pgm_offset);
	CHECK((size_t)ip.pgm_offset + ip.pgm_len <= size);
	CHECK(!ip.udp || (ports != NULL && ports->enabled));
	check_packet(data + ip.pgm_offset, ip.pgm_len, &p, flags);
	if (ip.udp && size <= sizeof(copy)) {
		memcpy(copy, data, size);
		pgm_ip_fix_udp_checksum(copy, &ip);
		if (get16(copy + ip.pgm_offset - 2) != 0 || ip.version == 6)
			CHECK(pgm_ip_udp_checksum_ok(copy, &ip));
	}
}

/*
 * The fragmenter (ipfrag.h) on the input as it is, then on a copy made a well-formed IPv4
 * datagram (version, total length, DF clear) split for an MTU taken from its second byte: every
 * fragment fits the MTU, carries the original's header length, addresses and protocol, and the
 * fragments put together by their offsets give back the original's data.
 */
static void fuzz_fragments(const uint8_t *data, size_t size)
{
	static uint8_t d[0xffff], frag[0xffff], whole[0xffff];
	size_t ihl, mtu, covered = 0;
	unsigned count;

	(void)ipfrag_plan(data, size, 1500, &count);
	if (size < 20 || size > sizeof(d))
		return;
	memcpy(d, data, size);
	d[0] = (uint8_t)(0x40 | (d[0] & 0x0f));
	ihl = (size_t)(d[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > size)
		return;
	d[2] = (uint8_t)(size >> 8);
	d[3] = (uint8_t)size;
	d[6] &= 0xbf;
	mtu = 20 + (size_t)d[1] * 6;
	switch (ipfrag_plan(d, size, mtu, &count)) {
	case IPFRAG_FITS:
		CHECK(size <= mtu && count == 1);
		return;
	case IPFRAG_MTU_SMALL:
		CHECK(mtu < ihl + 8);
		return;
	case IPFRAG_SPLIT:
		break;
	default:
		CHECK(0);
	}
	CHECK(count >= 2 && count <= (size - ihl + 7) / 8);
	for (unsigned i = 0; i < count; i++) {
		size_t n = ipfrag_build(d, size, mtu, i, 0x55aa, frag), off;
		unsigned word = get16(frag + 6);

		CHECK(n <= mtu && n > ihl && get16(frag + 2) == n && frag[0] == d[0]);
		CHECK(memcmp(frag + 12, d + 12, 8) == 0 && frag[9] == d[9]);
		CHECK(get16(frag + 4) == 0x55aa && (word & 0x4000) == 0);
		off = (size_t)(((word & 0x1fff) - (get16(d + 6) & 0x1fff)) & 0x1fff) * 8;
		CHECK(off == covered);
		CHECK(i + 1 == count || ((n - ihl) % 8 == 0 && (word & 0x2000)));
		if (i == 0)
			CHECK(memcmp(frag + 20, d + 20, ihl - 20) == 0);
		memcpy(whole + off, frag + ihl, n - ihl);
		covered += n - ihl;
	}
	CHECK(covered == size - ihl && memcmp(whole, d + ihl, covered) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pgm_ip ip;

	fuzz_fragments(data, size);

	fuzz_tpdu(data, size);
	fuzz_datagram(data, size, &encap_ports, 0);
	fuzz_datagram(data, size, &encap_ports, PGM_PARSE_NO_CHECKSUM | PGM_PARSE_NO_UDP_CHECKSUM);
	fuzz_datagram(data, size, NULL, PGM_PARSE_NO_CHECKSUM);
	if (pgm_parse_ip(data, size, &encap_ports, &ip) == PGM_ERR_OK)
		CHECK((size_t)ip.pgm_offset + ip.pgm_len <= size);
	return 0;
}

/* ---- seed mode ---- */

static unsigned seed_count;

static void write_seed(const char *dir, const char *name, const uint8_t *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%03u-%s", dir, seed_count++, name);
	f = fopen(path, "wb");
	if (f == NULL || fwrite(data, 1, len, f) != len) {
		perror(path);
		exit(1);
	}
	fclose(f);
}

/* A TPDU as it is, wrapped in IPv4 (with RA) or IPv6, and in UDP on 3055/3056. */
static void write_wrapped(
	const char *dir, const char *name, const uint8_t *tpdu, size_t len, bool v6)
{
	static uint8_t d[65536 + 64];
	struct pgm_ip_params ip = {.ttl = 8, .router_alert = !v6};
	char label[96];
	size_t n;

	write_seed(dir, name, tpdu, len);
	pgm_nla_parse(&ip.src, v6 ? "2001:db8::1" : "198.18.0.1");
	pgm_nla_parse(&ip.dst, v6 ? "ff3e::8000:1" : "239.192.0.1");
	n = pgm_build_ip(d, sizeof(d), &ip, tpdu, len);
	snprintf(label, sizeof(label), "%s-ip", name);
	if (n > 0)
		write_seed(dir, label, d, n);
	ip.udp = true;
	ip.udp_sport = 3056;
	ip.udp_dport = (len & 1) ? 3055 : 3056;
	n = pgm_build_ip(d, sizeof(d), &ip, tpdu, len);
	snprintf(label, sizeof(label), "%s-udp", name);
	if (n > 0)
		write_seed(dir, label, d, n);
}

static void write_builder_seeds(const char *dir)
{
	static const char *families[2][3] = {{"198.18.0.1", "239.192.0.1", "198.18.1.1"},
		{"2001:db8::1", "ff3e::8000:1", "2001:db8:1::1"}};
	struct pgm_header_params down = {.sport = 41000, .dport = 7500, .gsi = {1, 2, 3, 4, 5, 6}};
	struct pgm_header_params up = {.sport = 7500, .dport = 41000, .gsi = {1, 2, 3, 4, 5, 6}};
	static uint8_t t[4096];
	uint32_t list[5] = {101, 102, 110, 0x80000000u, 0x80000001u};
	static const uint8_t unknown[] = {0x21, 4, PGM_OPX_INVALIDATE, 0, 0x22, 5, PGM_OPX_RESERVED,
		0, 9, 0x23, 4, PGM_OPX_DISCARD, 0};
	unsigned f;

	for (f = 0; f < 2; f++) {
		struct pgm_nla s, g, r;
		bool v6 = f == 1;

		pgm_nla_parse(&s, families[f][0]);
		pgm_nla_parse(&g, families[f][1]);
		pgm_nla_parse(&r, families[f][2]);
		{
			struct pgm_build_options o = {.nak_bo_ivl = true,
				.nak_bo_ivl_us = 50000,
				.nak_bo_rng = true,
				.parity_prm = true,
				.parity_tgs = 16,
				.curr_tgsize = true,
				.crqst = true,
				.join = true,
				.fin = true,
				.nbr_unreach = true,
				.rst = true};

			write_wrapped(dir, "spm", t,
				pgm_build_spm(t, sizeof(t), &down, 1, 2, 3, &s, NULL), v6);
			write_wrapped(dir, "spm-opts", t,
				pgm_build_spm(t, sizeof(t), &down, 1, 2, 3, &r, &o), v6);
		}
		{
			struct pgm_build_options o = {.raw = unknown, .raw_len = sizeof(unknown)};

			write_wrapped(dir, "spm-unknown", t,
				pgm_build_spm(t, sizeof(t), &down, 1, 2, 3, &s, &o), v6);
		}
		{
			struct pgm_build_options o = {.nak_list = list, .nak_list_count = 3};
			struct pgm_build_options cr = {.cr = true, .cr_rcvr = &r, .cr_flags = 7};
			struct pgm_build_options par = {.extra_header_flags = PGM_OPT_PARITY};
			struct pgm_build_options ncf = {.nak_list = list,
				.nak_list_count = 2,
				.redirect = &r,
				.path_nla = &r,
				.nbr_unreach = true,
				.nak_bo_ivl = true};

			write_wrapped(dir, "nak", t,
				pgm_build_nak(t, sizeof(t), PGM_NAK, &up, 100, &s, &g, NULL), v6);
			write_wrapped(dir, "nak-list", t,
				pgm_build_nak(t, sizeof(t), PGM_NAK, &up, 100, &s, &g, &o), v6);
			write_wrapped(dir, "nak-cr", t,
				pgm_build_nak(t, sizeof(t), PGM_NAK, &up, 100, &s, &g, &cr), v6);
			write_wrapped(dir, "nak-parity", t,
				pgm_build_nak(t, sizeof(t), PGM_NAK, &up, 0x102, &s, &g, &par), v6);
			write_wrapped(dir, "nnak", t,
				pgm_build_nak(t, sizeof(t), PGM_NNAK, &up, 100, &s, &g, NULL), v6);
			write_wrapped(dir, "ncf", t,
				pgm_build_nak(t, sizeof(t), PGM_NCF, &down, 100, &s, &g, &ncf), v6);
		}
		{
			struct pgm_build_options frag = {
				.fragment = true, .frag_apdu_len = 3000, .syn = true};
			struct pgm_build_options par = {.parity_grp = true,
				.parity_grp_value = 1,
				.curr_tgsize = true,
				.extra_header_flags = PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN};

			write_wrapped(dir, "odata", t,
				pgm_build_data(
					t, sizeof(t), PGM_ODATA, &down, 5, 1, "hello", 5, NULL),
				v6);
			write_wrapped(dir, "odata-frag", t,
				pgm_build_data(t, sizeof(t), PGM_ODATA, &down, 5, 1, "x", 1, &frag),
				v6);
			write_wrapped(dir, "rdata-parity", t,
				pgm_build_data(
					t, sizeof(t), PGM_RDATA, &down, 0x21, 1, "pq", 2, &par),
				v6);
		}
		{
			struct pgm_build_options bo = {.nak_bo_ivl = true};
			struct pgm_build_options redirect = {
				.redirect = &r, .extra_header_flags = PGM_OPT_PARITY};

			write_wrapped(dir, "poll", t,
				pgm_build_poll(t, sizeof(t), &down, 9, 0, 1, &r, 1000, 7, 3, &bo),
				v6);
			write_wrapped(dir, "polr", t,
				pgm_build_polr(t, sizeof(t), &up, 9, 0, &redirect), v6);
		}
		write_wrapped(dir, "spmr", t, pgm_build_spmr(t, sizeof(t), &up, NULL), v6);
		write_wrapped(dir, "ack", t, pgm_build_ack(t, sizeof(t), &up, 1, 2, NULL), v6);
	}
}

struct pcap_seed_ctx {
	const char *dir;
};

static void pcap_seed(const uint8_t *datagram, size_t len, unsigned long index, void *arg)
{
	struct pcap_seed_ctx *ctx = arg;
	struct pgm_ip ip;
	char name[64];

	snprintf(name, sizeof(name), "pcap-%lu", index);
	write_seed(ctx->dir, name, datagram, len);
	if (pgm_parse_ip(datagram, len, &encap_ports, &ip) == PGM_ERR_OK) {
		snprintf(name, sizeof(name), "pcap-%lu-tpdu", index);
		write_seed(ctx->dir, name, datagram + ip.pgm_offset, ip.pgm_len);
	}
}

static void write_pcap_seeds(const char *dir, const char *list)
{
	char *copy = strdup(list), *save = NULL, *path;
	struct pcap_seed_ctx ctx = {.dir = dir};

	if (copy == NULL)
		exit(1);
	for (path = strtok_r(copy, " \t\n", &save); path != NULL;
		path = strtok_r(NULL, " \t\n", &save)) {
		struct pgm_pcap_walk walk;
		char err[512];

		if (pgm_pcap_for_each_datagram(path, pcap_seed, &ctx, &walk, err, sizeof(err)) !=
			0) {
			fprintf(stderr, "seed: %s\n", err);
			exit(1);
		}
	}
	free(copy);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("PGM_FUZZ_SEED_DIR"), *pcaps = getenv("PGM_FUZZ_SEED_PCAPS");

	(void)argc;
	(void)argv;
	if (dir == NULL)
		return 0;
	write_builder_seeds(dir);
	if (pcaps != NULL && pcaps[0] != '\0')
		write_pcap_seeds(dir, pcaps);
	printf("seeds: %u written to %s\n", seed_count, dir);
	exit(0);
}
