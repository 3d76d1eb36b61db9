/*
 * Router assist with workers (router/assist/view.c, assist.c: shards): the object the
 * configuration and the CLI see hands its settings and interfaces to each worker's object, the
 * table limits shared out, and its views add the workers' cores up: sessions in the order of one
 * core's (group, source, TSI), each interface's counters summed, the packet path's counters
 * summed, clear reaching every core.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/assist/assist_internal.h"
#include "router/assist/report.h"
#include "tests/unit/assist_test_env.h"
#include "tests/unit/check_run.h"

static cp_time_t fake_now(void *ctx)
{
	(void)ctx;
	return CP_SEC(10);
}

static int fake_send(void *ctx, int ifindex, const uint8_t *d, size_t len, uint8_t ttl)
{
	(void)ctx;
	(void)ifindex;
	(void)d;
	(void)len;
	(void)ttl;
	return 1;
}

static unsigned changes[2];

static void count_change(void *ctx)
{
	changes[(unsigned *)ctx - changes]++;
}

static struct pgm_nla nla(const char *text)
{
	struct pgm_nla a;

	ck_assert(pgm_nla_parse(&a, text));
	return a;
}

static struct assist *main_obj, *shard[2];

static void setup(void)
{
	struct assist_env env = {.now = fake_now,
		.send = fake_send,
		.lines_wanted = no_lines,
		.line = no_line,
		.if_lookup = no_if};
	struct pgm_nla up = nla("198.18.1.1"), dn = nla("198.18.2.1");
	struct assist_conf conf;
	struct assist_if_conf ifs[2];
	char err[128];

	main_obj = assist_new(&env);
	ck_assert_ptr_nonnull(main_obj);
	for (unsigned i = 0; i < 2; i++) {
		env.changed = count_change;
		env.ctx = &changes[i];
		shard[i] = assist_new(&env);
		ck_assert_ptr_nonnull(shard[i]);
		changes[i] = 0;
	}
	assist_set_shards(main_obj, shard, 2);
	assist_if_added(main_obj, 2, "up0", &up);
	assist_if_added(main_obj, 3, "dn0", &dn);
	conf = *assist_conf(main_obj);
	conf.g.cp.max_sessions = 1001;
	conf.g.cp.max_repair_states = 4000;
	memset(ifs, 0, sizeof(ifs));
	snprintf(ifs[0].name, sizeof(ifs[0].name), "dn0");
	snprintf(ifs[1].name, sizeof(ifs[1].name), "up0");
	for (unsigned i = 0; i < 2; i++) {
		ifs[i].s.assist = true;
		cp_if_config_default(&ifs[i].s.cfg);
	}
	conf.ifs = ifs;
	conf.nifs = 2;
	ck_assert_int_eq(assist_configure(main_obj, &conf, 0, err, sizeof(err)), 0);
}

static void teardown(void)
{
	assist_set_shards(main_obj, NULL, 0);
	assist_free(main_obj);
	assist_free(shard[0]);
	assist_free(shard[1]);
}

/* An SPM of GSI ...last from src to 239.192.0.1 arriving on up0, through one object. */
static void spm(struct assist *a, uint8_t last, const char *src)
{
	struct pgm_header_params h = {.sport = 1234, .dport = 7500};
	struct pgm_ip_params ip = {.src = nla(src), .dst = nla("239.192.0.1"), .ttl = 16};
	struct pgm_nla path = nla(src);
	uint8_t tpdu[256], dgram[512];
	struct assist_packet p = {.in_ifindex = 2, .now = CP_SEC(10)};
	const uint8_t *rw;
	size_t rw_len, n, len;

	memcpy(h.gsi, "\x01\x02\x03\x04\x05", 5);
	h.gsi[5] = last;
	n = pgm_build_spm(tpdu, sizeof(tpdu), &h, 1, 1, 10, &path, NULL);
	ck_assert_uint_gt(n, 0);
	len = pgm_build_ip(dgram, sizeof(dgram), &ip, tpdu, n);
	ck_assert_uint_gt(len, 0);
	p.datagram = dgram;
	p.len = len;
	assist_packet(a, &p, &rw, &rw_len);
}

START_TEST(settings_and_interfaces_reach_every_worker)
{
	for (unsigned i = 0; i < 2; i++) {
		struct cp_if_view v;

		ck_assert(cp_get_if(assist_cp(shard[i]), 3, &v));
		ck_assert_str_eq(v.name, "dn0");
		ck_assert(v.assist);
		ck_assert(cp_if_assisted(assist_cp(shard[i]), 2));
		/* the limits shared out, rounded up */
		ck_assert_uint_eq(cp_get_config(assist_cp(shard[i]))->max_sessions, 501);
		ck_assert_uint_eq(cp_get_config(assist_cp(shard[i]))->max_repair_states, 2000);
		ck_assert_uint_gt(changes[i], 0); /* each change told to the worker */
	}
	ck_assert_uint_eq(cp_get_config(assist_cp(main_obj))->max_sessions, 1001);
	assist_if_removed(main_obj, 3);
	ck_assert(!cp_if_assisted(assist_cp(shard[0]), 3));
	ck_assert(!cp_if_assisted(assist_cp(shard[1]), 3));
}
END_TEST

struct seen {
	unsigned n;
	uint8_t last[4];
};

static void collect(void *arg, const struct cp_session_view *v)
{
	struct seen *s = arg;

	ck_assert_uint_lt(s->n, 4);
	s->last[s->n++] = v->tsi.gsi[5];
}

START_TEST(views_add_the_workers_up)
{
	struct cp_stats st;
	struct cp_if_view v;
	struct cp_counters sum;
	struct assist_stats ps;
	struct seen seen = {0};
	struct cp_session_key *keys;
	size_t n = 0;

	/* session 0x06 from .9 on worker 0, 0xf6 from .5 on worker 1: ordered by source */
	spm(shard[0], 0x06, "198.18.1.9");
	spm(shard[1], 0xf6, "198.18.1.5");
	assist_get_stats(main_obj, &st);
	ck_assert_uint_eq(st.sessions, 2);
	assist_foreach_session(main_obj, NULL, collect, &seen);
	ck_assert_uint_eq(seen.n, 2);
	ck_assert_uint_eq(seen.last[0], 0xf6);
	ck_assert_uint_eq(seen.last[1], 0x06);
	keys = assist_session_keys(main_obj, NULL, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(keys[0].tsi.gsi[5], 0xf6);
	seen.n = 0;
	ck_assert(assist_session_view_key(main_obj, &keys[1], collect, &seen));
	ck_assert_uint_eq(seen.last[0], 0x06);
	free(keys);
	ck_assert(assist_get_if(main_obj, 2, &v, &sum));
	ck_assert_uint_eq(v.counters->in[PGM_SPM], 2);
	assist_path_stats(main_obj, &ps);
	ck_assert_uint_eq(ps.packets, 2);
	assist_clear_counters(main_obj, 0);
	ck_assert(assist_get_if(main_obj, 2, &v, &sum));
	ck_assert_uint_eq(v.counters->in[PGM_SPM], 0);
}
END_TEST

START_TEST(a_fresh_core_keeps_settings_and_interfaces)
{
	struct cp_stats st;

	spm(main_obj, 0x10, "198.18.1.7");
	assist_get_stats(main_obj, &st);
	ck_assert_uint_eq(st.sessions, 1);
	ck_assert_int_eq(assist_reset_core(main_obj), 0);
	assist_get_stats(main_obj, &st);
	ck_assert_uint_eq(st.sessions, 0);
	ck_assert(cp_if_assisted(assist_cp(main_obj), 2));
	ck_assert(cp_if_assisted(assist_cp(main_obj), 3));
	ck_assert_uint_eq(cp_get_config(assist_cp(main_obj))->max_sessions, 1001);
	spm(main_obj, 0x10, "198.18.1.7");
	assist_get_stats(main_obj, &st);
	ck_assert_uint_eq(st.sessions, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("assist_workers");
	TCase *tc = tcase_create("shards");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, settings_and_interfaces_reach_every_worker);
	tcase_add_test(tc, views_add_the_workers_up);
	tcase_add_test(tc, a_fresh_core_keeps_settings_and_interfaces);
	suite_add_tcase(s, tc);
	return check_run(s);
}
