/*
 * Drives the interactive client through a pseudo-terminal, as a user would: `?`, TAB, the pager,
 * Ctrl-Z, Ctrl-C, monitor lines arriving while a line is being typed.
 *
 *	cli-pty CLIENT SOCKET
 *
 * Each step sends keys and waits (bounded) for a text to appear; prints one line per step and
 * exits non-zero if any step failed.
 */
#include <errno.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int master = -1;
static char seen[1 << 20];
static size_t seen_len, mark;
static int failures;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads until `text` appears after the mark, or the time is up. */
static bool expect(const char *text, int timeout_ms)
{
	long long end = now_ms() + timeout_ms;

	for (;;) {
		struct pollfd p = {.fd = master, .events = POLLIN};
		long long left = end - now_ms();

		seen[seen_len] = '\0';
		if (strstr(seen + mark, text) != NULL)
			return true;
		if (left <= 0 || seen_len + 1 >= sizeof(seen))
			return false;
		if (poll(&p, 1, (int)left) > 0) {
			ssize_t n = read(master, seen + seen_len, sizeof(seen) - 1 - seen_len);

			if (n <= 0)
				return false;
			seen_len += (size_t)n;
		}
	}
}

static void send_keys(const char *keys)
{
	mark = seen_len;
	if (write(master, keys, strlen(keys)) < 0)
		perror("write");
}

static void step(const char *name, const char *keys, const char *want)
{
	send_keys(keys);
	if (expect(want, 15000)) {
		printf("ok   pty: %s\n", name);
	} else {
		failures++;
		printf("FAIL pty: %s (wanted \"%s\"; got \"%.300s\")\n", name, want, seen + mark);
	}
}

/* The text between the mark and `until` must not contain `text`. */
static void step_absent(const char *name, const char *keys, const char *until, const char *text)
{
	send_keys(keys);
	if (expect(until, 15000) && strstr(seen + mark, text) == NULL) {
		printf("ok   pty: %s\n", name);
	} else {
		failures++;
		printf("FAIL pty: %s\n", name);
	}
}

int main(int argc, char **argv)
{
	struct winsize ws = {.ws_row = 12, .ws_col = 80};
	char cmd[1024];
	pid_t pid;
	int status;

	if (argc != 3) {
		fprintf(stderr, "usage: cli-pty CLIENT SOCKET\n");
		return 2;
	}
	pid = forkpty(&master, NULL, NULL, &ws);
	if (pid < 0) {
		perror("forkpty");
		return 2;
	}
	if (pid == 0) {
		setenv("TERM", "xterm", 1);
		setenv("INPUTRC", "/dev/null", 1);
		execl(argv[1], "pgmrouter", "-s", argv[2], (char *)NULL);
		_exit(127);
	}
	mark = 0;
	if (expect("t9>", 15000))
		printf("ok   pty: interactive session starts in exec mode\n");
	else
		printf("FAIL pty: no exec prompt\n"), failures++;

	step("? inside a word lists completions, the line is kept", "sh?", "show  \r\nt9>sh");
	step("TAB completes keywords", "\x15sh\tver\t| include uptime\r", "t9 uptime is");
	step("enable", "en\r", "t9#");
	step("? after a space lists the next words with help", "show ?",
		"running-config  Current operating configuration");
	step("the ? is not inserted in the line", "version | include uptime\r", "t9 uptime is");
	step("configure terminal", "configure terminal\r", "t9(config)#");
	step("Ctrl-Z leaves configuration mode", "\x1a", "^Z\r\nt9#");
	step("terminal length: the pager stops at --More--",
		"terminal length 5\rshow running-config\r", "--More--");
	step("space shows the next page", " ", "--More--");
	step("q stops the output", "q", "t9#");
	step_absent("terminal length 0: no pager", "terminal length 0\rshow running-config\r",
		"end\r\n", "--More--");
	step("terminal monitor", "terminal monitor\r", "t9#");
	send_keys("show ver");
	expect("show ver", 5000);
	snprintf(cmd, sizeof(cmd),
		"'%s' -s '%s' -c 'debug ip pgm router events' -c 'configure terminal' "
		"-c 'hostname t9' -c 'end' -c 'undebug all' >/dev/null",
		argv[1], argv[2]);
	mark = seen_len;
	if (system(cmd) != 0)
		printf("FAIL pty: could not run %s\n", cmd), failures++;
	if (expect("hostname t9\r\n", 15000) && expect("t9#show ver", 15000)) {
		printf("ok   pty: a monitor line appears and the half-typed line is redrawn\n");
	} else {
		failures++;
		printf("FAIL pty: monitor line (got \"%.300s\")\n", seen + mark);
	}
	step("Ctrl-C abandons the line", "\x03", "\r\nt9#");
	step_absent("the abandoned line is not executed", "show history\r", "  show history",
		"  show ver\r");
	send_keys("exit\r");
	for (int i = 0; i < 150 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(100000);
	if (waitpid(pid, &status, WNOHANG) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		printf("FAIL pty: exit did not end the client\n");
		failures++;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
		printf("ok   pty: exit ends the client with status 0\n");
	} else {
		printf("FAIL pty: client exit status %d\n", status);
		failures++;
	}
	return failures == 0 ? 0 : 1;
}
