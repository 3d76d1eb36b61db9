/*
 * Raw socket output: single sends and batches (sendmmsg) deliver the same datagrams in the same
 * order and count every outcome the same way, a refused datagram in the middle of a batch
 * included; multicast through the link layer makes the very frame the IP stack makes, and so
 * does unicast to a neighbour the kernel has confirmed (and only to such a neighbour). Each test
 * runs in a network namespace of its own, so it needs root; without it the tests say so and pass
 * nothing off as checked.
 */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dataplane/wire/pgm_wire.h"
#include "dataplane/rawsock.h"
#include "tests/unit/check_run.h"
#include "tests/unit/netns_test.h"

#define PROTO_PGM 113

/* A network namespace of the test's own, lo up in it; false when it cannot be made (not root). */
static bool rawsock_test_netns(void)
{
	if (!unit_netns_enter("test_rawsock", "test"))
		return false;
	unit_link_set_up("lo", true);
	return true;
}

/* A 20-byte IPv4 header with protocol 113 and a 4-byte payload holding `tag`. */
static size_t rawsock_test_datagram(uint8_t *buf, uint32_t dst_be, uint32_t tag)
{
	uint32_t src = htonl(INADDR_LOOPBACK);

	memset(buf, 0, 24);
	buf[0] = 0x45;
	buf[3] = 24;
	buf[8] = 7; /* TTL, overridden when the socket has one */
	buf[9] = PROTO_PGM;
	memcpy(buf + 12, &src, 4);
	memcpy(buf + 16, &dst_be, 4);
	memcpy(buf + 20, &tag, 4);
	return 24;
}

/* Receives what arrived on the raw receiver: tags in order and the TTL of each. */
static unsigned rawsock_test_receive(int rx, uint32_t *tags, uint8_t *ttls, unsigned max)
{
	unsigned n = 0;
	uint8_t buf[256];

	while (n < max) {
		struct pollfd p = {.fd = rx, .events = POLLIN};
		ssize_t len;

		if (poll(&p, 1, 200) <= 0)
			break;
		len = recv(rx, buf, sizeof(buf), 0);
		if (len < 24)
			continue;
		memcpy(&tags[n], buf + 20, 4);
		ttls[n] = buf[8];
		n++;
	}
	return n;
}

/* What the failure callback was told. */
struct rawsock_test_failed {
	unsigned calls;
	int ifindex, err;
	uint32_t tag;
	size_t len;
};

static void rawsock_test_on_failed(
	void *ctx, int ifindex, const uint8_t *datagram, size_t len, int err)
{
	struct rawsock_test_failed *f = ctx;

	f->calls++;
	f->ifindex = ifindex;
	f->err = err;
	f->len = len;
	if (len >= 24)
		memcpy(&f->tag, datagram + 20, 4);
}

/* Sends tags 1..count to loopback, datagram `bad` (0: none) to an unrouted address instead. */
static void rawsock_test_run(bool batched, unsigned count, unsigned bad, struct rawsock_stats *st,
	uint32_t *tags, uint8_t *ttls, unsigned *received, uint64_t *sent, uint64_t *failed)
{
	struct rawsock_config cfg;
	struct rawsock_test_failed fl = {0};
	struct rawsock *rs;
	char err[256];
	uint8_t dgram[64];
	int rx;

	rawsock_config_default(&cfg);
	cfg.ttl = 33;
	rs = rawsock_open(&cfg, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rawsock_set_failed_fn(rs, rawsock_test_on_failed, &fl);
	rx = socket(AF_INET, SOCK_RAW, PROTO_PGM);
	ck_assert_int_ge(rx, 0);
	*sent = *failed = 0;
	if (batched)
		rawsock_batch_begin(rs);
	for (unsigned i = 1; i <= count; i++) {
		uint32_t dst = i == bad ? htonl(0xc6120001u) /* 198.18.0.1: no route */
					: htonl(INADDR_LOOPBACK);
		size_t len = rawsock_test_datagram(dgram, dst, i);
		int rc = rawsock_send(rs, 0, dgram, len);

		/* batched sends only queue; unbatched ones say what happened */
		if (!batched)
			ck_assert_int_eq(rc, i == bad ? -1 : 0);
		else
			ck_assert_int_eq(rc, 0);
		if (!batched && rc == 0)
			(*sent)++;
		else if (!batched)
			(*failed)++;
	}
	if (batched)
		rawsock_batch_end(rs, sent, failed);
	*received = rawsock_test_receive(rx, tags, ttls, count);
	rawsock_get_stats(rs, st);
	/* the default send buffer, not the system's (the kernel reports it doubled) */
	ck_assert_uint_ge(st->sndbuf_bytes, RAWSOCK_DEFAULT_SNDBUF);
	/* the refused datagram, and only it, reached the failure callback */
	ck_assert_uint_eq(fl.calls, (bad != 0 ? 1u : 0u));
	if (bad != 0) {
		ck_assert_int_eq(fl.ifindex, 0);
		ck_assert_int_eq(fl.err, ENETUNREACH);
		ck_assert_uint_eq(fl.len, 24);
		ck_assert_uint_eq(fl.tag, bad);
	}
	close(rx);
	rawsock_close(rs);
}

START_TEST(test_batch_delivers_in_order_and_counts_like_single_sends)
{
	/* more than one batch's worth, so a full batch sends mid-way */
	enum { COUNT = RAWSOCK_BATCH_MAX + 9, BAD = 5 };
	uint32_t tags[2][COUNT];
	uint8_t ttls[2][COUNT];
	unsigned received[2];
	uint64_t sent[2], failed[2];
	struct rawsock_stats st[2];

	if (!rawsock_test_netns())
		return;
	for (int b = 0; b < 2; b++)
		rawsock_test_run(b == 1, COUNT, BAD, &st[b], tags[b], ttls[b], &received[b],
			&sent[b], &failed[b]);
	for (int b = 0; b < 2; b++) {
		unsigned want = 1;

		ck_assert_uint_eq(received[b], COUNT - 1);
		ck_assert_uint_eq(sent[b], COUNT - 1);
		ck_assert_uint_eq(failed[b], 1);
		ck_assert_uint_eq(st[b].packets, COUNT - 1);
		ck_assert_uint_eq(st[b].bytes, (COUNT - 1) * 24u);
		ck_assert_uint_eq(st[b].unreachable, 1);
		ck_assert_int_eq(st[b].last_errno, ENETUNREACH);
		for (unsigned i = 0; i < received[b]; i++, want++) {
			if (want == BAD)
				want++;
			ck_assert_uint_eq(tags[b][i], want);
			ck_assert_uint_eq(ttls[b][i], 33);
		}
	}
}
END_TEST

START_TEST(test_batch_refuses_malformed_at_once)
{
	struct rawsock *rs;
	struct rawsock_stats st;
	char err[256];
	uint8_t dgram[64];
	uint64_t sent, failed;
	size_t len;

	if (!rawsock_test_netns())
		return;
	rs = rawsock_open(NULL, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rawsock_batch_begin(rs);
	len = rawsock_test_datagram(dgram, htonl(INADDR_LOOPBACK), 1);
	dgram[3] = 99; /* total length disagrees */
	ck_assert_int_eq(rawsock_send(rs, 0, dgram, len), -1);
	ck_assert_int_eq(errno, EINVAL);
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 0);
	ck_assert_uint_eq(failed, 0);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.bad_input, 1);
	ck_assert_uint_eq(st.packets, 0);
	rawsock_close(rs);
}
END_TEST

/* In a batch, rawsock_send_first() sends at once, ahead of what is queued, which stays queued
 * for the batch's end (an NCF before the NAKs upstream of its receive round). */
START_TEST(test_send_first_goes_ahead_of_the_batch)
{
	struct rawsock_config cfg;
	struct rawsock *rs;
	struct rawsock_stats st;
	char err[256];
	uint8_t dgram[64];
	uint32_t tags[8];
	uint8_t ttls[8];
	uint64_t sent, failed;
	size_t len;
	int rx;

	if (!rawsock_test_netns())
		return;
	rawsock_config_default(&cfg);
	cfg.ttl = 33;
	rs = rawsock_open(&cfg, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rx = socket(AF_INET, SOCK_RAW, PROTO_PGM);
	ck_assert_int_ge(rx, 0);
	rawsock_batch_begin(rs);
	len = rawsock_test_datagram(dgram, htonl(INADDR_LOOPBACK), 1);
	ck_assert_int_eq(rawsock_send(rs, 0, dgram, len), 0);
	len = rawsock_test_datagram(dgram, htonl(INADDR_LOOPBACK), 2);
	ck_assert_int_eq(rawsock_send_first(rs, 0, dgram, len, 0), 0);
	/* gone already, the queued one not */
	ck_assert_uint_eq(rawsock_test_receive(rx, tags, ttls, 8), 1);
	ck_assert_uint_eq(tags[0], 2);
	ck_assert_uint_eq(ttls[0], 33);
	len = rawsock_test_datagram(dgram, htonl(INADDR_LOOPBACK), 3);
	ck_assert_int_eq(rawsock_send_first(rs, 0, dgram, len, 9), 0);
	ck_assert_int_eq(rawsock_send(rs, 0, dgram, len), 0); /* the batch still queues */
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 2);
	ck_assert_uint_eq(failed, 0);
	ck_assert_uint_eq(rawsock_test_receive(rx, tags, ttls, 8), 3);
	ck_assert_uint_eq(tags[0], 3);
	ck_assert_uint_eq(ttls[0], 9);
	ck_assert_uint_eq(tags[1], 1);
	ck_assert_uint_eq(tags[2], 3);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.packets, 4);
	close(rx);
	rawsock_close(rs);
}
END_TEST

START_TEST(test_send_ttl_replaces_the_ttl_and_leaves_the_buffer)
{
	struct rawsock_config cfg;
	struct rawsock *rs;
	struct rawsock_stats st;
	char err[256];
	uint8_t dgram[64], before[64];
	uint32_t tags[4];
	uint8_t ttls[4];
	uint64_t sent, failed;
	size_t len;
	int rx;

	if (!rawsock_test_netns())
		return;
	rawsock_config_default(&cfg);
	cfg.ttl = 33; /* a forwarded copy's TTL is its own, not the configured one */
	rs = rawsock_open(&cfg, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rx = socket(AF_INET, SOCK_RAW, PROTO_PGM);
	ck_assert_int_ge(rx, 0);
	len = rawsock_test_datagram(dgram, htonl(INADDR_LOOPBACK), 1);
	memcpy(before, dgram, len);
	ck_assert_int_eq(rawsock_send_ttl(rs, 0, dgram, len, 5), 0);
	rawsock_batch_begin(rs);
	dgram[20] ^= 0x80; /* another tag */
	memcpy(before, dgram, len);
	ck_assert_int_eq(rawsock_send_ttl(rs, 0, dgram, len, 6), 0);
	ck_assert_int_eq(rawsock_send_ttl(rs, 0, dgram, len, 0), -1); /* TTL 0: refused */
	ck_assert_int_eq(errno, EINVAL);
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 1);
	ck_assert_uint_eq(failed, 0);
	ck_assert_mem_eq(dgram, before, len);
	ck_assert_uint_eq(rawsock_test_receive(rx, tags, ttls, 4), 2);
	ck_assert_uint_eq(ttls[0], 5);
	ck_assert_uint_eq(ttls[1], 6);
	ck_assert_uint_ne(tags[0], tags[1]);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.packets, 2);
	ck_assert_uint_eq(st.bad_input, 1);
	close(rx);
	rawsock_close(rs);
}
END_TEST

/* Every frame of PGM over IPv4 leaving cap's interface, up to max, each into its own frame_size
 * bytes of frames (frame i at frames + i * frame_size, cut to frame_size), its length in lens. */
static unsigned rawsock_test_capture(
	int cap, uint8_t *frames, size_t frame_size, size_t *lens, unsigned max)
{
	unsigned n = 0;

	while (n < max) {
		struct pollfd p = {.fd = cap, .events = POLLIN};
		struct sockaddr_ll from;
		socklen_t fl = sizeof(from);
		uint8_t *f = frames + n * frame_size;
		ssize_t len;

		if (poll(&p, 1, 300) <= 0)
			break;
		len = recvfrom(cap, f, frame_size, 0, (struct sockaddr *)&from, &fl);
		if (len < 14 + 20 || from.sll_pkttype != PACKET_OUTGOING || f[12] != 0x08 ||
			f[13] != 0x00 || f[14 + 9] != PROTO_PGM)
			continue; /* IPv6 neighbour discovery and the like */
		lens[n++] = (size_t)len;
	}
	return n;
}

/*
 * A veth pair v0 - v1, up, with 192.0.2.1/24 on v0 and then the shell commands `more` (or
 * none); its ifindex, and a socket capturing what leaves v0.
 */
static int rawsock_test_veth(const char *more, int *ifindex)
{
	struct sockaddr_ll bind_to = {.sll_family = AF_PACKET, .sll_protocol = htons(ETH_P_ALL)};
	char cmd[512];
	int cap;

	snprintf(cmd, sizeof(cmd),
		"ip link add v0 type veth peer name v1 && ip link set v0 up && "
		"ip link set v1 up && ip addr add 192.0.2.1/24 dev v0%s%s",
		more != NULL ? " && " : "", more != NULL ? more : "");
	ck_assert_int_eq(system(cmd), 0);
	*ifindex = (int)if_nametoindex("v0");
	ck_assert_int_gt(*ifindex, 0);
	cap = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	ck_assert_int_ge(cap, 0);
	bind_to.sll_ifindex = *ifindex;
	ck_assert_int_eq(bind(cap, (struct sockaddr *)&bind_to, sizeof(bind_to)), 0);
	return cap;
}

START_TEST(test_link_layer_makes_the_frame_the_ip_stack_makes)
{
	struct rawsock *rs;
	struct rawsock_stats st;
	char err[256];
	uint8_t dgram[64], before[64], frames[6][128];
	size_t lens[6], len;
	uint64_t sent, failed;
	static const uint8_t group_mac[6] = {0x01, 0x00, 0x5e, 0x01, 0x02, 0x03};
	uint8_t h[60];
	int ifindex, cap;

	if (!rawsock_test_netns())
		return;
	cap = rawsock_test_veth(NULL, &ifindex);
	rs = rawsock_open(NULL, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, true), 0);
	len = rawsock_test_datagram(dgram, htonl(0xef010203u) /* 239.1.2.3 */, 7);
	dgram[4] = 0x12; /* an id: kept by both paths */
	dgram[5] = 0x34;
	memcpy(before, dgram, len);

	/* 1: link layer, single; 2: link layer, batched; 3: the IP stack */
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 8), 0);
	rawsock_batch_begin(rs);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 8), 0);
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 1);
	ck_assert_uint_eq(failed, 0);
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, false), 0);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 8), 0);
	/* 4: link layer again, a datagram without an id; 5: link output off, the IP stack */
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, true), 0);
	dgram[4] = dgram[5] = 0;
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 8), 0);
	ck_assert(rawsock_set_link_output(rs, false));
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 8), 0);
	ck_assert_mem_eq(dgram + 6, before + 6, len - 6); /* the caller's buffer untouched */

	ck_assert_uint_eq(rawsock_test_capture(cap, &frames[0][0], sizeof(frames[0]), lens, 6), 5);
	for (int i = 0; i < 5; i++)
		ck_assert_uint_eq(lens[i], 14 + len);
	/* the frames of both paths are the same bytes: addresses, header, checksum, payload */
	ck_assert_mem_eq(frames[0], frames[2], lens[0]);
	ck_assert_mem_eq(frames[1], frames[2], lens[0]);
	ck_assert_mem_eq(frames[0], group_mac, 6);
	ck_assert_uint_eq(frames[0][14 + 8], 8);
	/* without an id, the link layer gives one, as the IP stack does; the checksum covers it */
	ck_assert(frames[3][14 + 4] != 0 || frames[3][14 + 5] != 0);
	ck_assert(frames[4][14 + 4] != 0 || frames[4][14 + 5] != 0);
	memcpy(h, frames[3] + 14, 20);
	h[10] = h[11] = 0;
	ck_assert_uint_eq(
		pgm_ip_header_checksum(h, 20), (unsigned)(frames[3][24] << 8 | frames[3][25]));
	ck_assert_mem_eq(frames[3] + 14 + 20, frames[2] + 14 + 20, len - 20);

	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.packets, 5);
	ck_assert_uint_eq(st.link_packets, 3);
	ck_assert(st.link_available);
	ck_assert(!st.link_output);
	close(cap);
	rawsock_close(rs);
}
END_TEST

/* A unicast datagram from 192.0.2.1 to 192.0.2.<host>, with an id. */
static size_t rawsock_test_unicast(uint8_t *buf, uint8_t host)
{
	static const uint8_t src[4] = {192, 0, 2, 1};
	size_t len = rawsock_test_datagram(buf, htonl(0xc0000200u | host), host);

	memcpy(buf + 12, src, 4);
	buf[4] = 0x56;
	buf[5] = 0x78;
	return len;
}

START_TEST(test_link_layer_unicast_to_a_confirmed_neighbour_only)
{
	struct rawsock *rs;
	struct rawsock_stats st;
	char err[256];
	uint8_t dgram[64], frames[8][128];
	size_t lens[8], len;
	uint64_t sent, failed;
	static const uint8_t neighbour_mac[6] = {0x02, 0x00, 0x5e, 0x10, 0x00, 0x02};
	int ifindex, cap;

	if (!rawsock_test_netns())
		return;
	cap = rawsock_test_veth(
		"ip neigh replace 192.0.2.2 lladdr 02:00:5e:10:00:02 dev v0 nud permanent && "
		"ip neigh replace 192.0.2.3 lladdr 02:00:5e:10:00:03 dev v0 nud stale",
		&ifindex);
	rs = rawsock_open(NULL, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rawsock_get_stats(rs, &st);
	ck_assert_msg(st.neigh_available, "neighbour lookups: %s", strerror(st.neigh_errno));
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, true), 0);

	/* 1: link layer, single; 2: link layer, batched (the answer cached); 3: the IP stack */
	len = rawsock_test_unicast(dgram, 2);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	rawsock_batch_begin(rs);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 1);
	ck_assert(rawsock_set_link_output(rs, false));
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	ck_assert(rawsock_set_link_output(rs, true));
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.link_packets, 2);
	ck_assert_uint_eq(st.link_unicast, 2);
	ck_assert_uint_eq(st.neigh.queries, 1);
	ck_assert_uint_eq(st.neigh.usable, 1);
	/* 4: a STALE neighbour (not confirmed lately) goes by the IP stack, which confirms it */
	len = rawsock_test_unicast(dgram, 3);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	/* an unknown one too (the kernel resolves it; nothing to capture until then) */
	len = rawsock_test_unicast(dgram, 4);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.link_unicast, 2);
	ck_assert_uint_eq(st.neigh.queries, 3);
	ck_assert_uint_eq(st.neigh.unusable, 2);
	ck_assert_uint_eq(st.neigh.errors, 0);

	ck_assert_uint_eq(rawsock_test_capture(cap, &frames[0][0], sizeof(frames[0]), lens, 8), 4);
	for (int i = 0; i < 3; i++)
		ck_assert_uint_eq(lens[i], 14 + len);
	/* both paths make the same bytes: the neighbour's MAC address, header, checksum, payload */
	ck_assert_mem_eq(frames[0], neighbour_mac, 6);
	ck_assert_mem_eq(frames[0], frames[2], lens[0]);
	ck_assert_mem_eq(frames[1], frames[2], lens[0]);
	ck_assert_uint_eq(frames[0][14 + 8], 9);
	ck_assert_uint_eq(frames[3][5], 0x03); /* the STALE neighbour's frame, by the IP stack */

	/* an interface that goes forgets the answers: the next lookup asks again */
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, false), 0);
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, true), 0);
	len = rawsock_test_unicast(dgram, 2);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, len, 9), 0);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.neigh.queries, 4);
	ck_assert_uint_eq(st.link_unicast, 3);
	close(cap);
	rawsock_close(rs);
}
END_TEST

START_TEST(test_link_table_grows_and_refuses_bad_indexes)
{
	struct rawsock *rs;
	char err[256];

	if (!rawsock_test_netns())
		return;
	rs = rawsock_open(NULL, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	ck_assert_int_eq(rawsock_set_link(rs, 0, true), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(rawsock_set_link(rs, -3, true), -1);
	ck_assert_int_eq(rawsock_set_link(rs, RAWSOCK_LINK_MAX_IFINDEX + 1, true), -1);
	ck_assert_int_eq(errno, ERANGE);
	/* an interface of another link layer needs no entry, whatever its index */
	ck_assert_int_eq(rawsock_set_link(rs, RAWSOCK_LINK_MAX_IFINDEX + 1, false), 0);
	ck_assert_int_eq(rawsock_set_link(rs, 5, true), 0);
	ck_assert_int_eq(rawsock_set_link(rs, 200000, false), 0); /* beyond the table: nothing */
	ck_assert_int_eq(rawsock_set_link(rs, RAWSOCK_LINK_MAX_IFINDEX, true), 0); /* grows */
	ck_assert_int_eq(rawsock_set_link(rs, RAWSOCK_LINK_MAX_IFINDEX, false), 0);
	rawsock_close(rs);
}
END_TEST

/*
 * A datagram larger than its interface's MTU (576 here) leaves in fragments, through the link
 * layer and through the IP stack alike, single or batched: 552 data bytes each but the last,
 * MF, the offsets, one id (given where the datagram has none), the TTL of the send, and they
 * reassemble to the datagram. With DF set it is refused and counted, the callback told.
 */
START_TEST(test_larger_than_the_mtu_goes_in_fragments)
{
	static uint8_t dgram[1200], frames[16][2048], whole[1200];
	struct rawsock_test_failed fl = {0};
	struct rawsock_stats st;
	struct rawsock *rs;
	char err[256];
	size_t lens[16];
	uint64_t sent, failed;
	unsigned n;
	int ifindex, cap;

	if (!rawsock_test_netns())
		return;
	cap = rawsock_test_veth("ip link set v0 mtu 576", &ifindex);
	rs = rawsock_open(NULL, err, sizeof(err));
	ck_assert_msg(rs != NULL, "%s", err);
	rawsock_set_failed_fn(rs, rawsock_test_on_failed, &fl);
	ck_assert_int_eq(rawsock_set_mtu(rs, ifindex, 576), 0);
	(void)rawsock_test_datagram(dgram, htonl(0xef010203u) /* 239.1.2.3 */, 7);
	dgram[2] = sizeof(dgram) >> 8;
	dgram[3] = sizeof(dgram) & 0xff;
	for (size_t i = 24; i < sizeof(dgram); i++)
		dgram[i] = (uint8_t)(i * 13);

	/* link layer single, link layer batched, IP stack single */
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, true), 0);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, sizeof(dgram), 9), 0);
	rawsock_batch_begin(rs);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, sizeof(dgram), 9), 0);
	rawsock_batch_end(rs, &sent, &failed);
	ck_assert_uint_eq(sent, 3);
	ck_assert_uint_eq(failed, 0);
	ck_assert_int_eq(rawsock_set_link(rs, ifindex, false), 0);
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, sizeof(dgram), 9), 0);
	n = rawsock_test_capture(cap, &frames[0][0], sizeof(frames[0]), lens, 16);
	ck_assert_uint_eq(n, 9);
	for (unsigned d = 0; d < 3; d++) {
		const uint8_t *f0 = frames[3 * d] + 14;

		ck_assert(f0[4] != 0 || f0[5] != 0);
		memset(whole, 0, sizeof(whole));
		for (unsigned k = 0; k < 3; k++) {
			const uint8_t *f = frames[3 * d + k] + 14;
			size_t flen = lens[3 * d + k] - 14, off;
			unsigned word = (unsigned)(f[6] << 8 | f[7]);
			uint8_t h[20];

			ck_assert_uint_le(flen, 576);
			ck_assert_uint_eq((size_t)(f[2] << 8 | f[3]), flen);
			ck_assert_mem_eq(f + 4, f0 + 4, 2); /* one id */
			ck_assert_uint_eq(f[8], 9);
			off = (size_t)(word & 0x1fff) * 8;
			ck_assert_uint_eq(off, (size_t)k * 552);
			ck_assert_uint_eq((word & 0x2000) != 0, k < 2);
			memcpy(h, f, 20);
			h[10] = h[11] = 0;
			ck_assert_uint_eq(pgm_ip_header_checksum(h, 20), (unsigned)(f[10] << 8 | f[11]));
			memcpy(whole + 20 + off, f + 20, flen - 20);
		}
		ck_assert_mem_eq(whole + 20, dgram + 20, sizeof(dgram) - 20);
	}
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.fragmented, 3);
	ck_assert_uint_eq(st.fragments, 9);
	ck_assert_uint_eq(st.packets, 9);
	ck_assert_uint_eq(fl.calls, 0);

	/* Don't Fragment: refused as the kernel refuses it */
	dgram[6] = 0x40;
	ck_assert_int_eq(rawsock_send_ttl(rs, ifindex, dgram, sizeof(dgram), 9), -1);
	ck_assert_int_eq(errno, EMSGSIZE);
	rawsock_get_stats(rs, &st);
	ck_assert_uint_eq(st.frag_refused, 1);
	ck_assert_uint_eq(st.too_big, 1);
	ck_assert_uint_eq(st.fragmented, 3);
	ck_assert_uint_eq(fl.calls, 1);
	ck_assert_int_eq(fl.err, EMSGSIZE);
	ck_assert_uint_eq(fl.len, sizeof(dgram));
	ck_assert_uint_eq(rawsock_test_capture(cap, &frames[0][0], sizeof(frames[0]), lens, 16), 0);
	/* the MTU table refuses bad indexes, and forgets */
	ck_assert_int_eq(rawsock_set_mtu(rs, 0, 1500), -1);
	ck_assert_int_eq(errno, ERANGE);
	ck_assert_int_eq(rawsock_set_mtu(rs, ifindex, 0), 0);
	ck_assert_int_eq(rawsock_set_mtu(rs, 300000, 0), 0); /* beyond the table: nothing */
	close(cap);
	rawsock_close(rs);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rawsock");
	TCase *tc = tcase_create("batch");

	tcase_add_test(tc, test_batch_delivers_in_order_and_counts_like_single_sends);
	tcase_add_test(tc, test_batch_refuses_malformed_at_once);
	tcase_add_test(tc, test_send_ttl_replaces_the_ttl_and_leaves_the_buffer);
	tcase_add_test(tc, test_send_first_goes_ahead_of_the_batch);
	tcase_add_test(tc, test_link_layer_makes_the_frame_the_ip_stack_makes);
	tcase_add_test(tc, test_link_layer_unicast_to_a_confirmed_neighbour_only);
	tcase_add_test(tc, test_link_table_grows_and_refuses_bad_indexes);
	tcase_add_test(tc, test_larger_than_the_mtu_goes_in_fragments);
	suite_add_tcase(s, tc);
	return check_run(s);
}
