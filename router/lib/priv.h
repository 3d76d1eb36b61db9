/*
 * Least privilege: once its sockets are open and its rules installed, pgmrouterd runs as an
 * unprivileged user (`pgmrouter`, created by `make install`) with only CAP_NET_ADMIN
 * (interception rules and the netfilter queue, set up again on configuration changes and
 * removed at exit) and CAP_NET_RAW (raw and packet sockets, re-opened with the queue), in its
 * permitted, effective, inheritable and ambient sets (iptables and nft, run as children, get
 * them too) and in the bounding set; no_new_privs is set, so nothing it runs can gain more.
 * Every step is checked: the daemon does not run on when one fails.
 */
#ifndef PGMROUTER_PRIV_H
#define PGMROUTER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define PRIV_CAPS_KEPT "cap_net_admin,cap_net_raw"

struct priv_user {
	bool found; /* the user exists */
	uid_t uid;
	gid_t gid;
	char name[64];
};

/* Looks the user up (getpwnam). 0, or -1 with one sentence in err when the lookup fails for
   another reason than the user's absence (then found is false). */
int priv_lookup(const char *name, struct priv_user *user, char *err, size_t errlen);

/* Drops to `user` (NULL: stays uid 0) keeping only the two capabilities, and sets
   no_new_privs. Not running as root: sets no_new_privs only. Returns 0, or -1 with one
   sentence in err (the process may then be half-way: the caller exits). */
int priv_drop(const struct priv_user *user, char *err, size_t errlen);

#endif /* PGMROUTER_PRIV_H */
