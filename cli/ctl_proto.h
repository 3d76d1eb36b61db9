/*
 * The control socket protocol between pgmrouter (client) and pgmrouterd, both halves in one
 * place so they cannot disagree.
 *
 * A unix stream socket carries frames: an 8-byte header (payload length u32, type u16, status
 * u16, all big-endian) and the payload. The client sends requests (HELLO first, then EXECUTE,
 * DESCRIBE for `?`, COMPLETE for TAB), one at a time; the daemon answers each with any number of
 * OUTPUT frames and one END frame (the status, the terminal length and the new prompt).
 * COMPLETE's OUTPUT is one candidate word per line. A command with an output filter (`| include
 * REGEX`) is answered with a FILTER frame before its OUTPUT: the client applies the filter to the
 * reply's output, so that the daemon never runs a regular expression. MONITOR frames (debug and log lines for
 * `terminal monitor`) may arrive at any time, between or inside replies.
 *
 * A frame longer than CTL_PAYLOAD_MAX is skipped by the receiver without being buffered and
 * answered with CMD_ERR_TOO_LONG, so one bad request does not end the session.
 */
#ifndef PGMROUTER_CLI_CTL_PROTO_H
#define PGMROUTER_CLI_CTL_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define CTL_PROTO_VERSION 2
#define CTL_SOCKET_PATH	  "/run/pgmrouterd.sock" /* the daemon's default control socket */
#define CTL_HDR_LEN	  8
#define CTL_PAYLOAD_MAX	  65536
#define CTL_OUTPUT_CHUNK  8192 /* the daemon's OUTPUT frames carry at most this much */

enum ctl_type {
	CTL_HELLO = 1,	  /* payload: u32 version, u32 flags */
	CTL_EXECUTE = 2,  /* payload: the line */
	CTL_COMPLETE = 3, /* payload: the line up to the cursor */
	CTL_DESCRIBE = 4, /* payload: the line up to the cursor */
	CTL_OUTPUT = 16,  /* payload: text */
	CTL_END = 17,	  /* status: enum cmd_status; payload: u32 terminal length, prompt */
	CTL_MONITOR = 18, /* payload: one line, without newline */
	CTL_FILTER = 19,  /* status: enum cmd_filter_kind; payload: the pattern */
};

#define CTL_HELLO_BATCH 0x1 /* -c or piped input: start privileged (admin users only) */

struct ctl_frame {
	uint16_t type;
	uint16_t status;
	uint32_t len;
	const uint8_t *payload; /* valid until the next ctl_reader call */
	bool oversized;		/* len > CTL_PAYLOAD_MAX: payload skipped */
};

/* Incremental frame reader for non-blocking sockets. */
struct ctl_reader {
	uint8_t *buf;
	size_t len;    /* bytes buffered */
	size_t start;  /* first unconsumed byte */
	uint64_t skip; /* bytes of an oversized frame still to be dropped */
};
void ctl_reader_init(struct ctl_reader *r);
void ctl_reader_free(struct ctl_reader *r);
/* Reads what the socket has (one read). Returns bytes read, 0 on EOF, -1 on error (errno;
   EAGAIN when nothing is there). */
ssize_t ctl_reader_fill(struct ctl_reader *r, int fd);
/* 1 and a frame, or 0 when more bytes are needed. */
int ctl_reader_next(struct ctl_reader *r, struct ctl_frame *f);
bool ctl_reader_full(const struct ctl_reader *r);

/* Outgoing bytes. */
struct ctl_buf {
	uint8_t *data;
	size_t start, len, cap; /* pending bytes are data[start..len) */
};
void ctl_buf_free(struct ctl_buf *b);
static inline size_t ctl_buf_pending(const struct ctl_buf *b)
{
	return b->len - b->start;
}
/* Appends one frame whose payload is p1 followed by p2. Returns 0, or -1 out of memory. */
int ctl_buf_frame(struct ctl_buf *b, uint16_t type, uint16_t status, const void *p1, size_t n1,
	const void *p2, size_t n2);
int ctl_buf_end(struct ctl_buf *b, int status, uint32_t term_length, const char *prompt);
/* Writes what the socket takes without blocking. Returns 0, or -1 when the peer is gone. */
int ctl_buf_flush(struct ctl_buf *b, int fd);

/* Blocking helpers for the client. */
int ctl_connect(const char *path); /* fd, or -1 with errno */
int ctl_send(int fd, uint16_t type, uint16_t status, const void *payload, size_t len);
int ctl_recv(int fd, struct ctl_reader *r, struct ctl_frame *f); /* 1, 0 on EOF, -1 */
/* Decodes an END payload. */
int ctl_end_decode(const struct ctl_frame *f, uint32_t *term_length, char *prompt, size_t len);

#endif /* PGMROUTER_CLI_CTL_PROTO_H */
