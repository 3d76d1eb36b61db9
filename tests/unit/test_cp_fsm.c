/*
 * RFC 3208 7.2-7.8, 9.5.3.2 and 11.6 as the repair state machine's table (control/fsm.c): each
 * event has one row in every phase where it can happen and none elsewhere, each row's line names
 * the phases it goes from and to, and an event no row expects is warned about and changes
 * nothing.
 */
#include <check.h>
#include <stdbool.h>
#include <string.h>

#include "control/cp_internal.h"
#include "tests/unit/cp_test_fixture.h"
#include "tests/unit/check_run.h"

#define P  CP_FSM_IN(CP_FSM_PENDING)
#define O  CP_FSM_IN(CP_FSM_OUTSTANDING)
#define F  CP_FSM_IN(CP_FSM_FORWARDING)
#define NN CP_FSM_IN(CP_FSM_NNAK)
#define R  CP_FSM_IN(CP_FSM_REPAIRED)
#define X  CP_FSM_IN(CP_FSM_NONE)

/* Where each event can happen. In the other phases it cannot, for the reason given, and its
 * callers never name it there. */
static const struct {
	enum cp_repair_event event;
	unsigned phases;
} expected[] = {
	/* 7.4: PENDING state eliminates every NAK but the off-tree DLR's */
	{CP_EV_NAK, X | O | NN | F | R},
	/* FORWARDING and NNAK state never eliminate (7.8, 9.5.3.2); no state eliminates nothing */
	{CP_EV_NAK_DUPLICATE, P | O},
	/* forwarding state, and repaired state kept for the crossing window, eliminate only
	 * NAKs that crossed the repair on an interface that had its copy */
	{CP_EV_NAK_CROSSED, F | R},
	/* NNAK state was never redirected; without state the DLR's NAK is a NAK like others */
	{CP_EV_NAK_FROM_DLR, P | O | F | R},
	{CP_EV_NNAK, X | P | O | F | NN | R},
	{CP_EV_NCF, X | P | O | F | NN | R},
	/* NNAK state lists no interface, so its RDATA is unrequested; RDATA without state and
	 * the copies after the first are no events of a state (cp_rdata decides them) */
	{CP_EV_RDATA, P | O},
	{CP_EV_RDATA_UNREQUESTED, P | O | NN},
	{CP_EV_RDATA_REPAIRED, F},
	{CP_EV_RDATA_REPAIRED_HOLD, F},
	/* each timer runs in the phases whose deadline it is */
	{CP_EV_NAK_RPT_RTE, P},
	{CP_EV_NAK_RPT_IVL, P},
	{CP_EV_NAK_ELIM_IVL, O | NN},
	{CP_EV_NAK_RDATA_IVL, O},
	{CP_EV_LINGER, F},
	{CP_EV_CROSSING_OVER, R},
	/* the off-tree DLR: only states redirected to it (never NNAK state) hear from it */
	{CP_EV_DLR_NCF, P | O | F | R},
	{CP_EV_DLR_RDATA, P | O | NN | F | R},
	{CP_EV_DLR_TIMEOUT, P},
	/* parity state is only ever PENDING or OUTSTANDING; only its NAK and NCF make it */
	{CP_EV_PARITY_NAK, X | P | O},
	{CP_EV_PARITY_NAK_DUPLICATE, P | O},
	{CP_EV_PARITY_NAK_FROM_DLR, P | O},
	{CP_EV_PARITY_NNAK, P | O},
	{CP_EV_PARITY_NCF, X | P | O},
	{CP_EV_PARITY_NCF_SHORT, P | O},
	{CP_EV_PARITY_RDATA_REPAIRED, P | O},
	{CP_EV_DLR_PARITY_REPAIRED, P | O},
};

static void setup(void)
{
	t0 = cp_test_start(&env, NULL, 0);
}

static unsigned rows_for(unsigned event, unsigned phase)
{
	unsigned n = 0;

	for (unsigned i = 0; i < cp_fsm_rows; i++)
		n += cp_fsm_table[i].event == event &&
		     (cp_fsm_table[i].phases & CP_FSM_IN(phase)) != 0;
	return n;
}

START_TEST(test_7_every_event_has_one_row_where_it_can_happen)
{
	ck_assert_uint_eq(sizeof(expected) / sizeof(expected[0]), CP_EV_COUNT);
	for (unsigned i = 0; i < CP_EV_COUNT; i++) {
		unsigned ev = expected[i].event;

		for (unsigned j = 0; j < i; j++)
			ck_assert_msg(expected[j].event != ev, "%s twice", cp_fsm_event_name(ev));
		for (unsigned phase = 0; phase < CP_FSM_PHASES; phase++) {
			unsigned want = (expected[i].phases & CP_FSM_IN(phase)) != 0;

			ck_assert_msg(rows_for(ev, phase) == want, "%s in %s: %u rows, want %u",
				cp_fsm_event_name(ev), cp_fsm_phase_name(phase),
				rows_for(ev, phase), want);
		}
	}
}
END_TEST

START_TEST(test_7_state_is_made_only_by_rows_in_none)
{
	for (unsigned i = 0; i < cp_fsm_rows; i++) {
		const struct cp_fsm_row *row = &cp_fsm_table[i];

		ck_assert_uint_ne(row->phases, 0);
		ck_assert_uint_le(row->next, CP_FSM_SAME);
		if ((row->phases & X) == 0)
			continue;
		/* nothing to act on but what the action makes: it exists after the row */
		ck_assert_uint_eq(row->phases, X);
		ck_assert_ptr_nonnull(row->action);
		ck_assert_uint_lt(row->next, CP_FSM_NONE);
	}
}
END_TEST

/* How a line names the phase: NNAK state is OUTSTANDING state, deletion goes to NONE. */
static bool names(unsigned phase, const char *name, bool to)
{
	if (phase == CP_FSM_NNAK)
		return strcmp(name, "OUTSTANDING") == 0 || strcmp(name, "OUTSTANDING (NNAK)") == 0;
	if (phase == CP_FSM_NONE)
		return strcmp(name, to ? "deleted" : "NONE") == 0;
	return strcmp(name, cp_fsm_phase_name(phase)) == 0;
}

START_TEST(test_7_each_line_names_the_phases_of_its_row)
{
	for (unsigned i = 0; i < cp_fsm_rows; i++) {
		const struct cp_fsm_row *row = &cp_fsm_table[i];
		const char *text = row->text, *arrow, *in, *p;
		char from[32], to[32];
		unsigned args = 0;
		size_t len;

		if (text == NULL)
			continue;
		/* the lines print what their events' callers pass: strings, three at most */
		for (p = strchr(text, '%'); p != NULL; p = strchr(p + 2, '%')) {
			ck_assert_msg(p[1] == 's', "row %u: %s", i, text);
			args++;
		}
		ck_assert_uint_le(args, 3);
		arrow = strstr(text, " -> ");
		if (arrow == NULL)
			continue;
		len = strcspn(arrow + 4, " ");
		ck_assert_uint_lt(len, sizeof(to));
		memcpy(to, arrow + 4, len);
		to[len] = '\0';
		for (unsigned phase = 0; phase < CP_FSM_PHASES; phase++) {
			if ((row->phases & CP_FSM_IN(phase)) == 0)
				continue;
			ck_assert_msg(names(row->next == CP_FSM_SAME ? phase : row->next, to, true),
				"row %u: %s", i, text);
			in = strstr(text, " in ");
			if (in == NULL || in > arrow)
				continue;
			len = (size_t)(arrow - in - 4);
			ck_assert_uint_lt(len, sizeof(from));
			memcpy(from, in + 4, len);
			from[len] = '\0';
			ck_assert_msg(names(phase, from, false), "row %u: %s", i, text);
		}
	}
}
END_TEST

/* An event for the test session's state of sqn (none: NONE), at t, as if from d2. */
static const struct cp_fsm_row *event(uint32_t sqn, cp_time_t t, enum cp_repair_event ev)
{
	struct cp_test_pkt p;
	struct pgm_tsi tsi;
	struct cp_fsm x;
	uint32_t sid;

	cp_test_nak(&p, PGM_NAK, sqn, NULL, 0);
	pgm_packet_tsi(&p.pkt, &tsi);
	sid = cp_session_find(env.cp, &tsi, PGM_AFI_IP);
	ck_assert_uint_ne(sid, CP_NIL);
	x = (struct cp_fsm){.s = cp_session_at(env.cp, sid),
		.sid = sid,
		.sqn = sqn,
		.now = t,
		.in_if = cp_iface_find(env.cp, CP_TEST_D2)};
	cp_fsm_state(env.cp, &x, cp_repair_find(env.cp, sid, sqn));
	return cp_repair_fsm(env.cp, &x, ev);
}

static uint64_t unexpected_events(void)
{
	struct cp_stats st;

	cp_get_stats(env.cp, &st);
	return st.unexpected_events;
}

START_TEST(test_7_4_nak_in_pending_is_a_duplicate_any_other_is_unexpected)
{
	struct cp_repair_view before, after;

	ck_assert_int_eq(cp_test_nak_at(&env, t0, PGM_NAK, 30, NULL, 0, CP_TEST_D1), CP_DROP);
	ck_assert(cp_test_repair(&env, 30, &before));
	ck_assert_int_eq(before.phase, CP_PHASE_PENDING);
	cp_test_clear(&env);
	ck_assert_ptr_null(event(30, t0 + CP_MS(10), CP_EV_NAK));
	ck_assert_uint_eq(env.nlog, 1);
	ck_assert(cp_test_logged(&env, "sqn 30: NAK not expected in PENDING: ignored"));
	ck_assert_uint_eq(unexpected_events(), 1);
	ck_assert_str_eq(ACTIONS(), "");
	/* the state is as it was: no interface added, no timer restarted */
	ck_assert(cp_test_repair(&env, 30, &after));
	ck_assert_int_eq(after.phase, CP_PHASE_PENDING);
	ck_assert_uint_eq(after.if_mask, before.if_mask);
	ck_assert_uint_eq(after.rpt_next, before.rpt_next);
	ck_assert_uint_eq(after.rpt_end, before.rpt_end);
	ck_assert_uint_eq(after.rdata_end, before.rdata_end);
	ck_assert_uint_eq(after.elim_end, before.elim_end);
	ck_assert_uint_eq(cp_test_tsi_ev(&env, CP_C_NAK_UNIQUE), 1);
	/* the duplicate is an event of PENDING state */
	cp_test_clear(&env);
	ck_assert_int_eq(
		cp_test_nak_at(&env, t0 + CP_MS(20), PGM_NAK, 30, NULL, 0, CP_TEST_D2), CP_DROP);
	ck_assert(cp_test_logged(&env, "sqn 30: NAK on d2 in PENDING -> PENDING (eliminated)"));
	ck_assert_uint_eq(unexpected_events(), 1);
}
END_TEST

START_TEST(test_7_8_rdata_without_state_is_no_event)
{
	ck_assert_ptr_null(event(40, t0, CP_EV_RDATA));
	ck_assert(cp_test_logged(&env, "sqn 40: RDATA not expected in NONE: ignored"));
	ck_assert_uint_eq(cp_test_repair_count(&env), 0);
	/* a timer of another phase, as well: warned about in the events' category */
	ck_assert_int_eq(cp_test_nak_at(&env, t0, PGM_NAK, 41, NULL, 0, CP_TEST_D1), CP_DROP);
	cp_test_clear(&env);
	ck_assert_ptr_null(event(41, t0 + CP_MS(10), CP_EV_LINGER));
	ck_assert(cp_test_logged(&env, "sqn 41: linger timer not expected in PENDING: ignored"));
	ck_assert(cp_test_repair(&env, 41, NULL));
	ck_assert_uint_eq(unexpected_events(), 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("control: the repair state machine (7.2-7.8, 9.5.3.2, 11.6)");
	TCase *tc = tcase_create("fsm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_7_every_event_has_one_row_where_it_can_happen);
	tcase_add_test(tc, test_7_state_is_made_only_by_rows_in_none);
	tcase_add_test(tc, test_7_each_line_names_the_phases_of_its_row);
	tcase_add_test(tc, test_7_4_nak_in_pending_is_a_duplicate_any_other_is_unexpected);
	tcase_add_test(tc, test_7_8_rdata_without_state_is_no_event);
	suite_add_tcase(s, tc);
	return check_run(s);
}
