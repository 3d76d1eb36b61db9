/*
 * The kernel's multicast forwarding cache (MFC), mirrored from rtnetlink (libmnl).
 *
 * SPM and RDATA are taken before the routing decision and their copies sent by the daemon, one
 * per outgoing interface (router/assist/packet.c): the kernel's own forwarding of them is
 * replaced, so the forward hook, which the kernel runs for every copy of every forwarded packet,
 * needs no rule at all. Which interfaces a packet goes out on stays the kernel's decision, made by
 * whatever routing daemon (smcroute, pimd, FRR) fills the MFC; this module keeps a copy of it.
 *
 * Both families: IPv4 (RTNL_FAMILY_IPMR) and IPv6 (RTNL_FAMILY_IP6MR) entries sit in one table,
 * keyed by their addresses with the family. At mfc_open() the module subscribes to
 * RTNLGRP_IPV4_MROUTE and RTNLGRP_IPV6_MROUTE (the kernel announces every entry added, resolved
 * or removed) and then dumps both caches (subscribing first means no change between the dump and
 * the first notification is missed). Afterwards the caller polls mfc_fd() and calls
 * mfc_process(). When notifications are lost (ENOBUFS) the module dumps again.
 *
 * The kernel reports interfaces by ifindex for both families (RTA_IIF, RTA_MULTIPATH: the vif
 * or mif index is mapped in the kernel's mr_fill_mroute), and the TTL or hop-limit threshold in
 * rtnh_hops. Only each family's default multicast routing table is mirrored (IPv4's
 * RT_TABLE_DEFAULT, IPv6's RT_TABLE_MAIN, as the kernel names them): entries of tables selected
 * by `ip mrule` are ignored. A lookup finds the (S,G) entry, else the (*,G) one of the family.
 * mfc_match() finds the entry the kernel would (dataplane/README); mfc_lookup() and
 * mfc_find() serve counters and routes given by hand.
 */
#ifndef PGMROUTER_MFC_H
#define PGMROUTER_MFC_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/wire/pgm_wire.h"

#define MFC_MAX_OIFS 32 /* MAXVIFS, MAXMIFS */

struct mfc_route {
	/* one family, PGM_AFI_IP or PGM_AFI_IP6, the bytes past its length zero; a source of
	   all zeros (0.0.0.0, ::): a (*,G) entry */
	struct pgm_nla src, grp;
	int iif;		 /* ifindex; 0: unresolved (no interfaces yet) */
	unsigned noifs;
	int oif[MFC_MAX_OIFS];	   /* ifindex */
	uint8_t ttl[MFC_MAX_OIFS]; /* the interface's TTL threshold: forward if TTL > it */
	/* SPM and RDATA along it, counted by the packet path (router/assist/packet.c) and kept
	   while the kernel updates the entry: copies made by the daemon, or left to the kernel */
	uint64_t replicated, by_kernel;
};

struct mfc_stats {
	uint64_t messages; /* netlink messages handled */
	uint64_t dumps;	   /* full dumps (start, after lost notifications) */
	uint64_t resyncs;  /* after lost notifications (ENOBUFS) */
	uint64_t ignored;  /* other tables, families or message types */
	uint64_t invalid;  /* messages too short or with bad attributes */
	uint64_t errors;   /* netlink error replies */
};

struct mfc;

/* A cache without a socket (for tests: fill it with mfc_input()). NULL on no memory. */
struct mfc *mfc_new(void);
void mfc_free(struct mfc *m);

/* Subscribes and dumps. Returns 0, or -1 with one sentence in err. */
int mfc_open(struct mfc *m, char *err, size_t errlen);
int mfc_fd(const struct mfc *m);
/* Applies every readable notification without blocking. Returns 0, -1 on a socket error. */
int mfc_process(struct mfc *m);
/* Applies a buffer of netlink messages (RTM_NEWROUTE, RTM_DELROUTE of RTNL_FAMILY_IPMR and
   RTNL_FAMILY_IP6MR). Returns the number of messages handled. */
int mfc_input(struct mfc *m, const void *buf, size_t len);

/* Whether an entry is a (*,G) one (its source all zeros). */
bool mfc_route_any_source(const struct mfc_route *r);
/* The entry a datagram from src to grp is forwarded by, or NULL (also when the two differ in
   family). Valid until the next mfc_process()/mfc_input(). */
const struct mfc_route *mfc_lookup(
	const struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp);
/* The entry the kernel forwards a datagram from src to grp arriving on iif by (ipmr's and
   ip6mr's rules, see dataplane/README), or NULL where the kernel finds none and queues the
   datagram to the routing daemon. The caller compares the entry's iif with iif: off it, the
   kernel drops the datagram. iif 0: any interface (the RPF question: where does (S,G) come in). */
struct mfc_route *mfc_match(
	struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp, int iif);
/* The sources of the (S,G) entries of grp that leave by oif and come in by another interface:
   at most max of them in srcs, how many returned. Walks the whole cache. */
size_t mfc_sources(const struct mfc *m, const struct pgm_nla *grp, int oif, struct pgm_nla *srcs,
	size_t max);
/* The same entry, writable (its counters); NULL when none. */
struct mfc_route *mfc_find(struct mfc *m, const struct pgm_nla *src, const struct pgm_nla *grp);
/* Adds or updates an entry as a notification would (tests, the offline environment): its
   counters are kept. The stored entry, or NULL without memory. */
struct mfc_route *mfc_add(struct mfc *m, const struct mfc_route *r);
/* Every entry, in no particular order. */
void mfc_foreach(const struct mfc *m, void (*fn)(void *arg, const struct mfc_route *r), void *arg);
size_t mfc_count(const struct mfc *m);
void mfc_get_stats(const struct mfc *m, struct mfc_stats *st);

#endif
