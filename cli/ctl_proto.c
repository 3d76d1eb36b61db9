/*
 * Control socket framing: both the daemon's non-blocking side and the client's blocking side.
 */
#include "cli/ctl_proto.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define READER_CAP (CTL_HDR_LEN + CTL_PAYLOAD_MAX)

static void put_u32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- reader ---- */

void ctl_reader_init(struct ctl_reader *r)
{
	memset(r, 0, sizeof(*r));
}

void ctl_reader_free(struct ctl_reader *r)
{
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

bool ctl_reader_full(const struct ctl_reader *r)
{
	return r->start == 0 && r->len == READER_CAP;
}

ssize_t ctl_reader_fill(struct ctl_reader *r, int fd)
{
	ssize_t n;

	if (r->buf == NULL && (r->buf = malloc(READER_CAP)) == NULL) {
		errno = ENOMEM;
		return -1;
	}
	if (r->start > 0) {
		memmove(r->buf, r->buf + r->start, r->len - r->start);
		r->len -= r->start;
		r->start = 0;
	}
	if (r->len == READER_CAP) {
		errno = ENOBUFS;
		return -1;
	}
	do
		n = read(fd, r->buf + r->len, READER_CAP - r->len);
	while (n < 0 && errno == EINTR);
	if (n > 0)
		r->len += (size_t)n;
	return n;
}

int ctl_reader_next(struct ctl_reader *r, struct ctl_frame *f)
{
	size_t avail;
	uint32_t len;

	if (r->skip > 0) {
		size_t drop = r->len - r->start < r->skip ? r->len - r->start : (size_t)r->skip;

		r->start += drop;
		r->skip -= drop;
		if (r->skip > 0)
			return 0;
	}
	avail = r->len - r->start;
	if (avail < CTL_HDR_LEN)
		return 0;
	len = get_u32(r->buf + r->start);
	memset(f, 0, sizeof(*f));
	f->type = get_u16(r->buf + r->start + 4);
	f->status = get_u16(r->buf + r->start + 6);
	f->len = len;
	if (len > CTL_PAYLOAD_MAX) {
		/* Reported at once; the payload is dropped as it arrives. */
		f->oversized = true;
		r->start += CTL_HDR_LEN;
		r->skip = len;
		avail = r->len - r->start;
		if (avail > 0) {
			size_t drop = avail < r->skip ? avail : (size_t)r->skip;

			r->start += drop;
			r->skip -= drop;
		}
		return 1;
	}
	if (avail < CTL_HDR_LEN + (size_t)len)
		return 0;
	f->payload = r->buf + r->start + CTL_HDR_LEN;
	r->start += CTL_HDR_LEN + len;
	return 1;
}

/* ---- writer ---- */

void ctl_buf_free(struct ctl_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

int ctl_buf_frame(struct ctl_buf *b, uint16_t type, uint16_t status, const void *p1, size_t n1,
	const void *p2, size_t n2)
{
	size_t need = CTL_HDR_LEN + n1 + n2;
	uint8_t *h;

	if (n1 + n2 > CTL_PAYLOAD_MAX)
		return -1;
	if (b->start > 0 && b->start == b->len)
		b->start = b->len = 0;
	if (b->len + need > b->cap) {
		if (b->start > 0) {
			memmove(b->data, b->data + b->start, b->len - b->start);
			b->len -= b->start;
			b->start = 0;
		}
		if (b->len + need > b->cap) {
			size_t cap = b->cap ? b->cap : 16384;
			uint8_t *p;

			while (cap < b->len + need)
				cap *= 2;
			if ((p = realloc(b->data, cap)) == NULL)
				return -1;
			b->data = p;
			b->cap = cap;
		}
	}
	h = b->data + b->len;
	put_u32(h, (uint32_t)(n1 + n2));
	h[4] = (uint8_t)(type >> 8);
	h[5] = (uint8_t)type;
	h[6] = (uint8_t)(status >> 8);
	h[7] = (uint8_t)status;
	if (n1 > 0)
		memcpy(h + CTL_HDR_LEN, p1, n1);
	if (n2 > 0)
		memcpy(h + CTL_HDR_LEN + n1, p2, n2);
	b->len += need;
	return 0;
}

int ctl_buf_end(struct ctl_buf *b, int status, uint32_t term_length, const char *prompt)
{
	uint8_t tl[4];

	put_u32(tl, term_length);
	return ctl_buf_frame(b, CTL_END, (uint16_t)status, tl, sizeof(tl), prompt, strlen(prompt));
}

int ctl_buf_flush(struct ctl_buf *b, int fd)
{
	while (b->start < b->len) {
		ssize_t n = send(
			fd, b->data + b->start, b->len - b->start, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			return -1;
		}
		b->start += (size_t)n;
	}
	b->start = b->len = 0;
	/* A burst of output should not pin a large buffer for the session's lifetime. */
	if (b->cap > (1u << 20)) {
		free(b->data);
		b->data = NULL;
		b->cap = 0;
	}
	return 0;
}

/* ---- client side ---- */

int ctl_connect(const char *path)
{
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	int fd;

	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		int saved = errno;

		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

int ctl_send(int fd, uint16_t type, uint16_t status, const void *payload, size_t len)
{
	struct ctl_buf b = {0};
	int rc = 0;

	if (ctl_buf_frame(&b, type, status, payload, len, NULL, 0) < 0)
		return -1;
	while (b.start < b.len) {
		ssize_t n = send(fd, b.data + b.start, b.len - b.start, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -1;
			break;
		}
		b.start += (size_t)n;
	}
	ctl_buf_free(&b);
	return rc;
}

int ctl_recv(int fd, struct ctl_reader *r, struct ctl_frame *f)
{
	for (;;) {
		ssize_t n;

		if (ctl_reader_next(r, f) == 1)
			return 1;
		n = ctl_reader_fill(r, fd);
		if (n == 0)
			return 0;
		if (n < 0) {
			if (errno == EAGAIN) {
				struct pollfd p = {.fd = fd, .events = POLLIN};

				poll(&p, 1, -1);
				continue;
			}
			return -1;
		}
	}
}

int ctl_end_decode(const struct ctl_frame *f, uint32_t *term_length, char *prompt, size_t len)
{
	size_t plen;

	if (f->type != CTL_END || f->len < 4 || f->oversized || len == 0)
		return -1;
	*term_length = get_u32(f->payload);
	plen = f->len - 4 < len - 1 ? f->len - 4 : len - 1;
	memcpy(prompt, f->payload + 4, plen);
	prompt[plen] = '\0';
	return 0;
}
