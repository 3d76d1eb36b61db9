/*
 * pgmrouterd: the PGM router assist daemon. This is the skeleton every module hangs off: the
 * event loop, the control socket and the configuration; the packet path is added to the same
 * loop and to struct pgmrouterd (router/daemon.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/config.h"
#include "cli/generic_vty.h"
#include "cli/pgm_vty.h"
#include "cli/vty.h"
#include "router/assist.h"
#include "router/daemon.h"
#include "router/lib/event.h"
#include "router/lib/log.h"
#include "router/lib/priv.h"

static void usage(void)
{
	fprintf(stderr,
		"usage: pgmrouterd [-dnv] [-f file] [-p pidfile] [-s socket] [-g group]\n"
		"       pgmrouterd [-q] [-f file] -R capture.pcap -i NAME=ADDR/PREFIX ...\n"
		"  -d          stay in the foreground and log to stderr\n"
		"  -f file     startup configuration (default %s)\n"
		"  -n          check the configuration and exit\n"
		"  -p pidfile  pid file (default %s)\n"
		"  -s socket   control socket (default %s)\n"
		"  -g group    group with read-only access to the socket (default %s)\n"
		"  -v          verbose: every debug category on\n"
		"  -R pcap     replay a capture through the control plane, print its decisions\n"
		"  -i spec     replay: an interface, NAME=A.B.C.D/PREFIX (repeat for each)\n"
		"  -q          replay: print only the counters at the end\n",
		CFG_DEFAULT_PATH, PGMROUTERD_PID_PATH, PGMROUTERD_SOCKET_PATH, PGMROUTERD_GROUP);
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

/* Reads the startup config. A missing default file is an empty configuration; a missing file
   named with -f is an error. Returns the bad lines, or -1 when the file cannot be read. */
static int load_config(bool reload, cfg_report_fn report)
{
	const char *path = pgmrouterd.config_path;
	int bad = reload ? cfg_reload_file(path, report, NULL) : cfg_load_file(path, report, NULL);

	if (bad < 0) {
		if (errno == ENOENT && !pgmrouterd.config_path_given)
			return 0;
		return -1;
	}
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
	bad = load_config(true, report_log);
	pgmrouterd.reloads++;
	if (bad < 0) {
		log_warn("reload: %s; running configuration unchanged", pgmrouterd.config_path);
		return;
	}
	pgmrouterd.reload_errors = (unsigned)bad;
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

static int write_pidfile(const char *path)
{
	char text[32];
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int n = snprintf(text, sizeof(text), "%d\n", (int)getpid());

	if (fd < 0)
		return -1;
	if (write(fd, text, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	return close(fd);
}

int main(int argc, char **argv)
{
	bool check_only = false, quiet = false;
	const char *replay = NULL;
	const char *ifspecs[CP_MAX_INTERFACES];
	size_t nifspecs = 0;
	char err[512];
	int ch, ready_fd = -1, bad;

	pgmrouterd.config_path = CFG_DEFAULT_PATH;
	while ((ch = getopt(argc, argv, "df:g:i:np:qR:s:v")) != -1) {
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
			pgmrouterd.check_only = true;
			break;
		case 'p':
			pgmrouterd.pid_path = optarg;
			break;
		case 's':
			pgmrouterd.socket_path = optarg;
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
	cmd_engine_init();
	generic_vty_init();
	vty_install_commands();
	assist_init();
	pgm_vty_init();
	cfg_set_startup_path(pgmrouterd.config_path);

	if (replay != NULL) {
		int status;

		pgmrouterd.check_only = true; /* the configuration only, nothing installed */
		bad = load_config(false, report_stderr);
		if (bad != 0) {
			if (bad < 0)
				fprintf(stderr, "pgmrouterd: %s: %s\n", pgmrouterd.config_path,
					strerror(errno));
			return 1;
		}
		status = assist_replay(replay, ifspecs, nifspecs, quiet);
		assist_free();
		cmd_engine_free();
		cfg_free();
		generic_vty_free();
		return status;
	}

	if (check_only) {
		bad = load_config(false, report_stderr);
		if (bad < 0) {
			fprintf(stderr, "pgmrouterd: %s: %s\n", pgmrouterd.config_path,
				strerror(errno));
			return 1;
		}
		if (bad > 0) {
			fprintf(stderr, "pgmrouterd: %s: %d bad line%s\n", pgmrouterd.config_path,
				bad, bad == 1 ? "" : "s");
			return 1;
		}
		fprintf(stderr, "configuration OK\n");
		return 0;
	}
	if (!pgmrouterd.foreground)
		ready_fd = detach();

	pgmrouterd.loop = ev_loop_new();
	if (pgmrouterd.loop == NULL)
		fatal("event loop");
	pgmrouterd.started_us = ev_time_now();
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
	if (assist_start(err, sizeof(err)) < 0) {
		vty_server_free(pgmrouterd.vty);
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	if (write_pidfile(pgmrouterd.pid_path) < 0) {
		snprintf(err, sizeof(err), "pid file %s: %s", pgmrouterd.pid_path, strerror(errno));
		vty_server_free(pgmrouterd.vty);
		assist_stop();
		detach_done(ready_fd, err);
		fatalx("%s", err);
	}
	if (priv_drop(err, sizeof(err)) < 0)
		log_warnx("keeping all privileges: %s", err);
	detach_done(ready_fd, NULL);
	log_info("pgmrouterd %s started, control socket %s", PGMROUTER_VERSION,
		pgmrouterd.socket_path);

	ev_loop_run(pgmrouterd.loop);

	vty_server_free(pgmrouterd.vty);
	pgmrouterd.vty = NULL;
	assist_free();
	unlink(pgmrouterd.pid_path);
	ev_loop_free(pgmrouterd.loop);
	pgmrouterd.loop = NULL;
	cmd_engine_free();
	cfg_free();
	generic_vty_free();
	log_info("pgmrouterd stopped");
	return 0;
}
