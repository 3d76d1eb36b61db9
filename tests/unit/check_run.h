/*
 * The end of every unit-test runner: runs the suite with Check's normal output and turns the
 * result into the exit status (0 only when every test passed).
 */
#ifndef PGMROUTER_TESTS_CHECK_RUN_H
#define PGMROUTER_TESTS_CHECK_RUN_H

#include <check.h>
#include <stdlib.h>

static inline int check_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

#endif /* PGMROUTER_TESTS_CHECK_RUN_H */
