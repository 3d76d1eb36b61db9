/*
 * The live data plane of pgmrouterd, router assist's environment on the event loop:
 *
 *   NFQUEUE in (dataplane/nfq.h)        every packet the interception rules queue, through
 *                                       assist_packet(), its verdict back in batches
 *   rules (dataplane/rules.h)           installed for the interfaces with router assist, again
 *                                       when that set changes, removed at the end
 *   output (dataplane/rawsock.h)        raw and packet sockets, sends batched per receive round
 *                                       and timer run
 *   interfaces (dataplane/rtnl.h)       mirrored from rtnetlink into router assist
 *   routes (dataplane/mfc.h)            the kernel's multicast routes, for replication
 *   timers                              one loop timer on a 1 ms grid for the core's timers, and
 *                                       one bounding held drop verdicts
 *   capture (dataplane/pcapio.h)        `debug ip pgm router capture`
 *
 * A change of queue, backend or UDP ports restarts queue and rules; a change of the assisted
 * interfaces updates the rules; nothing else touches the kernel.
 */
#ifndef PGMROUTER_ASSIST_LIVE_H
#define PGMROUTER_ASSIST_LIVE_H

#include <stddef.h>

#include "router/assist/assist.h"

struct ev_loop;
struct live;

/* The environment and its router assist object, on `loop`, not started. NULL without memory. */
struct live *live_new(struct ev_loop *loop);
struct assist *live_assist(struct live *l);
/* Opens sockets, mirrors, queue and rules for what assist_conf() says. Must run as root.
   Returns 0, or -1 with one sentence in err (everything closed again). */
int live_start(struct live *l, char *err, size_t errlen);
/* Starts the workers' threads (with more than one worker), which live_start opened but holds:
   after the privileges are dropped, so that the threads have what the daemon kept. Later
   changes start their threads at once. 0, or -1 with one sentence in err. */
int live_run_workers(struct live *l, char *err, size_t errlen);
/* Removes the rules, closes everything, frees the object (clean exit). */
void live_free(struct live *l);

#endif /* PGMROUTER_ASSIST_LIVE_H */
