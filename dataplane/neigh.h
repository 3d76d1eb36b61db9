/*
 * The kernel's neighbours, IPv4 (ARP) and IPv6 (NDP), asked one at a time: for unicast through the link layer
 * (rawsock), the MAC address of a next hop the kernel has confirmed.
 *
 * An answer is kept NEIGH_CACHE_TTL_US and then asked again (RTM_GETNEIGH for that address on
 * that interface, answered by the kernel while the request is sent). Only a REACHABLE or
 * PERMANENT entry is usable. Anything else (none, INCOMPLETE, STALE, DELAY, PROBE, FAILED) is
 * not: the caller sends through the IP stack, which resolves or confirms the neighbour, and the
 * next question after the cache time finds it usable again. So traffic through the link layer
 * never outlives the kernel's own confirmation by more than the cache time, and the kernel keeps
 * verifying the neighbour (an entry only goes STALE, then DELAY and PROBE, when the IP stack
 * sends to it).
 *
 * At most NEIGH_CACHE_QUERIES_PER_S questions a second: beyond that, lookups that would ask
 * answer "not usable" (the IP stack takes those packets).
 */
#ifndef PGMROUTER_NEIGH_H
#define PGMROUTER_NEIGH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NEIGH_CACHE_SLOTS	   64u
#define NEIGH_CACHE_TTL_US	   1000000u
#define NEIGH_CACHE_QUERIES_PER_S 256u

struct neigh_stats {
	uint64_t queries;	  /* questions sent to the kernel */
	uint64_t usable, unusable; /* their answers */
	uint64_t errors;	  /* no answer, or one that does not parse */
	uint64_t rate_limited;	  /* lookups answered "not usable" without asking */
};

struct neigh_cache;

/* The kernel's answer to question `seq` (RTM_GETNEIGH), as neigh_parse_reply() reads it. */
struct neigh_answer {
	uint32_t seq;
	bool done, usable; /* answered; REACHABLE or PERMANENT with a 6-byte address */
	uint8_t mac[6];
};
/* One buffer received from the kernel: mnl_cb_run()'s result (MNL_CB_ERROR with errno for an
 * error message, ESRCH for another question's answer). */
int neigh_parse_reply(const void *buf, size_t len, uint32_t portid, struct neigh_answer *a);

/* NULL with one sentence in err. */
struct neigh_cache *neigh_cache_open(char *err, size_t errlen);
void neigh_cache_close(struct neigh_cache *nc);
/*
 * Whether the kernel holds addr (family AF_INET: 4 bytes, AF_INET6: 16, network order) on ifindex
 * as usable; its MAC address in mac when it does. now_us: a monotonic clock.
 */
bool neigh_cache_lookup(struct neigh_cache *nc, int ifindex, int family, const uint8_t *addr,
	uint64_t now_us, uint8_t mac[6]);
/* Forgets every answer (an interface went, addresses changed). */
void neigh_cache_flush(struct neigh_cache *nc);
void neigh_cache_get_stats(const struct neigh_cache *nc, struct neigh_stats *st);

#endif
