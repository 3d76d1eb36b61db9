/*
 * The configuration: the startup config is CLI lines run through the command engine in config
 * mode; `show running-config` is generated from live state by writer functions that modules
 * register next to their config commands (FRR style), so load -> show -> load is a fixed point.
 *
 * File syntax (as IOS writes it): one command per line; lines whose first non-blank character
 * is '!' or '#' are comments; an indented line belongs to the sub-mode opened above it
 * (`interface eth0` then ` ip pgm router`); an unindented line returns to config mode first.
 */
#ifndef PGMROUTER_CLI_CONFIG_H
#define PGMROUTER_CLI_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/command.h"

#define CFG_DEFAULT_PATH "/etc/pgmrouter/pgmrouterd.conf"

/* A growing text buffer for writers. */
struct cfg_buf {
	char *data;
	size_t len, cap;
	bool failed; /* out of memory: the text is incomplete */
};
void cfg_printf(struct cfg_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cfg_buf_free(struct cfg_buf *b);

/* Writers, called in ascending order. Global writers print whole lines; a '!' separator follows
   every writer that printed something. Interface writers print the lines of one interface
   block, each starting with one blank. */
#define CFG_ORDER_HOSTNAME   0
#define CFG_ORDER_GLOBAL     100
#define CFG_ORDER_INTERFACES 500 /* the interface blocks are written here */
#define CFG_ORDER_LATE	     900
typedef void (*cfg_writer_fn)(struct cfg_buf *b);
typedef void (*cfg_if_writer_fn)(struct cfg_buf *b, const char *ifname);
void cfg_register_writer(int order, cfg_writer_fn fn);
void cfg_register_interface_writer(int order, cfg_if_writer_fn fn);

/* The running configuration, without the `show running-config` banner. */
void cfg_running(struct cfg_buf *b);

/* Interfaces named in the configuration (`interface IFNAME`; they need not exist). */
bool cfg_interface_exists(const char *ifname);
int cfg_interface_add(const char *ifname);  /* 0, or -1 out of memory; marks it current */
void cfg_interface_del(const char *ifname); /* runs the delete hooks first */
typedef void (*cfg_if_hook_fn)(const char *ifname);
void cfg_register_interface_delete_hook(cfg_if_hook_fn fn);
typedef void (*cfg_if_iter_fn)(void *ctx, const char *ifname);
void cfg_foreach_interface(cfg_if_iter_fn fn, void *ctx);

/* Reload (SIGHUP): `begin` hooks run before the file is read, `end` hooks after; a module marks
   its settings stale in begin and resets those the file did not set again in end, so a reload
   changes only what changed. */
void cfg_register_reload_hooks(void (*begin)(void), void (*end)(void));

/* Errors are reported one by one as "FILE:LINE: message". */
typedef void (*cfg_report_fn)(void *ctx, const char *message);

/* Runs every line of `path`; returns the number of bad lines, or -1 when the file cannot be
   read (errno set; nothing reported). */
int cfg_load_file(const char *path, cfg_report_fn report, void *ctx);
/* The same wrapped in the reload hooks. */
int cfg_reload_file(const char *path, cfg_report_fn report, void *ctx);

/* Writes `data` to `path` atomically: a temporary file in the same directory, fsync, rename,
   fsync of the directory. Returns 0, or -1 with errno set. */
int cfg_write_file(const char *path, const char *data, size_t len);

/* The startup configuration file (write memory, show startup-config). */
const char *cfg_startup_path(void);
void cfg_set_startup_path(const char *path);

/* Frees the registries (tests, clean shutdown). */
void cfg_free(void);

#endif /* PGMROUTER_CLI_CONFIG_H */
