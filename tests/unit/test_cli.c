/*
 * Unit tests of the control socket framing and of the vty's bounded output: frames split at
 * every byte, oversized frames skipped, and a command whose output overflows the session
 * buffer truncated with a notice while the reply still ends properly.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cli/command.h"
#include "cli/ctl_proto.h"
#include "router/vty/vty.h"
#include "router/lib/event.h"
#include "router/lib/log.h"
#include "tests/unit/check_run.h"

/* Feeds `data` to a reader through a socketpair `step` bytes at a time; returns frames seen. */
static int feed(const uint8_t *data, size_t len, size_t step, struct ctl_frame *frames, int max,
	uint8_t payloads[][64])
{
	int sv[2], n = 0;
	struct ctl_reader r;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv), 0);
	ctl_reader_init(&r);
	for (size_t off = 0; off < len; off += step) {
		size_t chunk = len - off < step ? len - off : step;
		struct ctl_frame f;

		ck_assert_int_eq(write(sv[0], data + off, chunk), (ssize_t)chunk);
		while (ctl_reader_fill(&r, sv[1]) > 0)
			;
		while (ctl_reader_next(&r, &f) == 1 && n < max) {
			frames[n] = f;
			if (f.payload != NULL)
				memcpy(payloads[n], f.payload, f.len < 64 ? f.len : 64);
			n++;
		}
	}
	ctl_reader_free(&r);
	close(sv[0]);
	close(sv[1]);
	return n;
}

START_TEST(frames_split_anywhere)
{
	struct ctl_buf b = {0};
	struct ctl_frame frames[8];
	uint8_t payloads[8][64];

	ck_assert_int_eq(ctl_buf_frame(&b, CTL_EXECUTE, 0, "show", 4, " version", 8), 0);
	ck_assert_int_eq(ctl_buf_end(&b, CMD_ERR_INVALID, 24, "r1#"), 0);
	ck_assert_int_eq(ctl_buf_frame(&b, CTL_MONITOR, 0, NULL, 0, NULL, 0), 0);
	for (size_t step = 1; step <= ctl_buf_pending(&b); step++) {
		uint32_t term = 0;
		char prompt[16];
		int n = feed(b.data + b.start, ctl_buf_pending(&b), step, frames, 8, payloads);

		ck_assert_int_eq(n, 3);
		ck_assert_int_eq(frames[0].type, CTL_EXECUTE);
		ck_assert_int_eq(frames[0].len, 12);
		ck_assert_mem_eq(payloads[0], "show version", 12);
		ck_assert_int_eq(frames[1].type, CTL_END);
		ck_assert_int_eq(frames[1].status, CMD_ERR_INVALID);
		frames[1].payload = payloads[1];
		ck_assert_int_eq(ctl_end_decode(&frames[1], &term, prompt, sizeof(prompt)), 0);
		ck_assert_uint_eq(term, 24);
		ck_assert_str_eq(prompt, "r1#");
		ck_assert_int_eq(frames[2].type, CTL_MONITOR);
		ck_assert_int_eq(frames[2].len, 0);
	}
	ctl_buf_free(&b);
}
END_TEST

START_TEST(oversized_frame_skipped)
{
	size_t big = CTL_PAYLOAD_MAX + 1000;
	uint8_t *data = calloc(1, 8 + big + 8 + 2);
	struct ctl_frame frames[4];
	uint8_t payloads[4][64];
	int n;

	ck_assert_ptr_nonnull(data);
	data[0] = (uint8_t)(big >> 24);
	data[1] = (uint8_t)(big >> 16);
	data[2] = (uint8_t)(big >> 8);
	data[3] = (uint8_t)big;
	data[5] = CTL_EXECUTE;
	memset(data + 8, 0xff, big); /* would look like a huge header if not skipped */
	data[8 + big + 3] = 2;	     /* then a small frame: len 2, DESCRIBE */
	data[8 + big + 5] = CTL_DESCRIBE;
	memcpy(data + 8 + big + 8, "ok", 2);
	n = feed(data, 8 + big + 10, 4093, frames, 4, payloads);
	ck_assert_int_eq(n, 2);
	ck_assert(frames[0].oversized);
	ck_assert_uint_eq(frames[0].len, big);
	ck_assert(!frames[1].oversized);
	ck_assert_int_eq(frames[1].type, CTL_DESCRIBE);
	ck_assert_mem_eq(payloads[1], "ok", 2);
	free(data);
}
END_TEST

/* A command whose output is written in one go, larger than the session buffer. */
static int cmd_flood(struct cmd_session *s, const struct cmd_args *a)
{
	static char line[1024];

	(void)a;
	memset(line, 'z', sizeof(line) - 1);
	line[sizeof(line) - 2] = '\n';
	for (unsigned i = 0; i < 3 * (VTY_OUTPUT_MAX / sizeof(line)); i++)
		cmd_write(s, line, sizeof(line) - 1);
	return CMD_OK;
}

static const struct cmd_def flood_cmds[] = {
	{.spec = "flood",
		.help = "Too much output\n",
		.modes = CMD_MODES_SHOW,
		.handler = cmd_flood},
};

static void stop_loop(struct ev_loop *loop, void *arg)
{
	(void)arg;
	ev_loop_break(loop);
}

START_TEST(overflow_truncated_and_told)
{
	char dir[] = "/tmp/test-cli-XXXXXX", path[64], err[128];
	uint8_t hello[8] = {0, 0, 0, CTL_PROTO_VERSION, 0, 0, 0, CTL_HELLO_BATCH};
	struct ev_loop *loop;
	struct vty_server *srv;
	struct ev_timer *t;
	struct ctl_reader r;
	struct ctl_frame f;
	int fd, ends = 0, status = -1;
	bool told = false;
	size_t output = 0;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sock", dir);
	loop = ev_loop_new();
	srv = vty_server_new(loop, path, "nonexistent-group", err, sizeof(err));
	ck_assert_msg(srv != NULL, "%s", err);
	fd = ctl_connect(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ctl_send(fd, CTL_HELLO, 0, hello, sizeof(hello)), 0);
	ck_assert_int_eq(ctl_send(fd, CTL_EXECUTE, 0, "flood", 5), 0);
	ck_assert_int_eq(fcntl(fd, F_SETFL, O_NONBLOCK), 0);
	/* The handler writes three times the session's bound at once, whatever the client reads
	   meanwhile: the loop and the client take turns until both replies have ended. */
	t = ev_timer_new(loop, stop_loop, NULL);
	ctl_reader_init(&r);
	for (int round = 0; round < 500 && ends < 2; round++) {
		ev_timer_start(loop, t, ev_time_now() + 20000);
		ev_loop_run(loop);
		for (;;) {
			ssize_t n = ctl_reader_fill(&r, fd);

			while (ctl_reader_next(&r, &f) == 1) {
				if (f.type == CTL_OUTPUT) {
					output += f.len;
					if (memmem(f.payload, f.len, "% Output truncated", 18) !=
						NULL)
						told = true;
				}
				if (f.type == CTL_END) {
					ends++;
					status = f.status;
				}
			}
			if (n <= 0)
				break;
		}
	}
	ck_assert_int_eq(ends, 2); /* hello and flood */
	ck_assert_int_eq(status, CMD_OK);
	ck_assert(told);
	ck_assert_uint_lt(output, 3 * VTY_OUTPUT_MAX);
	ck_assert_uint_ge(output, VTY_OUTPUT_MAX / 2);
	ctl_reader_free(&r);
	close(fd);
	ev_timer_free(loop, t);
	vty_server_free(srv);
	ev_loop_free(loop);
	ck_assert_int_eq(access(path, F_OK), -1); /* socket removed */
	rmdir(dir);
}
END_TEST

static Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("ctl_proto");

	tcase_add_test(tc, frames_split_anywhere);
	tcase_add_test(tc, oversized_frame_skipped);
	suite_add_tcase(s, tc);
	tc = tcase_create("vty");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, overflow_truncated_and_told);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	int rc;

	log_init("test_cli", true, false);
	cmd_engine_init();
	cmd_install(flood_cmds, CMD_COUNT(flood_cmds));
	rc = check_run(cli_suite());
	cmd_engine_free();
	return rc;
}
