/*
 * Random traffic against the control plane: every packet type on every interface, sequence
 * numbers from a small range (so states collide), interfaces removed and re-added, limits and
 * configuration changed on the way. After every step the internal invariants must hold: each
 * repair state is in its session's list, in the hash table and in the timing wheel at its
 * earliest deadline; counts agree everywhere; limits are respected.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"
#include "tests/unit/cp_test_util.h"
#include "tests/unit/check_run.h"

#define REQUIRE(cond, ...)                                                                         \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static uint64_t rng_state;

static uint32_t rng(uint32_t n)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state % n);
}

static cp_time_t earliest(const struct cp_repair *r)
{
	cp_time_t t[] = {r->rpt_next, r->rpt_end, r->rdata_end, r->elim_end}, min = 0;

	for (unsigned i = 0; i < 4; i++) {
		if (t[i] != 0 && (min == 0 || t[i] < min))
			min = t[i];
	}
	return min;
}

static void check_invariants(struct cp *cp)
{
	size_t sessions = 0, repairs = 0;
	char why[256];

	REQUIRE(cp_check(cp, why, sizeof(why)), "cp_check: %s", why);

	for (uint32_t b = 0; b < cp_htab_heads(&cp->session_tab); b++) {
		for (uint32_t sid = cp_htab_head(&cp->session_tab, b); sid != CP_NIL;) {
			const struct cp_session *s = cp_session_at(cp, sid);
			uint32_t n = 0, prev = CP_NIL;

			REQUIRE(cp_session_find(cp, &s->tsi, cp_session_afi(s)) == sid, "session %u not found", sid);
			REQUIRE(cp->cfg.session_lifetime_s == 0 || cp_tnode_scheduled(&s->timer),
				"session %u has no expiry timer", sid);
			for (uint32_t id = s->repair_head; id != CP_NIL;) {
				const struct cp_repair *r = cp_repair_at(cp, id);

				REQUIRE(r->session == sid, "repair %u in the wrong list", id);
				REQUIRE(r->sess_prev == prev, "repair %u: broken back link", id);
				REQUIRE(cp_repair_find(cp, sid, r->sqn) == id,
					"repair %u not found", id);
				REQUIRE(cp_tnode_scheduled(&r->timer), "repair %u has no timer",
					id);
				REQUIRE(r->timer.deadline == earliest(r),
					"repair %u armed at %llu, earliest deadline %llu", id,
					(unsigned long long)r->timer.deadline,
					(unsigned long long)earliest(r));
				REQUIRE(r->phase <= CP_PHASE_FORWARDING, "repair %u: phase", id);
				REQUIRE((r->repaired_mask & ~r->if_mask) == 0,
					"repair %u repaired an unlisted interface", id);
				prev = id;
				id = r->sess_next;
				n++;
			}
			REQUIRE(n == s->repair_count, "session %u counts %u of %u", sid,
				s->repair_count, n);
			repairs += n;
			sessions++;
			sid = s->hash_next;
		}
	}
	REQUIRE(sessions == cp->sessions.live && sessions == cp->session_tab.count,
		"%zu sessions listed, %u live", sessions, cp->sessions.live);
	REQUIRE(repairs == cp->repairs.live && repairs == cp->repair_tab.count,
		"%zu repair states listed, %u live", repairs, cp->repairs.live);
	REQUIRE(cp->repair_wheel.count == repairs, "%zu timers for %zu states",
		cp->repair_wheel.count, repairs);
}

/*
 * Limits refuse new entries; lowering one does not evict. So a count above its limit never
 * grows, and a count below it never passes it.
 */
static void check_limit(uint32_t limit, size_t before, size_t after, const char *what)
{
	if (limit == 0)
		return;
	if (before >= limit)
		REQUIRE(after <= before, "%s grew from %zu over the limit %u", what, before, limit);
	else
		REQUIRE(after <= limit, "%s passed the limit %u: %zu", what, limit, after);
}

static const unsigned types[] = {PGM_SPM, PGM_NAK, PGM_NAK, PGM_NAK, PGM_NCF, PGM_NCF, PGM_RDATA,
	PGM_RDATA, PGM_NNAK, PGM_POLL, PGM_POLR, PGM_ODATA, PGM_SPMR, 0x07};
static const int ifindexes[] = {
	0, CP_TEST_UP, CP_TEST_D1, CP_TEST_D2, CP_TEST_D3, CP_TEST_NA, CP_TEST_XX};

static uint32_t spm_sqn;

static void random_packet(struct cp_test_env *env)
{
	struct cp_test_pkt p;
	unsigned type = types[rng(sizeof(types) / sizeof(types[0]))];
	uint32_t sqn = rng(40), session = rng(3);
	int in = ifindexes[1 + rng(6)], out = ifindexes[rng(7)];

	/* mostly the way packets flow: downstream types from up, NAKs from below */
	if (rng(5) != 0) {
		bool upstream = pgm_type_is_upstream(type);

		in = upstream ? ifindexes[2 + rng(3)] : CP_TEST_UP;
		out = upstream || type == PGM_NCF ? 0 : ifindexes[2 + rng(3)];
	}
	switch (type) {
	case PGM_SPM:
		cp_test_spm(&p, spm_sqn += rng(3), rng(2) ? 0 : 5, rng(2) ? 0x80000000u : 30);
		if (rng(8) == 0)
			cp_test_add_option(&p, PGM_OPT_NBR_UNREACH, 0);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF: {
		uint32_t list[PGM_MAX_NAK_LIST];
		unsigned n = rng(4) == 0 ? rng(PGM_MAX_NAK_LIST) : 0;

		for (unsigned i = 0; i < n; i++)
			list[i] = rng(40);
		cp_test_nak(&p, type, sqn, list, n);
		if (rng(10) == 0)
			p.ip.dst = cp_test_nla(CP_TEST_GROUP);
		if (type == PGM_NCF && rng(10) == 0)
			p.ip.dst = cp_test_nla("198.18.0.1");
		if (rng(20) == 0)
			p.pkt.nak_src = cp_test_nla("198.18.0.99");
		break;
	}
	case PGM_RDATA:
	case PGM_ODATA:
		cp_test_data(&p, type, sqn);
		if (rng(15) == 0)
			p.ip.dst = cp_test_nla("198.18.0.1");
		break;
	default:
		cp_test_simple(&p, type, sqn);
		break;
	}
	if (rng(12) == 0)
		p.pkt.opt_flags |= PGM_OPT_PARITY;
	if (rng(10) == 0)
		cp_test_add_option(&p, 0x30 + rng(4), rng(4));
	if (rng(10) == 0) {
		p.ip.udp = true;
		p.ip.udp_sport = 3056;
		p.ip.udp_dport = 3055;
	}
	/* three sessions share the GSI, differ in the data-source port */
	if (pgm_type_is_upstream(type))
		p.pkt.dport = (uint16_t)(CP_TEST_SPORT + session);
	else
		p.pkt.sport = (uint16_t)(CP_TEST_SPORT + session);
	cp_test_send(env, &p, in, out);
	REQUIRE(env->res.verdict <= CP_ACCEPT_REWRITTEN, "bad verdict");
}

static void random_admin(struct cp_test_env *env)
{
	struct cp_config cfg;
	int ifindex = ifindexes[2 + rng(3)];

	switch (rng(8)) {
	case 0:
		cp_if_remove(env->cp, ifindex);
		break;
	case 1:
		if (cp_if_add(env->cp, ifindex, cp_test_ifname(ifindex)) == 0) {
			struct pgm_nla addr = cp_test_nla("198.18.9.1");

			cp_if_set_addr(env->cp, ifindex, &addr);
			cp_if_set_assist(env->cp, ifindex, rng(4) != 0);
		}
		break;
	case 2:
		cp_if_set_assist(env->cp, ifindex, rng(2));
		break;
	case 3:
		cp_config_default(&cfg);
		cfg.max_repair_states = rng(2) ? 0 : 10 + rng(30);
		cfg.max_sessions = rng(2) ? 0 : 1 + rng(3);
		cfg.session_lifetime_s = rng(3) == 0 ? 0 : 1 + rng(300);
		cfg.nak_window_check = rng(2);
		cfg.if_defaults.nak_rpt_rate = rng(8);
		cfg.if_defaults.nak_elim_ivl_ms = rng(3) == 0 ? 0 : 500;
		cp_set_config(env->cp, &cfg);
		break;
	case 4:
		cp_clear_repair_states(env->cp, rng(2) ? NULL : &(struct pgm_nla){0});
		break;
	case 5:
		if (getenv("CP_TEST_VERBOSE") == NULL)
			cp_clear_counters(env->cp, rng(2) ? 0 : ifindex);
		break;
	case 6: {
		struct cp_if_config ic;

		cp_if_config_default(&ic);
		ic.nak_rpt_ivl_ms = 100 + rng(3000);
		ic.ncf_ivl_ms = rng(100);
		cp_if_set_config(env->cp, CP_TEST_UP, rng(3) ? &ic : NULL);
		break;
	}
	default:
		cp_if_remove(env->cp, CP_TEST_UP);
		cp_if_add(env->cp, CP_TEST_UP, "up");
		cp_if_set_assist(env->cp, CP_TEST_UP, true);
		break;
	}
}

START_TEST(test_random_traffic_keeps_invariants)
{
	struct cp_test_env env;
	cp_time_t t;

	rng_state = 0x9e3779b97f4a7c15ull * (uint64_t)(_i + 1);
	spm_sqn = 1;
	cp_test_env_init(&env, NULL);
	if (_i % 2)
		cp_set_log(env.cp, NULL, NULL, 0); /* also the paths without logging */
	t = env.now;
	for (unsigned step = 0; step < 30000; step++) {
		size_t sessions = env.cp->sessions.live, repairs = env.cp->repairs.live;

		t += rng(10) == 0 ? rng(400000) : rng(2000);
		env.now = t;
		if (rng(1000) == 0) {
			random_admin(&env);
		} else {
			if (rng(8) == 0)
				cp_test_timers(&env, t);
			else
				random_packet(&env);
			check_limit(env.cp->cfg.max_sessions, sessions, env.cp->sessions.live,
				"sessions");
			check_limit(env.cp->cfg.max_repair_states, repairs, env.cp->repairs.live,
				"repair states");
		}
		if (step % 16 == 0)
			check_invariants(env.cp);
		if (env.nactions > CP_TEST_MAX_ACTIONS / 2)
			cp_test_clear(&env);
	}
	check_invariants(env.cp);
	if (getenv("CP_TEST_VERBOSE") != NULL) {
		for (int c = 0; c < CP_C_COUNT; c++)
			fprintf(stderr, "%s=%llu ", cp_counter_name(c),
				(unsigned long long)cp_test_total_ev(&env, c));
		fprintf(stderr, "\n");
	}
	/* in the end everything expires */
	cp_test_timers(&env, t + CP_SEC(100000));
	check_invariants(env.cp);
	REQUIRE(cp_next_deadline(env.cp) == UINT64_MAX ||
			cp_get_config(env.cp)->session_lifetime_s == 0,
		"timers left");
	cp_test_env_free(&env);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: random traffic");
	TCase *tc = tcase_create("random");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, test_random_traffic_keeps_invariants, 0, 6);
	suite_add_tcase(s, tc);
	return check_run(s);
}
