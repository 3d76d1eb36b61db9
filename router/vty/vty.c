/*
 * Control socket sessions: credentials, request dispatch, bounded output, monitor lines.
 * The access model is described in router/vty/vty.h.
 */
#include "router/vty/vty.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/ctl_proto.h"
#include "cli/settings.h"
#include "router/lib/event.h"
#include "router/lib/log.h"

#define REFUSED_LINGER_US    2000000u /* a refused client has this long to read why */
#define VTY_HELLO_TIMEOUT_US 5000000u /* a client that never says hello loses its slot */
#define VTY_STEPS_PER_TURN   32	      /* continuation steps before other sessions get a turn */
#define VTY_REFUSED_LINGERING 16      /* beyond this many, a refused client gets no time to read */
#define EMFILE_PAUSE_US	      100000u /* the listener rests this long when fds run out */
#define IDLE_TIMEOUT_DEFAULT  600     /* seconds, as IOS's exec-timeout 10 */

struct vty_session {
	struct vty_server *srv;
	struct vty_session *next;
	int fd;
	struct ev_io *io;
	struct ev_timer *linger;
	struct ev_timer *idle;
	uint64_t last_active; /* a request arrived or the client took output */
	struct ctl_reader in;
	struct ctl_buf out;
	struct cmd_session cmd;
	uid_t uid;
	pid_t pid;
	bool hello_done;
	bool busy;    /* a continuation is producing output */
	bool closing; /* close once the output is sent */
	bool refused; /* access denied: linger, then close */
	bool shut;    /* write side shut down */
	bool dead;
	char chunk[CTL_OUTPUT_CHUNK]; /* output being collected into one OUTPUT frame */
	size_t chunk_len;
	uint64_t truncated_bytes; /* of the current reply */
	uint64_t monitor_dropped; /* not yet reported to the client */
	uint64_t monitor_dropped_total;
};

struct vty_server {
	struct ev_loop *loop;
	int fd;
	struct ev_io *io;
	char *path;
	gid_t group_gid;
	bool group_exists;
	char *group;
	struct vty_session *sessions;
	size_t nsessions;
	size_t nrefused; /* of nsessions: refused, waiting for the client to read why */
	unsigned next_id;
	uid_t admin_uid; /* besides root: the uid the daemon was started as */
	int reserve_fd;	 /* given up to accept and close a client when fds run out */
	struct ev_timer *resume;
	uint64_t emfile_count;
	struct ev_io *log_io; /* lines the workers' threads logged, for the log hook */
};

static struct vty_server *the_server; /* for `show users` and the log hook */

/* ---- settings: `line vty idle-timeout` ---- */

struct vty_settings {
	uint32_t idle_timeout_s;
};

static const struct setting vty_settings_rows[] = {
	{.keyword = "idle-timeout",
		.kind = SETTING_NUMBER,
		.min = 0,
		.max = 86400,
		.dflt = IDLE_TIMEOUT_DEFAULT,
		.help = "Close control-socket sessions idle this long\n",
		.value_help = "Seconds (0: never)\n",
		.unit = "s",
		.label = "Idle timeout",
		.global_offset = offsetof(struct vty_settings, idle_timeout_s),
		.if_offset = SETTING_NOWHERE},
};

static int vty_apply(
	void *ctx, const struct cfg *prev, const struct cfg *next, char *err, size_t errlen);

static struct cfg_module vty_module = {
	.name = "line vty",
	.prefix = "line vty",
	.prefix_help = "Configure a terminal line\nVirtual terminal (the control socket)\n",
	.rows = vty_settings_rows,
	.nrows = sizeof(vty_settings_rows) / sizeof(vty_settings_rows[0]),
	.global_size = sizeof(struct vty_settings),
	.write_order = 90,
	.apply = vty_apply,
};

static bool vty_module_installed; /* a server without the commands (tests): the default */

static uint64_t idle_timeout_us(const struct cfg *c)
{
	const struct vty_settings *v =
		c != NULL && vty_module_installed ? cfg_module_global(c, &vty_module) : NULL;

	return (uint64_t)(v != NULL ? v->idle_timeout_s : IDLE_TIMEOUT_DEFAULT) * 1000000u;
}

static void idle_arm(struct vty_session *vs, uint64_t timeout)
{
	if (timeout == 0)
		ev_timer_stop(vs->srv->loop, vs->idle);
	else
		ev_timer_start(vs->srv->loop, vs->idle, vs->last_active + timeout);
}

static void session_run(struct vty_session *vs);
static void session_close(struct vty_session *vs);

/* ---- output ---- */

static void chunk_flush(struct vty_session *vs)
{
	if (vs->chunk_len == 0)
		return;
	if (ctl_buf_pending(&vs->out) >= VTY_OUTPUT_MAX ||
		ctl_buf_frame(&vs->out, CTL_OUTPUT, 0, vs->chunk, vs->chunk_len, NULL, 0) < 0)
		vs->truncated_bytes += vs->chunk_len;
	vs->chunk_len = 0;
}

static void session_write(struct cmd_session *s, const char *data, size_t len)
{
	struct vty_session *vs = s->owner;

	while (len > 0) {
		size_t room = sizeof(vs->chunk) - vs->chunk_len;
		size_t n = len < room ? len : room;

		memcpy(vs->chunk + vs->chunk_len, data, n);
		vs->chunk_len += n;
		data += n;
		len -= n;
		if (vs->chunk_len == sizeof(vs->chunk))
			chunk_flush(vs);
	}
}

/* The filter goes to the client, which applies it to this reply's output (cli/filter.h). */
static int session_filter(struct cmd_session *s, enum cmd_filter_kind kind, const char *pattern)
{
	struct vty_session *vs = s->owner;

	chunk_flush(vs);
	if (ctl_buf_frame(&vs->out, CTL_FILTER, (uint16_t)kind, pattern, strlen(pattern), NULL,
		    0) < 0)
		return CMD_ERR_FAILED;
	return CMD_OK;
}

/* Control frames (notices, END) go out even when data output is being dropped. */
static void notice(struct vty_session *vs, uint16_t type, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void notice(struct vty_session *vs, uint16_t type, const char *fmt, ...)
{
	char text[256];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	ctl_buf_frame(&vs->out, type, 0, text, (size_t)n, NULL, 0);
}

static void end_reply(struct vty_session *vs, int status)
{
	char prompt[128];

	chunk_flush(vs);
	if (vs->truncated_bytes > 0) {
		notice(vs, CTL_OUTPUT,
			"%% Output truncated: %llu bytes dropped, the client did not read fast "
			"enough\n",
			(unsigned long long)vs->truncated_bytes);
		vs->truncated_bytes = 0;
	}
	cmd_prompt(&vs->cmd, prompt, sizeof(prompt));
	if (ctl_buf_end(&vs->out, status, vs->cmd.term_length, prompt) < 0)
		vs->closing = true; /* out of memory: the client cannot be answered */
	vs->busy = false;
	if (status == CMD_CLOSE)
		vs->closing = true;
}

static void report_monitor_drops(struct vty_session *vs)
{
	if (vs->monitor_dropped == 0 || ctl_buf_pending(&vs->out) >= VTY_OUTPUT_MAX / 2)
		return;
	notice(vs, CTL_MONITOR, "%% %llu monitor messages dropped (output queue full)",
		(unsigned long long)vs->monitor_dropped);
	vs->monitor_dropped = 0;
}

static void update_interest(struct vty_session *vs)
{
	unsigned ev = 0;

	/* While a command runs or output is backed up, requests wait in the socket. */
	if (!vs->busy && !ctl_reader_full(&vs->in) && ctl_buf_pending(&vs->out) < VTY_OUTPUT_MAX)
		ev |= EV_READ;
	if (vs->refused || vs->closing)
		ev |= EV_READ; /* to see the peer go */
	if (ctl_buf_pending(&vs->out) > 0 && !vs->shut)
		ev |= EV_WRITE;
	/* a running continuation with room to write: called again on the next turn */
	if (vs->busy && ctl_buf_pending(&vs->out) < VTY_OUTPUT_RESUME)
		ev |= EV_WRITE;
	ev_io_modify(vs->srv->loop, vs->io, ev);
}

/* ---- the log hook: `terminal monitor` ---- */

static bool in_log_hook;

static void vty_log_hook(void *ctx, int priority, enum log_category cat, const char *line)
{
	struct vty_server *srv = ctx;
	char stamp[32], text[1100];
	struct timespec ts;
	struct tm tm;
	int n;

	(void)priority;
	(void)cat;
	if (in_log_hook || srv == NULL)
		return;
	in_log_hook = true;
	clock_gettime(CLOCK_REALTIME, &ts);
	localtime_r(&ts.tv_sec, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	n = snprintf(text, sizeof(text), "%s.%03ld: %s", stamp, ts.tv_nsec / 1000000, line);
	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(text))
		n = sizeof(text) - 1;
	for (struct vty_session *vs = srv->sessions; vs != NULL; vs = vs->next) {
		if (!vs->cmd.monitor || !vs->hello_done || vs->closing || vs->dead)
			continue;
		if (ctl_buf_pending(&vs->out) >= VTY_OUTPUT_MAX) {
			vs->monitor_dropped++;
			vs->monitor_dropped_total++;
			continue;
		}
		report_monitor_drops(vs);
		if (ctl_buf_frame(&vs->out, CTL_MONITOR, 0, text, (size_t)n, NULL, 0) < 0) {
			vs->monitor_dropped++;
			vs->monitor_dropped_total++;
		}
		update_interest(vs);
	}
	in_log_hook = false;
}

/* Lines logged by other threads (the workers') reach monitoring sessions on this one. */
static void log_lines_waiting(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	(void)loop;
	(void)fd;
	(void)events;
	(void)arg;
	log_hook_drain();
}

/* ---- sessions ---- */

static void session_free(struct vty_session *vs)
{
	struct vty_server *srv = vs->srv;

	for (struct vty_session **pp = &srv->sessions; *pp != NULL; pp = &(*pp)->next)
		if (*pp == vs) {
			*pp = vs->next;
			break;
		}
	srv->nsessions--;
	if (vs->refused)
		srv->nrefused--;
	ev_io_del(srv->loop, vs->io);
	ev_timer_free(srv->loop, vs->linger);
	ev_timer_free(srv->loop, vs->idle);
	close(vs->fd);
	cmd_session_release(&vs->cmd);
	ctl_reader_free(&vs->in);
	ctl_buf_free(&vs->out);
	free(vs);
}

/* A refused session's time to read why, or a new session's time to say hello, is up. */
static void linger_expired(struct ev_loop *loop, void *arg)
{
	(void)loop;
	session_free(arg);
}

/* A client hammering the socket gets its refusals at once, without a slot kept for reading. */
static void refuse(struct vty_session *vs, const char *why)
{
	struct vty_server *srv = vs->srv;
	uint64_t linger = srv->nrefused < VTY_REFUSED_LINGERING ? REFUSED_LINGER_US : 0;

	notice(vs, CTL_OUTPUT, "%s\n", why);
	ctl_buf_end(&vs->out, CMD_ERR_DENIED, CMD_TERM_LENGTH_UNSET, "");
	vs->refused = true;
	vs->closing = true;
	srv->nrefused++;
	ev_timer_start(srv->loop, vs->linger, ev_now(srv->loop) + linger);
}

static void idle_expired(struct ev_loop *loop, void *arg)
{
	struct vty_session *vs = arg;
	uint64_t timeout = idle_timeout_us(cfg_running());

	if (timeout == 0 || vs->refused)
		return;
	if (vs->last_active + timeout > ev_now(loop)) {
		idle_arm(vs, timeout);
		return;
	}
	log_info("control socket: session %u (uid %u) idle for %llu s: closed", vs->cmd.id,
		vs->uid, (unsigned long long)(timeout / 1000000u));
	notice(vs, CTL_MONITOR, "%% Idle for %llu seconds: session closed",
		(unsigned long long)(timeout / 1000000u));
	ctl_buf_flush(&vs->out, vs->fd);
	session_close(vs);
}

static int vty_apply(
	void *ctx, const struct cfg *prev, const struct cfg *next, char *err, size_t errlen)
{
	(void)ctx;
	(void)prev;
	(void)err;
	(void)errlen;
	if (the_server != NULL)
		for (struct vty_session *vs = the_server->sessions; vs != NULL; vs = vs->next)
			if (!vs->refused)
				idle_arm(vs, idle_timeout_us(next));
	return 0;
}

static size_t sessions_of(const struct vty_server *srv, uid_t uid)
{
	size_t n = 0;

	for (const struct vty_session *vs = srv->sessions; vs != NULL; vs = vs->next)
		n += !vs->refused && vs->uid == uid;
	return n;
}

static bool peer_in_group(const struct vty_server *srv, int fd, const struct ucred *cred)
{
	gid_t groups[256];
	socklen_t len = sizeof(groups);

	if (!srv->group_exists)
		return false;
	if (cred->gid == srv->group_gid)
		return true;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERGROUPS, groups, &len) == 0) {
		for (size_t i = 0; i < len / sizeof(gid_t); i++)
			if (groups[i] == srv->group_gid)
				return true;
	}
	return false;
}

static void start_command(struct vty_session *vs, const struct ctl_frame *f)
{
	char *line;
	int rc = CMD_OK;
	const uint8_t *nul;

	if (f->oversized) {
		notice(vs, CTL_OUTPUT, "%% Line too long (%u bytes, at most %d).\n", f->len,
			CMD_LINE_MAX);
		end_reply(vs, CMD_ERR_TOO_LONG);
		return;
	}
	if ((nul = memchr(f->payload, '\0', f->len)) != NULL) {
		notice(vs, CTL_OUTPUT, "%% Invalid character (NUL) at position %zu.\n",
			(size_t)(nul - f->payload) + 1);
		end_reply(vs, CMD_ERR_INVALID);
		return;
	}
	if ((line = strndup((const char *)f->payload, f->len)) == NULL) {
		end_reply(vs, CMD_ERR_FAILED);
		return;
	}
	switch (f->type) {
	case CTL_EXECUTE:
		if (cmd_node_get(vs->cmd.node)->config)
			log_debug(LOG_CAT_EVENTS, "vty %u (uid %u): %.200s", vs->cmd.id,
				vs->cmd.uid, line);
		rc = cmd_execute(&vs->cmd, line);
		break;
	case CTL_DESCRIBE:
		rc = cmd_describe(&vs->cmd, line);
		break;
	default:
		rc = CMD_ERR_PROTOCOL;
		break;
	}
	free(line);
	if (rc == CMD_MORE)
		vs->busy = true;
	else
		end_reply(vs, rc);
}

static void complete_word(void *ctx, const char *word)
{
	struct vty_session *vs = ctx;

	session_write(&vs->cmd, word, strlen(word));
	session_write(&vs->cmd, "\n", 1);
}

static void handle_frame(struct vty_session *vs, const struct ctl_frame *f)
{
	if (!vs->hello_done) {
		uint32_t version, flags;

		if (f->type != CTL_HELLO || f->oversized || f->len < 8) {
			notice(vs, CTL_OUTPUT, "%% Protocol error: expected a hello\n");
			end_reply(vs, CMD_ERR_PROTOCOL);
			vs->closing = true;
			return;
		}
		version = (uint32_t)f->payload[0] << 24 | (uint32_t)f->payload[1] << 16 |
			  (uint32_t)f->payload[2] << 8 | f->payload[3];
		flags = (uint32_t)f->payload[4] << 24 | (uint32_t)f->payload[5] << 16 |
			(uint32_t)f->payload[6] << 8 | f->payload[7];
		if (version != CTL_PROTO_VERSION) {
			notice(vs, CTL_OUTPUT,
				"%% Protocol version %u not supported (daemon speaks %d)\n",
				version, CTL_PROTO_VERSION);
			end_reply(vs, CMD_ERR_PROTOCOL);
			vs->closing = true;
			return;
		}
		vs->hello_done = true;
		ev_timer_stop(vs->srv->loop, vs->linger);
		if (flags & CTL_HELLO_BATCH) {
			vs->cmd.echo_on_error = true;
			if (!vs->cmd.read_only)
				vs->cmd.node = CMD_NODE_ENABLE;
		}
		end_reply(vs, CMD_OK);
		return;
	}
	switch (f->type) {
	case CTL_EXECUTE:
	case CTL_DESCRIBE:
		start_command(vs, f);
		break;
	case CTL_COMPLETE: {
		char *line;
		int rc = CMD_ERR_TOO_LONG;

		if (!f->oversized && memchr(f->payload, '\0', f->len) == NULL &&
			(line = strndup((const char *)f->payload, f->len)) != NULL) {
			rc = cmd_complete(&vs->cmd, line, complete_word, vs);
			free(line);
		}
		end_reply(vs, rc);
		break;
	}
	default:
		notice(vs, CTL_OUTPUT, "%% Protocol error: unexpected frame type %u\n", f->type);
		end_reply(vs, CMD_ERR_PROTOCOL);
		break;
	}
}

static void session_close(struct vty_session *vs)
{
	if (vs->busy)
		cmd_abort(&vs->cmd);
	session_free(vs);
}

/* Does all a session can do now without blocking; may free it. */
static void session_run(struct vty_session *vs)
{
	struct ctl_frame f;
	bool yield = false;

	for (;;) {
		bool progress = false;
		size_t pending = ctl_buf_pending(&vs->out);

		if (ctl_buf_flush(&vs->out, vs->fd) < 0) {
			session_close(vs); /* the peer is gone */
			return;
		}
		if (ctl_buf_pending(&vs->out) < pending)
			vs->last_active = ev_now(vs->srv->loop);
		/* Long output: the next piece once the client has taken the last ones; a few pieces
		   per turn, so that the packet path gets the loop between them. */
		for (int steps = 0; vs->busy && ctl_buf_pending(&vs->out) < VTY_OUTPUT_RESUME;
			steps++) {
			if (steps == VTY_STEPS_PER_TURN) {
				yield = true;
				break;
			}
			int rc = cmd_continue(&vs->cmd);

			chunk_flush(vs);
			if (rc != CMD_MORE)
				end_reply(vs, rc);
			progress = true;
		}
		report_monitor_drops(vs);
		while (!vs->busy && !vs->closing && ctl_buf_pending(&vs->out) < VTY_OUTPUT_MAX &&
			ctl_reader_next(&vs->in, &f) == 1) {
			handle_frame(vs, &f);
			progress = true;
		}
		if (!progress || yield)
			break;
	}
	if (ctl_buf_flush(&vs->out, vs->fd) < 0) {
		session_close(vs);
		return;
	}
	if (vs->closing && ctl_buf_pending(&vs->out) == 0) {
		if (!vs->refused) {
			session_close(vs);
			return;
		}
		if (!vs->shut) {
			shutdown(vs->fd, SHUT_WR); /* the client reads the refusal, then EOF */
			vs->shut = true;
		}
	}
	update_interest(vs);
}

static void session_io(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct vty_session *vs = arg;

	if (events & EV_READ) {
		ssize_t n;

		if (vs->refused || vs->closing) {
			char sink[4096];

			n = read(fd, sink, sizeof(sink));
		} else if (ctl_reader_full(&vs->in)) {
			n = 1; /* requests wait; only EOF or an error could be news */
		} else {
			n = ctl_reader_fill(&vs->in, fd);
			if (n > 0)
				vs->last_active = ev_now(loop);
		}
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			session_close(vs);
			return;
		}
	}
	session_run(vs);
}

/* Out of file descriptors: one held in reserve lets the daemon take the waiting client off the
   queue and close it (else the listener stays readable and the loop spins); then the listener
   rests a moment. */
static void listener_resume(struct ev_loop *loop, void *arg)
{
	struct vty_server *srv = arg;

	ev_io_modify(loop, srv->io, EV_READ);
}

static void out_of_fds(struct vty_server *srv, int fd)
{
	static const char why[] = "% Too many open files, try again later\n";
	struct ctl_buf b = {0};
	int cfd;

	if (srv->emfile_count++ % 1000 == 0)
		log_warnx("control socket: out of file descriptors (%llu times): refusing clients",
			(unsigned long long)srv->emfile_count);
	if (srv->reserve_fd >= 0) {
		close(srv->reserve_fd);
		srv->reserve_fd = -1;
		if ((cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
			if (ctl_buf_frame(&b, CTL_OUTPUT, 0, why, sizeof(why) - 1, NULL, 0) == 0 &&
				ctl_buf_end(&b, CMD_ERR_DENIED, CMD_TERM_LENGTH_UNSET, "") == 0)
				ctl_buf_flush(&b, cfd);
			ctl_buf_free(&b);
			close(cfd);
		}
		srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}
	ev_io_modify(srv->loop, srv->io, 0);
	ev_timer_start(srv->loop, srv->resume, ev_now(srv->loop) + EMFILE_PAUSE_US);
}

/* Who may have a session: root always, up to VTY_MAX_SESSIONS; others share all but
   VTY_ROOT_RESERVED of them, at most VTY_MAX_PER_USER each. NULL, or why not. */
static const char *admission(const struct vty_server *srv, uid_t uid, bool admin, char *why,
	size_t len)
{
	size_t active = srv->nsessions - srv->nrefused - 1; /* the others */

	if (active >= VTY_MAX_SESSIONS || (!admin && active >= VTY_MAX_SESSIONS - VTY_ROOT_RESERVED))
		return "% Too many sessions, try again later";
	if (!admin && sessions_of(srv, uid) > VTY_MAX_PER_USER) {
		snprintf(why, len, "%% Too many sessions for uid %u (at most %d)", uid,
			VTY_MAX_PER_USER);
		return why;
	}
	return NULL;
}

static void listener_io(struct ev_loop *loop, int fd, unsigned events, void *arg)
{
	struct vty_server *srv = arg;

	(void)events;
	for (;;) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct vty_session *vs;
		struct ucred cred;
		socklen_t len = sizeof(cred);

		if (cfd < 0) {
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
				errno == ENOMEM)
				out_of_fds(srv, fd);
			else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
				 errno != ECONNABORTED)
				log_warn("control socket: accept");
			return;
		}
		vs = calloc(1, sizeof(*vs));
		if (vs == NULL) {
			close(cfd);
			continue;
		}
		vs->srv = srv;
		vs->fd = cfd;
		vs->last_active = ev_now(loop);
		cmd_session_init(&vs->cmd, CMD_NODE_EXEC, session_write, vs);
		vs->cmd.filter = session_filter;
		vs->cmd.id = ++srv->next_id;
		ctl_reader_init(&vs->in);
		vs->io = ev_io_add(loop, cfd, EV_READ, session_io, vs);
		vs->linger = ev_timer_new(loop, linger_expired, vs);
		vs->idle = ev_timer_new(loop, idle_expired, vs);
		if (vs->io == NULL || vs->linger == NULL || vs->idle == NULL) {
			if (vs->io != NULL)
				ev_io_del(loop, vs->io);
			ev_timer_free(loop, vs->linger);
			ev_timer_free(loop, vs->idle);
			close(cfd);
			free(vs);
			continue;
		}
		vs->next = srv->sessions;
		srv->sessions = vs;
		srv->nsessions++;
		if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
			refuse(vs, "% Access denied: peer credentials unavailable");
		} else {
			bool admin = cred.uid == 0 || cred.uid == srv->admin_uid;
			const char *full;
			char why[160];

			vs->uid = cred.uid;
			vs->pid = cred.pid;
			vs->cmd.uid = cred.uid;
			if (!admin && !peer_in_group(srv, cfd, &cred)) {
				log_warnx(
					"control socket: uid %u (pid %d) refused: not in group %s",
					cred.uid, cred.pid, srv->group);
				snprintf(why, sizeof(why),
					"%% Access denied: uid %u is neither root nor in group %s",
					cred.uid, srv->group);
				refuse(vs, why);
			} else if ((full = admission(srv, cred.uid, admin, why, sizeof(why))) !=
				   NULL) {
				log_warnx("control socket: uid %u (pid %d) refused: %s", cred.uid,
					cred.pid, full + 2);
				refuse(vs, full);
			} else {
				vs->cmd.read_only = !admin;
			}
		}
		if (!vs->refused) {
			ev_timer_start(loop, vs->linger, ev_now(loop) + VTY_HELLO_TIMEOUT_US);
			idle_arm(vs, idle_timeout_us(cfg_running()));
		}
		session_run(vs);
	}
}

/* ---- server ---- */

static int remove_stale_socket(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	/* only a socket is replaced: never a file, nor what a symlink points to */
	if (lstat(path, &st) == 0 && !S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "%s: exists and is not a socket", path);
		return -1;
	}
	fd = ctl_connect(path);

	if (fd >= 0) {
		close(fd);
		snprintf(err, errlen, "%s: a daemon is already listening there", path);
		return -1;
	}
	if (errno == ENOENT)
		return 0;
	if (errno == ECONNREFUSED && unlink(path) == 0)
		return 0;
	snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return -1;
}

struct vty_server *vty_server_new(
	struct ev_loop *loop, const char *path, const char *group, char *err, size_t errlen)
{
	struct vty_server *srv = calloc(1, sizeof(*srv));
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	struct group *gr;
	mode_t old_umask;

	if (srv == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	srv->loop = loop;
	srv->fd = -1;
	srv->admin_uid = geteuid() == 0 ? 0 : geteuid();
	srv->reserve_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	srv->resume = ev_timer_new(loop, listener_resume, srv);
	srv->path = strdup(path);
	srv->group = strdup(group != NULL ? group : "");
	if (srv->path == NULL || srv->group == NULL || srv->resume == NULL) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (strlen(path) >= sizeof(sun.sun_path)) {
		snprintf(err, errlen, "%s: path too long", path);
		goto fail;
	}
	strcpy(sun.sun_path, path);
	if (remove_stale_socket(path, err, errlen) < 0)
		goto fail;
	srv->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (srv->fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		goto fail;
	}
	old_umask = umask(0117); /* created 0660, never briefly wider */
	if (bind(srv->fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		umask(old_umask);
		snprintf(err, errlen, "bind %s: %s", path, strerror(errno));
		goto fail;
	}
	umask(old_umask);
	if ((gr = getgrnam(srv->group)) != NULL) {
		srv->group_gid = gr->gr_gid;
		srv->group_exists = true;
		if (chown(path, (uid_t)-1, gr->gr_gid) < 0)
			log_warn("control socket: chown %s to group %s", path, srv->group);
	}
	if (chmod(path, 0660) < 0 || listen(srv->fd, 64) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		unlink(path);
		goto fail;
	}
	srv->io = ev_io_add(loop, srv->fd, EV_READ, listener_io, srv);
	if (srv->io == NULL) {
		snprintf(err, errlen, "event loop: %s", strerror(errno));
		unlink(path);
		goto fail;
	}
	the_server = srv;
	log_set_hook(vty_log_hook, srv);
	if (log_hook_fd() >= 0)
		srv->log_io = ev_io_add(loop, log_hook_fd(), EV_READ, log_lines_waiting, srv);
	return srv;
fail:
	if (srv->fd >= 0)
		close(srv->fd);
	if (srv->reserve_fd >= 0)
		close(srv->reserve_fd);
	ev_timer_free(loop, srv->resume);
	free(srv->path);
	free(srv->group);
	free(srv);
	return NULL;
}

void vty_server_free(struct vty_server *srv)
{
	if (srv == NULL)
		return;
	log_set_hook(NULL, NULL);
	if (srv->log_io != NULL)
		ev_io_del(srv->loop, srv->log_io);
	while (srv->sessions != NULL)
		session_close(srv->sessions);
	ev_io_del(srv->loop, srv->io);
	ev_timer_free(srv->loop, srv->resume);
	close(srv->fd);
	if (srv->reserve_fd >= 0)
		close(srv->reserve_fd);
	unlink(srv->path);
	if (the_server == srv)
		the_server = NULL;
	free(srv->path);
	free(srv->group);
	free(srv);
}

/* ---- show users ---- */

static int cmd_show_users(struct cmd_session *s, const struct cmd_args *a)
{
	(void)a;
	if (the_server == NULL)
		return CMD_OK;
	cmd_out(s, "    %-5s %-12s %-7s %-10s %-8s %-9s %s\n", "Line", "User", "Pid", "Mode",
		"Monitor", "Queued", "Dropped");
	for (struct vty_session *vs = the_server->sessions; vs != NULL; vs = vs->next) {
		struct passwd pw, *pwp = NULL;
		char pwbuf[1024], user[16];
		const struct cmd_node_def *n = cmd_node_get(vs->cmd.node);

		if (vs->refused || !vs->hello_done)
			continue;
		if (getpwuid_r(vs->uid, &pw, pwbuf, sizeof(pwbuf), &pwp) == 0 && pwp != NULL)
			snprintf(user, sizeof(user), "%s", pw.pw_name);
		else
			snprintf(user, sizeof(user), "%u", vs->uid);
		cmd_out(s, "%s   %-5u %-12s %-7d %-10s %-8s %-9zu %llu%s\n",
			&vs->cmd == s ? "*" : " ", vs->cmd.id, user, (int)vs->pid,
			n != NULL ? n->name : "?", vs->cmd.monitor ? "yes" : "no",
			ctl_buf_pending(&vs->out), (unsigned long long)vs->monitor_dropped_total,
			vs->cmd.read_only ? " (read-only)" : "");
	}
	return CMD_OK;
}

static const struct cmd_def vty_cmds[] = {
	{.spec = "show users",
		.help = SHOW_STR "Control socket sessions\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_show_users},
};

void vty_install_commands(void)
{
	cmd_install(vty_cmds, CMD_COUNT(vty_cmds));
	settings_install(&vty_module);
	vty_module_installed = true;
}
