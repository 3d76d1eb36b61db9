/*
 * The daemon's control socket: a listener and CLI sessions on the event loop.
 *
 * Access model
 * ------------
 * The socket (default /run/pgmrouterd.sock) is created with mode 0660, owned by root and by the
 * group `pgmrouter` when that group exists, so only root and members of that group can connect
 * at all. On every connection the daemon reads the peer's credentials (SO_PEERCRED, and
 * SO_PEERGROUPS for supplementary groups):
 *   - uid 0 (or the daemon's own uid) gets every command; `enable` needs no password on the
 *     local socket;
 *   - a member of group `pgmrouter` gets a read-only session: exec mode only, show commands,
 *     terminal settings; `enable` is refused and commands marked admin are denied;
 *   - anyone else is told "% Access denied" and disconnected.
 * Sessions started with -c or piped input (HELLO with CTL_HELLO_BATCH) of admin users start in
 * privileged mode, as vtysh -c does; interactive sessions start in exec mode (`host>`).
 *
 * No session can stall the daemon: sockets are non-blocking; a client must say hello within 5 s;
 * at most VTY_MAX_SESSIONS sessions exist at once, VTY_ROOT_RESERVED of them for root alone,
 * and at most VTY_MAX_PER_USER of any other user; a session that neither sends a request nor
 * takes output for `line vty idle-timeout` (600 s) is closed; when file descriptors run out, the
 * waiting client is told and closed with a descriptor kept in reserve and the listener rests
 * 100 ms; output filters are applied by the client (cli/filter.h), never here; each session's
 * output is bounded
 * (VTY_OUTPUT_MAX). Long output is produced by continuations only as fast as the client reads;
 * output beyond the bound from a single step is dropped and the client told; monitor lines that
 * do not fit are dropped and counted ("% N monitor messages dropped").
 */
#ifndef PGMROUTER_VTY_H
#define PGMROUTER_VTY_H

#include <stddef.h>

struct ev_loop;
struct vty_server;

#define VTY_MAX_SESSIONS  128
#define VTY_ROOT_RESERVED 4 /* root gets in while other users hold every other slot */
#define VTY_MAX_PER_USER  8 /* sessions of one user other than root */
#define VTY_OUTPUT_MAX	  (1u << 20)   /* queued output beyond which output is dropped */
#define VTY_OUTPUT_RESUME (256u << 10) /* continuations run again below this */

/* Creates the listening socket at `path` (replacing a stale one; refusing when a daemon answers
   there) and installs the log hook for `terminal monitor`. `group`: read-only access group.
   Returns NULL with a message in `err`. */
struct vty_server *vty_server_new(
	struct ev_loop *loop, const char *path, const char *group, char *err, size_t errlen);
/* Closes every session and the listener, and removes the socket file. */
void vty_server_free(struct vty_server *srv);

/* Installs `show users` and the `line vty` settings. */
void vty_install_commands(void);

#endif /* PGMROUTER_VTY_H */
