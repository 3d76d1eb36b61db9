/*
 * Output filters (`| begin|include|exclude REGEX`), applied where the output is read: in the
 * client (as FRR's vtysh does) and the tests' in-process driver, never in the daemon, where a
 * pathological expression (`((a{1,100}){1,100}){1,100}` takes seconds and a gigabyte to
 * compile) would hold the packet path. The engine (cli/command.h) parses the filter and hands
 * its kind and pattern to the transport.
 *
 * Output goes in as it arrives, in pieces of any size; whole lines come out through `emit`. A
 * line longer than OUT_FILTER_LINE_MAX is matched in pieces.
 */
#ifndef PGMROUTER_CLI_FILTER_H
#define PGMROUTER_CLI_FILTER_H

#include <stddef.h>

#include "cli/command.h"

#define OUT_FILTER_LINE_MAX 65536

struct out_filter;
typedef void (*out_filter_emit_fn)(void *ctx, const char *data, size_t len);

/* Compiles the pattern (POSIX extended). NULL with the reason in err (bad pattern, memory). */
struct out_filter *out_filter_new(
	enum cmd_filter_kind kind, const char *pattern, char *err, size_t errlen);
void out_filter_write(struct out_filter *f, const char *data, size_t len, out_filter_emit_fn emit,
	void *ctx);
/* The end of the output: a last line without its newline is matched too. */
void out_filter_end(struct out_filter *f, out_filter_emit_fn emit, void *ctx);
void out_filter_free(struct out_filter *f);

#endif /* PGMROUTER_CLI_FILTER_H */
