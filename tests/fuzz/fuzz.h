/* What every libFuzzer target shares: its two entry points and CHECK, an invariant that stops
 * the run with the line that broke it (a trap, so libFuzzer keeps the input). */
#ifndef PGM_FUZZ_H
#define PGM_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "invariant failed at line %d: %s\n", __LINE__, #cond);     \
			__builtin_trap();                                                          \
		}                                                                                  \
	} while (0)

/* For a target's own invariant checks: they are the oracle, not code under test, so libFuzzer
 * neither pays for their comparisons (trace-cmp) nor counts their loops as coverage. The
 * core's checks (control/check.c) are left out by tests/fuzz/coverage-ignore.txt. */
#define FUZZ_ORACLE __attribute__((no_sanitize("coverage")))

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
