/*
 * Bounded memory, shared fairly: the repair-state limit with its per-interface and per-session
 * shares, the eviction order, assist that degrades to plain PGM at any limit (a NAK is still
 * confirmed and forwarded, statelessly), and the cap on new sessions per interface.
 *
 * Sessions other than the test session differ from it in the last GSI byte (k); their SPMs
 * arrive on up and leave by d1, d2 and d3.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

static void restart_with(uint32_t max_repair_states)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	cfg.max_repair_states = max_repair_states;
	cfg.nak_window_check = false;
	t0 = cp_test_restart(&env, &cfg, 0);
}

static void tsi_of(struct cp_test_pkt *p, unsigned k)
{
	p->pkt.gsi[PGM_GSI_LEN - 2] = (uint8_t)(k >> 8);
	p->pkt.gsi[PGM_GSI_LEN - 1] = (uint8_t)k;
}

/* Session k (k 0x0e0f is the test session) learnt from an SPM on `in`. */
static void session_at(unsigned k, int in, cp_time_t t)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 1, 0, 0x80000000u);
	tsi_of(&p, k);
	env.now = t;
	cp_test_send(&env, &p, in, 0);
}

static void nak_k(unsigned type, unsigned k, uint32_t sqn, const uint32_t *list, unsigned nlist,
	int in, cp_time_t t)
{
	struct cp_test_pkt p;

	cp_test_nak(&p, type, sqn, list, nlist);
	tsi_of(&p, k);
	env.now = t;
	cp_test_send(&env, &p, in, 0);
}

struct find {
	uint32_t sqn;
	bool found;
	struct cp_repair_view v;
};

static void find_cb(void *ctx, const struct cp_repair_view *v)
{
	struct find *f = ctx;

	if (v->sqn == f->sqn) {
		f->found = true;
		f->v = *v;
	}
}

/* Whether session k has repair state for sqn. */
static bool has_state(unsigned k, uint32_t sqn)
{
	struct cp_test_pkt p;
	struct pgm_tsi tsi;
	struct find f = {.sqn = sqn};

	cp_test_spm(&p, 1, 0, 0);
	tsi_of(&p, k);
	pgm_packet_tsi(&p.pkt, &tsi);
	cp_foreach_repair(env.cp, &tsi, PGM_AFI_IP, find_cb, &f);
	return f.found;
}

static void count_cb(void *ctx, const struct cp_repair_view *v)
{
	(void)v;
	(*(size_t *)ctx)++;
}

static size_t states_of(unsigned k)
{
	struct cp_test_pkt p;
	struct pgm_tsi tsi;
	size_t n = 0;

	cp_test_spm(&p, 1, 0, 0);
	tsi_of(&p, k);
	pgm_packet_tsi(&p.pkt, &tsi);
	cp_foreach_repair(env.cp, &tsi, PGM_AFI_IP, count_cb, &n);
	return n;
}

static size_t total_states(void)
{
	struct cp_stats st;

	cp_get_stats(env.cp, &st);
	return st.repair_states;
}

#define TEST_K 0x0e0f

/* 7.5 anticipation from upstream, flooded: it takes no more than the upstream interface's
 * share, and a NAK from a receiver's LAN still gets its NCF, goes upstream and gets state. */
START_TEST(test_ncf_flood_leaves_naks_their_ncf)
{
	uint32_t list[PGM_MAX_NAK_LIST];
	char want[64];

	restart_with(6300);
	for (uint32_t i = 0; i < 200; i++) {
		for (unsigned j = 0; j < PGM_MAX_NAK_LIST; j++)
			list[j] = i * 64 + 1 + j;
		nak_k(PGM_NCF, TEST_K, i * 64, list, PGM_MAX_NAK_LIST, CP_TEST_UP, t0);
	}
	ck_assert_uint_le(total_states(), 6300 / 2);
	ck_assert_uint_gt(cp_test_if_ev(&env, CP_TEST_UP, CP_C_REPAIR_SESSION_QUOTA), 0);
	cp_test_clear(&env);
	nak_k(PGM_NAK, TEST_K, 20000, NULL, 0, CP_TEST_D1, t0 + CP_MS(1));
	ck_assert_str_eq(ACTIONS(), "NAK up 20000; NCF d1 20000");
	ck_assert(has_state(TEST_K, 20000));
	/* while the flood goes on in other sessions, every NAK from another LAN is the same */
	for (unsigned k = 1; k <= 8; k++) {
		session_at(k, CP_TEST_UP, t0 + CP_MS(2));
		for (uint32_t i = 0; i < 100; i++) {
			for (unsigned j = 0; j < PGM_MAX_NAK_LIST; j++)
				list[j] = i * 64 + 1 + j;
			nak_k(PGM_NCF, k, i * 64, list, PGM_MAX_NAK_LIST, CP_TEST_UP,
				t0 + CP_MS(3));
		}
	}
	for (uint32_t sqn = 30000; sqn < 30100; sqn++) {
		cp_test_clear(&env);
		nak_k(PGM_NAK, TEST_K, sqn, NULL, 0, CP_TEST_D2, t0 + CP_MS(4));
		snprintf(want, sizeof(want), "NAK up %u; NCF d2 %u", sqn, sqn);
		ck_assert_str_eq(ACTIONS(), want);
	}
	ck_assert_uint_le(total_states(), 6300);
	ck_assert_uint_gt(cp_test_if_ev(&env, CP_TEST_UP, CP_C_REPAIR_IF_QUOTA), 0);
	ck_assert_uint_gt(cp_test_global_ev(&env, CP_C_REPAIR_EVICTED), 0);
}
END_TEST

/* At any limit, assist degrades to plain PGM: every NAK is confirmed and forwarded; without
 * state, duplicates are not eliminated either. */
START_TEST(test_nak_at_limit_confirmed_and_forwarded)
{
	char want[64];

	restart_with(10);
	for (uint32_t sqn = 100; sqn < 120; sqn++) {
		cp_test_clear(&env);
		nak_k(PGM_NAK, TEST_K, sqn, NULL, 0, CP_TEST_D1, t0 + CP_MS(sqn));
		snprintf(want, sizeof(want), "NAK up %u; NCF d1 %u", sqn, sqn);
		ck_assert_str_eq(ACTIONS(), want);
	}
	ck_assert_uint_le(total_states(), 10);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_STATELESS), 20 - 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_REPAIR_SESSION_QUOTA), 20 - 2);
	/* a list at the limit: one NCF for all of it, one NAK up with all of it */
	{
		static const uint32_t list[] = {201, 202, 203};

		cp_test_clear(&env);
		nak_k(PGM_NAK, TEST_K, 200, list, 3, CP_TEST_D1, t0 + CP_MS(200));
		ck_assert_str_eq(ACTIONS(), "NAK up 200,201,202,203; NCF d1 200,201,202,203");
	}
	/* a NAK without state is not eliminated: the duplicate goes upstream again */
	cp_test_clear(&env);
	nak_k(PGM_NAK, TEST_K, 119, NULL, 0, CP_TEST_D1, t0 + CP_MS(300));
	ck_assert_str_eq(ACTIONS(), "NAK up 119; NCF d1 119");
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_ELIMINATED), 0);
}
END_TEST

/* No single arrival interface, and no single session, takes more than its share. */
START_TEST(test_quotas_hold)
{
	restart_with(1000);
	for (unsigned k = 1; k <= 5; k++)
		session_at(k, CP_TEST_UP, t0);
	/* one LAN NAKs 300 SQNs of each of four sessions */
	for (unsigned k = 1; k <= 4; k++) {
		for (uint32_t sqn = 0; sqn < 300; sqn++)
			nak_k(PGM_NAK, k, sqn, NULL, 0, CP_TEST_D1, t0 + CP_MS(1));
	}
	ck_assert_uint_eq(total_states(), 1000 / 2);
	for (unsigned k = 1; k <= 4; k++)
		ck_assert_uint_le(states_of(k), 1000 / 4);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_REPAIR_SESSION_QUOTA), 2 * 50);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_REPAIR_IF_QUOTA), 2 * 300);
	{
		struct cp_if_view v;
		struct cp_stats st;

		ck_assert(cp_get_if(env.cp, CP_TEST_D1, &v));
		ck_assert_uint_eq(v.repair_states, 500);
		cp_get_stats(env.cp, &st);
		ck_assert_uint_eq(st.if_states_most, 500);
		ck_assert_int_eq(st.if_states_most_ifindex, CP_TEST_D1);
		ck_assert_uint_eq(st.session_states_most, 250);
		ck_assert_uint_eq(st.limits.if_quota, 500);
		ck_assert_uint_eq(st.limits.session_quota, 250);
	}
	/* another LAN still gets state, in a session with room */
	cp_test_clear(&env);
	nak_k(PGM_NAK, 5, 7, NULL, 0, CP_TEST_D2, t0 + CP_MS(2));
	ck_assert_str_eq(ACTIONS(), "NAK up 7; NCF d2 7");
	ck_assert(has_state(5, 7));
	/* one session's NAKs from every LAN stop at the session's share */
	for (uint32_t sqn = 1000; sqn < 1400; sqn++)
		nak_k(PGM_NAK, 5, sqn, NULL, 0, sqn & 1 ? CP_TEST_D2 : CP_TEST_D3, t0 + CP_MS(3));
	ck_assert_uint_eq(states_of(5), 1000 / 4);
}
END_TEST

/*
 * Full: a NAK that needs state evicts anticipated and NNAK-created states first, oldest first,
 * then the oldest state of the LAN holding the most; anticipation never evicts anything.
 */
START_TEST(test_eviction_order)
{
	restart_with(8);
	for (unsigned k = 1; k <= 7; k++)
		session_at(k, CP_TEST_UP, t0);
	/* anticipated: 1/10, 1/11, then NNAK-created: 2/10, 2/11 (the upstream's share: 4) */
	nak_k(PGM_NCF, 1, 10, NULL, 0, CP_TEST_UP, t0 + CP_MS(1));
	nak_k(PGM_NCF, 1, 11, NULL, 0, CP_TEST_UP, t0 + CP_MS(2));
	nak_k(PGM_NNAK, 2, 10, NULL, 0, CP_TEST_D3, t0 + CP_MS(3));
	nak_k(PGM_NNAK, 2, 11, NULL, 0, CP_TEST_D3, t0 + CP_MS(4));
	/* live: d1 NAKs 3/10, 3/11, 4/10, 4/11 */
	for (unsigned k = 3; k <= 4; k++) {
		nak_k(PGM_NAK, k, 10, NULL, 0, CP_TEST_D1, t0 + CP_MS(5));
		nak_k(PGM_NAK, k, 11, NULL, 0, CP_TEST_D1, t0 + CP_MS(6));
	}
	ck_assert_uint_eq(total_states(), 8);
	/* anticipation at the limit: refused, nothing evicted */
	nak_k(PGM_NCF, 5, 10, NULL, 0, CP_TEST_UP, t0 + CP_MS(7));
	ck_assert(!has_state(5, 10));
	ck_assert(has_state(1, 10));
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_REPAIR_LIMIT), 1);

	/* d2 NAKs: the oldest anticipated goes first, then the NNAK-created ones */
	cp_test_clear(&env);
	nak_k(PGM_NAK, 5, 20, NULL, 0, CP_TEST_D2, t0 + CP_MS(8));
	ck_assert_str_eq(ACTIONS(), "NAK up 20; NCF d2 20");
	ck_assert(has_state(5, 20));
	ck_assert(!has_state(1, 10));
	ck_assert(has_state(1, 11));
	nak_k(PGM_NAK, 5, 21, NULL, 0, CP_TEST_D2, t0 + CP_MS(9));
	ck_assert(!has_state(1, 11));
	ck_assert(has_state(2, 10));
	nak_k(PGM_NAK, 6, 20, NULL, 0, CP_TEST_D2, t0 + CP_MS(10));
	ck_assert(!has_state(2, 10));
	ck_assert(has_state(2, 11));
	nak_k(PGM_NAK, 6, 21, NULL, 0, CP_TEST_D2, t0 + CP_MS(11));
	ck_assert(!has_state(2, 11));
	ck_assert_uint_eq(total_states(), 8);

	/* every state is live: d3's NAK takes the oldest of d1, which holds as many as any */
	cp_test_clear(&env);
	nak_k(PGM_NAK, 7, 30, NULL, 0, CP_TEST_D3, t0 + CP_MS(12));
	ck_assert_str_eq(ACTIONS(), "NAK up 30; NCF d3 30");
	ck_assert(has_state(7, 30));
	ck_assert(!has_state(3, 10));
	ck_assert(has_state(3, 11));
	ck_assert(has_state(5, 20));
	ck_assert_uint_eq(total_states(), 8);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_REPAIR_EVICTED), 4);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_REPAIR_EVICTED_LIVE), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_STATELESS), 0);
}
END_TEST

/* New sessions per second per arrival interface: a flood of fresh TSIs on one interface tracks
 * at most the bucket's worth, the others' SPMs still make sessions, and the bucket refills. */
START_TEST(test_session_rate_cap)
{
	struct cp_stats st;
	size_t first;

	for (unsigned k = 1; k <= 1000; k++)
		session_at(k, CP_TEST_UP, t0 + k);
	cp_get_stats(env.cp, &st);
	first = st.sessions;
	/* the test session's SPM took one of the bucket's 100 */
	ck_assert_uint_eq(first, 100);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SESSION_RATE_LIMITED), 901);
	session_at(2000, CP_TEST_D2, t0 + CP_MS(2));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.sessions, first + 1);
	for (unsigned k = 3000; k < 3100; k++)
		session_at(k, CP_TEST_UP, t0 + CP_SEC(1) + CP_MS(10));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_gt(st.sessions, first + 1 + 50);
}
END_TEST

/* Non-zero limits by default, from the budget and the real entry sizes; set ones win. */
START_TEST(test_default_limits_from_budget)
{
	struct cp_config cfg;
	struct cp_limits lim;
	struct cp_stats st;

	cp_get_stats(env.cp, &st);
	lim = st.limits;
	ck_assert(lim.sessions_derived && lim.repair_states_derived);
	ck_assert_uint_eq(lim.budget, (size_t)256 << 20);
	ck_assert_uint_ge(lim.session_cost, st.session_size);
	ck_assert_uint_ge(lim.repair_cost, st.repair_size);
	ck_assert_uint_gt(lim.max_sessions, 10000);
	ck_assert_uint_gt(lim.max_repair_states, 500000);
	ck_assert_uint_le((size_t)lim.max_sessions * lim.session_cost +
				  (size_t)lim.max_repair_states * lim.repair_cost,
		lim.budget - lim.reserve);
	ck_assert_uint_eq(lim.if_quota, lim.max_repair_states / 2);
	ck_assert_uint_eq(lim.session_quota, lim.max_repair_states / 4);
	cp_config_default(&cfg);
	cfg.memory_budget_mb = 1024;
	cfg.max_sessions = 7;
	cp_limits(&cfg, &lim);
	ck_assert_uint_eq(lim.max_sessions, 7);
	ck_assert(!lim.sessions_derived);
	ck_assert_uint_gt(lim.max_repair_states, 4 * st.limits.max_repair_states);
	cfg.memory_budget_mb = 0;
	cfg.max_sessions = 0;
	cp_limits(&cfg, &lim);
	ck_assert_uint_eq(lim.max_sessions, 0);
	ck_assert_uint_eq(lim.max_repair_states, 0);
	ck_assert_uint_eq(lim.if_quota, 0);
	/* the limit in force at once */
	cfg.memory_budget_mb = 256;
	cfg.max_sessions = 2;
	cp_set_config(env.cp, &cfg);
	session_at(1, CP_TEST_UP, t0 + CP_MS(1));
	session_at(2, CP_TEST_UP, t0 + CP_MS(2));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.sessions, 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SESSION_LIMIT), 1);
}
END_TEST

static size_t rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * 4096;
}

/*
 * The memory a session and a repair state cost, measured: the core's own account and the
 * process's resident size, for 20,000 sessions and 200,000 states (the README's budget text
 * quotes these). Asserts only that the derivation's worst case covers the account.
 */
START_TEST(test_memory_per_entry)
{
	struct cp_config cfg;
	struct cp_stats st0, st1, st2;
	size_t rss0, rss1, rss2;
	const unsigned sessions = 20000, states = 200000;

	cp_config_default(&cfg);
	cfg.if_defaults.session_rate = 0;
	cfg.repair_if_share = cfg.repair_session_share = 100;
	cfg.nak_window_check = false;
	t0 = cp_test_restart(&env, &cfg, 0);
	cp_get_stats(env.cp, &st0);
	rss0 = rss_bytes();
	for (unsigned k = 0; k < sessions; k++)
		session_at(0x4000 + k, CP_TEST_UP, t0);
	cp_get_stats(env.cp, &st1);
	rss1 = rss_bytes();
	for (uint32_t sqn = 0; sqn < states; sqn++)
		nak_k(PGM_NAK, 0x4000 + sqn % sessions, sqn, NULL, 0, CP_TEST_D1, t0);
	cp_get_stats(env.cp, &st2);
	rss2 = rss_bytes();
	ck_assert_uint_eq(st1.sessions - st0.sessions, sessions);
	ck_assert_uint_eq(st2.repair_states, states);
	printf("memory per session: %zu B in the core's account (entry %zu B), %zu B resident; "
	       "per repair state: %zu B in the account (entry %zu B), %zu B resident; "
	       "budget worst cases %zu B and %zu B\n",
		(st1.bytes - st0.bytes) / sessions, st1.session_size, (rss1 - rss0) / sessions,
		(st2.bytes - st1.bytes) / states, st2.repair_size, (rss2 - rss1) / states,
		st2.limits.session_cost, st2.limits.repair_cost);
	ck_assert_uint_le((st1.bytes - st0.bytes) / sessions, st2.limits.session_cost);
	ck_assert_uint_le((st2.bytes - st1.bytes) / states, st2.limits.repair_cost);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: limits, quotas, eviction");
	TCase *tc = tcase_create("limits");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_ncf_flood_leaves_naks_their_ncf);
	tcase_add_test(tc, test_nak_at_limit_confirmed_and_forwarded);
	tcase_add_test(tc, test_quotas_hold);
	tcase_add_test(tc, test_eviction_order);
	tcase_add_test(tc, test_session_rate_cap);
	tcase_add_test(tc, test_default_limits_from_budget);
	tcase_add_test(tc, test_memory_per_entry);
	suite_add_tcase(s, tc);
	return check_run(s);
}
