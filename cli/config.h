/*
 * The configuration database: one value, `struct cfg`, holds a whole configuration (the
 * hostname, the interfaces named in it with their descriptions, and each module's settings);
 * the running configuration is one such value, and every change is a new one that replaces it
 * (BIRD's and OpenBSD's reload model):
 *
 *  - a configuration command edits a candidate (cfg_edit): for an interactive session a copy of
 *    the running configuration, committed when the command succeeds; while a file loads, the
 *    file's candidate, committed once at the end;
 *  - cfg_commit() asks every module to make the running system match the candidate (its apply
 *    hook sees the old and the new configuration and does only what differs) and then makes it
 *    the running configuration; a module that fails leaves everything as it was;
 *  - a reload (SIGHUP, `copy startup-config running-config`) loads the file into a fresh
 *    candidate, built from the defaults: a setting the file no longer has returns to its
 *    default, whatever module it belongs to;
 *  - `show running-config` renders the running value: the hostname, each module's global
 *    settings, then one block per interface. Load -> render -> load is a fixed point.
 *
 * Modules describe their settings as a table (cli/settings.h); the database stores each
 * module's global and per-interface value structs without knowing their fields.
 *
 * File syntax (as IOS writes it): one command per line; lines whose first non-blank character
 * is '!' or '#' are comments; an indented line belongs to the sub-mode opened above it
 * (`interface eth0` then ` ip pgm router`); an unindented line returns to config mode first.
 */
#ifndef PGMROUTER_CLI_CONFIG_H
#define PGMROUTER_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cli/command.h"

#define CFG_DEFAULT_PATH    "/etc/pgmrouter/pgmrouterd.conf"
#define CFG_DESCRIPTION_MAX 240 /* characters of an interface description */

/* A growing text buffer. */
struct cfg_buf {
	char *data;
	size_t len, cap;
	bool failed; /* out of memory: the text is incomplete */
};
void cfg_printf(struct cfg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cfg_buf_free(struct cfg_buf *b);

struct cfg;
struct cfg_module; /* cli/settings.h */

/* ---- configurations ---- */

/* A configuration with every registered module's defaults and no interface; NULL without
   memory. */
struct cfg *cfg_new(void);
struct cfg *cfg_dup(const struct cfg *c);
void cfg_destroy(struct cfg *c);
/* The running configuration (the defaults until the first commit). */
const struct cfg *cfg_running(void);

/* The hostname; NULL when not configured (the system's name is used). */
const char *cfg_hostname(const struct cfg *c);
/* Returns 0, or -1 with a message in err for a name IOS would not take. NULL: unset. */
int cfg_set_hostname(struct cfg *c, const char *name, char *err, size_t errlen);

/* Interfaces named in a configuration (they need not exist), sorted as people read them:
   eth2 before eth10. */
size_t cfg_if_count(const struct cfg *c);
const char *cfg_if_name(const struct cfg *c, size_t i);
bool cfg_if_exists(const struct cfg *c, const char *ifname);
int cfg_if_add(struct cfg *c, const char *ifname); /* 0, or -1 out of memory */
void cfg_if_del(struct cfg *c, const char *ifname);
const char *cfg_if_description(const struct cfg *c, const char *ifname);	 /* NULL: none */
int cfg_if_set_description(struct cfg *c, const char *ifname, const char *text); /* NULL: none */

/* A module's value structs in a configuration: its global one, and an interface's (NULL when
   the interface is not in the configuration). Read-only; changes go through the settings. */
const void *cfg_module_global(const struct cfg *c, const struct cfg_module *m);
const void *cfg_module_if(const struct cfg *c, const struct cfg_module *m, const char *ifname);
/* The bits (one per row of the module's table) of the settings configured there. */
uint64_t cfg_module_global_set(const struct cfg *c, const struct cfg_module *m);
uint64_t cfg_module_if_set(const struct cfg *c, const struct cfg_module *m, const char *ifname);

/* Whether a module's values are the same in two configurations (a quick answer when they
   share them). */
bool cfg_module_same(const struct cfg *a, const struct cfg *b, const struct cfg_module *m);

/* For cli/settings.c: the writable values and their bits; `create` adds the interface. */
void *cfg_module_values(
	struct cfg *c, const struct cfg_module *m, const char *ifname, bool create, uint64_t **set);

/* ---- modules ---- */

/* Registers a module (before the first configuration exists); every configuration then holds
   its values. */
void cfg_module_register(struct cfg_module *m);

/* ---- editing and committing ---- */

/* The configuration a command edits (see the top of this file); NULL without memory. */
struct cfg *cfg_edit(struct cmd_session *s);
/* Called by cmd_execute after a handler: commits or drops the session's interactive edit.
   Returns the command's final status (a failed commit prints its error). */
int cfg_edit_end(struct cmd_session *s, int status);

/* Makes `next` the running configuration; see the top of this file. Takes `next` over in
   every case. Returns 0, or -1 with one sentence in err. */
int cfg_commit(struct cfg *next, char *err, size_t errlen);

/* ---- files ---- */

/* Errors are reported one by one as "FILE:LINE: message". */
typedef void (*cfg_report_fn)(void *ctx, const char *message);

/* Runs every line of `path` against `into`; returns the number of bad lines, or -1 when the
   file cannot be read (errno set; nothing reported). */
int cfg_load_file(const char *path, struct cfg *into, cfg_report_fn report, void *ctx);
/* The same into a fresh configuration that is then dropped (pgmrouterd -n): a pure check,
   `do` commands are parsed but not run. */
int cfg_check_file(const char *path, cfg_report_fn report, void *ctx);
/* Loads the file on top of the running configuration (merge) or into a fresh one (reload) and
   commits the result. Returns the bad lines (a failed commit counts one more, reported as
   "FILE: message", and leaves the running configuration as it was), or -1 when the file cannot
   be read (the running configuration unchanged). */
int cfg_merge_file(const char *path, cfg_report_fn report, void *ctx);
int cfg_reload_file(const char *path, cfg_report_fn report, void *ctx);

/* The configuration as CLI lines, without the `show running-config` banner. */
void cfg_write(const struct cfg *c, struct cfg_buf *b);

/* Writes `data` to `path` atomically: a temporary file in the same directory (mode 0640),
   fsync, rename, fsync of the directory. Returns 0, or -1 with errno set. */
int cfg_write_file(const char *path, const char *data, size_t len);

/* Opens a file the daemon reads or writes (configuration, pid file) only when it is a regular
   file: opened non-blocking, so that a FIFO cannot hold the daemon, then checked (EINVAL
   otherwise); the fd is blocking again on return. `flags` may add O_NOFOLLOW (ELOOP for a
   symlink). -1 with errno. */
int cfg_open_regular(const char *path, int flags, mode_t mode);

/* The startup configuration file (write memory, show startup-config). */
const char *cfg_startup_path(void);
void cfg_set_startup_path(const char *path);

/* Frees the running configuration and the registry (tests, clean shutdown). */
void cfg_free(void);

#endif /* PGMROUTER_CLI_CONFIG_H */
