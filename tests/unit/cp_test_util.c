/*
 * Control-plane test helpers; see cp_test_util.h.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_util.h"

static const struct {
	const char *name;
	int ifindex;
	const char *addr;
	int assist;
} test_ifs[] = {
	{"up", CP_TEST_UP, "198.18.0.1", 1},
	{"d1", CP_TEST_D1, "198.18.1.1", 1},
	{"d2", CP_TEST_D2, "198.18.2.1", 1},
	{"d3", CP_TEST_D3, "198.18.3.1", 1},
	{"na", CP_TEST_NA, "198.18.4.1", 0},
};

static void capture_action(void *ctx, const struct cp_action *act)
{
	struct cp_test_env *env = ctx;

	if (env->nactions < CP_TEST_MAX_ACTIONS)
		env->actions[env->nactions++] = *act;
	else
		env->dropped_actions++;
}

static void capture_log(void *ctx, enum cp_log_kind kind, const char *line)
{
	struct cp_test_env *env = ctx;

	(void)kind;
	if (env->nlog == CP_TEST_MAX_LOG) {
		free(env->log[0]);
		memmove(env->log, env->log + 1, (CP_TEST_MAX_LOG - 1) * sizeof(env->log[0]));
		env->nlog--;
	}
	env->log[env->nlog++] = strdup(line);
	if (getenv("CP_TEST_VERBOSE") != NULL)
		fprintf(stderr, "cp: %s\n", line);
}

/* The test's multicast routes: every (S,G) comes in by rpf_ifindex. */
static int test_rpf(void *ctx, const struct pgm_nla *src, const struct pgm_nla *group)
{
	(void)src;
	(void)group;
	return ((struct cp_test_env *)ctx)->rpf_ifindex;
}

static unsigned test_route_sources(void *ctx, const struct pgm_nla *group, int ifindex,
	struct pgm_nla *srcs, unsigned max)
{
	struct cp_test_env *env = ctx;
	unsigned n = 0;

	(void)group;
	env->route_walks++;
	if (ifindex == env->route_iif)
		return 0;
	for (unsigned i = 0; i < env->nroute_srcs && n < max; i++)
		srcs[n++] = env->route_srcs[i];
	return n;
}

struct pgm_nla cp_test_nla(const char *text)
{
	struct pgm_nla nla;

	ck_assert_msg(pgm_nla_parse(&nla, text), "bad address %s", text);
	return nla;
}

int cp_test_ifindex(const char *name)
{
	if (name == NULL || name[0] == '\0')
		return 0;
	for (size_t i = 0; i < sizeof(test_ifs) / sizeof(test_ifs[0]); i++) {
		if (strcmp(test_ifs[i].name, name) == 0)
			return test_ifs[i].ifindex;
	}
	if (strcmp(name, "xx") == 0)
		return CP_TEST_XX;
	ck_abort_msg("unknown test interface %s", name);
	return 0;
}

const char *cp_test_ifname(int ifindex)
{
	for (size_t i = 0; i < sizeof(test_ifs) / sizeof(test_ifs[0]); i++) {
		if (test_ifs[i].ifindex == ifindex)
			return test_ifs[i].name;
	}
	return ifindex == CP_TEST_XX ? "xx" : "?";
}

/*
 * Without a configuration of their own, tests run with the defaults but for a 1000 ms NAK_ELIM_IVL:
 * the timer tests step through elimination at that scale (test_cp_misc checks the default), and
 * without the crossing window.
 */
void cp_test_env_init(struct cp_test_env *env, const struct cp_config *cfg)
{
	struct cp_config test_cfg;

	if (cfg == NULL) {
		cp_config_default(&test_cfg);
		test_cfg.if_defaults.nak_elim_ivl_ms = 1000;
		/* RFC 3208 7.8 exactly (test_cp_repair turns the window on) */
		test_cfg.if_defaults.nak_cross_ivl_ms = 0;
		cfg = &test_cfg;
	}
	memset(env, 0, sizeof(*env));
	env->now = CP_SEC(1000);
	env->cp = cp_new(cfg, capture_action, env);
	ck_assert_ptr_nonnull(env->cp);
	cp_set_log(env->cp, capture_log, env,
		1u << CP_LOG_EVENT | 1u << CP_LOG_TIMER | 1u << CP_LOG_PACKET);
	cp_set_rpf(env->cp, test_rpf, env);
	cp_set_route_sources(env->cp, test_route_sources, env);
	for (size_t i = 0; i < sizeof(test_ifs) / sizeof(test_ifs[0]); i++) {
		struct pgm_nla addr = cp_test_nla(test_ifs[i].addr);

		ck_assert_int_eq(cp_if_add(env->cp, test_ifs[i].ifindex, test_ifs[i].name), 0);
		cp_if_set_addr(env->cp, test_ifs[i].ifindex, &addr);
		if (test_ifs[i].assist)
			ck_assert_int_eq(cp_if_set_assist(env->cp, test_ifs[i].ifindex, true), 0);
	}
}

void cp_test_clear(struct cp_test_env *env)
{
	env->nactions = 0;
	env->dropped_actions = 0;
	for (size_t i = 0; i < env->nlog; i++)
		free(env->log[i]);
	env->nlog = 0;
}

void cp_test_env_free(struct cp_test_env *env)
{
	cp_test_clear(env);
	cp_free(env->cp);
	env->cp = NULL;
}

cp_time_t cp_test_start(struct cp_test_env *env, const struct cp_config *cfg, uint64_t seed)
{
	struct cp_test_pkt p;

	cp_test_env_init(env, cfg);
	if (seed != 0)
		cp_set_random_seed(env->cp, seed);
	cp_test_spm(&p, 1, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	cp_test_clear(env);
	return env->now;
}

cp_time_t cp_test_restart(struct cp_test_env *env, const struct cp_config *cfg, uint64_t seed)
{
	cp_test_env_free(env);
	return cp_test_start(env, cfg, seed);
}

static void base_packet(struct cp_test_pkt *p, unsigned type)
{
	static const uint8_t gsi[PGM_GSI_LEN] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

	memset(p, 0, sizeof(*p));
	p->ip.version = 4;
	p->ip.ttl = 64;
	p->ip.src = cp_test_nla(CP_TEST_SOURCE);
	p->ip.dst = cp_test_nla(CP_TEST_GROUP);
	p->pkt.type = (uint8_t)type;
	memcpy(p->pkt.gsi, gsi, PGM_GSI_LEN);
	if (pgm_type_is_upstream(type)) {
		p->pkt.sport = CP_TEST_DPORT;
		p->pkt.dport = CP_TEST_SPORT;
	} else {
		p->pkt.sport = CP_TEST_SPORT;
		p->pkt.dport = CP_TEST_DPORT;
	}
	p->pkt.tpdu = p->tpdu;
	p->pkt.tpdu_len = sizeof(p->tpdu);
}

void cp_test_spm(struct cp_test_pkt *p, uint32_t sqn, uint32_t trail, uint32_t lead)
{
	base_packet(p, PGM_SPM);
	p->ip.router_alert = true;
	p->pkt.sqn = sqn;
	p->pkt.trail = trail;
	p->pkt.lead = lead;
	p->pkt.path = cp_test_nla(CP_TEST_UPSTREAM);
	p->pkt.path_offset = 32;
}

void cp_test_nak(
	struct cp_test_pkt *p, unsigned type, uint32_t sqn, const uint32_t *list, unsigned nlist)
{
	base_packet(p, type);
	p->pkt.sqn = sqn;
	p->pkt.nak_src = cp_test_nla(CP_TEST_SOURCE);
	p->pkt.nak_grp = cp_test_nla(CP_TEST_GROUP);
	if (type == PGM_NCF) {
		p->ip.router_alert = true;
	} else {
		/* unicast to the router's address on the receivers' side */
		p->ip.src = cp_test_nla("198.18.1.50");
		p->ip.dst = cp_test_nla("198.18.1.1");
	}
	if (nlist > 0) {
		uint8_t *l = p->tpdu + 64;

		ck_assert_uint_le(nlist, PGM_MAX_NAK_LIST);
		for (unsigned i = 0; i < nlist; i++) {
			l[4 * i] = (uint8_t)(list[i] >> 24);
			l[4 * i + 1] = (uint8_t)(list[i] >> 16);
			l[4 * i + 2] = (uint8_t)(list[i] >> 8);
			l[4 * i + 3] = (uint8_t)list[i];
		}
		p->pkt.opt_flags |= PGM_OPT_PRESENT | PGM_OPT_NETWORK;
		p->pkt.opt.present |= 1u << pgm_opt_bit(PGM_OPT_NAK_LIST);
		p->pkt.opt.nak_list = l;
		p->pkt.opt.nak_list_count = (uint8_t)nlist;
	}
}

void cp_test_data(struct cp_test_pkt *p, unsigned type, uint32_t sqn)
{
	base_packet(p, type);
	p->ip.router_alert = type == PGM_RDATA;
	p->pkt.sqn = sqn;
}

void cp_test_simple(struct cp_test_pkt *p, unsigned type, uint32_t sqn)
{
	base_packet(p, type);
	p->pkt.sqn = sqn;
}

void cp_test_add_option(struct cp_test_pkt *p, unsigned type, unsigned opx)
{
	struct pgm_options *o = &p->pkt.opt;
	unsigned off;
	int bit = pgm_opt_bit(type);

	ck_assert_uint_lt(o->count, PGM_MAX_OPTIONS);
	if (o->count == 0) {
		o->offset[0] = 16;
		o->type[0] = PGM_OPT_LENGTH;
		o->count = 1;
		p->pkt.opt_offset = 16;
		p->pkt.opt_flags |= PGM_OPT_PRESENT;
	}
	off = 16 + 4u * o->count;
	o->offset[o->count] = (uint16_t)off;
	o->type[o->count] = (uint8_t)type;
	o->flags[o->count] = (uint8_t)(opx & PGM_OPX_MASK);
	o->count++;
	p->tpdu[off] = (uint8_t)type;
	p->tpdu[off + 1] = 4;
	p->tpdu[off + 2] = (uint8_t)(opx & PGM_OPX_MASK);
	if (bit >= 0) {
		o->present |= 1u << bit;
	} else {
		o->unknown++;
		if (opx == PGM_OPX_INVALIDATE)
			o->opx_invalidate++;
		else if (opx == PGM_OPX_RESERVED)
			o->opx_reserved++;
	}
}

enum cp_verdict cp_test_send(
	struct cp_test_env *env, const struct cp_test_pkt *p, int in_ifindex, int out_ifindex)
{
	struct cp_packet in = {
		.ip = &p->ip,
		.pkt = &p->pkt,
		.in_ifindex = in_ifindex,
		.out_ifindex = out_ifindex,
		.now = env->now,
	};

	cp_packet(env->cp, &in, &env->res);
	return env->res.verdict;
}

enum cp_verdict cp_test_nak_at(struct cp_test_env *env, cp_time_t t, unsigned type, uint32_t sqn,
	const uint32_t *list, unsigned nlist, int in)
{
	struct cp_test_pkt p;

	env->now = t;
	cp_test_nak(&p, type, sqn, list, nlist);
	return cp_test_send(env, &p, in, 0);
}

enum cp_verdict cp_test_data_at(
	struct cp_test_env *env, cp_time_t t, unsigned type, uint32_t sqn, int in, int out)
{
	struct cp_test_pkt p;

	env->now = t;
	cp_test_data(&p, type, sqn);
	return cp_test_send(env, &p, in, out);
}

cp_time_t cp_test_timers(struct cp_test_env *env, cp_time_t now)
{
	cp_time_t next;

	env->now = now;
	/* a run moves a bounded part of a timer wheel's cascade and is then due again at once */
	for (unsigned runs = 0; (next = cp_timers(env->cp, now)) <= now && runs < 1000000; runs++)
		;
	return next;
}

static const char *action_name(enum cp_action_type t)
{
	switch (t) {
	case CP_ACT_NCF:
		return "NCF";
	case CP_ACT_NAK:
		return "NAK";
	case CP_ACT_NNAK:
		return "NNAK";
	case CP_ACT_POLR:
		return "POLR";
	case CP_ACT_RDATA:
		return "RDATA";
	case CP_ACT_SPM:
		return "SPM";
	case CP_ACT_POLL:
		return "POLL";
	case CP_ACT_SPMR:
		return "SPMR";
	}
	return "?";
}

const char *cp_test_actions(const struct cp_test_env *env, char *buf, size_t len)
{
	size_t used = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < env->nactions && used < len; i++) {
		const struct cp_action *a = &env->actions[i];

		used += (size_t)snprintf(buf + used, len - used, "%s%s %s %u", i ? "; " : "",
			action_name(a->type), cp_test_ifname(a->ifindex), a->sqn);
		for (unsigned j = 0; j < a->list_count && used < len; j++)
			used += (size_t)snprintf(buf + used, len - used, ",%u", a->list[j]);
		if (!a->from_packet && used < len)
			used += (size_t)snprintf(buf + used, len - used, " rpt");
	}
	return buf;
}

size_t cp_test_count_actions(const struct cp_test_env *env, enum cp_action_type type)
{
	size_t n = 0;

	for (size_t i = 0; i < env->nactions; i++)
		n += env->actions[i].type == type;
	return n;
}

int cp_test_logged(const struct cp_test_env *env, const char *text)
{
	for (size_t i = 0; i < env->nlog; i++) {
		if (strstr(env->log[i], text) != NULL)
			return 1;
	}
	return 0;
}

uint64_t cp_test_if_ev(const struct cp_test_env *env, int ifindex, enum cp_counter c)
{
	struct cp_if_view v;

	ck_assert_msg(cp_get_if(env->cp, ifindex, &v), "no interface %d", ifindex);
	return v.counters->ev[c];
}

uint64_t cp_test_if_in(const struct cp_test_env *env, int ifindex, unsigned type)
{
	struct cp_if_view v;

	ck_assert(cp_get_if(env->cp, ifindex, &v));
	return v.counters->in[type];
}

uint64_t cp_test_if_out(const struct cp_test_env *env, int ifindex, unsigned type)
{
	struct cp_if_view v;

	ck_assert(cp_get_if(env->cp, ifindex, &v));
	return v.counters->out[type];
}

uint64_t cp_test_global_ev(const struct cp_test_env *env, enum cp_counter c)
{
	struct cp_stats st;

	cp_get_stats(env->cp, &st);
	return st.global_ev[c];
}

struct total_ctx {
	enum cp_counter c;
	uint64_t sum;
};

static void sum_if(void *ctx, const struct cp_if_view *v)
{
	struct total_ctx *t = ctx;

	t->sum += v->counters->ev[t->c];
}

uint64_t cp_test_total_ev(const struct cp_test_env *env, enum cp_counter c)
{
	struct total_ctx t = {c, 0};

	cp_foreach_if(env->cp, sum_if, &t);
	return t.sum + cp_test_global_ev(env, c);
}

struct session_ctx {
	struct cp_session_view v;
	struct cp_counters counters;
	int found;
};

static void get_session(void *ctx, const struct cp_session_view *v)
{
	struct session_ctx *s = ctx;
	static const uint8_t gsi[PGM_GSI_LEN] = {0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f};

	if (memcmp(v->tsi.gsi, gsi, PGM_GSI_LEN) != 0 || v->tsi.sport != CP_TEST_SPORT)
		return;
	s->v = *v;
	s->counters = *v->counters;
	s->v.counters = NULL;
	s->found = 1;
}

int cp_test_session(const struct cp_test_env *env, struct cp_session_view *v)
{
	struct session_ctx s;

	memset(&s, 0, sizeof(s));
	cp_foreach_session(env->cp, NULL, get_session, &s);
	if (s.found && v != NULL)
		*v = s.v;
	return s.found;
}

struct cp_session_view cp_test_session_view(const struct cp_test_env *env)
{
	struct cp_session_view v;

	ck_assert(cp_test_session(env, &v));
	return v;
}

uint64_t cp_test_tsi_ev(const struct cp_test_env *env, enum cp_counter c)
{
	struct session_ctx s;

	memset(&s, 0, sizeof(s));
	cp_foreach_session(env->cp, NULL, get_session, &s);
	return s.found ? s.counters.ev[c] : 0;
}

static struct pgm_tsi test_tsi(void)
{
	struct pgm_tsi tsi = {{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, CP_TEST_SPORT};

	return tsi;
}

struct repair_ctx {
	uint32_t sqn;
	struct cp_repair_view v;
	int found;
	size_t count;
};

static void get_repair(void *ctx, const struct cp_repair_view *v)
{
	struct repair_ctx *r = ctx;

	r->count++;
	if (v->sqn == r->sqn) {
		r->v = *v;
		r->found = 1;
	}
}

int cp_test_repair(const struct cp_test_env *env, uint32_t sqn, struct cp_repair_view *v)
{
	struct repair_ctx r;
	struct pgm_tsi tsi = test_tsi();

	memset(&r, 0, sizeof(r));
	r.sqn = sqn;
	cp_foreach_repair(env->cp, &tsi, PGM_AFI_IP, get_repair, &r);
	if (r.found && v != NULL)
		*v = r.v;
	return r.found;
}

size_t cp_test_repair_count(const struct cp_test_env *env)
{
	struct cp_stats st;

	cp_get_stats(env->cp, &st);
	return st.repair_states;
}

uint64_t cp_test_mask(int ifindex)
{
	/* interfaces get slots in the order they were enabled: up, d1, d2, d3 */
	switch (ifindex) {
	case CP_TEST_UP:
		return 1u << 0;
	case CP_TEST_D1:
		return 1u << 1;
	case CP_TEST_D2:
		return 1u << 2;
	case CP_TEST_D3:
		return 1u << 3;
	default:
		return 0;
	}
}

/* ---- scenario runner ---- */

static uint32_t parse_u32(const char *s)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	ck_assert_msg(*s != '\0' && *end == '\0', "bad number '%s'", s);
	return (uint32_t)v;
}

static unsigned parse_type(const char *word)
{
	static const struct {
		const char *name;
		unsigned type;
	} types[] = {
		{"SPM", PGM_SPM},
		{"POLL", PGM_POLL},
		{"POLR", PGM_POLR},
		{"ODATA", PGM_ODATA},
		{"RDATA", PGM_RDATA},
		{"NAK", PGM_NAK},
		{"NNAK", PGM_NNAK},
		{"NCF", PGM_NCF},
		{"SPMR", PGM_SPMR},
		{"ACK", PGM_ACK},
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (strcmp(types[i].name, word) == 0)
			return types[i].type;
	}
	ck_abort_msg("unknown packet type '%s'", word);
	return 0;
}

/* Builds the packet a step describes. */
static void step_packet(struct cp_test_pkt *p, const char *what)
{
	char buf[512], *save = NULL, *word;
	uint32_t sqns[1 + PGM_MAX_NAK_LIST];
	unsigned n = 0, type;

	snprintf(buf, sizeof(buf), "%s", what);
	word = strtok_r(buf, " ", &save);
	ck_assert_ptr_nonnull(word);
	type = parse_type(word);
	word = strtok_r(NULL, " ", &save);
	ck_assert_msg(word != NULL, "'%s' needs a sequence number", what);
	{
		char *s2 = NULL, *num;

		for (num = strtok_r(word, ",", &s2); num != NULL; num = strtok_r(NULL, ",", &s2)) {
			ck_assert_uint_lt(n, 1 + PGM_MAX_NAK_LIST);
			sqns[n++] = parse_u32(num);
		}
	}
	switch (type) {
	case PGM_SPM:
		cp_test_spm(p, sqns[0], 0, 0x80000000u);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		cp_test_nak(p, type, sqns[0], sqns + 1, n - 1);
		break;
	case PGM_ODATA:
	case PGM_RDATA:
		cp_test_data(p, type, sqns[0]);
		break;
	default:
		cp_test_simple(p, type, sqns[0]);
		break;
	}
	while ((word = strtok_r(NULL, " ", &save)) != NULL) {
		if (strcmp(word, "mcast") == 0) {
			p->ip.dst = cp_test_nla(CP_TEST_GROUP);
			p->ip.ttl = 1;
		} else if (strcmp(word, "udp") == 0) {
			p->ip.udp = true;
			p->ip.udp_sport = 3056;
			p->ip.udp_dport = type == PGM_NAK || type == PGM_NNAK ? 3055 : 3056;
		} else if (strncmp(word, "path=", 5) == 0) {
			p->pkt.path = cp_test_nla(word + 5);
		} else if (strncmp(word, "src=", 4) == 0) {
			p->pkt.nak_src = cp_test_nla(word + 4);
		} else if (strncmp(word, "grp=", 4) == 0) {
			p->pkt.nak_grp = cp_test_nla(word + 4);
		} else if (strncmp(word, "trail=", 6) == 0) {
			p->pkt.trail = parse_u32(word + 6);
		} else if (strncmp(word, "lead=", 5) == 0) {
			p->pkt.lead = parse_u32(word + 5);
		} else {
			ck_abort_msg("unknown word '%s' in '%s'", word, what);
		}
	}
}

static const char *verdict_name(enum cp_verdict v)
{
	switch (v) {
	case CP_ACCEPT:
		return "accept";
	case CP_DROP:
		return "drop";
	case CP_ACCEPT_REWRITTEN:
		return "rewrite";
	}
	return "?";
}

void cp_test_run(struct cp_test_env *env, const struct cp_test_step *steps, size_t n)
{
	char got[2048];

	for (size_t i = 0; i < n; i++) {
		const struct cp_test_step *st = &steps[i];

		cp_test_clear(env);
		if (strcmp(st->what, "timers") == 0) {
			cp_test_timers(env, CP_SEC(1000) + st->t);
		} else if (strncmp(st->what, "route ", 6) == 0) {
			env->rpf_ifindex = cp_test_ifindex(st->what + 6);
		} else {
			struct cp_test_pkt p;
			enum cp_verdict v;

			env->now = CP_SEC(1000) + st->t;
			step_packet(&p, st->what);
			v = cp_test_send(
				env, &p, cp_test_ifindex(st->in), cp_test_ifindex(st->out));
			ck_assert_msg(strcmp(verdict_name(v), st->verdict) == 0,
				"step %zu (%s on %s%s%s): verdict %s, expected %s", i + 1, st->what,
				st->in, st->out ? " to " : "", st->out ? st->out : "",
				verdict_name(v), st->verdict);
		}
		cp_test_actions(env, got, sizeof(got));
		ck_assert_msg(strcmp(got, st->actions) == 0,
			"step %zu (%s at %llu us): actions \"%s\", expected \"%s\"", i + 1,
			st->what, (unsigned long long)st->t, got, st->actions);
	}
}
