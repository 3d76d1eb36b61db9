/*
 * The per-suite state of the control-plane suites that work on one core: the environment `env`,
 * the start time `t0` their setup records, ACTIONS() for the captured actions as text, and Check's
 * teardown. For inclusion by a runner (test_cp_*.c) only: everything here is static, so each
 * runner has its own.
 */
#ifndef CP_TEST_FIXTURE_H
#define CP_TEST_FIXTURE_H

#include "tests/unit/cp_test_util.h"

static struct cp_test_env env;
static cp_time_t t0;
static char buf[4096];

#define ACTIONS() cp_test_actions(&env, buf, sizeof(buf))

static void teardown(void)
{
	cp_test_env_free(&env);
}

#endif /* CP_TEST_FIXTURE_H */
