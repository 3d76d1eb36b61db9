/*
 * Shared helpers of the wire codec tests (see wire_test.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <check.h>

#include "tests/lib/pgm_pcap_check.h"
#include "wire_test.h"

const uint8_t wire_test_gsi[PGM_GSI_LEN] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

struct pgm_nla wire_test_nla(const char *text)
{
	struct pgm_nla nla;

	if (!pgm_nla_parse(&nla, text)) {
		fprintf(stderr, "wire_test_nla: bad literal %s\n", text);
		abort();
	}
	return nla;
}

struct pgm_header_params wire_test_downstream(void)
{
	struct pgm_header_params hdr = {.sport = WIRE_TEST_SPORT, .dport = WIRE_TEST_DPORT};

	memcpy(hdr.gsi, wire_test_gsi, PGM_GSI_LEN);
	return hdr;
}

struct pgm_header_params wire_test_upstream(void)
{
	struct pgm_header_params hdr = {.sport = WIRE_TEST_DPORT, .dport = WIRE_TEST_SPORT};

	memcpy(hdr.gsi, wire_test_gsi, PGM_GSI_LEN);
	return hdr;
}

uint16_t wire_test_get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

uint32_t wire_test_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

void wire_test_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

void wire_test_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

uint16_t wire_test_reference_sum(const uint8_t *buf, size_t len)
{
	uint64_t sum = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2)
		sum += (uint32_t)(buf[i] << 8 | buf[i + 1]);
	if (len & 1)
		sum += (uint32_t)buf[len - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

/* ---- the catalog ---- */

struct catalog {
	struct wire_test_case *cases;
	size_t max, n;
	struct wire_test_case *cur;
};

/* Starts a case; returns its TPDU buffer (a scratch one when the catalog is full). */
static uint8_t *begin(struct catalog *c, const char *name)
{
	static struct wire_test_case scratch;

	c->cur = c->n < c->max ? &c->cases[c->n] : &scratch;
	memset(c->cur, 0, sizeof(*c->cur));
	snprintf(c->cur->name, sizeof(c->cur->name), "%s", name);
	return c->cur->tpdu;
}

/* Ends a case: its length, and its IP wrapping (family from the source, UDP port or raw). */
static void end(struct catalog *c, size_t len, const char *ip_src, const char *ip_dst,
	bool router_alert, uint16_t udp_dport)
{
	struct wire_test_case *tc = c->cur;

	if (len == 0) {
		fprintf(stderr, "wire_test_catalog: builder failed for %s\n", tc->name);
		abort();
	}
	tc->len = len;
	tc->ip.src = wire_test_nla(ip_src);
	tc->ip.dst = wire_test_nla(ip_dst);
	tc->ip.ttl = 16;
	tc->ip.id = (uint16_t)(c->n + 1);
	/* over IPv6 the hop-by-hop option (PGM_IPV6_ROUTER_ALERT_VALUE) */
	tc->ip.router_alert = router_alert;
	if (udp_dport != 0) {
		tc->ip.udp = true;
		tc->ip.udp_dport = udp_dport;
		/* OpenPGM sends from its own encapsulation port to the peer's. */
		tc->ip.udp_sport = udp_dport == PGM_DEFAULT_UDP_UCAST_PORT
					   ? PGM_DEFAULT_UDP_MCAST_PORT
					   : PGM_DEFAULT_UDP_UCAST_PORT;
	}
	c->n++; /* counted even past max, so the caller learns the full size */
}

/* An unknown option (type 0x20 + n) with the given OPX and a 4-byte value. */
static size_t unknown_option(uint8_t *p, unsigned n, unsigned opx)
{
	p[0] = (uint8_t)(0x20 + n);
	p[1] = 8;
	p[2] = (uint8_t)opx;
	p[3] = 0;
	wire_test_put32(p + 4, 0xdeadbeef + n);
	return 8;
}

/* OPT_PGMCC_DATA / OPT_PGMCC_FEEDBACK, which pgm_build_options has no fields for. */
static size_t pgmcc_option(uint8_t *p, unsigned type, const struct pgm_nla *nla, uint16_t loss)
{
	size_t alen = pgm_nla_len(nla);

	memset(p, 0, 12 + alen);
	p[0] = (uint8_t)type;
	p[1] = (uint8_t)(12 + alen);
	wire_test_put32(p + 4, 123456789);
	wire_test_put16(p + 8, nla->afi);
	wire_test_put16(p + 10, type == PGM_OPT_PGMCC_FEEDBACK ? loss : 0);
	memcpy(p + 12, nla->addr, alen);
	return 12 + alen;
}

#define V4_SRC "198.18.0.1"
#define V4_GRP "239.192.0.1"
#define V4_RTR "198.18.1.1"
#define V4_RCV "198.18.2.7"
#define V6_SRC "2001:db8::1"
#define V6_GRP "ff3e::8000:1"
#define V6_RTR "2001:db8:1::1"
#define V6_RCV "2001:db8:2::7"

size_t wire_test_catalog(struct wire_test_case *cases, size_t max)
{
	struct catalog cat = {.cases = cases, .max = max};
	struct catalog *c = &cat;
	struct pgm_header_params down = wire_test_downstream(), up = wire_test_upstream();
	const char *families[2][4] = {
		{V4_SRC, V4_GRP, V4_RTR, V4_RCV}, {V6_SRC, V6_GRP, V6_RTR, V6_RCV}};
	static const char payload[] = "pgmrouter wire codec sample payload";
	uint32_t list62[PGM_MAX_NAK_LIST], wrap[4] = {0xfffffffe, 0xffffffff, 0, 5};
	uint8_t raw[64];
	unsigned f, i;
	uint8_t *t;

	for (i = 0; i < PGM_MAX_NAK_LIST; i++)
		list62[i] = 1001 + 2 * i;

	for (f = 0; f < 2; f++) {
		const char *src = families[f][0], *grp = families[f][1], *rtr = families[f][2],
			   *rcv = families[f][3];
		struct pgm_nla s = wire_test_nla(src), g = wire_test_nla(grp),
			       r = wire_test_nla(rtr), x = wire_test_nla(rcv);
		const char *fam = f == 0 ? "v4" : "v6";
		char name[64];
		size_t n;

		/* SPM: plain; every SPM option; FEC + NBR_UNREACH + RST; no checksum. */
		snprintf(name, sizeof(name), "spm-%s", fam);
		t = begin(c, name);
		end(c, pgm_build_spm(t, WIRE_TEST_MAX_TPDU, &down, 7, 100, 200, &s, NULL), src, grp,
			true, 0);
		{
			struct pgm_build_options o = {.nak_bo_ivl = true,
				.nak_bo_ivl_us = 50000,
				.nak_bo_ivl_sqn = 3,
				.nak_bo_rng = true,
				.nak_bo_max_us = 200000,
				.nak_bo_min_us = 10000,
				.parity_prm = true,
				.parity_prm_flags = 0x03,
				.parity_tgs = 16,
				.crqst = true,
				.crqst_flags = 0x01,
				.curr_tgsize = true,
				.curr_tgsize_value = 12,
				.join = true,
				.join_min_sqn = 90,
				.fin = true};

			snprintf(name, sizeof(name), "spm-options-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_spm(t, WIRE_TEST_MAX_TPDU, &down, 8, 100, 300, &r, &o),
				src, grp, true, f == 0 ? PGM_DEFAULT_UDP_MCAST_PORT : 0);
		}
		{
			struct pgm_build_options o = {
				.nbr_unreach = true, .rst = true, .rst_flags = 0x40 | 0x05};

			snprintf(name, sizeof(name), "spm-nbr-unreach-rst-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_spm(
					t, WIRE_TEST_MAX_TPDU, &down, 8, 0, 0x80000000u, &r, &o),
				src, grp, true, 0);
		}
		snprintf(name, sizeof(name), "spm-no-checksum-%s", fam);
		t = begin(c, name);
		n = pgm_build_spm(t, WIRE_TEST_MAX_TPDU, &down, 9, 100, 200, &s, NULL);
		t[6] = t[7] = 0;
		end(c, n, src, grp, false, 0);

		/* Unknown options with OPX 00, 01 and 11, and an already invalidated one. */
		{
			size_t k = 0;
			struct pgm_build_options o = {.join = true, .join_min_sqn = 1};

			k += unknown_option(raw + k, 0, PGM_OPX_IGNORE);
			k += unknown_option(raw + k, 1, PGM_OPX_INVALIDATE);
			k += unknown_option(raw + k, 2, PGM_OPX_RESERVED);
			raw[k] = PGM_OPT_INVALID;
			raw[k + 1] = 6;
			raw[k + 2] = 0;
			raw[k + 3] = 0;
			raw[k + 4] = 0x55;
			raw[k + 5] = 0xaa;
			k += 6;
			o.raw = raw;
			o.raw_len = k;
			snprintf(name, sizeof(name), "spm-unknown-options-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_spm(t, WIRE_TEST_MAX_TPDU, &down, 10, 1, 2, &s, &o), src,
				grp, true, 0);
		}

		/* POLL with NAK_BO_IVL; POLR plain and redirecting with parity. */
		{
			struct pgm_build_options o = {
				.nak_bo_ivl = true, .nak_bo_ivl_us = 40000, .nak_bo_ivl_sqn = 77};

			snprintf(name, sizeof(name), "poll-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_poll(t, WIRE_TEST_MAX_TPDU, &down, 77, 1, 0, &r, 250000,
					0x12345678, 0x0000000f, &o),
				src, grp, true, 0);
		}
		{
			struct pgm_build_options o = {
				.redirect = &x, .extra_header_flags = PGM_OPT_PARITY};

			snprintf(name, sizeof(name), "polr-redirect-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_polr(t, WIRE_TEST_MAX_TPDU, &up, 77, 1, &o), rcv, grp,
				true, 0);
		}

		/* NAKs: plain, full list, wrapping list, parity, CR; NNAK; NCFs. */
		snprintf(name, sizeof(name), "nak-%s", fam);
		t = begin(c, name);
		end(c, pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up, 1000, &s, &g, NULL), rcv,
			rtr, true, f == 0 ? PGM_DEFAULT_UDP_UCAST_PORT : 0);
		{
			struct pgm_build_options o = {
				.nak_list = list62, .nak_list_count = PGM_MAX_NAK_LIST};

			snprintf(name, sizeof(name), "nak-list-62-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up, 1000, &s, &g, &o),
				rcv, rtr, false, 0);
		}
		{
			struct pgm_build_options o = {.nak_list = wrap, .nak_list_count = 4};

			snprintf(name, sizeof(name), "nak-list-wrap-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up, 0xfffffff0u, &s,
					&g, &o),
				rcv, rtr, false, 0);
		}
		{
			struct pgm_build_options o = {
				.extra_header_flags = PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN};

			snprintf(name, sizeof(name), "nak-parity-%s", fam);
			t = begin(c, name);
			/* TG_SQN 0x100 (TGS 16), PKT_CNT 3 */
			end(c,
				pgm_build_nak(
					t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up, 0x103, &s, &g, &o),
				rcv, rtr, true, 0);
		}
		{
			struct pgm_build_options o = {.cr = true,
				.cr_flags = 0x04 | 0x02 | 0x01,
				.cr_lead = 999,
				.cr_ne_wl = 100,
				.cr_ne_wp = 200,
				.cr_rx_wp = 300,
				.cr_rcvr = &x};
			size_t k = pgmcc_option(raw, PGM_OPT_PGMCC_FEEDBACK, &x, 0x1234);

			o.raw = raw;
			o.raw_len = k;
			snprintf(name, sizeof(name), "nak-cr-pgmcc-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up, 1000, &s, &g, &o),
				rcv, rtr, false, 0);
		}
		snprintf(name, sizeof(name), "nnak-%s", fam);
		t = begin(c, name);
		end(c, pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NNAK, &up, 1001, &s, &g, NULL), rtr,
			src, false, 0);
		{
			uint32_t list[3] = {1001, 1002, 1010};
			struct pgm_build_options o = {.nak_list = list,
				.nak_list_count = 3,
				.nak_bo_ivl = true,
				.nak_bo_ivl_us = 30000,
				.nak_bo_ivl_sqn = 0,
				.redirect = &r,
				.nbr_unreach = true,
				.path_nla = &r};

			snprintf(name, sizeof(name), "ncf-options-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_nak(
					t, WIRE_TEST_MAX_TPDU, PGM_NCF, &down, 1000, &s, &g, &o),
				src, grp, true, f == 0 ? PGM_DEFAULT_UDP_MCAST_PORT : 0);
		}
		{
			/* An NCF built from a parsed parity NAK with a raised count. */
			struct pgm_build_options no = {.extra_header_flags = PGM_OPT_PARITY};
			uint8_t nak[256];
			struct pgm_packet pkt;

			n = pgm_build_nak(nak, sizeof(nak), PGM_NAK, &up, 0x102, &s, &g, &no);
			if (pgm_parse(nak, n, 0, &pkt) != PGM_ERR_OK)
				abort();
			snprintf(name, sizeof(name), "ncf-from-parity-nak-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_ncf_from_nak(t, WIRE_TEST_MAX_TPDU, &pkt, 5, NULL), src,
				grp, true, 0);
		}
		{
			struct pgm_tsi tsi = {.sport = WIRE_TEST_SPORT};

			memcpy(tsi.gsi, wire_test_gsi, PGM_GSI_LEN);
			snprintf(name, sizeof(name), "nak-for-tsi-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_nak_for_tsi(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &tsi,
					WIRE_TEST_DPORT, 4242, &s, &g, NULL),
				rtr, src, false, 0);
			snprintf(name, sizeof(name), "ncf-for-tsi-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_ncf_for_tsi(t, WIRE_TEST_MAX_TPDU, &tsi, WIRE_TEST_DPORT,
					4242, &s, &g, NULL),
				src, grp, true, 0);
		}

		/* Data: ODATA plain, fragment + SYN, parity with group and size, PGMCC; RDATA. */
		{
			struct pgm_build_options frag = {.fragment = true,
				.frag_first_sqn = 500,
				.frag_offset = 1400,
				.frag_apdu_len = 4000,
				.syn = true};
			struct pgm_build_options parity = {.parity_grp = true,
				.parity_grp_value = 2,
				.curr_tgsize = true,
				.curr_tgsize_value = 7,
				.extra_header_flags = PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN};
			struct pgm_build_options pgmcc = {0};
			size_t k = pgmcc_option(raw, PGM_OPT_PGMCC_DATA, &x, 0);

			pgmcc.raw = raw;
			pgmcc.raw_len = k;
			snprintf(name, sizeof(name), "odata-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_ODATA, &down, 501, 400,
					payload, sizeof(payload) - 1, NULL),
				src, grp, false, f == 0 ? PGM_DEFAULT_UDP_MCAST_PORT : 0);
			snprintf(name, sizeof(name), "odata-fragment-syn-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_ODATA, &down, 502, 400,
					payload, 5, &frag),
				src, grp, false, 0);
			snprintf(name, sizeof(name), "odata-parity-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_ODATA, &down, 0x200 | 1,
					400, payload, 9, &parity),
				src, grp, false, 0);
			snprintf(name, sizeof(name), "odata-pgmcc-%s", fam);
			t = begin(c, name);
			end(c,
				pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_ODATA, &down, 503, 400,
					payload, 1, &pgmcc),
				src, grp, false, 0);
			snprintf(name, sizeof(name), "rdata-fragment-%s", fam);
			t = begin(c, name);
			frag.syn = false;
			end(c,
				pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_RDATA, &down, 502, 450,
					payload, 5, &frag),
				src, grp, true, 0);
		}

		/* SPMR and ACK. */
		snprintf(name, sizeof(name), "spmr-%s", fam);
		t = begin(c, name);
		end(c, pgm_build_spmr(t, WIRE_TEST_MAX_TPDU, &up, NULL), rcv, src, false,
			f == 0 ? PGM_DEFAULT_UDP_UCAST_PORT : 0);
		{
			struct pgm_build_options o = {0};
			size_t k = pgmcc_option(raw, PGM_OPT_PGMCC_FEEDBACK, &x, 0x0100);

			o.raw = raw;
			o.raw_len = k;
			snprintf(name, sizeof(name), "ack-pgmcc-%s", fam);
			t = begin(c, name);
			end(c, pgm_build_ack(t, WIRE_TEST_MAX_TPDU, &up, 503, 0x80000001u, &o), rcv,
				src, false, f == 0 ? PGM_DEFAULT_UDP_UCAST_PORT : 0);
		}
	}

	/* Mixed families in one NAK (OpenPGM tolerates them), a 1500-byte RDATA. */
	{
		struct pgm_nla s = wire_test_nla(V4_SRC), g = wire_test_nla(V6_GRP);
		struct pgm_header_params up2 = wire_test_upstream();
		static uint8_t big[1500 - 24];

		t = begin(c, "nak-mixed-v4-v6");
		end(c, pgm_build_nak(t, WIRE_TEST_MAX_TPDU, PGM_NAK, &up2, 1000, &s, &g, NULL),
			V4_RCV, V4_RTR, false, 0);
		for (i = 0; i < sizeof(big); i++)
			big[i] = (uint8_t)(i * 7 + 1);
		t = begin(c, "rdata-1500-v4");
		end(c,
			pgm_build_data(t, WIRE_TEST_MAX_TPDU, PGM_RDATA, &down, 1234, 1000, big,
				sizeof(big), NULL),
			V4_SRC, V4_GRP, true, 0);
	}
	return cat.n;
}

/* ---- rebuild through the builders ---- */

size_t wire_test_rebuild(const struct pgm_packet *pkt, uint8_t *out, size_t cap)
{
	const struct pgm_options *po = &pkt->opt;
	struct pgm_build_options o;
	struct pgm_header_params hdr = {.sport = pkt->sport, .dport = pkt->dport};
	uint32_t list[PGM_MAX_NAK_LIST];
	uint8_t raw[1024];
	size_t raw_len = 0;
	unsigned i;

	memset(&o, 0, sizeof(o));
	memcpy(hdr.gsi, pkt->gsi, PGM_GSI_LEN);
	for (i = 0; i < po->nak_list_count; i++)
		list[i] = pgm_opt_nak_list_sqn(po, i);
	o.nak_list = po->nak_list_count > 0 ? list : NULL;
	o.nak_list_count = po->nak_list_count;
	o.nak_bo_ivl = pgm_opt_has(po, PGM_OPT_NAK_BO_IVL);
	o.nak_bo_ivl_us = po->nak_bo_ivl;
	o.nak_bo_ivl_sqn = po->nak_bo_ivl_sqn;
	o.nak_bo_rng = pgm_opt_has(po, PGM_OPT_NAK_BO_RNG);
	o.nak_bo_max_us = po->nak_bo_max;
	o.nak_bo_min_us = po->nak_bo_min;
	o.redirect = pgm_opt_has(po, PGM_OPT_REDIRECT) ? &po->redirect : NULL;
	o.parity_prm = pgm_opt_has(po, PGM_OPT_PARITY_PRM);
	o.parity_prm_flags = po->parity_prm_flags;
	o.parity_tgs = po->parity_tgs;
	o.curr_tgsize = pgm_opt_has(po, PGM_OPT_CURR_TGSIZE);
	o.curr_tgsize_value = po->curr_tgsize;
	o.parity_grp = pgm_opt_has(po, PGM_OPT_PARITY_GRP);
	o.parity_grp_value = po->parity_grp;
	o.nbr_unreach = pgm_opt_has(po, PGM_OPT_NBR_UNREACH);
	o.path_nla = pgm_opt_has(po, PGM_OPT_PATH_NLA) ? &po->path_nla : NULL;
	o.fragment = pgm_opt_has(po, PGM_OPT_FRAGMENT);
	o.frag_first_sqn = po->frag_first_sqn;
	o.frag_offset = po->frag_offset;
	o.frag_apdu_len = po->frag_apdu_len;
	o.join = pgm_opt_has(po, PGM_OPT_JOIN);
	o.join_min_sqn = po->join_min_sqn;
	o.syn = pgm_opt_has(po, PGM_OPT_SYN);
	o.fin = pgm_opt_has(po, PGM_OPT_FIN);
	o.rst = pgm_opt_has(po, PGM_OPT_RST);
	o.rst_flags = po->rst_flags;
	o.crqst = pgm_opt_has(po, PGM_OPT_CRQST);
	o.crqst_flags = po->crqst_flags;
	o.cr = pgm_opt_has(po, PGM_OPT_CR);
	o.cr_flags = po->cr_flags;
	o.cr_lead = po->cr_lead;
	o.cr_ne_wl = po->cr_ne_wl;
	o.cr_ne_wp = po->cr_ne_wp;
	o.cr_rx_wp = po->cr_rx_wp;
	o.cr_rcvr = pgm_opt_has(po, PGM_OPT_CR) ? &po->cr_rcvr : NULL;
	/* Options without builder fields (unknown, OPT_INVALID, PGMCC) go through raw, in order,
	 * with the E bit cleared: the builder sets it on the last option. */
	for (i = 1; i < po->count; i++) {
		unsigned type = po->type[i];
		const uint8_t *src = pkt->tpdu + po->offset[i];

		if (pgm_opt_bit(type) >= 0 && type != PGM_OPT_INVALID &&
			type != PGM_OPT_PGMCC_DATA && type != PGM_OPT_PGMCC_FEEDBACK)
			continue;
		if (raw_len + src[1] > sizeof(raw))
			return 0;
		memcpy(raw + raw_len, src, src[1]);
		raw[raw_len] &= (uint8_t)~PGM_OPT_END;
		raw_len += src[1];
	}
	o.raw = raw_len > 0 ? raw : NULL;
	o.raw_len = raw_len;
	/* Header flags the builder derives itself (present, network) are not extra. */
	o.extra_header_flags = pkt->opt_flags & (PGM_OPT_PARITY | PGM_OPT_VAR_PKTLEN);

	switch (pkt->type) {
	case PGM_SPM:
		return pgm_build_spm(
			out, cap, &hdr, pkt->sqn, pkt->trail, pkt->lead, &pkt->path, &o);
	case PGM_ODATA:
	case PGM_RDATA:
		return pgm_build_data(out, cap, pkt->type, &hdr, pkt->sqn, pkt->trail, pkt->tsdu,
			pkt->tsdu_len, &o);
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		return pgm_build_nak(
			out, cap, pkt->type, &hdr, pkt->sqn, &pkt->nak_src, &pkt->nak_grp, &o);
	case PGM_POLL:
		return pgm_build_poll(out, cap, &hdr, pkt->sqn, pkt->poll_round, pkt->poll_s_type,
			&pkt->path, pkt->poll_bo_ivl, pkt->poll_rand, pkt->poll_mask, &o);
	case PGM_POLR:
		return pgm_build_polr(out, cap, &hdr, pkt->sqn, pkt->polr_round, &o);
	case PGM_SPMR:
		return pgm_build_spmr(out, cap, &hdr, &o);
	case PGM_ACK:
		return pgm_build_ack(out, cap, &hdr, pkt->sqn, pkt->ack_bitmap, &o);
	default:
		return 0;
	}
}

/* ---- capture replay ---- */

void wire_test_assert_pcap_round_trip(const char *path, unsigned flags, unsigned long min_pgm)
{
	struct pgm_udp_ports ports;
	struct pgm_pcap_check r;
	char err[512];
	unsigned e;

	pgm_udp_ports_default(&ports);
	ck_assert_msg(
		pgm_pcap_check_file(path, &ports, flags, &r, err, sizeof(err)) == 0, "%s", err);
	printf("%s: %lu records, %lu PGM, %lu parsed, %lu identical, %lu not PGM, %lu not IP, "
	       "%lu truncated\n",
		path, r.walk.records, r.pgm, r.parsed, r.identical, r.not_pgm, r.walk.not_ip,
		r.walk.truncated);
	for (e = 0; e < PGM_ERR_COUNT; e++)
		if (r.errors[e] > 0)
			printf("%s: %lu x %s\n", path, r.errors[e], pgm_err_name(e));
	ck_assert_msg(r.pgm >= min_pgm, "%s: only %lu PGM packets", path, r.pgm);
	ck_assert_msg(r.parsed == r.pgm, "%s: record %lu: %s (%lu of %lu PGM packets rejected)",
		path, r.first_error_record, pgm_err_name(r.first_error), r.pgm - r.parsed, r.pgm);
	ck_assert_msg(r.mismatches == 0, "%s: record %lu re-serializes differently at byte %zu: %s",
		path, r.first_mismatch_record, r.first_mismatch_offset, r.first_mismatch_summary);
	ck_assert_uint_eq(r.identical, r.pgm);
}

void wire_test_ip4_fix_checksum(uint8_t *b)
{
	size_t ihl = (size_t)(b[0] & 0x0f) * 4;

	b[10] = b[11] = 0;
	wire_test_put16(b + 10, (uint16_t)~wire_test_reference_sum(b, ihl));
}

size_t wire_test_ip4_insert_options(uint8_t *b, size_t n, const uint8_t *opts, size_t olen)
{
	size_t ihl = (size_t)(b[0] & 0x0f) * 4;

	memmove(b + ihl + olen, b + ihl, n - ihl);
	memcpy(b + ihl, opts, olen);
	b[0] = (uint8_t)(0x40 | (ihl + olen) / 4);
	wire_test_put16(b + 2, (uint16_t)(n + olen));
	return n + olen;
}

size_t wire_test_ip6_insert_ext(uint8_t *b, size_t n, uint8_t type, const uint8_t *ext, size_t elen)
{
	memmove(b + 40 + elen, b + 40, n - 40);
	memcpy(b + 40, ext, elen);
	b[40] = b[6];
	b[6] = type;
	wire_test_put16(b + 4, (uint16_t)(wire_test_get16(b + 4) + elen));
	return n + elen;
}
