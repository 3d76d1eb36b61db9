/*
 * The daemon's global state. It lives in the library so that the CLI engine, the tests and the
 * daemon main all see the same instance.
 */
#include "router/daemon.h"

struct pgmrouterd pgmrouterd = {
	.socket_path = PGMROUTERD_SOCKET_PATH,
	.pid_path = PGMROUTERD_PID_PATH,
	.group = PGMROUTERD_GROUP,
};
