/*
 * Interfaces and their addresses, from rtnetlink (libmnl).
 *
 * At rtnl_open() the module subscribes to link and IPv4/IPv6 address changes (RTMGRP_LINK,
 * RTMGRP_IPV4_IFADDR, RTMGRP_IPV6_IFADDR), then dumps links and addresses (subscribing first
 * means no change between the dump and the first event is missed). Afterwards the caller polls
 * rtnl_fd() and calls rtnl_process(), which applies what is readable without blocking and calls
 * back on every change. When the kernel reports lost notifications (ENOBUFS) the module dumps
 * again and reports the differences, so the table never silently drifts.
 *
 * The table maps name <-> ifindex, keeps up/running state, MTU and addresses. The primary IPv4
 * address of an interface (its first address without IFA_F_SECONDARY, in the kernel's order)
 * is the path NLA written into SPMs leaving it; a change of it is reported as a change of the
 * interface (RTNL_CHANGE_PRIMARY4). Renames are changes too (RTNL_CHANGE_NAME, with the old
 * name), so rules written by name can be regenerated.
 */
#ifndef PGMROUTER_RTNL_H
#define PGMROUTER_RTNL_H

#include <net/if.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rtnl_addr {
	uint8_t family; /* AF_INET or AF_INET6 */
	uint8_t prefixlen;
	uint8_t scope;		  /* RT_SCOPE_UNIVERSE, RT_SCOPE_LINK, RT_SCOPE_HOST */
	uint32_t flags;		  /* IFA_F_* (IFA_FLAGS when present) */
	uint8_t addr[16];	  /* IFA_LOCAL (or IFA_ADDRESS without it), 4 or 16 bytes */
	unsigned seen_generation; /* internal: resynchronisation mark */
};

struct rtnl_if {
	int ifindex;
	char name[IF_NAMESIZE];
	unsigned flags; /* IFF_* from the link message */
	unsigned short type; /* ARPHRD_*: the link layer (ARPHRD_ETHER for Ethernet, veth, VLANs) */
	bool up;	/* administratively up (IFF_UP) */
	bool running;	/* operationally up (IFF_RUNNING) */
	uint32_t mtu;
	struct rtnl_addr *addrs; /* IPv4 and IPv6, in the kernel's order */
	size_t naddrs;
	bool has_primary4;
	struct in_addr primary4;
	/* internal: resynchronisation marks */
	unsigned seen_generation;
};

enum rtnl_event_type {
	RTNL_IF_ADDED,
	RTNL_IF_REMOVED, /* ifp is valid during the callback only */
	RTNL_IF_CHANGED,
	RTNL_ADDR_ADDED,
	RTNL_ADDR_REMOVED,
};

/* What RTNL_IF_CHANGED changed. */
#define RTNL_CHANGE_NAME     0x01
#define RTNL_CHANGE_UP	     0x02
#define RTNL_CHANGE_RUNNING  0x04
#define RTNL_CHANGE_MTU	     0x08
#define RTNL_CHANGE_PRIMARY4 0x10
#define RTNL_CHANGE_FLAGS    0x20 /* other IFF_ flags */
#define RTNL_CHANGE_TYPE     0x40 /* the link layer (ARPHRD_*) */

struct rtnl_event {
	enum rtnl_event_type type;
	const struct rtnl_if *ifp;
	unsigned changes;	      /* RTNL_IF_CHANGED */
	const char *old_name;	      /* RTNL_CHANGE_NAME */
	const struct rtnl_addr *addr; /* RTNL_ADDR_* */
};
typedef void (*rtnl_event_fn)(void *ctx, const struct rtnl_event *ev);

struct rtnl_stats {
	uint64_t messages;  /* netlink messages handled */
	uint64_t events;    /* callbacks made */
	uint64_t dumps;	    /* full dumps (start, resynchronisations, interrupted dumps) */
	uint64_t resyncs;   /* after lost notifications (ENOBUFS) */
	uint64_t ignored;   /* messages for unknown interfaces or of other families */
	uint64_t malformed; /* messages too short or without required attributes */
	uint64_t errors;    /* socket errors */
};

struct rtnl;
/* A table without a socket (the parser can be fed with rtnl_input()). fn may be NULL. */
struct rtnl *rtnl_new(rtnl_event_fn fn, void *ctx);
void rtnl_free(struct rtnl *rt);
/* Opens the socket, subscribes and dumps (blocking, bounded to a few seconds). The callback is
 * called for everything found. Returns 0, or -1 with err set. */
int rtnl_open(struct rtnl *rt, char *err, size_t errlen);
int rtnl_fd(const struct rtnl *rt); /* -1 before rtnl_open */
/* Applies every pending notification without blocking. Returns the number of messages handled,
 * or -1 on a socket failure (errno set). */
int rtnl_process(struct rtnl *rt);
/* Parses a buffer of netlink messages (RTM_NEWLINK, RTM_DELLINK, RTM_NEWADDR, RTM_DELADDR)
 * into the table, calling back as rtnl_process does. Returns the number of messages handled. */
int rtnl_input(struct rtnl *rt, const void *buf, size_t len);

const struct rtnl_if *rtnl_if_by_index(const struct rtnl *rt, int ifindex);
const struct rtnl_if *rtnl_if_by_name(const struct rtnl *rt, const char *name);
size_t rtnl_if_count(const struct rtnl *rt);
/* Interfaces in ifindex order. */
void rtnl_foreach_if(
	const struct rtnl *rt, void (*fn)(void *ctx, const struct rtnl_if *ifp), void *ctx);
void rtnl_get_stats(const struct rtnl *rt, struct rtnl_stats *st);

/* "198.18.0.1/24" or "2001:db8::1/64" */
char *rtnl_addr_format(const struct rtnl_addr *a, char *buf, size_t len);

#endif /* PGMROUTER_RTNL_H */
