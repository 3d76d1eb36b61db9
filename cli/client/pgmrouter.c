/*
 * pgmrouter: the CLI client. A thin terminal for the daemon's command tree: readline with TAB
 * and `?` asking the daemon, a pager for long output, line mode for scripts.
 *
 *	pgmrouter [-s socket] [-c command]...
 *
 * Interactive when stdin and stdout are terminals and no -c is given. Otherwise every -c
 * command (or every line of stdin) runs in order in one session, without prompts; a failing
 * command is echoed after the prompt before its error so the caret points into it; the exit
 * status is 1 when any command failed.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <readline/history.h>
#include <readline/readline.h>

#include "cli/command.h"
#include "cli/ctl_proto.h"
#include "cli/filter.h"

static int sock = -1;
static struct ctl_reader reader;
static char prompt[256];
static uint32_t term_length = CMD_TERM_LENGTH_UNSET;
static bool interactive;
static bool tty_saved;
static struct termios tty_orig;
static volatile sig_atomic_t got_sigint, got_sigwinch;

/* ---- output: plain, paged, collected ---- */

enum sink_kind { SINK_PLAIN, SINK_PAGED, SINK_COLLECT };

struct sink {
	enum sink_kind kind;
	unsigned page_lines; /* lines per page before --More-- */
	unsigned lines;	     /* lines shown on this page */
	bool quit;	     /* q at --More--: drop the rest */
	char **words;	     /* SINK_COLLECT: one entry per line */
	size_t nwords;
	char partial[256];
	size_t partial_len;
};

static int read_key(void)
{
	struct termios raw, saved;
	unsigned char c = 0;

	if (tcgetattr(STDIN_FILENO, &saved) < 0)
		return 'q';
	raw = saved;
	raw.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
	raw.c_cc[VMIN] = 1;
	raw.c_cc[VTIME] = 0;
	tcsetattr(STDIN_FILENO, TCSANOW, &raw);
	while (read(STDIN_FILENO, &c, 1) < 0 && errno == EINTR && !got_sigint)
		;
	tcsetattr(STDIN_FILENO, TCSANOW, &saved);
	return got_sigint ? 'q' : c;
}

/* --More--: space shows the next page, enter one more line, q (or Ctrl-C) the prompt. */
static void more(struct sink *k)
{
	int c;

	fputs("--More--", stdout);
	fflush(stdout);
	c = read_key();
	fputs("\r        \r", stdout);
	if (c == ' ')
		k->lines = 0;
	else if (c == '\r' || c == '\n')
		k->lines = k->page_lines - 1;
	else
		k->quit = true;
}

static void sink_collect(struct sink *k, const char *data, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (data[i] != '\n') {
			if (k->partial_len + 1 < sizeof(k->partial))
				k->partial[k->partial_len++] = data[i];
			continue;
		}
		k->partial[k->partial_len] = '\0';
		char **v = realloc(k->words, (k->nwords + 1) * sizeof(*v));

		if (v != NULL && (v[k->nwords] = strdup(k->partial)) != NULL) {
			k->words = v;
			k->nwords++;
		} else if (v != NULL) {
			k->words = v;
		}
		k->partial_len = 0;
	}
}

static void sink_write(struct sink *k, const char *data, size_t len)
{
	if (k->kind == SINK_COLLECT) {
		sink_collect(k, data, len);
		return;
	}
	if (k->kind == SINK_PLAIN || k->page_lines == 0) {
		fwrite(data, 1, len, stdout);
		return;
	}
	for (size_t i = 0; i < len && !k->quit; i++) {
		if (k->lines >= k->page_lines) {
			fflush(stdout);
			more(k);
			if (k->quit)
				break;
		}
		putchar(data[i]);
		if (data[i] == '\n')
			k->lines++;
	}
}

static unsigned page_lines(void)
{
	struct winsize ws;

	if (term_length == 0)
		return 0;
	if (term_length != CMD_TERM_LENGTH_UNSET)
		return term_length > 1 ? term_length - 1 : 1;
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 1)
		return ws.ws_row - 1u;
	return 23;
}

static void print_monitor(const struct ctl_frame *f)
{
	fwrite(f->payload, 1, f->len, stdout);
	putchar('\n');
}

static void connection_lost(void)
{
	if (tty_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_orig);
	if (interactive)
		rl_callback_handler_remove();
	fprintf(stderr, "\n%% Connection to pgmrouterd closed\n");
	exit(1);
}

static void sink_emit(void *ctx, const char *data, size_t len)
{
	struct sink *k = ctx;

	if (!k->quit)
		sink_write(k, data, len);
}

/* A FILTER frame: this reply's output goes through it. NULL when the pattern is bad (said). */
static struct out_filter *filter_start(const struct ctl_frame *f)
{
	struct out_filter *filter = NULL;
	char err[256], *pattern;

	if (f->oversized || (pattern = strndup((const char *)f->payload, f->len)) == NULL) {
		printf("%% Output filter refused: too long\n");
		return NULL;
	}
	if ((filter = out_filter_new((enum cmd_filter_kind)f->status, pattern, err,
		     sizeof(err))) == NULL)
		printf("%s\n", err);
	free(pattern);
	return filter;
}

/* One request and its reply; returns the status. */
static int request(uint16_t type, const char *line, size_t len, struct sink *k)
{
	struct out_filter *filter = NULL;
	bool filter_failed = false;
	struct ctl_frame f;

	if (ctl_send(sock, type, 0, line, len) < 0)
		connection_lost();
	for (;;) {
		int r = ctl_recv(sock, &reader, &f);

		if (r <= 0)
			connection_lost();
		switch (f.type) {
		case CTL_FILTER:
			out_filter_free(filter);
			filter = filter_start(&f);
			filter_failed = filter == NULL;
			break;
		case CTL_OUTPUT:
			if (k->quit || f.oversized || filter_failed)
				break;
			if (filter != NULL)
				out_filter_write(filter, (const char *)f.payload, f.len, sink_emit, k);
			else
				sink_write(k, (const char *)f.payload, f.len);
			break;
		case CTL_MONITOR:
			if (!f.oversized)
				print_monitor(&f);
			break;
		case CTL_END:
			if (ctl_end_decode(&f, &term_length, prompt, sizeof(prompt)) < 0)
				connection_lost();
			if (filter != NULL)
				out_filter_end(filter, sink_emit, k);
			out_filter_free(filter);
			fflush(stdout);
			return filter_failed && f.status == CMD_OK ? CMD_ERR_FAILED : f.status;
		default:
			break; /* a newer daemon's frame: ignored */
		}
	}
}

static int execute(const char *line, bool paged)
{
	struct sink k = {.kind = paged ? SINK_PAGED : SINK_PLAIN, .page_lines = page_lines()};

	if (strlen(line) > CMD_LINE_MAX) {
		printf("%% Line too long (%zu characters, at most %d).\n", strlen(line),
			CMD_LINE_MAX);
		return CMD_ERR_TOO_LONG;
	}
	return request(CTL_EXECUTE, line, strlen(line), &k);
}

/* ---- interactive: readline in callback mode, the socket watched for monitor lines ---- */

static bool session_closed;

static void on_line(char *line)
{
	if (line == NULL) { /* Ctrl-D */
		putchar('\n');
		session_closed = true;
	} else {
		if (*line != '\0')
			add_history(line);
		if (execute(line, true) == CMD_CLOSE)
			session_closed = true;
		free(line);
	}
	if (session_closed)
		rl_callback_handler_remove(); /* no prompt after the last line */
	else
		rl_set_prompt(prompt);
}

static int on_help(int count, int key)
{
	struct sink k = {.kind = SINK_PLAIN};

	(void)count;
	(void)key;
	rl_point = rl_point > rl_end ? rl_end : rl_point;
	fputs("?\n", stdout);
	request(CTL_DESCRIBE, rl_line_buffer, (size_t)rl_point, &k);
	rl_on_new_line();
	rl_redisplay();
	return 0;
}

static int on_ctrl_z(int count, int key)
{
	(void)count;
	(void)key;
	/* IOS: Ctrl-Z leaves configuration mode; elsewhere it does nothing. */
	if (strstr(prompt, "(config") == NULL)
		return 0;
	fputs("^Z\n", stdout);
	execute("end", false);
	rl_set_prompt(prompt);
	rl_replace_line("", 0);
	rl_on_new_line();
	rl_redisplay();
	return 0;
}

static char **completion_words;
static size_t completion_count, completion_next;

static char *completion_generator(const char *text, int state)
{
	(void)text;
	if (state == 0)
		completion_next = 0;
	if (completion_next < completion_count)
		return strdup(completion_words[completion_next++]);
	return NULL;
}

static char **on_complete(const char *text, int start, int end)
{
	struct sink k = {.kind = SINK_COLLECT};
	char **matches;

	(void)start;
	rl_attempted_completion_over = 1; /* never file names */
	request(CTL_COMPLETE, rl_line_buffer, (size_t)end, &k);
	completion_words = k.words;
	completion_count = k.nwords;
	matches = completion_count > 0 ? rl_completion_matches(text, completion_generator) : NULL;
	for (size_t i = 0; i < k.nwords; i++)
		free(k.words[i]);
	free(k.words);
	completion_words = NULL;
	completion_count = 0;
	return matches;
}

static void on_signal(int signo)
{
	if (signo == SIGINT)
		got_sigint = 1;
	else if (signo == SIGWINCH)
		got_sigwinch = 1;
}

static void restore_tty(void)
{
	if (tty_saved)
		tcsetattr(STDIN_FILENO, TCSANOW, &tty_orig);
}

static int run_interactive(void)
{
	struct sigaction sa = {.sa_handler = on_signal};
	struct termios t;

	/* Ctrl-Z reaches readline as a key instead of stopping the client. */
	if (tcgetattr(STDIN_FILENO, &tty_orig) == 0) {
		tty_saved = true;
		atexit(restore_tty);
		t = tty_orig;
		t.c_cc[VSUSP] = _POSIX_VDISABLE;
		tcsetattr(STDIN_FILENO, TCSANOW, &t);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGWINCH, &sa, NULL);
	rl_catch_signals = 0;
	rl_catch_sigwinch = 0;
	rl_readline_name = "pgmrouter";
	rl_attempted_completion_function = on_complete;
	rl_bind_key('?', on_help);
	rl_bind_key(26, on_ctrl_z);
	rl_callback_handler_install(prompt, on_line);
	while (!session_closed) {
		struct pollfd p[2] = {
			{.fd = STDIN_FILENO, .events = POLLIN}, {.fd = sock, .events = POLLIN}};
		struct ctl_frame f;

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (got_sigwinch) {
			got_sigwinch = 0;
			rl_resize_terminal();
		}
		if (got_sigint) {
			/* Ctrl-C abandons the line being typed */
			got_sigint = 0;
			rl_free_line_state();
			rl_replace_line("", 0);
			fputs("\n", stdout);
			rl_on_new_line();
			rl_redisplay();
			continue;
		}
		if (p[1].revents != 0) {
			ssize_t n = ctl_reader_fill(&reader, sock);

			if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
				connection_lost();
			while (ctl_reader_next(&reader, &f) == 1) {
				if (f.type != CTL_MONITOR || f.oversized)
					continue;
				rl_clear_visible_line();
				print_monitor(&f);
				rl_forced_update_display();
			}
		}
		if (p[0].revents != 0)
			rl_callback_read_char();
	}
	if (!session_closed)
		rl_callback_handler_remove();
	return 0;
}

/* ---- line mode ---- */

static bool failed;

static bool run_line(const char *line)
{
	int rc = execute(line, false);

	if (rc != CMD_OK && rc != CMD_CLOSE)
		failed = true;
	return rc != CMD_CLOSE;
}

static void usage(void)
{
	fprintf(stderr, "usage: pgmrouter [-s socket] [-c command]...\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *path = CTL_SOCKET_PATH;
	const char **commands = NULL;
	size_t ncommands = 0;
	uint8_t hello[8] = {0, 0, 0, CTL_PROTO_VERSION, 0, 0, 0, 0};
	struct ctl_frame f;
	int ch;

	while ((ch = getopt(argc, argv, "c:s:h")) != -1) {
		switch (ch) {
		case 'c': {
			const char **v = realloc(commands, (ncommands + 1) * sizeof(*v));

			if (v == NULL)
				return 1;
			commands = v;
			commands[ncommands++] = optarg;
			break;
		}
		case 's':
			path = optarg;
			break;
		default:
			usage();
		}
	}
	if (optind != argc)
		usage();
	interactive = ncommands == 0 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO);

	if ((sock = ctl_connect(path)) < 0) {
		fprintf(stderr, "pgmrouter: cannot connect to %s: %s (is pgmrouterd running?)\n",
			path, strerror(errno));
		return 1;
	}
	ctl_reader_init(&reader);
	if (!interactive)
		hello[7] = CTL_HELLO_BATCH;
	if (ctl_send(sock, CTL_HELLO, 0, hello, sizeof(hello)) < 0)
		connection_lost();
	for (;;) {
		if (ctl_recv(sock, &reader, &f) <= 0)
			connection_lost();
		if (f.type == CTL_OUTPUT)
			fwrite(f.payload, 1, f.len, stderr);
		if (f.type != CTL_END)
			continue;
		if (f.status != CMD_OK)
			return 1; /* refused: the daemon said why */
		if (ctl_end_decode(&f, &term_length, prompt, sizeof(prompt)) < 0)
			connection_lost();
		break;
	}

	if (interactive)
		return run_interactive();
	if (ncommands > 0) {
		/* like vtysh -c: each may hold several lines */
		for (size_t i = 0; i < ncommands; i++) {
			char *copy = strdup(commands[i]), *save = NULL;
			bool more_lines = true;

			if (copy == NULL)
				return 1;
			for (char *l = strtok_r(copy, "\n", &save); l != NULL && more_lines;
				l = strtok_r(NULL, "\n", &save))
				more_lines = run_line(l);
			free(copy);
			if (!more_lines)
				break;
		}
	} else {
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;

		while ((n = getline(&line, &cap, stdin)) >= 0) {
			while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
				line[--n] = '\0';
			if (!run_line(line))
				break;
		}
		free(line);
	}
	free(commands);
	ctl_reader_free(&reader);
	close(sock);
	return failed ? 1 : 0;
}
