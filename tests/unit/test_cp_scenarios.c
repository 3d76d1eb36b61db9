/*
 * Scripted scenarios on several interfaces: each row is one packet (or forwarded copy) or a
 * timer run, with the verdict and the actions expected from it. Times are in milliseconds from
 * the start. Interfaces: up (upstream), d1, d2, d3 (downstream, assisted), na (no assist).
 * Actions read "NCF d1 17" (confirmation on d1), "NAK up 17,18" (forwarded upstream),
 * "NAK up 17 rpt" (repeated from state).
 */
#include <check.h>
#include <stdlib.h>

#include "tests/unit/cp_test_util.h"
#include "tests/unit/check_run.h"

#define MS(x)	   CP_MS(x)
#define RUN(table) cp_test_run(&env, table, sizeof(table) / sizeof(table[0]))

static struct cp_test_env env;

static void setup(void)
{
	cp_test_env_init(&env, NULL);
}

static void teardown(void)
{
	cp_test_env_free(&env);
}

/* Receivers on two LANs NAK the same SQN; the router confirms, forwards one NAK, limits its
 * NCFs and sends the repair only where it was asked for. */
/* clang-format off */
static const struct cp_test_step nak_storm_two_lans[] = {
	/* time     packet      in    out   verdict    actions */
	{MS(0),     "SPM 1",    "up", "d1", "rewrite", ""},
	{MS(0),     "SPM 1",    "up", "d2", "rewrite", ""},
	{MS(0),     "SPM 1",    "up", "d3", "rewrite", ""},
	{MS(0),     "SPM 1",    "up", "na", "accept",  ""},
	{MS(100),   "NAK 17",   "d1", NULL, "drop",    "NAK up 17; NCF d1 17"},
	{MS(105),   "NAK 17",   "d1", NULL, "drop",    ""},
	{MS(110),   "NAK 17",   "d2", NULL, "drop",    "NCF d2 17"},
	{MS(120),   "NAK 17",   "d1", NULL, "drop",    ""},
	{MS(140),   "NAK 17",   "d2", NULL, "drop",    ""},
	{MS(155),   "NAK 17",   "d1", NULL, "drop",    "NCF d1 17"},
	{MS(190),   "NCF 17",   "up", NULL, "drop",    ""},
	{MS(300),   "timers",   NULL, NULL, NULL,      ""},
	{MS(400),   "RDATA 17", "up", "d3", "drop",    ""},
	{MS(400),   "RDATA 17", "up", "d1", "accept",  ""},
	{MS(400),   "RDATA 17", "up", "na", "accept",  ""},
	{MS(400),   "RDATA 17", "up", "d2", "accept",  ""},
	{MS(401),   "RDATA 17", "up", "d1", "drop",    ""},
	{MS(20000), "timers",   NULL, NULL, NULL,      ""},
};
/* clang-format on */

START_TEST(test_scenario_nak_storm_two_lans)
{
	RUN(nak_storm_two_lans);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_RECEIVED), 6);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_RATE_LIMITED), 3);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_FORWARDED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_RDATA_FORWARDED), 2);
}
END_TEST

/* An NCF from upstream (another subtree NAKed) makes later downstream NAKs redundant. */
/* clang-format off */
static const struct cp_test_step anticipation[] = {
	/* time   packet      in    out   verdict    actions */
	{MS(0),   "SPM 1",    "up", "d1", "rewrite", ""},
	{MS(100), "NCF 30",   "up", NULL, "drop",    ""},
	{MS(150), "NAK 30",   "d1", NULL, "drop",    "NCF d1 30"},
	{MS(160), "NAK 30",   "d2", NULL, "drop",    "NCF d2 30"},
	{MS(200), "RDATA 30", "up", "d1", "accept",  ""},
	{MS(200), "RDATA 30", "up", "d3", "drop",    ""},
	{MS(200), "RDATA 30", "up", "d2", "accept",  ""},
	/* an anticipated SQN nobody here asked for: the repair stays upstream */
	{MS(300), "NCF 31",   "up", NULL, "drop",    ""},
	{MS(350), "RDATA 31", "up", "d1", "drop",    ""},
	{MS(350), "RDATA 31", "up", "d2", "drop",    ""},
	/* an NCF from downstream is not ours */
	{MS(400), "NCF 32",   "d1", NULL, "drop",    ""},
	{MS(410), "NAK 32",   "d2", NULL, "drop",    "NAK up 32; NCF d2 32"},
};
/* clang-format on */

START_TEST(test_scenario_anticipation)
{
	RUN(anticipation);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_ANTICIPATED), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NCF_DISCARDED), 1);
}
END_TEST

/* The RDATA was lost above us: receivers re-NAK after their NAK_RDATA_IVL (2 s), elimination
 * has ended (1 s), so the re-NAK goes upstream and the cycle restarts. */
/* clang-format off */
static const struct cp_test_step renak_after_elimination[] = {
	/* time    packet      in    out   verdict    actions */
	{MS(0),    "SPM 1",    "up", "d1", "rewrite", ""},
	{MS(0),    "NAK 40",   "d1", NULL, "drop",    "NAK up 40; NCF d1 40"},
	{MS(50),   "NCF 40",   "up", NULL, "drop",    ""},
	{MS(500),  "NAK 40",   "d2", NULL, "drop",    "NCF d2 40"},
	{MS(1049), "NAK 40",   "d2", NULL, "drop",    "NCF d2 40"},
	{MS(1050), "timers",   NULL, NULL, NULL,      ""},
	{MS(2050), "NAK 40",   "d1", NULL, "drop",    "NAK up 40; NCF d1 40"},
	{MS(2060), "NAK 40",   "d2", NULL, "drop",    "NCF d2 40"},
	{MS(2249), "timers",   NULL, NULL, NULL,      ""},
	{MS(2250), "timers",   NULL, NULL, NULL,      "NAK up 40 rpt"},
	{MS(2300), "NCF 40",   "up", NULL, "drop",    ""},
	{MS(2450), "timers",   NULL, NULL, NULL,      ""},
	{MS(2500), "RDATA 40", "up", "d2", "accept",  ""},
	{MS(2500), "RDATA 40", "up", "d1", "accept",  ""},
};
/* clang-format on */

START_TEST(test_scenario_renak_after_elimination)
{
	RUN(renak_after_elimination);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_FORWARDED), 2);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_RETRANSMITTED), 1);
}
END_TEST

/* Nobody confirms: the NAK is repeated five times a second for 2 s, then given up; an NCF
 * arriving afterwards only anticipates. */
/* clang-format off */
static const struct cp_test_step unconfirmed[] = {
	/* time    packet     in    out   verdict    actions */
	{MS(0),    "SPM 1",   "up", "d1", "rewrite", ""},
	{MS(0),    "NAK 7,8", "d1", NULL, "drop",    "NAK up 7,8; NCF d1 7,8"},
	{MS(100),  "NAK 9",   "d2", NULL, "drop",    "NAK up 9; NCF d2 9"},
	{MS(200),  "timers",  NULL, NULL, NULL,      "NAK up 7,8 rpt"},
	{MS(300),  "timers",  NULL, NULL, NULL,      "NAK up 9 rpt"},
	{MS(400),  "timers",  NULL, NULL, NULL,      "NAK up 7,8 rpt"},
	/* the loop stalled for 1.3 s: one repeat each, then the rate again from now */
	{MS(1700), "timers",  NULL, NULL, NULL,      "NAK up 7,8,9 rpt"},
	{MS(1800), "timers",  NULL, NULL, NULL,      ""},
	{MS(1900), "timers",  NULL, NULL, NULL,      "NAK up 7,8,9 rpt"},
	{MS(2000), "timers",  NULL, NULL, NULL,      ""},
	{MS(2100), "timers",  NULL, NULL, NULL,      ""},
	{MS(2200), "NCF 7",   "up", NULL, "drop",    ""},
	{MS(2300), "NAK 7",   "d1", NULL, "drop",    "NCF d1 7"},
	{MS(2300), "NAK 8",   "d1", NULL, "drop",    "NAK up 8; NCF d1 8"},
};
/* clang-format on */

START_TEST(test_scenario_unconfirmed)
{
	RUN(unconfirmed);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_RETRY_EXPIRED), 3);
}
END_TEST

/* The tree changes while a NAK is pending (the route now comes in by d3): repeats follow the new
 * upstream, repairs are taken only from it. */
/* clang-format off */
static const struct cp_test_step path_change[] = {
	/* time   packet                   in    out   verdict    actions */
	{MS(0),   "SPM 1",                 "up", "d1", "rewrite", ""},
	{MS(0),   "NAK 50",                "d1", NULL, "drop",    "NAK up 50; NCF d1 50"},
	{MS(100), "route d3",              NULL, NULL, NULL,      ""},
	{MS(100), "SPM 2 path=198.18.3.9", "d3", "d1", "rewrite", ""},
	{MS(200), "timers",                NULL, NULL, NULL,      "NAK d3 50 rpt"},
	{MS(250), "NCF 50",                "up", NULL, "drop",    ""},
	{MS(400), "timers",                NULL, NULL, NULL,      "NAK d3 50 rpt"},
	{MS(450), "NCF 50",                "d3", NULL, "drop",    ""},
	{MS(600), "timers",                NULL, NULL, NULL,      ""},
	{MS(700), "RDATA 50",              "up", "d1", "drop",    ""},
	{MS(700), "RDATA 50",              "d3", "d1", "accept",  ""},
	/* NAKs from the old upstream side are now ordinary downstream NAKs */
	{MS(800), "NAK 51",                "up", NULL, "drop",    "NAK d3 51; NCF up 51"},
	{MS(800), "NAK 52",                "d3", NULL, "drop",    ""},
};
/* clang-format on */

START_TEST(test_scenario_path_change)
{
	RUN(path_change);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_SPM_UPSTREAM_CHANGED), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_RDATA_NOT_UPSTREAM), 1);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_NAK_UPSTREAM_INTERFACE), 1);
}
END_TEST

/* NAK lists meet single NAKs and NCF lists. */
/* clang-format off */
static const struct cp_test_step lists[] = {
	/* time   packet          in    out   verdict    actions */
	{MS(0),   "SPM 1",        "up", "d1", "rewrite", ""},
	{MS(0),   "NAK 60",       "d1", NULL, "drop",    "NAK up 60; NCF d1 60"},
	{MS(10),  "NAK 60,61,62", "d2", NULL, "drop",    "NAK up 60,61,62; NCF d2 60,61,62"},
	{MS(20),  "NCF 60,61,62", "up", NULL, "drop",    ""},
	{MS(30),  "NAK 60,61,62", "d3", NULL, "drop",    "NCF d3 60,61,62"},
	{MS(40),  "NAK 61,63",    "d1", NULL, "drop",    "NAK up 61,63; NCF d1 61,63"},
	{MS(50),  "RDATA 61",     "up", "d3", "accept",  ""},
	{MS(50),  "RDATA 61",     "up", "d1", "accept",  ""},
	{MS(50),  "RDATA 61",     "up", "d2", "accept",  ""},
	{MS(60),  "RDATA 61",     "up", "d2", "drop",    ""},
	{MS(200), "timers",       NULL, NULL, NULL,      ""},
	{MS(240), "timers",       NULL, NULL, NULL,      "NAK up 63 rpt"},
};
/* clang-format on */

START_TEST(test_scenario_lists)
{
	RUN(lists);
}
END_TEST

/* Sessions this router never saw SPMs of work unassisted: their NCFs and repairs pass. */
/* clang-format off */
static const struct cp_test_step unknown_session[] = {
	/* time packet         in    out   verdict   actions */
	{MS(0), "NCF 5",       "up", NULL, "accept", ""},
	{MS(0), "RDATA 5",     "up", "d1", "accept", ""},
	{MS(0), "NAK 5",       "d1", NULL, "drop",   ""},
	{MS(0), "NAK 5 mcast", "d1", NULL, "accept", ""},
	{MS(0), "POLL 1",      "up", "d1", "drop",   ""},
	{MS(0), "ODATA 5",     "up", "d1", "accept", ""},
	{MS(0), "SPMR 0",      "d1", NULL, "accept", ""},
};
/* clang-format on */

START_TEST(test_scenario_unknown_session)
{
	RUN(unknown_session);
}
END_TEST

/* A DLR repaired some SQNs itself and tells the source with NNAKs. */
/* clang-format off */
static const struct cp_test_step nnaks[] = {
	/* time    packet        in    out   verdict    actions */
	{MS(0),    "SPM 1",      "up", "d1", "rewrite", ""},
	{MS(0),    "NNAK 70,71", "d2", NULL, "drop",    "NNAK up 70,71"},
	{MS(10),   "NNAK 70",    "d2", NULL, "drop",    ""},
	{MS(20),   "NAK 70",     "d1", NULL, "drop",    "NAK up 70; NCF d1 70"},
	{MS(30),   "NAK 71",     "d1", NULL, "drop",    "NAK up 71; NCF d1 71"},
	{MS(40),   "NNAK 70",    "d2", NULL, "drop",    ""},
	{MS(50),   "NCF 70,71",  "up", NULL, "drop",    ""},
	{MS(60),   "RDATA 70",   "up", "d2", "drop",    ""},
	{MS(60),   "RDATA 70",   "up", "d1", "accept",  ""},
	{MS(1010), "timers",     NULL, NULL, NULL,      ""},
};
/* clang-format on */

START_TEST(test_scenario_nnaks)
{
	RUN(nnaks);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1); /* 71 waits for its RDATA */
}
END_TEST

/* UDP encapsulation end to end. */
/* clang-format off */
static const struct cp_test_step udp[] = {
	/* time   packet        in    out   verdict    actions */
	{MS(0),   "SPM 1 udp",  "up", "d1", "rewrite", ""},
	{MS(0),   "NAK 80 udp", "d1", NULL, "drop",    "NAK up 80; NCF d1 80"},
	{MS(200), "timers",     NULL, NULL, NULL,      "NAK up 80 rpt"},
};
/* clang-format on */

START_TEST(test_scenario_udp)
{
	struct cp_session_view v;

	RUN(udp);
	ck_assert(cp_test_session(&env, &v));
	ck_assert(v.udp);
	ck_assert(env.actions[0].udp);
	ck_assert_uint_eq(env.actions[0].udp_dport, 3055);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: scenarios");
	TCase *tc = tcase_create("scenarios");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_scenario_nak_storm_two_lans);
	tcase_add_test(tc, test_scenario_anticipation);
	tcase_add_test(tc, test_scenario_renak_after_elimination);
	tcase_add_test(tc, test_scenario_unconfirmed);
	tcase_add_test(tc, test_scenario_path_change);
	tcase_add_test(tc, test_scenario_lists);
	tcase_add_test(tc, test_scenario_unknown_session);
	tcase_add_test(tc, test_scenario_nnaks);
	tcase_add_test(tc, test_scenario_udp);
	suite_add_tcase(s, tc);
	return check_run(s);
}
