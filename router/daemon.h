/*
 * The daemon's global state, in one place modules can reach. The control plane and the data
 * plane hang their own state off this struct when they are wired in.
 */
#ifndef PGMROUTER_DAEMON_H
#define PGMROUTER_DAEMON_H

#include <stdbool.h>
#include <stdint.h>

#include "cli/ctl_proto.h"

#define PGMROUTERD_SOCKET_PATH CTL_SOCKET_PATH
#define PGMROUTERD_PID_PATH    "/run/pgmrouterd.pid"
#define PGMROUTERD_GROUP       "pgmrouter" /* read-only access to the control socket */

#ifndef PGMROUTER_VERSION
#define PGMROUTER_VERSION "unknown"
#endif

struct ev_loop;
struct vty_server;

struct pgmrouterd {
	struct ev_loop *loop;
	struct vty_server *vty;

	/* command line */
	const char *config_path;
	bool config_path_given; /* -f: a missing file is an error */
	const char *socket_path;
	const char *pid_path;
	const char *group;
	bool foreground; /* -d */
	bool verbose;	 /* -v */
	bool check_only; /* -n: handlers validate their arguments but change nothing outside */

	uint64_t started_us;	/* monotonic, for `show version` */
	unsigned reloads;	/* SIGHUP reloads done */
	unsigned reload_errors; /* bad lines in the last reload */
};

extern struct pgmrouterd pgmrouterd;

#endif /* PGMROUTER_DAEMON_H */
