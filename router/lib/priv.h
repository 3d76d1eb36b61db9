/*
 * Least privilege: once the sockets are open and the rules are installed, pgmrouterd keeps only
 * CAP_NET_ADMIN (interception rules, run again on configuration changes and at exit) and
 * CAP_NET_RAW (the raw output socket is open already; kept for a queue or socket re-open),
 * in its own capability sets and in the bounding set its children (iptables, nft) inherit.
 */
#ifndef PGMROUTER_PRIV_H
#define PGMROUTER_PRIV_H

#include <stddef.h>

/* Returns 0, or -1 with one sentence in err. Does nothing when not running as root. */
int priv_drop(char *err, size_t errlen);

#endif /* PGMROUTER_PRIV_H */
