/*
 * Settings as data. A module declares each of its configuration keywords once, as a row of a
 * table: keyword, kind, scope, range, default, help, unit, and where the value lives in the
 * module's plain value structs (one global, one per interface). From the table come:
 *
 *  - the configuration commands, their `no` forms and their `default` forms (IOS: back to the
 *    default, on an interface to the global value, which for a flag `no` cannot say), with
 *    arguments bound by their $name (FRR's DEFPY), one generic handler that edits the candidate
 *    configuration (cli/config.h);
 *  - the running-configuration lines;
 *  - the defaults and the values for shows (settings_foreach, settings_text);
 *  - the effective per-interface values: a row in both scopes is configured globally as the
 *    default of every interface and per interface over it.
 *
 * So a new setting is a row plus the code that uses its value.
 *
 * Kinds (the spec is "PREFIX KEYWORD ..."):
 *   SETTING_NUMBER  KEYWORD <min-max>: a uint32_t stored times `scale`; `no` gives the default
 *   SETTING_CHOICE  KEYWORD (a|b|c): a uint32_t, the index of the word in `choices`
 *   SETTING_FLAG    [no] KEYWORD [ARGS]: a bool; ARGS (global rows only) is optional syntax
 *                   with numbers named $name, each stored as `args` says: the keyword alone
 *                   gives them their defaults, and so does `no`
 *
 * Running configuration: a global row is written when its value differs from the default; a
 * row interfaces inherit is written where it was configured (globally, it is the interfaces'
 * default, so configuring the built-in value still says something); an interface row where it
 * was configured. A flag whose default is on is written as `no PREFIX KEYWORD` when off.
 */
#ifndef PGMROUTER_CLI_SETTINGS_H
#define PGMROUTER_CLI_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cli/config.h"

#define SETTINGS_MAX_ROWS 64 /* configured-here bits per value struct */
#define SETTINGS_MAX_ARGS 2
#define SETTING_NOWHERE	  SIZE_MAX /* offset for a scope the row does not have */

enum setting_kind {
	SETTING_NUMBER,
	SETTING_CHOICE,
	SETTING_FLAG,
};

#define SETTING_TEXT_LEN 96

/* A number among a flag's arguments, or a text (a LINE in `args`, `canon` set). */
struct setting_arg {
	const char *name; /* its $name in the row's `args` syntax */
	size_t offset;	  /* uint32_t in the global value struct; a text: char[SETTING_TEXT_LEN] */
	uint32_t dflt;	  /* as typed */
	uint32_t scale;	  /* stored = typed * scale; 0 means 1 */
	/* A text: what was typed in canonical form into out (0), or -1 with one sentence in
	   err; dflt_text is the default in that form. */
	int (*canon)(const char *typed, char *out, size_t len, char *err, size_t errlen);
	const char *dflt_text;
};
/* An argument's default stored into a value struct; whether two value structs hold the same. */
void setting_arg_default(const struct setting_arg *arg, void *values);
bool setting_arg_equal(const struct setting_arg *arg, const void *a, const void *b);

struct cfg;

struct setting {
	const char
		*keyword; /* "" for the module's prefix alone (`ip pgm router` on an interface) */
	enum setting_kind kind;
	const char *help; /* the keyword's help line, newline-terminated ("" when no keyword) */
	const char *value_help; /* NUMBER: the value's line; CHOICE: one per choice; FLAG: one per
				   word of `args` */
	const char *const *choices; /* CHOICE: the words, NULL-terminated */
	const char *args;	    /* FLAG: optional argument syntax, NULL for none */
	struct setting_arg arg[SETTINGS_MAX_ARGS];
	uint32_t min, max; /* NUMBER: the range as typed */
	uint32_t dflt;	   /* as typed: the number, the choice's index, or 0/1 */
	uint32_t scale;	   /* NUMBER: stored = typed * scale; 0 means 1 */
	const char *unit;  /* for shows: "ms", "per second"; NULL: none */
	const char *label; /* for shows: "NAK repeat interval" */
	/* Where the value lives: a uint32_t (bool for a flag) in the global value struct and in
	   the interface value struct; SETTING_NOWHERE for a scope the row does not have. */
	size_t global_offset, if_offset;
	unsigned flags; /* the module's own marks (which part of the system a change concerns) */
	/* Optional: refuses a value (typed, or the default for `no`) in the candidate `c`, for the
	   interface `ifname` (NULL: global), with one sentence in err. */
	int (*check)(
		const struct cfg *c, const char *ifname, uint32_t value, char *err, size_t errlen);
};

struct cfg_module {
	const char *name;	 /* for messages */
	const char *prefix;	 /* the words before the keyword: "ip pgm router" */
	const char *prefix_help; /* one help line per prefix word */
	const struct setting *rows;
	size_t nrows;
	size_t global_size, if_size;
	/* Fields no row sets, before the rows' defaults (NULL: zero). */
	void (*init_global)(void *global);
	/* Position of the module's lines in the running configuration, globally and in each
	   interface block (lowest first; the interface's description comes first). */
	int write_order, if_write_order;
	/* Makes the running system match `next` (`prev` is what runs now); 0, or -1 with one
	   sentence in err having changed nothing. NULL: nothing runs on these settings. */
	int (*apply)(void *ctx, const struct cfg *prev, const struct cfg *next, char *err,
		size_t errlen);
	void *apply_ctx;
	unsigned index; /* set by cfg_module_register */
};

/* Registers the module with the database and installs its commands (the rows are checked:
   a malformed row stops the program). */
void settings_install(struct cfg_module *m);
/* Frees what settings_install made (with cmd_engine_free). */
void settings_free(void);

/* The stored value of a row in a value struct (a flag reads as 0 or 1), and as typed. */
uint32_t setting_get(const struct setting *row, const void *values, bool global);
uint32_t setting_typed(const struct setting *row, uint32_t stored);
/* Whether a row exists in a scope. */
static inline bool setting_in_global(const struct setting *row)
{
	return row->global_offset != SETTING_NOWHERE;
}
static inline bool setting_in_if(const struct setting *row)
{
	return row->if_offset != SETTING_NOWHERE;
}

/* The value as the configuration writes it: "2000", "nftables", "on"; a flag's arguments
   after it ("on ports 3055 3056"). */
const char *setting_text(
	const struct setting *row, const void *global_values, char *buf, size_t len);
/* The default the same way. */
const char *setting_default_text(const struct setting *row, char *buf, size_t len);
/* A stored value as typed, without a flag's arguments: "2000", "nftables", "on". */
const char *setting_value_text(const struct setting *row, uint32_t stored, char *buf, size_t len);

/* An interface's effective values: its own where configured, the global ones for the rest of
   the rows interfaces inherit. `out` is an interface value struct; ifname need not be in the
   configuration (then every inherited row comes from the global values). */
void settings_effective(
	const struct cfg *c, const struct cfg_module *m, const char *ifname, void *out);
/* Whether two configurations differ in any row carrying all of `flags`, globally. */
bool settings_global_differ(
	const struct cfg_module *m, const struct cfg *a, const struct cfg *b, unsigned flags);

/* The module's running-configuration lines: the global ones, and an interface's. */
void settings_write_global(const struct cfg_module *m, const struct cfg *c, struct cfg_buf *b);
void settings_write_if(
	const struct cfg_module *m, const struct cfg *c, const char *ifname, struct cfg_buf *b);

#endif /* PGMROUTER_CLI_SETTINGS_H */
