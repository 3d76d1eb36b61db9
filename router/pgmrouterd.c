/*
 * pgmrouterd: the PGM router assist daemon. Its main wires the layers together: the command
 * engine and the configuration (cli/), the control socket and the commands (router/vty/),
 * router assist on the live data plane (router/assist/), one event loop (router/lib/).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/base_vty.h"
#include "cli/command.h"
#include "cli/config.h"
#include "cli/ctl_proto.h"
#include "cli/settings.h"
#include "router/assist/live.h"
#include "router/assist/offline.h"
#include "router/lib/event.h"
#include "router/lib/log.h"
#include "router/lib/priv.h"
#include "router/snmp/agentx.h"
#include "router/vty/daemon_vty.h"
#include "router/vty/pgm_vty.h"
#include "router/vty/vty.h"

#define PGMROUTERD_PID_PATH "/run/pgmrouterd.pid"
#define PGMROUTERD_GROUP    "pgmrouter" /* read-only access to the control socket */
#define PGMROUTERD_USER	    "pgmrouter" /* the daemon runs as this user after set-up */

#ifndef PGMROUTER_VERSION
#define PGMROUTER_VERSION "unknown"
#endif

static struct {
	struct ev_loop *loop;
	struct vty_server *vty;
	const char *config_path;
	bool config_path_given; /* -f: a missing file is an error */
	const char *socket_path;
	const char *pid_path;
	const char *group;
	const char *user;
	bool user_given; /* -u: a missing user is an error */
	bool foreground; /* -d */
	bool verbose;	 /* -v */
} pgmrouterd = {
	.socket_path = CTL_SOCKET_PATH,
	.pid_path = PGMROUTERD_PID_PATH,
	.group = PGMROUTERD_GROUP,
	.user = PGMROUTERD_USER,
};

static void usage(void)
{
	fprintf(stderr,
		"usage: pgmrouterd [-dnv] [-f file] [-p pidfile] [-s socket] [-g group] [-u user]\n"
		"       pgmrouterd [-q] [-f file] -R capture.pcap -i NAME=ADDR/PREFIX ...\n"
		"  -d          stay in the foreground and log to stderr\n"
		"  -f file     startup configuration (default %s)\n"
		"  -n          check the configuration and exit\n"
		"  -p pidfile  pid file (default %s)\n"
		"  -s socket   control socket (default %s)\n"
		"  -g group    group with read-only access to the socket (default %s)\n"
		"  -u user     run as this user after set-up (default %s, when it exists)\n"
		"  -v          verbose: every debug category on\n"
		"  -R pcap     replay a capture through the control plane, print its decisions\n"
		"  -i spec     replay: an interface, NAME=A.B.C.D/PREFIX (repeat for each)\n"
		"  -q          replay: print only the counters at the end\n",
		CFG_DEFAULT_PATH, PGMROUTERD_PID_PATH, CTL_SOCKET_PATH, PGMROUTERD_GROUP,
		PGMROUTERD_USER);
	exit(2);
}

static void report_stderr(void *ctx, const char *message)
{
	(void)ctx;
	fprintf(stderr, "%s\n", message);
}

static void report_log(void *ctx, const char *message)
{
	(void)ctx;
	log_warnx("%s", message);
}

/* Reads the startup configuration: into a fresh configuration that is committed (`load`), or
   only checked (`check`). A missing default file is an empty configuration; a missing file
   named with -f is an error. Returns the bad lines, or -1 when the file cannot be read. */
static int load_config(bool check, cfg_report_fn report)
{
	const char *path = pgmrouterd.config_path;
	int bad;

	if (check) {
		bad = cfg_check_file(path, report, NULL);
	} else {
		bad = cfg_reload_file(path, report, NULL);
	}
	if (bad < 0 && errno == ENOENT && !pgmrouterd.config_path_given)
		return 0;
	return bad;
}

static void on_terminate(struct ev_loop *loop, int signo, void *arg)
{
	(void)arg;
	log_info("signal %d: shutting down", signo);
	ev_loop_break(loop);
}

static void on_reload(struct ev_loop *loop, int signo, void *arg)
{
	int bad;

	(void)loop;
	(void)signo;
	(void)arg;
	log_info("SIGHUP: reloading %s", pgmrouterd.config_path);
	bad = load_config(false, report_log);
	if (bad < 0) {
		log_warn("reload: %s; running configuration unchanged", pgmrouterd.config_path);
		return;
	}
	if (bad > 0)
		log_warnx("reload: %s: %d bad line%s (the others were applied)",
			pgmrouterd.config_path, bad, bad == 1 ? "" : "s");
	else
		log_info("reload: %s applied", pgmrouterd.config_path);
}

/*
 * Detaches from the terminal. The parent stays until the child reports that the socket is up
 * (or why it is not), so that `pgmrouterd && pgmrouter -c ...` works and start-up errors reach
 * the terminal.
 */
static int detach(void)
{
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC) < 0)
		fatal("pipe");
	pid = fork();
	if (pid < 0)
		fatal("fork");
	if (pid > 0) {
		char msg[512];
		ssize_t n;

		close(fds[1]);
		n = read(fds[0], msg, sizeof(msg) - 1);
		if (n == 1 && msg[0] == '\0')
			_exit(0);
		if (n > 0) {
			msg[n] = '\0';
			fprintf(stderr, "pgmrouterd: %s\n", msg);
		} else {
			fprintf(stderr, "pgmrouterd: failed to start (see the system log)\n");
		}
		_exit(1);
	}
	close(fds[0]);
	if (setsid() < 0)
		fatal("setsid");
	if (chdir("/") < 0)
		fatal("chdir");
	return fds[1];
}

static void detach_done(int fd, const char *error)
{
	int null;

	if (fd < 0)
		return;
	if (error != NULL) {
		if (write(fd, error, strlen(error)) < 0)
			(void)0;
		_exit(1);
	}
	if (write(fd, "", 1) < 0)
		(void)0;
	close(fd);
	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) >= 0) {
		dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		dup2(null, STDERR_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
}

/* Never through a symlink, never blocking on a FIFO. */
static int write_pidfile(const char *path)
{
	char text[32];
	int fd = cfg_open_regular(path, O_WRONLY | O_CREAT | O_NOFOLLOW, 0644);
	int n = snprintf(text, sizeof(text), "%d\n", (int)getpid());

	if (fd < 0)
		return -1;
	if (ftruncate(fd, 0) < 0 || write(fd, text, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

/* The command tree and the configuration's modules. */
static void commands_init(uint64_t started)
{
	cmd_engine_init();
	base_vty_init(pgmrouterd.group);
	daemon_vty_init(started);
	vty_install_commands();
	pgm_vty_init();
	snmp_vty_init(pgmrouterd.loop);
	cfg_set_startup_path(pgmrouterd.config_path);
}

static void commands_free(void)
{
	cfg_free();
	cmd_engine_free();
	settings_free();
}

/* pgmrouterd -R: the configuration, then the capture through router assist offline. */
static int replay_main(const char *pcap, const char *const *ifspecs, size_t nifspecs, bool quiet)
{
	struct assist_conf conf;
	int bad, status;

	bad = load_config(false, report_stderr);
	if (bad != 0) {
		if (bad < 0)
			fprintf(stderr, "pgmrouterd: %s: %s\n", pgmrouterd.config_path,
				strerror(errno));
		return 1;
	}
	if (pgm_conf_from_cfg(cfg_running(), &conf) < 0) {
		fprintf(stderr, "pgmrouterd: out of memory\n");
		return 1;
	}
	status = offline_replay(pcap, &conf, ifspecs, nifspecs, quiet);
	assist_conf_free(&conf);
	return status;
}

int main(int argc, char **argv)
{
	bool check_only = false, quiet = false;
	const char *replay = NULL;
	const char *ifspecs[CP_MAX_INTERFACES];
	size_t nifspecs = 0;
	struct live *live = NULL;
	struct priv_user user = {.found = false};
	char err[512], err2[600];
	int ch, ready_fd = -1, bad;

	pgmrouterd.config_path = CFG_DEFAULT_PATH;
	while ((ch = getopt(argc, argv, "df:g:i:np:qR:s:u:v")) != -1) {
		switch (ch) {
		case 'd':
			pgmrouterd.foreground = true;
			break;
		case 'f':
			pgmrouterd.config_path = optarg;
			pgmrouterd.config_path_given = true;
			break;
		case 'g':
			pgmrouterd.group = optarg;
			break;
		case 'i':
			if (nifspecs == CP_MAX_INTERFACES)
				usage();
			ifspecs[nifspecs++] = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'R':
			replay = optarg;
			break;
		case 'n':
			check_only = true;
			break;
		case 'p':
			pgmrouterd.pid_path = optarg;
			break;
		case 's':
			pgmrouterd.socket_path = optarg;
			break;
		case 'u':
			pgmrouterd.user = optarg;
			pgmrouterd.user_given = true;
			break;
		case 'v':
			pgmrouterd.verbose = true;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();

	log_init("pgmrouterd", pgmrouterd.foreground || check_only || replay != NULL,
		pgmrouterd.verbose);
	if (replay != NULL || check_only) {
		int status;

		commands_init(0);
		if (replay != NULL) {
			status = replay_main(replay, ifspecs, nifspecs, quiet);
		} else if ((bad = load_config(true, report_stderr)) < 0) {
			fprintf(stderr, "pgmrouterd: %s: %s\n", pgmrouterd.config_path,
				strerror(errno));
			status = 1;
		} else if (bad > 0) {
			fprintf(stderr, "pgmrouterd: %s: %d bad line%s\n", pgmrouterd.config_path,
				bad, bad == 1 ? "" : "s");
			status = 1;
		} else {
			fprintf(stderr, "configuration OK\n");
			status = 0;
		}
		commands_free();
		return status;
	}
	/* the user is known before anything is set up, so that a wrong -u stops the start */
	if (geteuid() == 0) {
		if (priv_lookup(pgmrouterd.user, &user, err, sizeof(err)) < 0)
			fatalx("%s", err);
		if (!user.found && pgmrouterd.user_given)
			fatalx("user %s does not exist", pgmrouterd.user);
	}
	if (!pgmrouterd.foreground)
		ready_fd = detach();

	pgmrouterd.loop = ev_loop_new();
	if (pgmrouterd.loop == NULL)
		fatal("event loop");
	commands_init(ev_time_now());
	signal(SIGPIPE, SIG_IGN);
	if (ev_signal_add(pgmrouterd.loop, SIGTERM, on_terminate, NULL) < 0 ||
		ev_signal_add(pgmrouterd.loop, SIGINT, on_terminate, NULL) < 0 ||
		ev_signal_add(pgmrouterd.loop, SIGHUP, on_reload, NULL) < 0)
		fatal("signals");

	bad = load_config(false, report_log);
	if (bad < 0) {
		snprintf(err, sizeof(err), "%s: %s", pgmrouterd.config_path, strerror(errno));
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	if (bad > 0)
		log_warnx("%s: %d bad line%s (the others were applied)", pgmrouterd.config_path,
			bad, bad == 1 ? "" : "s");

	pgmrouterd.vty = vty_server_new(
		pgmrouterd.loop, pgmrouterd.socket_path, pgmrouterd.group, err, sizeof(err));
	if (pgmrouterd.vty == NULL) {
		detach_done(ready_fd, err);
		fatalx("control socket: %s", err);
	}
	if ((live = live_new(pgmrouterd.loop)) == NULL) {
		detach_done(ready_fd, "out of memory");
		fatalx("out of memory");
	}
	/* router assist takes the configuration, then opens the data plane for it */
	if (pgm_vty_attach(live_assist(live), err, sizeof(err)) < 0 ||
		live_start(live, err, sizeof(err)) < 0) {
		pgm_vty_attach(NULL, err, sizeof(err));
		live_free(live);
		vty_server_free(pgmrouterd.vty);
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	if (write_pidfile(pgmrouterd.pid_path) < 0) {
		snprintf(err, sizeof(err), "pid file %s: %s", pgmrouterd.pid_path, strerror(errno));
		vty_server_free(pgmrouterd.vty);
		pgm_vty_attach(NULL, err, sizeof(err));
		live_free(live);
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	if (geteuid() == 0 && !user.found)
		log_warnx("user %s does not exist (make install creates it): running as root with "
			  "only " PRIV_CAPS_KEPT,
			pgmrouterd.user);
	if (priv_drop(geteuid() == 0 && user.found ? &user : NULL, err, sizeof(err)) < 0) {
		snprintf(err2, sizeof(err2), "dropping privileges: %s", err);
		vty_server_free(pgmrouterd.vty);
		pgm_vty_attach(NULL, err, sizeof(err));
		live_free(live);
		unlink(pgmrouterd.pid_path);
		detach_done(ready_fd, err2);
		fatalx("%s", err2);
	}
	if (user.found)
		log_info("running as user %s (uid %u) with " PRIV_CAPS_KEPT ", no_new_privs",
			user.name, (unsigned)user.uid);
	if (live_run_workers(live, err, sizeof(err)) < 0) {
		vty_server_free(pgmrouterd.vty);
		pgm_vty_attach(NULL, err2, sizeof(err2));
		live_free(live);
		unlink(pgmrouterd.pid_path);
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	detach_done(ready_fd, NULL);
	log_info("pgmrouterd %s started, control socket %s", PGMROUTER_VERSION,
		pgmrouterd.socket_path);

	ev_loop_run(pgmrouterd.loop);

	snmp_agentx_stop();
	vty_server_free(pgmrouterd.vty);
	pgmrouterd.vty = NULL;
	pgm_vty_attach(NULL, err, sizeof(err));
	live_free(live);
	unlink(pgmrouterd.pid_path);
	commands_free();
	ev_loop_free(pgmrouterd.loop);
	pgmrouterd.loop = NULL;
	log_info("pgmrouterd stopped");
	return 0;
}
