/*
 * The route netlink socket behind a mirror of a kernel table (libmnl): rtnl.c mirrors
 * interfaces and addresses with it, mfc.c the multicast forwarding cache.
 *
 * The table and its messages stay with the mirror; this module does the socket. At
 * nlmirror_open() it opens a NETLINK_ROUTE socket, subscribes to the mirror's groups and only
 * then calls the mirror's full_dump (subscribing first means no change between the dump and the
 * first notification is missed). full_dump makes its requests with nlmirror_dump(), which sends
 * one and reads its replies to the end, within a few seconds. Afterwards the caller polls
 * nlmirror_fd() and calls nlmirror_process(), which reads what is pending without blocking;
 * when the kernel reports lost notifications (ENOBUFS) it calls full_dump again once everything
 * readable is read, so the mirror never silently drifts.
 *
 * Every message read, from a dump or a notification, and every message given to
 * nlmirror_input() goes to the mirror's handler for its type. This module handles the control
 * messages itself, NLMSG_DONE and NLMSG_ERROR (which end a dump of their sequence; an error
 * reply is counted), and counts messages of any other type as ignored.
 */
#ifndef PGMROUTER_NLMIRROR_H
#define PGMROUTER_NLMIRROR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlattr;
struct nlmsghdr;

struct nlmirror_handler {
	uint16_t type; /* RTM_NEWLINK... */
	void (*fn)(void *ctx, const struct nlmsghdr *nlh);
};

struct nlmirror_ops {
	/* For error messages, as in "<name>: cannot subscribe to <changes>: <reason>". */
	const char *name;	/* "rtnl" */
	const char *changes;	/* what the groups announce: "link and address changes" */
	const char *table;	/* what full_dump reads: "interfaces and addresses" */
	const unsigned *groups; /* RTNLGRP_* */
	size_t ngroups;
	const struct nlmirror_handler *handlers;
	size_t nhandlers;
	/* Reads the whole table again (nlmirror_dump() for each request) and reconciles the
	 * mirror with it. Returns 0, or -1 with errno set. */
	int (*full_dump)(void *ctx);
};

struct nlmirror_stats {
	uint64_t messages; /* netlink messages handled, NLMSG_DONE and NLMSG_ERROR included */
	uint64_t resyncs;  /* full dumps after lost notifications (ENOBUFS), during a dump too */
	uint64_t ignored;  /* messages of a type without a handler */
	uint64_t errors;   /* netlink error replies, socket failures, failed resynchronisations */
};

struct nlmirror;
/* A mirror's socket, not yet open; ops must outlive it, ctx is passed to its callbacks. NULL on
 * no memory. */
struct nlmirror *nlmirror_new(const struct nlmirror_ops *ops, void *ctx);
void nlmirror_free(struct nlmirror *nm);
/* Opens, subscribes and calls full_dump. Returns 0, or -1 with one sentence in err (the socket
 * is closed again then). */
int nlmirror_open(struct nlmirror *nm, char *err, size_t errlen);
int nlmirror_fd(const struct nlmirror *nm); /* -1 when not open */
/* One dump request of type with its family header (struct rtgenmsg, struct rtmsg...), its
 * replies handled until its NLMSG_DONE or NLMSG_ERROR, blocking for a few seconds at most.
 * *interrupted (may be NULL) tells whether a reply carried NLM_F_DUMP_INTR: the kernel's table
 * changed during the dump, which may then be inconsistent. Returns 0, or -1 with errno set
 * (ETIMEDOUT when the end did not come in time). */
int nlmirror_dump(struct nlmirror *nm, uint16_t type, const void *family_header, size_t len,
	bool *interrupted);
/* Handles every pending message without blocking, then dumps again if notifications were lost.
 * Returns the number of messages read (the resynchronisation's not included), or -1 on a
 * socket failure or a failed resynchronisation (errno set). */
int nlmirror_process(struct nlmirror *nm);
/* Handles a buffer of netlink messages as if read from the socket (no socket needed). Returns
 * the number of messages handled. */
int nlmirror_input(struct nlmirror *nm, const void *buf, size_t len);
void nlmirror_get_stats(const struct nlmirror *nm, struct nlmirror_stats *st);

/* The attributes after a message's family header of len bytes, by type: tb[type] for every type
 * up to max (tb has max + 1 entries, zeroed by the caller; a later attribute of a type wins);
 * types above max are skipped. Returns false when the attributes do not parse. */
bool nlmirror_attrs(const struct nlmsghdr *nlh, size_t len, const struct nlattr **tb, unsigned max);

#endif /* PGMROUTER_NLMIRROR_H */
