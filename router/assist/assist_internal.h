/*
 * The router assist object's inside, shared by assist.c (life cycle, settings, interfaces),
 * packet.c (the packet path and replication) and output.c (the core's actions sent).
 */
#ifndef PGMROUTER_ASSIST_INTERNAL_H
#define PGMROUTER_ASSIST_INTERNAL_H

#include <pthread.h>

#include "router/assist/assist.h"

#define ASSIST_MAX_DATAGRAM 65535u

struct assist {
	struct assist_env env;
	/* Held by a worker's thread while it handles packets or timers, and by the main thread
	   while it changes or reads the object (recursive: a view's callback may view again). */
	pthread_mutex_t lock;
	/* The workers' objects: this one's configuration and interfaces go to them, and the
	   views add them up (assist_set_shards). */
	struct assist *shards[RULES_WORKERS_MAX];
	unsigned nshards;
	/* The shard whose session a view's callback is given (view.c): what it asks next of that
	   session goes to the same core, under the lock already held, never another's. */
	struct assist *viewing;
	struct cp *cp;
	struct assist_conf conf; /* what runs; ifs sorted by name (strcmp) */
	struct pgm_udp_ports udp_ports;
	struct assist_stats stats;
	unsigned lines;	      /* debug categories wanted, 1 << enum log_category */
	unsigned cp_log_mask; /* and the core's kinds of lines that follows from it */
	uint8_t rwbuf[ASSIST_MAX_DATAGRAM]; /* a rewritten datagram */
	uint8_t tpdu[ASSIST_MAX_DATAGRAM];  /* an action's TPDU */
	uint8_t txbuf[ASSIST_MAX_DATAGRAM]; /* a datagram built or copied to be sent */
	/* A NAK upstream left at once since the environment last sent what it queued (output.c,
	   leaves_first): the rest of that batch's NAKs upstream are queued. */
	bool nak_went_first;
};

/* output.c: the core's sink */
void assist_on_action(void *ctx, const struct cp_action *a);

/* Whether debug lines of a category go anywhere, and one line there. */
static inline bool assist_wants(const struct assist *a, enum log_category cat)
{
	return (a->lines & 1u << cat) != 0;
}

void assist_line(struct assist *a, enum log_category cat, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif /* PGMROUTER_ASSIST_INTERNAL_H */
