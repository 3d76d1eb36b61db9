/*
 * Options by OPX bits (RFC 3208 9), multicast NAKs, POLL/POLR and other packet types, limits,
 * clear operations, interfaces, views, counters and logging.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h" /* CP_WHEEL_CASCADE_BUDGET */
#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define UNKNOWN_OPT 0x2a

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

static void restart(const struct cp_config *cfg)
{
	t0 = cp_test_restart(&env, cfg, 0);
}

static enum cp_verdict nak_at(cp_time_t t, uint32_t sqn, int in)
{
	return cp_test_nak_at(&env, t, PGM_NAK, sqn, NULL, 0, in);
}

/* ---- options (9) ---- */

START_TEST(test_9_opx_invalidate_on_forwarded_copies)
{
	struct cp_test_pkt p;

	/* SPM copy: OPT_LENGTH, OPT_JOIN, unknown OPX 01 -> option index 2 */
	cp_test_spm(&p, 2, 0, 0x80000000u);
	cp_test_add_option(&p, PGM_OPT_JOIN, PGM_OPX_IGNORE);
	cp_test_add_option(&p, UNKNOWN_OPT, PGM_OPX_INVALIDATE);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert(env.res.rewrite.spm_path);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 1u << 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_OPX_INVALIDATED), 1);
	/* accepted RDATA copy */
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	cp_test_data(&p, PGM_RDATA, 5);
	cp_test_add_option(&p, UNKNOWN_OPT, PGM_OPX_INVALIDATE);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 1u << 1);
	ck_assert(!env.res.rewrite.spm_path);
	/* dropped copies get nothing */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 0);
	/* a NAK forwarded upstream carries the renames in its action */
	cp_test_nak(&p, PGM_NAK, 6, NULL, 0);
	cp_test_add_option(&p, UNKNOWN_OPT, PGM_OPX_IGNORE);
	cp_test_add_option(&p, UNKNOWN_OPT + 1, PGM_OPX_INVALIDATE);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 6; NCF d1 6");
	ck_assert_uint_eq(env.actions[0].opt_invalid_mask, 1u << 2);
	ck_assert_uint_eq(env.actions[1].opt_invalid_mask, 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_OPX_INVALIDATED), 1);
	/* packets the kernel routes: ODATA, for one */
	cp_test_data(&p, PGM_ODATA, 7);
	cp_test_add_option(&p, UNKNOWN_OPT, PGM_OPX_INVALIDATE);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
}
END_TEST

START_TEST(test_9_opx_reserved_and_ignore)
{
	struct cp_test_pkt p;

	cp_test_spm(&p, 2, 0, 0x80000000u);
	cp_test_add_option(&p, UNKNOWN_OPT, PGM_OPX_RESERVED);
	cp_test_add_option(&p, UNKNOWN_OPT + 1, PGM_OPX_IGNORE);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_uint_eq(env.res.rewrite.opt_invalid_mask, 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_OPX_RESERVED), 1);
	/* OPX 01 on a known option means nothing: only unknown ones are renamed */
	cp_test_data(&p, PGM_ODATA, 7);
	cp_test_add_option(&p, PGM_OPT_FRAGMENT, PGM_OPX_INVALIDATE);
	p.pkt.opt.opx_invalidate = 1;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT);
}
END_TEST

START_TEST(test_9_opx_discard_counted)
{
	cp_count_error(env.cp, CP_TEST_D1, PGM_ERR_OPT_DISCARD);
	cp_count_error(env.cp, CP_TEST_D1, PGM_ERR_BAD_CHECKSUM);
	cp_count_error(env.cp, CP_TEST_XX, PGM_ERR_BAD_CHECKSUM);
	cp_count_error(env.cp, CP_TEST_D1, PGM_ERR_COUNT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_OPX_DISCARDED), 1);
	{
		struct cp_if_view v;

		ck_assert(cp_get_if(env.cp, CP_TEST_D1, &v));
		ck_assert_uint_eq(v.counters->err[PGM_ERR_OPT_DISCARD], 1);
		ck_assert_uint_eq(v.counters->err[PGM_ERR_BAD_CHECKSUM], 1);
	}
}
END_TEST

START_TEST(test_send_failed_counted_on_its_interface)
{
	struct cp_stats st;

	cp_count_send_failed(env.cp, CP_TEST_D1);
	cp_count_send_failed(env.cp, CP_TEST_D1);
	cp_count_send_failed(env.cp, CP_TEST_XX); /* no such interface: the router's count */
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_SEND_FAILED), 2);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_SEND_FAILED), 0);
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.global_ev[CP_C_SEND_FAILED], 1);
	ck_assert_str_eq(cp_counter_name(CP_C_SEND_FAILED), "send-failed");
}
END_TEST

/* ---- types without NE procedures ---- */

START_TEST(test_multicast_nak_accepted_unchanged)
{
	struct cp_test_pkt p;

	/* MS-PGM receivers multicast a TTL-1 copy of every NAK */
	cp_test_nak(&p, PGM_NAK, 17, NULL, 0);
	p.ip.dst = cp_test_nla(CP_TEST_GROUP);
	p.ip.ttl = 1;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
	ck_assert_str_eq(ACTIONS(), "");
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_MULTICAST), 1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 0);
	/* for sessions we do not know, too */
	p.pkt.dport = 999;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_MULTICAST), 2);
}
END_TEST

START_TEST(test_14_1_poll_never_forwarded)
{
	struct cp_test_pkt p;

	cp_test_simple(&p, PGM_POLL, 3);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D2), CP_DROP);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_UP, CP_C_POLL_RECEIVED), 3);
	ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_UP, PGM_POLL), 3);
	/* by an interface without assist it is not ours */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_NA), CP_ACCEPT);
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

START_TEST(test_14_polr)
{
	struct cp_test_pkt p;

	cp_test_simple(&p, PGM_POLR, 3);
	p.ip.src = cp_test_nla("198.18.1.50");
	p.ip.dst = cp_test_nla("198.18.1.1"); /* our address on d1 */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	p.ip.dst = cp_test_nla("198.18.0.10"); /* to the source, through us */
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, CP_TEST_UP), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_POLR_RECEIVED), 3);
}
END_TEST

START_TEST(test_other_types_pass)
{
	static const unsigned types[] = {PGM_SPMR, PGM_ACK, PGM_ODATA};
	struct cp_test_pkt p;

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		cp_test_simple(&p, types[i], 1);
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
		ck_assert_uint_eq(cp_test_if_in(&env, CP_TEST_D1, types[i]), 1);
	}
	cp_test_simple(&p, 0x03, 1);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_ACCEPT);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_UNKNOWN_TYPE), 1);
	ck_assert_str_eq(ACTIONS(), "");
	/* no packet at all */
	{
		struct cp_packet in = {.ip = NULL, .pkt = NULL, .in_ifindex = 1, .now = t0};
		struct cp_result res;

		cp_packet(env.cp, &in, &res);
		ck_assert_int_eq(res.verdict, CP_ACCEPT);
	}
}
END_TEST

/* ---- limits ---- */

START_TEST(test_repair_limit_bounds_memory)
{
	struct cp_config cfg;
	struct cp_stats st;
	size_t bytes_at_limit;
	uint32_t x = 12345;

	cp_config_default(&cfg);
	cfg.max_repair_states = 1000;
	cfg.repair_if_share = cfg.repair_session_share = 100; /* the limit alone */
	cfg.nak_window_check = false;
	restart(&cfg);
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_int_eq(nak_at(t0, i, CP_TEST_D1), CP_DROP);
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 1000);
	bytes_at_limit = st.bytes;
	/* whatever arrives next: random SQNs, NCFs, NNAKs */
	for (uint32_t i = 0; i < 50000; i++) {
		struct cp_test_pkt p;

		x = x * 1103515245u + 12345u;
		cp_test_nak(&p, i % 3 == 0 ? PGM_NCF : i % 3 == 1 ? PGM_NAK : PGM_NNAK, x, NULL, 0);
		cp_test_send(&env, &p, i % 3 == 0 ? CP_TEST_UP : CP_TEST_D2, 0);
	}
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 1000);
	ck_assert_uint_le(st.bytes, bytes_at_limit + 1024);
	ck_assert_uint_gt(cp_test_total_ev(&env, CP_C_REPAIR_LIMIT), 30000);
	/* states that exist keep working */
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D2), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NCF d2 5");
	/* when they expire there is room again, and the memory goes back */
	cp_test_timers(&env, t0 + CP_SEC(3));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 0);
	ck_assert_uint_le(st.repair_bytes, 1024 * sizeof(uint32_t));
	ck_assert_int_eq(nak_at(t0 + CP_SEC(3), 1, CP_TEST_D1), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 1);
}
END_TEST

START_TEST(test_memory_returned_after_storm)
{
	struct cp_stats st;

	for (uint32_t i = 0; i < 5000; i++)
		ck_assert_int_eq(nak_at(t0, i, CP_TEST_D1), CP_DROP);
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 5000);
	ck_assert_uint_ge(st.repair_bytes, 5000 * st.repair_size);
	/* a storm of repeats grows the repeat buffer for a moment */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_MS(200));
	/* NAK lists of 63; the wheel moves CP_WHEEL_CASCADE_BUDGET timers per run, and lists are
	   per run: a run that ends mid-way sends its part short */
	ck_assert_uint_ge(cp_test_count_actions(&env, CP_ACT_NAK), (5000 + 62) / 63);
	ck_assert_uint_le(cp_test_count_actions(&env, CP_ACT_NAK),
		(5000 + 62) / 63 + (5000 - 1) / CP_WHEEL_CASCADE_BUDGET);
	cp_test_timers(&env, t0 + CP_SEC(3));
	cp_get_stats(env.cp, &st);
	ck_assert_uint_eq(st.repair_states, 0);
	ck_assert_uint_le(st.repair_bytes, 1024 * sizeof(uint32_t));
	/* and works as before */
	ck_assert_int_eq(nak_at(t0 + CP_SEC(3), 1, CP_TEST_D1), CP_DROP);
	ck_assert(cp_test_repair(&env, 1, NULL));
}
END_TEST

START_TEST(test_zero_intervals_at_time_zero)
{
	struct cp_config cfg;
	struct cp_test_pkt p;

	/* a fake clock starting at 0 and intervals of 0 must not leave states without timers */
	cp_config_default(&cfg);
	cfg.if_defaults.nak_rpt_ivl_ms = 0;
	cfg.if_defaults.nak_rdata_ivl_ms = 0;
	cfg.rdata_linger_ms = 0;
	cp_set_config(env.cp, &cfg);
	env.now = 0;
	cp_test_spm(&p, 5, 0, 0x80000000u);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	ck_assert_int_eq(nak_at(0, 9, CP_TEST_D1), CP_DROP);
	cp_test_nak(&p, PGM_NCF, 10, NULL, 0);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, 0), CP_DROP);
	ck_assert_uint_eq(cp_test_repair_count(&env), 2);
	ck_assert_uint_le(cp_next_deadline(env.cp), 1);
	cp_test_timers(&env, 1);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_repair_state_size)
{
	struct cp_stats st;

	cp_get_stats(env.cp, &st);
	/* two cache lines; the first 16 bytes, the hash chain's fields, never straddle two */
	ck_assert_uint_le(st.repair_size, 128);
	ck_assert_uint_gt(st.session_size, 0);
	ck_assert_uint_eq(st.sessions, 1);
	ck_assert_uint_gt(st.bytes, st.session_bytes);
}
END_TEST

/* ---- clear ---- */

START_TEST(test_clear_counters)
{
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 6, CP_TEST_D2), CP_DROP);
	cp_test_timers(&env, t0 + CP_SEC(3));
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_RETRY_EXPIRED), 2);
	cp_clear_counters(env.cp, CP_TEST_D1);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D1, CP_C_NAK_RECEIVED), 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_NAK_RECEIVED), 1);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_RECEIVED), 2);
	cp_clear_counters(env.cp, CP_TEST_XX);
	cp_clear_counters(env.cp, 0);
	ck_assert_uint_eq(cp_test_if_ev(&env, CP_TEST_D2, CP_C_NAK_RECEIVED), 0);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_RECEIVED), 0);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_NAK_RETRY_EXPIRED), 0);
}
END_TEST

START_TEST(test_clear_repair_states_by_group)
{
	struct cp_test_pkt p;
	struct pgm_nla g1 = cp_test_nla(CP_TEST_GROUP), g2 = cp_test_nla("239.192.0.2");

	/* a second session in another group */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.pkt.sport = 77;
	p.ip.dst = g2;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_int_eq(nak_at(t0, i, CP_TEST_D1), CP_DROP);
		cp_test_nak(&p, PGM_NAK, i, NULL, 0);
		p.pkt.dport = 77;
		p.pkt.nak_grp = g2;
		ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D1, 0), CP_DROP);
	}
	ck_assert_uint_eq(cp_test_repair_count(&env), 6);
	ck_assert_uint_eq(cp_clear_repair_states(env.cp, &g2), 3);
	ck_assert_uint_eq(cp_test_repair_count(&env), 3);
	ck_assert(cp_test_repair(&env, 0, NULL));
	ck_assert_uint_eq(cp_clear_repair_states(env.cp, &g2), 0);
	ck_assert_uint_eq(cp_clear_repair_states(env.cp, NULL), 3);
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_total_ev(&env, CP_C_REPAIR_CLEARED), 6);
	ck_assert(cp_test_logged(&env, "3 repair states cleared"));
	ck_assert(cp_test_session(&env, NULL));
	(void)g1;
	/* nothing is left to fire but the sessions' expiry */
	cp_test_clear(&env);
	cp_test_timers(&env, t0 + CP_SEC(5));
	ck_assert_str_eq(ACTIONS(), "");
}
END_TEST

/* ---- interfaces ---- */

START_TEST(test_interface_table)
{
	struct cp_if_view v;

	/* re-adding renames */
	ck_assert_int_eq(cp_if_add(env.cp, CP_TEST_D1, "eth1"), 0);
	ck_assert(cp_get_if(env.cp, CP_TEST_D1, &v));
	ck_assert_str_eq(v.name, "eth1");
	ck_assert(v.assist);
	ck_assert_int_eq(cp_if_add(env.cp, 0, "bad"), -1);
	ck_assert_int_eq(cp_if_add(env.cp, -3, "bad"), -1);
	ck_assert(!cp_get_if(env.cp, CP_TEST_XX, &v));
	/* the packet path's question, without a view */
	ck_assert(cp_if_assisted(env.cp, CP_TEST_D1));
	ck_assert(!cp_if_assisted(env.cp, CP_TEST_XX));
	ck_assert_int_eq(cp_if_add(env.cp, 900, "plain"), 0);
	ck_assert(!cp_if_assisted(env.cp, 900));
	ck_assert_int_eq(cp_if_set_assist(env.cp, 900, true), 0);
	ck_assert(cp_if_assisted(env.cp, 900));
	cp_if_remove(env.cp, 900);
	ck_assert(!cp_if_assisted(env.cp, 900));
	/* operations on unknown interfaces are harmless */
	cp_if_remove(env.cp, CP_TEST_XX);
	cp_if_set_addr(env.cp, CP_TEST_XX, NULL);
	cp_if_set_config(env.cp, CP_TEST_XX, NULL);
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_XX, true), -1);
	/* enabling twice keeps the slot */
	ck_assert_int_eq(cp_if_set_assist(env.cp, CP_TEST_D1, true), 0);
	ck_assert_int_eq(cp_if_slot_ifindex(env.cp, 1), CP_TEST_D1);
	ck_assert_int_eq(cp_if_slot_ifindex(env.cp, 63), 0);
	ck_assert_int_eq(cp_if_slot_ifindex(env.cp, 64), 0);
	/* per-interface config shows in the view */
	{
		struct cp_if_config cfg;

		cp_if_config_default(&cfg);
		cfg.ncf_ivl_ms = 7;
		cp_if_set_config(env.cp, CP_TEST_D2, &cfg);
		ck_assert(cp_get_if(env.cp, CP_TEST_D2, &v));
		ck_assert_uint_eq(v.cfg.ncf_ivl_ms, 7);
		ck_assert(cp_get_if(env.cp, CP_TEST_D3, &v));
		ck_assert_uint_eq(v.cfg.ncf_ivl_ms, 50);
	}
}
END_TEST

START_TEST(test_interface_limits)
{
	int added = 0;

	/* 64 assisted at most: 4 are already */
	for (int i = 0; i < 70; i++) {
		char name[16];

		snprintf(name, sizeof(name), "v%d", i);
		ck_assert_int_eq(cp_if_add(env.cp, 1000 + i, name), 0);
		if (cp_if_set_assist(env.cp, 1000 + i, true) == 0)
			added++;
	}
	ck_assert_int_eq(added, 60);
	ck_assert_int_eq(cp_if_set_assist(env.cp, 1069, true), -1);
	/* freeing a slot makes room */
	ck_assert_int_eq(cp_if_set_assist(env.cp, 1000, false), 0);
	ck_assert_int_eq(cp_if_set_assist(env.cp, 1069, true), 0);
	/* the known-interface table is bounded too; ifindexes far apart still map */
	for (int i = 0; i < CP_MAX_KNOWN_INTERFACES; i++) {
		if (cp_if_add(env.cp, 100000 + i * 4099, "x") != 0) {
			ck_assert_int_eq(i, CP_MAX_KNOWN_INTERFACES - 75);
			break;
		}
	}
	ck_assert_int_eq(cp_if_add(env.cp, 7777777, "x"), -1);
	/* removing and re-adding keeps lookups right (tombstone-free deletion) */
	for (int i = 0; i < 200; i++)
		cp_if_remove(env.cp, 100000 + i * 4099);
	for (int i = 200; i < 400; i++) {
		struct cp_if_view v;

		ck_assert(cp_get_if(env.cp, 100000 + i * 4099, &v));
	}
	ck_assert_int_eq(cp_if_add(env.cp, 7777777, "x"), 0);
}
END_TEST

START_TEST(test_interface_removal)
{
	struct cp_repair_view r;
	struct cp_test_pkt p;

	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D2), CP_DROP);
	cp_if_remove(env.cp, CP_TEST_D1);
	ck_assert(cp_test_repair(&env, 5, &r));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D2));
	/* the removed interface's slot is free for the next one */
	ck_assert_int_eq(cp_if_add(env.cp, 50, "new"), 0);
	ck_assert_int_eq(cp_if_set_assist(env.cp, 50, true), 0);
	ck_assert_int_eq(cp_if_slot_ifindex(env.cp, 1), 50);
	ck_assert(cp_test_repair(&env, 5, &r));
	ck_assert_uint_eq(r.if_mask, cp_test_mask(CP_TEST_D2));
	/* removing the upstream interface takes the session with it */
	cp_test_spm(&p, 1, 0, 0x80000000u);
	p.pkt.sport = 88;
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_D3, CP_TEST_D2), CP_ACCEPT_REWRITTEN);
	cp_if_remove(env.cp, CP_TEST_UP);
	ck_assert(!cp_test_session(&env, NULL));
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	ck_assert_uint_eq(cp_test_global_ev(&env, CP_C_SESSIONS_REMOVED), 1);
	{
		struct cp_stats st;

		cp_get_stats(env.cp, &st);
		ck_assert_uint_eq(st.sessions, 1);
	}
}
END_TEST

/* ---- views ---- */

struct if_list {
	int ifindex[16];
	int n;
};

static void collect_if(void *ctx, const struct cp_if_view *v)
{
	struct if_list *l = ctx;

	if (l->n < 16)
		l->ifindex[l->n++] = v->ifindex;
}

START_TEST(test_views_in_stable_order)
{
	struct if_list l = {{0}, 0};

	ck_assert_int_eq(cp_if_add(env.cp, 42, "z"), 0);
	cp_if_remove(env.cp, CP_TEST_D1);
	ck_assert_int_eq(cp_if_add(env.cp, CP_TEST_D1, "d1"), 0);
	cp_foreach_if(env.cp, collect_if, &l);
	ck_assert_int_eq(l.n, 6);
	for (int i = 1; i < l.n; i++)
		ck_assert_int_lt(l.ifindex[i - 1], l.ifindex[i]);
}
END_TEST

struct session_list {
	char line[16][64];
	int n;
};

static void collect_session(void *ctx, const struct cp_session_view *v)
{
	struct session_list *l = ctx;
	char g[64], tsi[24];

	if (l->n < 16)
		snprintf(l->line[l->n++], sizeof(l->line[0]), "%s %s",
			pgm_nla_format(&v->group, g, sizeof(g)),
			pgm_tsi_format(&v->tsi, tsi, sizeof(tsi)));
}

START_TEST(test_session_view_order)
{
	static const struct {
		const char *group;
		uint16_t sport;
	} add[] = {{"239.192.0.9", 5}, {"239.192.0.2", 9}, {"239.192.0.2", 3}, {"239.192.0.1", 4}};
	struct session_list l;
	struct pgm_nla g2 = cp_test_nla("239.192.0.2");
	struct cp_test_pkt p;

	for (size_t i = 0; i < sizeof(add) / sizeof(add[0]); i++) {
		cp_test_spm(&p, 1, 0, 0x80000000u);
		p.pkt.sport = add[i].sport;
		p.ip.dst = cp_test_nla(add[i].group);
		ck_assert_int_eq(
			cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	}
	memset(&l, 0, sizeof(l));
	cp_foreach_session(env.cp, NULL, collect_session, &l);
	ck_assert_int_eq(l.n, 5);
	ck_assert_str_eq(l.line[0], "239.192.0.1 0a0b0c0d0e0f.4");
	ck_assert_str_eq(l.line[1], "239.192.0.1 0a0b0c0d0e0f.1234");
	ck_assert_str_eq(l.line[2], "239.192.0.2 0a0b0c0d0e0f.3");
	ck_assert_str_eq(l.line[3], "239.192.0.2 0a0b0c0d0e0f.9");
	ck_assert_str_eq(l.line[4], "239.192.0.9 0a0b0c0d0e0f.5");
	memset(&l, 0, sizeof(l));
	cp_foreach_session(env.cp, &g2, collect_session, &l);
	ck_assert_int_eq(l.n, 2);
}
END_TEST

struct sqn_list {
	uint32_t sqn[16];
	int n;
};

static void collect_sqn(void *ctx, const struct cp_repair_view *v)
{
	struct sqn_list *l = ctx;

	if (l->n < 16)
		l->sqn[l->n++] = v->sqn;
}

START_TEST(test_repair_view_order)
{
	static const uint32_t sqns[] = {3, 0xfffffff8u, 0, 0xfffffffeu};
	struct pgm_tsi tsi = {{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, CP_TEST_SPORT};
	struct pgm_tsi other = {{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f}, 1};
	struct sqn_list l;
	struct cp_test_pkt p;

	cp_test_spm(&p, 2, 0xfffffff0u, 10);
	ck_assert_int_eq(cp_test_send(&env, &p, CP_TEST_UP, CP_TEST_D1), CP_ACCEPT_REWRITTEN);
	for (size_t i = 0; i < 4; i++)
		ck_assert_int_eq(nak_at(t0, sqns[i], CP_TEST_D1), CP_DROP);
	memset(&l, 0, sizeof(l));
	cp_foreach_repair(env.cp, &tsi, PGM_AFI_IP, collect_sqn, &l);
	ck_assert_int_eq(l.n, 4);
	ck_assert_uint_eq(l.sqn[0], 0xfffffff8u);
	ck_assert_uint_eq(l.sqn[1], 0xfffffffeu);
	ck_assert_uint_eq(l.sqn[2], 0);
	ck_assert_uint_eq(l.sqn[3], 3);
	memset(&l, 0, sizeof(l));
	cp_foreach_repair(env.cp, &other, PGM_AFI_IP, collect_sqn, &l);
	ck_assert_int_eq(l.n, 0);
}
END_TEST

START_TEST(test_names)
{
	for (int i = 0; i < CP_C_COUNT; i++) {
		ck_assert_ptr_nonnull(cp_counter_name(i));
		ck_assert_ptr_nonnull(cp_counter_description(i));
		ck_assert_int_gt((int)strlen(cp_counter_description(i)), 5);
		for (int j = 0; j < i; j++)
			ck_assert_str_ne(cp_counter_name(i), cp_counter_name(j));
	}
	ck_assert_str_eq(cp_counter_name(CP_C_NAK_ELIMINATED), "nak-eliminated");
	ck_assert_str_eq(cp_counter_name(CP_C_COUNT), "unknown-counter");
	ck_assert_str_eq(cp_counter_description(CP_C_COUNT), "unknown counter");
	ck_assert_str_eq(cp_phase_name(CP_PHASE_PENDING), "PENDING");
	ck_assert_str_eq(cp_phase_name(CP_PHASE_OUTSTANDING), "OUTSTANDING");
	ck_assert_str_eq(cp_phase_name(CP_PHASE_FORWARDING), "FORWARDING");
	ck_assert_str_eq(cp_phase_name((enum cp_repair_phase)9), "UNKNOWN");
}
END_TEST

START_TEST(test_defaults)
{
	struct cp_config cfg;

	cp_config_default(&cfg);
	ck_assert_uint_eq(cfg.session_lifetime_s, 300);
	ck_assert_uint_eq(cfg.max_sessions, 0); /* from the budget */
	ck_assert_uint_eq(cfg.max_repair_states, 0);
	ck_assert_uint_eq(cfg.memory_budget_mb, 256);
	ck_assert_uint_eq(cfg.repair_if_share, 50);
	ck_assert_uint_eq(cfg.repair_session_share, 25);
	ck_assert_uint_eq(cfg.if_defaults.session_rate, 100);
	ck_assert_uint_eq(cfg.rdata_linger_ms, 1000);
	ck_assert(cfg.nak_window_check);
	ck_assert_uint_eq(cfg.if_defaults.nak_rpt_ivl_ms, 2000);
	ck_assert_uint_eq(cfg.if_defaults.nak_rpt_rate, 5);
	ck_assert_uint_eq(cfg.if_defaults.nak_rdata_ivl_ms, 10000);
	ck_assert_uint_eq(cfg.if_defaults.nak_elim_ivl_ms, 100);
	ck_assert_uint_eq(cfg.if_defaults.ncf_ivl_ms, 50);
	ck_assert_uint_eq(cfg.if_defaults.nak_cross_ivl_ms, 50);
	ck_assert_uint_eq(cfg.if_defaults.nak_bo_ivl_us, 0);
	/* the tests' own environment keeps the 1000 ms the timer tests step through */
	ck_assert_uint_eq(cp_get_config(env.cp)->if_defaults.nak_elim_ivl_ms, 1000);
	cp_free(env.cp);
	/* a core made without a configuration has the defaults */
	env.cp = cp_new(NULL, NULL, NULL);
	ck_assert_ptr_nonnull(env.cp);
	ck_assert_uint_eq(cp_get_config(env.cp)->if_defaults.nak_elim_ivl_ms, 100);
}
END_TEST

static int log_lines;

static void count_log(void *ctx, enum cp_log_kind kind, const char *line)
{
	(void)ctx;
	(void)line;
	ck_assert_int_eq(kind, CP_LOG_TIMER);
	log_lines++;
}

START_TEST(test_log_kinds)
{
	log_lines = 0;
	cp_set_log(env.cp, count_log, NULL, 1u << CP_LOG_TIMER);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_int_eq(log_lines, 0);
	cp_test_timers(&env, t0 + CP_MS(200));
	ck_assert_int_eq(log_lines, 1);
	cp_set_log(env.cp, NULL, NULL, ~0u);
	cp_test_timers(&env, t0 + CP_MS(400));
	ck_assert_int_eq(log_lines, 1);
}
END_TEST

START_TEST(test_ncf_advertises_configured_nak_bo_ivl)
{
	struct cp_if_config cfg;

	cp_if_config_default(&cfg);
	cfg.nak_bo_ivl_us = 40000;
	cp_if_set_config(env.cp, CP_TEST_D1, &cfg);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D1), CP_DROP);
	ck_assert_str_eq(ACTIONS(), "NAK up 5; NCF d1 5");
	ck_assert(env.actions[1].nak_bo_ivl);
	ck_assert_uint_eq(env.actions[1].nak_bo_ivl_us, 40000);
	cp_test_clear(&env);
	ck_assert_int_eq(nak_at(t0, 5, CP_TEST_D2), CP_DROP);
	ck_assert(!env.actions[0].nak_bo_ivl);
}
END_TEST

/*
 * More repair states than a timer run moves at once (CP_WHEEL_CASCADE_BUDGET) in one level-4
 * slot of the wheel: the run at the slot's start leaves the rest for the next and says so by
 * returning its own time; the next finishes, and nothing expires early meanwhile.
 */
START_TEST(test_timer_cascade_bounded_per_run)
{
	enum { N = CP_WHEEL_CASCADE_BUDGET + 1000 };
	struct cp_config cfg;
	cp_time_t boundary, next;
	unsigned runs = 0;

	cp_config_default(&cfg);
	cfg.memory_budget_mb = 0;
	cfg.repair_if_share = cfg.repair_session_share = 0;
	t0 = cp_test_restart(&env, &cfg, 0);
	boundary = ((t0 >> 24) + 1) << 24;
	ck_assert_uint_gt(cp_test_timers(&env, boundary - CP_MS(1)), boundary - CP_MS(1));
	for (uint32_t i = 0; i < N; i++)
		cp_test_nak_at(&env, boundary - CP_MS(1), PGM_NCF, 100 + i, NULL, 0, CP_TEST_UP);
	ck_assert_uint_eq(cp_test_repair_count(&env), N);
	/* every state's first deadline is past the boundary, within the next 2^24 us */
	ck_assert_uint_eq(cp_next_deadline(env.cp), boundary);
	env.now = boundary;
	do {
		next = cp_timers(env.cp, boundary);
		runs++;
		ck_assert_uint_eq(cp_test_repair_count(&env), N);
	} while (next <= boundary && runs < 100);
	ck_assert_uint_eq(runs, 2);
	ck_assert_uint_gt(next, boundary);
	/* and they expire as before */
	cp_test_timers(&env, boundary + CP_SEC(100));
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
}
END_TEST

START_TEST(test_no_emit_callback)
{
	struct cp *cp = cp_new(NULL, NULL, NULL);
	struct cp_test_pkt p;
	struct cp_packet in = {.ip = &p.ip, .pkt = &p.pkt, .in_ifindex = 1, .out_ifindex = 2};
	struct cp_result res;

	ck_assert_ptr_nonnull(cp);
	ck_assert_int_eq(cp_if_add(cp, 1, "a"), 0);
	ck_assert_int_eq(cp_if_add(cp, 2, "b"), 0);
	ck_assert_int_eq(cp_if_set_assist(cp, 2, true), 0);
	cp_test_spm(&p, 1, 0, 0x80000000u);
	cp_packet(cp, &in, &res);
	cp_test_nak(&p, PGM_NAK, 3, NULL, 0);
	in.in_ifindex = 2;
	in.out_ifindex = 0;
	cp_packet(cp, &in, &res);
	ck_assert_int_eq(res.verdict, CP_DROP);
	ck_assert_uint_lt(cp_timers(cp, CP_SEC(1)), UINT64_MAX);
	cp_free(cp);
	cp_free(NULL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: options, other types, limits, views");
	TCase *tc = tcase_create("misc");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_9_opx_invalidate_on_forwarded_copies);
	tcase_add_test(tc, test_9_opx_reserved_and_ignore);
	tcase_add_test(tc, test_9_opx_discard_counted);
	tcase_add_test(tc, test_send_failed_counted_on_its_interface);
	tcase_add_test(tc, test_multicast_nak_accepted_unchanged);
	tcase_add_test(tc, test_14_1_poll_never_forwarded);
	tcase_add_test(tc, test_14_polr);
	tcase_add_test(tc, test_timer_cascade_bounded_per_run);
	tcase_add_test(tc, test_other_types_pass);
	tcase_add_test(tc, test_repair_limit_bounds_memory);
	tcase_add_test(tc, test_memory_returned_after_storm);
	tcase_add_test(tc, test_zero_intervals_at_time_zero);
	tcase_add_test(tc, test_repair_state_size);
	tcase_add_test(tc, test_clear_counters);
	tcase_add_test(tc, test_clear_repair_states_by_group);
	tcase_add_test(tc, test_interface_table);
	tcase_add_test(tc, test_interface_limits);
	tcase_add_test(tc, test_interface_removal);
	tcase_add_test(tc, test_views_in_stable_order);
	tcase_add_test(tc, test_session_view_order);
	tcase_add_test(tc, test_repair_view_order);
	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_log_kinds);
	tcase_add_test(tc, test_ncf_advertises_configured_nak_bo_ivl);
	tcase_add_test(tc, test_no_emit_callback);
	suite_add_tcase(s, tc);
	return check_run(s);
}
