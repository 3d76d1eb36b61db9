/*
 * Output filters (see filter.h).
 */
#include "cli/filter.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct out_filter {
	enum cmd_filter_kind kind;
	regex_t re;
	bool begun;
	char *line;
	size_t len, cap;
};

/* glibc expands bounded repetitions when compiling: `((a{1,100}){1,100}){1,100}` is a million
   nodes (seconds and a gigabyte), and back-references make matching exponential. The client
   runs on the router too: such patterns are refused. An estimate of the compiled size: every
   atom counts 1, times the upper bound of each repetition around it. */
#define FILTER_PATTERN_MAX 512
#define FILTER_COST_MAX	   10000
#define FILTER_DEPTH_MAX   32

static unsigned long repeat_bound(const char **pp)
{
	const char *p = *pp;
	unsigned long lo = 0, hi;

	if (*p != '{')
		return 1;
	for (p++; *p >= '0' && *p <= '9'; p++)
		lo = lo < 100000 ? lo * 10 + (unsigned long)(*p - '0') : lo;
	hi = lo;
	if (*p == ',') {
		hi = 0;
		for (p++; *p >= '0' && *p <= '9'; p++)
			hi = hi < 100000 ? hi * 10 + (unsigned long)(*p - '0') : hi;
		if (hi == 0)
			hi = lo + 1; /* {m,}: m copies and a star */
	}
	if (*p != '}')
		return 1; /* not a bound: regcomp says what is wrong */
	*pp = p + 1;
	return hi > 0 ? hi : 1;
}

static const char *pattern_refused(const char *p)
{
	unsigned long cost[FILTER_DEPTH_MAX + 1] = {0};
	int depth = 0;

	if (strlen(p) > FILTER_PATTERN_MAX)
		return "longer than 512 characters";
	while (*p != '\0') {
		unsigned long atom = 1;

		if (*p == '(') {
			if (depth == FILTER_DEPTH_MAX)
				return "nested too deep";
			cost[++depth] = 0;
			p++;
			continue;
		}
		if (*p == ')' && depth > 0) {
			atom = cost[depth--];
			p++;
		} else if (*p == '\\' && p[1] >= '1' && p[1] <= '9') {
			return "back-references are not supported";
		} else if (*p == '[') {
			/* a bracket expression is one atom: `]` first is a member */
			p += p[1] == '^' ? 2 : 1;
			if (*p == ']')
				p++;
			while (*p != '\0' && *p != ']')
				p++;
			if (*p == ']')
				p++;
		} else {
			p += *p == '\\' && p[1] != '\0' ? 2 : 1;
		}
		atom *= repeat_bound(&p);
		cost[depth] += atom;
		if (cost[depth] > FILTER_COST_MAX)
			return "too many repetitions";
	}
	return NULL;
}

struct out_filter *out_filter_new(
	enum cmd_filter_kind kind, const char *pattern, char *err, size_t errlen)
{
	struct out_filter *f;
	const char *why = pattern_refused(pattern);
	int rc;

	if (why != NULL) {
		snprintf(err, errlen, "%% Regular expression refused: %s", why);
		return NULL;
	}
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		snprintf(err, errlen, "%% Out of memory");
		return NULL;
	}
	f->kind = kind;
	rc = regcomp(&f->re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char msg[128];

		regerror(rc, &f->re, msg, sizeof(msg));
		free(f);
		snprintf(err, errlen, "%% Invalid regular expression \"%s\": %s", pattern, msg);
		return NULL;
	}
	return f;
}

void out_filter_free(struct out_filter *f)
{
	if (f == NULL)
		return;
	regfree(&f->re);
	free(f->line);
	free(f);
}

/* line is NUL-terminated at len (without its newline) */
static void filter_line(struct out_filter *f, out_filter_emit_fn emit, void *ctx)
{
	bool show;

	switch (f->kind) {
	case CMD_FILTER_BEGIN:
		if (!f->begun && regexec(&f->re, f->line, 0, NULL, 0) == 0)
			f->begun = true;
		show = f->begun;
		break;
	case CMD_FILTER_INCLUDE:
		show = regexec(&f->re, f->line, 0, NULL, 0) == 0;
		break;
	default:
		show = regexec(&f->re, f->line, 0, NULL, 0) != 0;
		break;
	}
	if (show) {
		emit(ctx, f->line, f->len);
		emit(ctx, "\n", 1);
	}
	f->len = 0;
}

void out_filter_end(struct out_filter *f, out_filter_emit_fn emit, void *ctx)
{
	if (f->len > 0) {
		f->line[f->len] = '\0';
		filter_line(f, emit, ctx);
	}
}

void out_filter_write(
	struct out_filter *f, const char *data, size_t len, out_filter_emit_fn emit, void *ctx)
{
	while (len > 0) {
		const char *nl = memchr(data, '\n', len);
		size_t take = nl != NULL ? (size_t)(nl - data) : len;

		if (f->len + take + 1 > f->cap) {
			size_t cap = f->len + take + 1 > OUT_FILTER_LINE_MAX ? OUT_FILTER_LINE_MAX
									     : f->len + take + 1;
			char *p;

			cap = cap < 256 ? 256 : cap;
			if (cap > f->cap) {
				p = realloc(f->line, cap);
				if (p == NULL)
					return;
				f->line = p;
				f->cap = cap;
			}
		}
		if (f->len + take + 1 > f->cap) {
			/* An overlong line is filtered in pieces. */
			size_t room = f->cap - 1 - f->len;

			memcpy(f->line + f->len, data, room);
			f->len += room;
			out_filter_end(f, emit, ctx);
			data += room;
			len -= room;
			continue;
		}
		memcpy(f->line + f->len, data, take);
		f->len += take;
		data += take;
		len -= take;
		if (nl != NULL) {
			f->line[f->len] = '\0';
			filter_line(f, emit, ctx);
			data++;
			len--;
		}
	}
}
