/*
 * Environment stubs the router-assist unit tests share: no log lines wanted, none taken, and no
 * interface known to the system (struct assist_env's lines_wanted, line and if_lookup).
 */
#ifndef PGMROUTER_TESTS_ASSIST_TEST_ENV_H
#define PGMROUTER_TESTS_ASSIST_TEST_ENV_H

#include <stdbool.h>

#include "router/assist/assist_internal.h"

static inline unsigned no_lines(void *ctx)
{
	(void)ctx;
	return 0;
}

static inline void no_line(void *ctx, enum log_category cat, const char *text)
{
	(void)ctx;
	(void)cat;
	(void)text;
}

static inline int no_if(void *ctx, const char *name, bool *up, bool *running)
{
	(void)ctx;
	(void)name;
	*up = *running = false;
	return 0;
}

#endif
