/*
 * Stateful libFuzzer target for the control plane. An input is a program of operations on one
 * core: packets from a compact description (type, one of eight TSIs, an SQN near a base, header
 * flags, options, NAK list, NLAs, arrival interface and egress copies) built with the codec's
 * builders, wrapped in IP or UDP and parsed as the data plane does, so they pass the checksums;
 * raw datagrams; clock advances that run the timers; interface add, remove, rename, address and
 * assist on/off; global and per-interface configuration, limits; clears. After every operation:
 * cp_check() (tables, pools, wheels, slots), the views against the statistics, counters never
 * going backwards except where cleared, limits holding, and every action the core emits on a
 * known interface and encoding to a TPDU that parses.
 *
 * Seed mode (tests/fuzz/run.sh): with PGM_FUZZ_SEED_DIR set, writes the programs of
 * write_seeds() there and exits.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/control.h"
#include "dataplane/wire/pgm_wire.h"
#include "tests/fuzz/fuzz.h"


#define NIFS	 8 /* ifindex 1..8, address 198.18.IFINDEX.1 */
#define NTSI	 8
#define MAX_OPS	 256
#define SQN_BASE 1000u

enum op {
	OP_PACKET,
	OP_RAW,
	OP_ADVANCE,
	OP_IF_ADD,
	OP_IF_REMOVE,
	OP_IF_RENAME,
	OP_IF_ASSIST,
	OP_IF_ADDR,
	OP_CONFIG,
	OP_IF_CONFIG,
	OP_LIMITS,
	OP_CLEAR_COUNTERS,
	OP_CLEAR_REPAIRS,
	OP_CLEAR_DLRS,
	OP_COUNT
};

/* The packet description: 16 bytes. */
struct desc {
	uint8_t type;	 /* % 10: SPM ODATA RDATA NAK NNAK NCF POLL POLR SPMR ACK */
	uint8_t tsi;	 /* % NTSI */
	uint8_t flags;	 /* F_* */
	uint8_t opts;	 /* O_* */
	uint8_t nlist;	 /* % 8: OPT_NAK_LIST entries */
	uint8_t in;	 /* % (NIFS + 1): arrival ifindex (0: none known) */
	uint8_t outmask; /* bit i: a copy leaves by ifindex i + 1 (SPM, ODATA, RDATA) */
	uint8_t nla;	 /* NLA choices: bits 0-2 path/redirect, 3-4 NAK_SRC, 5 NAK_GRP */
	uint8_t ipsel;	 /* IP addresses other than the natural ones */
	uint8_t ttl;
	uint8_t sqn[2];	 /* signed offset from the base */
	uint8_t val[2];	 /* option values, POLL fields */
	uint8_t step;	 /* NAK list spacing */
	uint8_t pad;
};

#define F_PARITY    0x01
#define F_UDP	    0x02
#define F_RA	    0x04
#define F_MCAST	    0x08 /* a NAK, NNAK or POLR to the group */
#define F_UNORDERED 0x10 /* NAK list backwards */
#define F_TRAIL	    0x20 /* SPM trail/lead far apart */
#define F_WRAP	    0x80 /* base near 2^32 */

#define O_NAK_BO_IVL  0x01
#define O_PARITY_PRM  0x02
#define O_CURR_TGSIZE 0x04
#define O_UNREACH     0x08
#define O_REDIRECT    0x10
#define O_FRAGMENT    0x20
#define O_UNKNOWN     0x40
#define O_SYN_FIN     0x80

struct reader {
	const uint8_t *p, *end;
};

static uint8_t rd8(struct reader *r)
{
	return r->p < r->end ? *r->p++ : 0;
}

static uint16_t rd16(struct reader *r)
{
	uint16_t hi = rd8(r);

	return (uint16_t)(hi << 8 | rd8(r));
}

static struct {
	struct cp *cp;
	cp_time_t now;
	struct pgm_udp_ports ports;
	uint64_t actions;
	/* counters seen after the previous operation, per ifindex (valid[i]), and global */
	bool valid[NIFS + 1];
	struct cp_counters last[NIFS + 1];
	uint64_t last_global[CP_C_COUNT];
	bool global_valid;
	size_t sessions, repairs; /* after the previous operation */
	bool unknown_arrival;	  /* a packet arrived on an interface the core does not know */
} f;

static struct pgm_nla nla4(uint8_t a, uint8_t b, uint8_t c, uint8_t d)
{
	struct pgm_nla n = {.afi = PGM_AFI_IP, .addr = {a, b, c, d}};

	return n;
}

static struct pgm_nla tsi_source(unsigned t)
{
	return nla4(198, 18, 1, (uint8_t)(10 + t));
}

static struct pgm_nla tsi_group(unsigned t)
{
	return nla4(239, 192, 0, (uint8_t)(1 + t % 2));
}

static struct pgm_nla router_addr(unsigned ifindex)
{
	return nla4(198, 18, (uint8_t)ifindex, 1);
}

/* Path NLAs, redirects, off-tree DLRs: a small set, so that they meet. */
static struct pgm_nla pick_nla(unsigned sel, unsigned t, unsigned in)
{
	struct pgm_nla v6;

	switch (sel & 7) {
	case 0:
		return tsi_source(t);
	case 1:
		return nla4(198, 18, 1, 100); /* the upstream neighbour */
	case 2:
		return router_addr(in);
	case 3:
		return nla4(198, 18, 2, 50); /* a DLR */
	case 4:
		pgm_nla_parse(&v6, "2001:db8::1");
		return v6;
	case 5:
		return nla4(198, 18, 3, 100);
	case 6:
		return tsi_group(t);
	default:
		return nla4(0, 0, 0, 0);
	}
}

static void emit(void *ctx, const struct cp_action *a)
{
	static uint8_t tpdu[65536];
	struct pgm_packet p;
	struct cp_if_view v;
	enum pgm_err err;
	size_t n;

	(void)ctx;
	f.actions++;
	/* the core originates only on interfaces it knows, unless it was given packets from
	   others (the data plane knows every link before its packets arrive) */
	CHECK(f.unknown_arrival || cp_get_if(f.cp, a->ifindex, &v));
	n = cp_action_tpdu(a, tpdu, sizeof(tpdu));
	CHECK(n > 0);
	err = pgm_parse(tpdu, n, 0, &p);
	/* raising a parity count can move the header SQN past a listed one (fuzz_parse) */
	CHECK(err == PGM_ERR_OK || (a->parity && err == PGM_ERR_NAK_LIST_ORDER));
}

static void deliver(const uint8_t *datagram, size_t len, int in, uint8_t outmask)
{
	struct pgm_packet pkt;
	struct pgm_ip ip;
	struct cp_result res;
	struct cp_packet cpin = {.ip = &ip, .pkt = &pkt, .in_ifindex = in, .now = f.now};
	enum pgm_err err = pgm_parse_datagram(datagram, len, &f.ports, 0, &ip, &pkt);

	if (!cp_get_if(f.cp, in, &(struct cp_if_view){0}))
		f.unknown_arrival = true;
	if (err != PGM_ERR_OK) {
		cp_count_error(f.cp, in, err);
		return;
	}
	if ((pkt.type == PGM_SPM || pkt.type == PGM_RDATA || pkt.type == PGM_ODATA) &&
		outmask != 0) {
		for (int i = 1; i <= NIFS; i++) {
			if ((outmask & (1u << (i - 1))) == 0 || i == in)
				continue;
			cpin.out_ifindex = i;
			cp_packet(f.cp, &cpin, &res);
			CHECK(res.verdict <= CP_ACCEPT_REWRITTEN);
		}
		return;
	}
	cp_packet(f.cp, &cpin, &res);
	CHECK(res.verdict <= CP_ACCEPT_REWRITTEN);
}

static void op_packet(struct reader *r)
{
	static uint8_t tpdu[4096], dgram[4096 + 128];
	static const uint8_t unknown_opt[] = {0x21, 4, 0, 0};
	struct desc d;
	uint8_t unknown[sizeof(unknown_opt)];
	uint32_t list[8], sqn, base;
	uint16_t val;
	unsigned t, in, type;
	struct pgm_header_params down = {.dport = 7500}, up;
	struct pgm_build_options o = {0};
	struct pgm_ip_params ip = {0};
	struct pgm_nla path, src, grp, redirect;
	size_t n = 0, len;

	for (size_t i = 0; i < sizeof(d); i++)
		((uint8_t *)&d)[i] = rd8(r);
	t = d.tsi % NTSI;
	in = d.in % (NIFS + 1);
	type = d.type % 10;
	val = (uint16_t)(d.val[0] << 8 | d.val[1]);
	base = (d.flags & F_WRAP) ? 0xffffff00u : SQN_BASE;
	sqn = base + (uint32_t)(int32_t)(int16_t)(d.sqn[0] << 8 | d.sqn[1]);

	memset(down.gsi, 0x5a, sizeof(down.gsi));
	down.gsi[5] = (uint8_t)(t >> 1);
	down.sport = (uint16_t)(4000 + (t & 1));
	up = down;
	up.sport = down.dport;
	up.dport = down.sport;

	path = pick_nla(d.nla, t, in);
	redirect = pick_nla(d.nla >> 3, t, in);
	src = (d.nla & 0x18) == 0x08 ? router_addr(in)
	      : (d.nla & 0x18) == 0x10 ? nla4(198, 18, 9, 9)
	      : (d.nla & 0x18) == 0x18 ? pick_nla(4, t, in)
				       : tsi_source(t);
	grp = (d.nla & 0x20) ? tsi_group(t + 1) : tsi_group(t);

	for (unsigned i = 0; i < d.nlist % 8; i++) {
		uint32_t k = (d.flags & F_UNORDERED) ? d.nlist % 8 - i : i + 1;

		list[i] = sqn + k * (1u + d.step % 16);
	}
	o.nak_list = list;
	o.nak_list_count = d.nlist % 8;
	o.extra_header_flags = (d.flags & F_PARITY) ? PGM_OPT_PARITY : 0;
	if (d.opts & O_NAK_BO_IVL) {
		o.nak_bo_ivl = true;
		o.nak_bo_ivl_us = (uint32_t)val * 100u;
		o.nak_bo_ivl_sqn = sqn;
	}
	if (d.opts & O_PARITY_PRM) {
		o.parity_prm = true;
		o.parity_prm_flags = (uint8_t)(val & 3);
		o.parity_tgs = 1u << (1 + (val >> 2) % 8);
	}
	if (d.opts & O_CURR_TGSIZE) {
		o.curr_tgsize = true;
		o.curr_tgsize_value = 1u + (val >> 5) % 16;
	}
	if (d.opts & O_UNREACH) {
		o.nbr_unreach = true;
		o.path_nla = &path;
	}
	if (d.opts & O_REDIRECT)
		o.redirect = &redirect;
	if (d.opts & O_FRAGMENT) {
		o.fragment = true;
		o.frag_first_sqn = sqn;
		o.frag_apdu_len = 3000;
	}
	if (d.opts & O_UNKNOWN) {
		memcpy(unknown, unknown_opt, sizeof(unknown));
		unknown[0] = (uint8_t)(0x21 + (val & 7));
		unknown[2] = (uint8_t)((val >> 3) & 3); /* OPX */
		o.raw = unknown;
		o.raw_len = sizeof(unknown);
	}
	if (d.opts & O_SYN_FIN) {
		o.syn = (val & 1) != 0;
		o.fin = (val & 2) != 0;
	}

	/* natural addresses: downstream from the source to the group, upstream from a receiver
	   behind the arrival interface to the router */
	ip.ttl = d.ttl != 0 ? d.ttl : 1;
	ip.router_alert = (d.flags & F_RA) != 0;
	switch (type) {
	case 0:
		n = pgm_build_spm(tpdu, sizeof(tpdu), &down, sqn,
			(d.flags & F_TRAIL) ? sqn - 5000 : base - 100,
			(d.flags & F_TRAIL) ? sqn + 5000 : sqn + 100, &path, &o);
		break;
	case 1:
	case 2:
		n = pgm_build_data(tpdu, sizeof(tpdu), type == 1 ? PGM_ODATA : PGM_RDATA, &down,
			sqn, base - 100, "payload", 7, &o);
		break;
	case 3:
	case 4:
		n = pgm_build_nak(
			tpdu, sizeof(tpdu), type == 3 ? PGM_NAK : PGM_NNAK, &up, sqn, &src, &grp, &o);
		break;
	case 5:
		n = pgm_build_nak(tpdu, sizeof(tpdu), PGM_NCF, &down, sqn, &src, &grp, &o);
		break;
	case 6:
		n = pgm_build_poll(tpdu, sizeof(tpdu), &down, sqn, (uint16_t)(val & 3),
			(uint16_t)((val >> 2) & 3), &path, 1000u * (1u + ((val >> 4) & 15)),
			(uint32_t)(val >> 8), (val & 0x8000) ? 0xffu : 0, &o);
		break;
	case 7:
		n = pgm_build_polr(tpdu, sizeof(tpdu), &up, sqn, (uint16_t)(val & 3), &o);
		break;
	case 8:
		n = pgm_build_spmr(tpdu, sizeof(tpdu), &up, &o);
		break;
	default:
		n = pgm_build_ack(tpdu, sizeof(tpdu), &up, sqn, val, &o);
		break;
	}
	if (n == 0)
		return;
	if (type <= 2 || type == 5 || type == 6) {
		ip.src = (d.ipsel & 1) ? nla4(198, 18, 2, 50) : tsi_source(t);
		ip.dst = (d.ipsel & 2) ? router_addr(in) : tsi_group(t);
	} else {
		ip.src = (d.ipsel & 1) ? nla4(198, 18, 2, 50)
					: nla4(198, 18, (uint8_t)in, (uint8_t)(20 + (d.ipsel >> 4)));
		ip.dst = (d.flags & F_MCAST) ? tsi_group(t)
			 : (d.ipsel & 2)     ? nla4(198, 18, 1, 100)
					     : router_addr(in);
	}
	if (d.flags & F_UDP) {
		bool mcast = ip.dst.addr[0] >= 224;

		ip.udp = true;
		ip.udp_sport = mcast ? f.ports.mcast_port : f.ports.ucast_port;
		ip.udp_dport = ip.udp_sport;
	}
	len = pgm_build_ip(dgram, sizeof(dgram), &ip, tpdu, n);
	if (len > 0)
		deliver(dgram, len, (int)in, d.outmask);
}

static void op_raw(struct reader *r)
{
	uint8_t buf[256];
	unsigned len = rd8(r), in = rd8(r) % (NIFS + 1), outmask = rd8(r);

	for (unsigned i = 0; i < len; i++)
		buf[i] = rd8(r);
	deliver(buf, len, (int)in, (uint8_t)outmask);
}

static const char *if_name(unsigned ifindex, unsigned variant)
{
	static const char *names[] = {"eth0", "eth1", "eth2", "eth3", "eth4", "eth5", "eth6",
		"eth7", "eth8", "wan0", "lan0", "tun0"};

	return names[(ifindex + variant) % (sizeof(names) / sizeof(names[0]))];
}

static void if_config(struct reader *r, struct cp_if_config *c)
{
	cp_if_config_default(c);
	c->nak_rpt_ivl_ms = rd8(r) * 20u;
	c->nak_rpt_rate = rd8(r) % 50;
	c->nak_rdata_ivl_ms = rd8(r) * 50u;
	c->nak_elim_ivl_ms = rd8(r) * 10u;
	c->ncf_ivl_ms = rd8(r);
	c->nak_bo_ivl_us = rd8(r) * 1000u;
	c->nak_probe_num = rd8(r) % 4;
	c->nak_bo_ivl_min_us = rd8(r) * 100u;
	c->nak_bo_ivl_max_us = c->nak_bo_ivl_min_us + rd8(r) * 1000u;
	c->dup_nak_max = rd8(r) % 4;
	c->router_alert = (rd8(r) & 1) != 0;
}

static void op_config(struct reader *r)
{
	struct cp_config c = *cp_get_config(f.cp);
	uint8_t bits = rd8(r);

	c.session_lifetime_s = rd8(r) % 8;
	c.rdata_linger_ms = rd8(r) * 10u;
	c.nak_window_check = bits & 1;
	c.dlr_redirect = (bits & 2) != 0;
	c.dlr_discovery = (bits & 4) != 0;
	c.poll_reply = (bits & 8) != 0;
	c.dlr_poll_ivl_ms = rd8(r) * 10u;
	c.dlr_poll_bo_ivl_ms = rd8(r) * 10u;
	if (bits & 16)
		if_config(r, &c.if_defaults);
	cp_set_config(f.cp, &c);
}

FUZZ_ORACLE static void no_upstream(void *ctx, const struct cp_session_view *v)
{
	CHECK(v->upstream_ifindex != (int)*(const unsigned *)ctx);
}

static void run_op(struct reader *r)
{
	uint8_t op = rd8(r) % OP_COUNT;
	unsigned ifx;

	switch (op) {
	case OP_PACKET:
		op_packet(r);
		break;
	case OP_RAW:
		op_raw(r);
		break;
	case OP_ADVANCE: {
		uint16_t v = rd16(r);
		/* ms steps, and long ones: past NAK_RDATA_IVL and session lifetimes */
		f.now += (v & 0x8000) ? CP_SEC(v & 0x7fff) / 64 : CP_MS(v & 0x7fff) / 8 + 1;
		/* a run moves a bounded part of a wheel's cascade, and is due again until done */
		for (unsigned runs = 0; cp_timers(f.cp, f.now) <= f.now; runs++)
			CHECK(runs < 100000);
		CHECK(cp_next_deadline(f.cp) > f.now);
		break;
	}
	case OP_IF_ADD:
		ifx = 1 + rd8(r) % NIFS;
		cp_if_add(f.cp, (int)ifx, if_name(ifx, 0));
		break;
	case OP_IF_REMOVE:
		ifx = 1 + rd8(r) % NIFS;
		if (cp_get_if(f.cp, (int)ifx, &(struct cp_if_view){0})) {
			cp_if_remove(f.cp, (int)ifx);
			/* no session is left upstream of a removed interface */
			cp_foreach_session(f.cp, NULL, no_upstream, &ifx);
		}
		f.valid[ifx] = false;
		break;
	case OP_IF_RENAME:
		/* as the daemon does: the new name's configuration, assist off then maybe on */
		ifx = 1 + rd8(r) % NIFS;
		if (cp_if_add(f.cp, (int)ifx, if_name(ifx, 9)) == 0) {
			bool on = rd8(r) & 1;

			cp_if_set_assist(f.cp, (int)ifx, false);
			cp_if_set_assist(f.cp, (int)ifx, on);
		}
		break;
	case OP_IF_ASSIST:
		ifx = 1 + rd8(r) % NIFS;
		cp_if_set_assist(f.cp, (int)ifx, rd8(r) & 1);
		break;
	case OP_IF_ADDR: {
		struct pgm_nla a = router_addr(1 + rd8(r) % NIFS);

		ifx = 1 + rd8(r) % NIFS;
		cp_if_set_addr(f.cp, (int)ifx, (rd8(r) & 1) ? &a : NULL);
		break;
	}
	case OP_CONFIG:
		op_config(r);
		break;
	case OP_IF_CONFIG: {
		struct cp_if_config c;

		ifx = 1 + rd8(r) % NIFS;
		if (rd8(r) & 1) {
			cp_if_set_config(f.cp, (int)ifx, NULL);
		} else {
			if_config(r, &c);
			cp_if_set_config(f.cp, (int)ifx, &c);
		}
		break;
	}
	case OP_LIMITS: {
		struct cp_config c = *cp_get_config(f.cp);

		c.max_sessions = rd8(r) % 8;
		c.max_repair_states = rd8(r) % 32;
		cp_set_config(f.cp, &c);
		break;
	}
	case OP_CLEAR_COUNTERS:
		ifx = rd8(r) % (NIFS + 1);
		cp_clear_counters(f.cp, (int)ifx);
		if (ifx == 0) {
			memset(f.valid, 0, sizeof(f.valid));
			f.global_valid = false;
		} else {
			f.valid[ifx] = false;
		}
		break;
	case OP_CLEAR_REPAIRS: {
		struct pgm_nla g = tsi_group(rd8(r));

		cp_clear_repair_states(f.cp, (rd8(r) & 1) ? &g : NULL);
		break;
	}
	case OP_CLEAR_DLRS: {
		struct pgm_nla d = pick_nla(rd8(r), 0, 1);

		cp_clear_dlrs(f.cp, (rd8(r) & 1) ? &d : NULL);
		break;
	}
	}
}

/* ---- invariants through the views ---- */

struct tally {
	size_t sessions, repairs, listed;
};

FUZZ_ORACLE static void count_repair(void *ctx, const struct cp_repair_view *v)
{
	struct tally *t = ctx;

	CHECK(v->phase <= CP_PHASE_FORWARDING);
	CHECK(!v->parity || v->pkt_cnt >= 1);
	t->listed++;
}

FUZZ_ORACLE static void count_session(void *ctx, const struct cp_session_view *v)
{
	struct tally *t = ctx;
	struct tally mine = {0};

	t->sessions++;
	t->repairs += v->repair_states;
	CHECK(v->parity_states <= v->repair_states);
	cp_foreach_repair(f.cp, &v->tsi, v->afi, count_repair, &mine);
	CHECK(mine.listed == v->repair_states);
}

FUZZ_ORACLE static void check_counters(const struct cp_stats *st)
{
	for (int i = 1; i <= NIFS; i++) {
		struct cp_if_view v;

		if (!cp_get_if(f.cp, i, &v)) {
			f.valid[i] = false;
			continue;
		}
		if (f.valid[i]) {
			const uint64_t *now = (const uint64_t *)v.counters;
			const uint64_t *was = (const uint64_t *)&f.last[i];

			for (size_t k = 0; k < sizeof(struct cp_counters) / sizeof(uint64_t); k++)
				CHECK(now[k] >= was[k]);
		}
		f.last[i] = *v.counters;
		f.valid[i] = true;
	}
	if (f.global_valid)
		for (int k = 0; k < CP_C_COUNT; k++)
			CHECK(st->global_ev[k] >= f.last_global[k]);
	memcpy(f.last_global, st->global_ev, sizeof(f.last_global));
	f.global_valid = true;
}

FUZZ_ORACLE static void check_all(void)
{
	const struct cp_config *cfg = cp_get_config(f.cp);
	struct tally t = {0};
	struct cp_stats st;
	char why[256];

	if (!cp_check(f.cp, why, sizeof(why))) {
		fprintf(stderr, "cp_check: %s\n", why);
		CHECK(!"cp_check");
	}
	cp_get_stats(f.cp, &st);
	cp_foreach_session(f.cp, NULL, count_session, &t);
	CHECK(t.sessions == st.sessions);
	CHECK(t.repairs == st.repair_states);
	/* memory: at least the entries held, and nothing held for none */
	CHECK(st.session_bytes >= st.sessions * st.session_size);
	CHECK(st.repair_bytes >= st.repair_states * st.repair_size);
	CHECK(st.bytes >= st.session_bytes + st.repair_bytes);
	/* limits: never exceeded by growth (a lowered limit does not evict) */
	if (cfg->max_sessions != 0 && st.sessions > f.sessions)
		CHECK(st.sessions <= cfg->max_sessions);
	if (cfg->max_repair_states != 0 && st.repair_states > f.repairs)
		CHECK(st.repair_states <= cfg->max_repair_states);
	f.sessions = st.sessions;
	f.repairs = st.repair_states;
	check_counters(&st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct reader r = {data, data + size};
	struct cp_config cfg;

	memset(&f, 0, sizeof(f));
	f.ports.enabled = true;
	f.ports.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT;
	f.ports.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT;
	f.now = CP_SEC(1000);
	cp_config_default(&cfg);
	cfg.session_lifetime_s = 5;
	f.cp = cp_new(&cfg, emit, NULL);
	CHECK(f.cp != NULL);
	cp_set_random_seed(f.cp, 1);
	for (int i = 1; i <= 4; i++) {
		struct pgm_nla a = router_addr((unsigned)i);

		CHECK(cp_if_add(f.cp, i, if_name((unsigned)i, 0)) == 0);
		cp_if_set_addr(f.cp, i, &a);
		CHECK(cp_if_set_assist(f.cp, i, true) == 0);
	}
	check_all();
	for (unsigned n = 0; n < MAX_OPS && r.p < r.end; n++) {
		run_op(&r);
		check_all();
	}
	cp_free(f.cp);
	return 0;
}

/* ---- seed mode ---- */

static uint8_t prog[4096];
static size_t plen;

static void put(const void *p, size_t n)
{
	if (plen + n <= sizeof(prog)) {
		memcpy(prog + plen, p, n);
		plen += n;
	}
}

static void put_packet(unsigned type, unsigned tsi, int sqn, unsigned flags, unsigned opts,
	unsigned nlist, unsigned in, unsigned outmask, unsigned val)
{
	struct desc d = {.type = (uint8_t)type,
		.tsi = (uint8_t)tsi,
		.flags = (uint8_t)flags,
		.opts = (uint8_t)opts,
		.nlist = (uint8_t)nlist,
		.in = (uint8_t)in,
		.outmask = (uint8_t)outmask,
		.nla = 1, /* path: the upstream neighbour */
		.ttl = 8,
		.sqn = {(uint8_t)((uint16_t)sqn >> 8), (uint8_t)sqn},
		.val = {(uint8_t)(val >> 8), (uint8_t)val},
		.step = 0};
	uint8_t op = OP_PACKET;

	put(&op, 1);
	put(&d, sizeof(d));
}

/* An operation and the argument bytes it reads (run_op). */
static void put_op(unsigned op, unsigned nargs, ...)
{
	uint8_t bytes[16] = {(uint8_t)op};
	va_list ap;

	va_start(ap, nargs);
	for (unsigned i = 0; i < nargs && i + 1 < sizeof(bytes); i++)
		bytes[i + 1] = (uint8_t)va_arg(ap, unsigned);
	va_end(ap);
	put(bytes, 1 + nargs);
}

static void put_advance(unsigned ms)
{
	uint8_t bytes[3] = {OP_ADVANCE, (uint8_t)((ms * 8) >> 8), (uint8_t)(ms * 8)};

	put(bytes, sizeof(bytes));
}

static void write_seed(const char *dir, const char *name)
{
	char path[4096];
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(prog, 1, plen, fp) != plen) {
		perror(path);
		exit(1);
	}
	fclose(fp);
	plen = 0;
}

/* The SPM of TSI t from upstream (ifindex 1) copied to 2-4. */
static void put_spm(unsigned t, int sqn, unsigned opts, unsigned val)
{
	put_packet(0, t, sqn, 0, opts, 0, 1, 0x0e, val);
}

static void write_seeds(const char *dir)
{
	/* NAK from d1, NCF from upstream, RDATA copies, timers */
	put_spm(0, 1, 0, 0);
	put_packet(3, 0, -5, 0, 0, 0, 2, 0, 0);
	put_packet(3, 0, -5, 0, 0, 0, 3, 0, 0);
	put_packet(5, 0, -5, F_RA, 0, 0, 1, 0, 0);
	put_packet(2, 0, -5, 0, 0, 0, 1, 0x0e, 0);
	put_advance(3000);
	write_seed(dir, "nak-ncf-rdata");

	/* NAK lists, unconfirmed, repeated, expiring; an NNAK */
	put_spm(1, 1, O_NAK_BO_IVL, 500);
	put_packet(3, 1, -20, 0, 0, 5, 2, 0, 0);
	put_packet(3, 1, -20, F_UNORDERED | F_UDP, 0, 5, 3, 0, 0);
	put_packet(4, 1, -30, 0, 0, 2, 4, 0, 0);
	put_advance(250);
	put_advance(2500);
	put_advance(12000);
	write_seed(dir, "nak-lists-timers");

	/* parity (11.6): group size 8, NAKs for four groups, an interface losing its slot */
	put_spm(2, 1, O_PARITY_PRM, 2 << 2);
	for (int g = 0; g < 4; g++)
		put_packet(3, 2, -64 + 8 * g + g, F_PARITY, 0, 0, 3, 0, 0);
	put_packet(5, 2, -64 + 3, F_PARITY | F_RA, 0, 0, 1, 0, 0);
	put_op(OP_IF_ASSIST, 2, 1, 0); /* ifindex 2, slot 1 */
	put_packet(3, 2, -64 + 8 * 2 + 5, F_PARITY, 0, 0, 4, 0, 0);
	put_op(OP_CLEAR_REPAIRS, 2, 0, 0);
	write_seed(dir, "parity-slot-dropped");

	/* POLL child role and DLRs: a general POLL, a redirecting POLR, a DLR poll */
	put_spm(3, 1, 0, 0);
	put_packet(6, 3, 1, F_RA, 0, 0, 1, 0, 0);
	put_packet(7, 3, 1, F_MCAST, O_REDIRECT, 0, 1, 0, 0);
	put_packet(3, 3, -3, 0, 0, 0, 2, 0, 0);
	put_advance(2500);
	put_op(OP_CLEAR_DLRS, 2, 0, 0);
	write_seed(dir, "poll-dlr");

	/* neighbour unreachable (15.3): a duplicate NAK marks d1, then interface churn, then an
	   SPM with OPT_NBR_UNREACH from upstream */
	put_spm(4, 1, 0, 0);
	/* d1 (ifindex 2): its own settings, DUP_NAK_MAX 1 */
	put_op(OP_IF_CONFIG, 13, 1, 0, 100, 5, 200, 100, 0, 0, 0, 0, 0, 1, 1);
	put_packet(3, 4, -2, 0, 0, 0, 2, 0, 0);
	put_packet(3, 4, -2, 0, 0, 0, 2, 0, 0);
	put_packet(3, 4, -2, 0, 0, 0, 2, 0, 0);
	put_op(OP_IF_RENAME, 2, 1, 1);
	put_op(OP_IF_REMOVE, 1, 0);
	put_op(OP_IF_ADD, 1, 0);
	put_op(OP_IF_ASSIST, 2, 0, 1);
	put_spm(4, 2, O_UNREACH, 0);
	put_packet(3, 4, -1, 0, 0, 0, 3, 0, 0);
	write_seed(dir, "unreach-churn");

	/* limits and clears */
	put_op(OP_LIMITS, 2, 2, 3);
	for (unsigned t = 0; t < 4; t++)
		put_spm(t, 1, 0, 0);
	for (int s = 0; s < 6; s++)
		put_packet(3, 0, -s, 0, 0, 0, 2, 0, 0);
	put_op(OP_CLEAR_COUNTERS, 1, 0);
	put_advance(20000);
	write_seed(dir, "limits-clear");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("PGM_FUZZ_SEED_DIR");

	(void)argc;
	(void)argv;
	if (dir == NULL)
		return 0;
	write_seeds(dir);
	exit(0);
}
