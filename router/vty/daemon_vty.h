/*
 * The daemon's own commands (router/vty/daemon_vty.c): show version, debug and undebug, show
 * debugging.
 */
#ifndef PGMROUTER_DAEMON_VTY_H
#define PGMROUTER_DAEMON_VTY_H

#include <stdint.h>

/* `started`: the monotonic time (µs) the daemon started, for `show version`; 0: unknown. */
void daemon_vty_init(uint64_t started);

#endif /* PGMROUTER_DAEMON_VTY_H */
