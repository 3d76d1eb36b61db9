/*
 * libFuzzer target for the control-socket framing (cli/ctl_proto.c), as both ends read it: the
 * input is a byte stream cut into reads (each chunk preceded by its length byte), fed through a
 * pipe to ctl_reader_fill() and taken apart by ctl_reader_next(), as the daemon reads requests
 * and the client replies. Every frame must lie within what arrived; oversized ones are reported
 * once and skipped; END payloads go through ctl_end_decode(); each frame, written again with
 * ctl_buf_frame(), reads back the same.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/ctl_proto.h"
#include "tests/fuzz/fuzz.h"


static int fds[2] = {-1, -1};

/* The frame written again reads back the same. */
static void roundtrip(const struct ctl_frame *f)
{
	struct ctl_buf b = {0};
	struct ctl_reader r;
	struct ctl_frame g;
	size_t half = f->len / 2;

	CHECK(ctl_buf_frame(&b, f->type, f->status, f->payload, half, f->payload + half,
		      f->len - half) == 0);
	CHECK(ctl_buf_pending(&b) == CTL_HDR_LEN + (size_t)f->len);
	ctl_reader_init(&r);
	CHECK(write(fds[1], b.data + b.start, ctl_buf_pending(&b)) ==
	      (ssize_t)ctl_buf_pending(&b));
	while (ctl_reader_next(&r, &g) == 0)
		CHECK(ctl_reader_fill(&r, fds[0]) > 0);
	CHECK(g.type == f->type && g.status == f->status && g.len == f->len && !g.oversized);
	CHECK(f->len == 0 || memcmp(g.payload, f->payload, f->len) == 0);
	ctl_reader_free(&r);
	ctl_buf_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ctl_reader r;
	struct ctl_frame f;
	size_t pos = 0, arrived = 0, consumed = 0;

	ctl_reader_init(&r);
	while (pos < size) {
		size_t chunk = data[pos++] * 64u + 1;

		if (chunk > size - pos)
			chunk = size - pos;
		if (chunk > 0) {
			ssize_t n;

			CHECK(write(fds[1], data + pos, chunk) == (ssize_t)chunk);
			pos += chunk;
			arrived += chunk;
			/* a full reader answers ENOBUFS: the daemon drops such a session */
			while ((n = ctl_reader_fill(&r, fds[0])) > 0)
				;
			CHECK(n < 0 && (errno == EAGAIN || errno == ENOBUFS));
			if (errno == ENOBUFS)
				break;
		}
		while (ctl_reader_next(&r, &f) == 1) {
			char prompt[64];
			uint32_t term;

			if (f.oversized) {
				CHECK(f.len > CTL_PAYLOAD_MAX && f.payload == NULL);
				consumed += CTL_HDR_LEN + (size_t)f.len;
				continue;
			}
			CHECK(f.len <= CTL_PAYLOAD_MAX);
			consumed += CTL_HDR_LEN + (size_t)f.len;
			CHECK(consumed <= arrived);
			if (ctl_end_decode(&f, &term, prompt, sizeof(prompt)) == 0)
				CHECK(f.type == CTL_END && strlen(prompt) < sizeof(prompt));
			roundtrip(&f);
		}
	}
	/* drain what the pipe still holds (a reader that gave up) */
	{
		uint8_t sink[4096];

		while (read(fds[0], sink, sizeof(sink)) > 0)
			;
	}
	ctl_reader_free(&r);
	return 0;
}

/* ---- setup and seed mode ---- */

static void seed(const char *dir, const char *name, const uint8_t *frames, size_t len)
{
	char path[4096];
	FILE *fp;
	uint8_t buf[1024];
	size_t n = 0;

	/* one chunk per 64 bytes of stream: whole frames mostly, some cut */
	for (size_t i = 0; i < len; i += 64) {
		size_t c = len - i < 64 ? len - i : 64;

		buf[n++] = 0; /* a chunk of 1 byte, then the rest in one */
		buf[n++] = frames[i];
		if (c > 1) {
			buf[n++] = 0;
			memcpy(buf + n, frames + i + 1, 1);
			n += 1;
			buf[n++] = (uint8_t)1;
			memcpy(buf + n, frames + i + 2, c - 2);
			n += c - 2;
		}
	}
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fp = fopen(path, "wb");
	if (fp == NULL || fwrite(buf, 1, n, fp) != n) {
		perror(path);
		exit(1);
	}
	fclose(fp);
}

static void write_seeds(const char *dir)
{
	struct ctl_buf b = {0};
	static const uint8_t hello[8] = {0, 0, 0, CTL_PROTO_VERSION, 0, 0, 0, CTL_HELLO_BATCH};
	static const char *lines[] = {"show ip pgm router", "configure terminal", "sh ip pgm ro ?",
		"interface eth1"};

	ctl_buf_frame(&b, CTL_HELLO, 0, hello, sizeof(hello), NULL, 0);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
		ctl_buf_frame(&b, (uint16_t)(CTL_EXECUTE + i % 3), 0, lines[i], strlen(lines[i]),
			NULL, 0);
	seed(dir, "requests", b.data + b.start, ctl_buf_pending(&b));
	ctl_buf_free(&b);
	memset(&b, 0, sizeof(b));
	ctl_buf_frame(&b, CTL_OUTPUT, 0, "PGM router: running\n", 20, NULL, 0);
	ctl_buf_frame(&b, CTL_MONITOR, 0, "debug line", 10, NULL, 0);
	ctl_buf_end(&b, 0, 24, "r1#");
	seed(dir, "replies", b.data + b.start, ctl_buf_pending(&b));
	ctl_buf_free(&b);
	{
		/* a header announcing more than CTL_PAYLOAD_MAX, then a frame */
		static const uint8_t big[] = {0, 2, 0, 0, 0, CTL_EXECUTE, 0, 0, 'x', 'y', 0, 0, 0,
			2, 0, CTL_EXECUTE, 0, 0, 'o', 'k'};

		seed(dir, "oversized", big, sizeof(big));
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("PGM_FUZZ_SEED_DIR");

	(void)argc;
	(void)argv;
	if (dir != NULL) {
		write_seeds(dir);
		exit(0);
	}
	if (pipe2(fds, O_NONBLOCK) != 0) {
		perror("pipe2");
		exit(1);
	}
	/* room for the largest frame the round trip writes at once */
	fcntl(fds[1], F_SETPIPE_SZ, 1 << 20);
	return 0;
}
