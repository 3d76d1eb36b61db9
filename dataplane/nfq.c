/*
 * NFQUEUE consumer, after libnetfilter_queue's examples/nf-queue.c: libmnl socket, one queue,
 * whole-packet copies, fail-open, GSO, no conntrack, large receive buffer, NETLINK_NO_ENOBUFS,
 * batch verdicts.
 */
#include "dataplane/nfq.h"

#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libmnl/libmnl.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_queue.h>
#include <libnetfilter_queue/libnetfilter_queue.h>

#include "dataplane/netlink.h"

/* Room for a whole 64 KiB copy plus the netlink headers and every attribute around it. */
#define NFQUEUE_SLOT_SIZE (NFQUEUE_MAX_PAYLOAD + 8192u)
/* Verdicts are collected here; a rewritten payload needs one whole slot. */
#define NFQUEUE_TXBUF_SIZE	 (4u * NFQUEUE_SLOT_SIZE)
#define NFQUEUE_MAX_BATCH	 1024u
#define NFQUEUE_SMALL_MSG	 256u /* a verdict or configuration message without payload */
#define NFQUEUE_SETUP_TIMEOUT_MS 2000

#define PROC_NFQUEUE "/proc/net/netfilter/nfnetlink_queue"
#define PROC_NETLINK "/proc/net/netlink"

struct nfqueue {
	struct mnl_socket *nl;
	int fd;
	uint32_t portid;
	uint16_t queue_num;
	nfqueue_packet_fn fn;
	void *ctx;

	unsigned batch;
	uint32_t hold_drops; /* held drops (nfq.h): the most a round may leave unsent */
	uint8_t *rxbuf;	     /* batch slots of NFQUEUE_SLOT_SIZE */
	struct mmsghdr *msgs;
	struct iovec *iovs;

	uint8_t *txbuf;
	size_t txlen;
	unsigned tx_verdicts; /* verdicts inside txbuf, for counting losses */

	struct nfqueue_batcher order;
	nfqueue_round_fn before_verdicts;
	void *before_verdicts_ctx;

	struct nfqueue_stats st;
};

void nfqueue_config_default(struct nfqueue_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->rcvbuf_bytes = NFQUEUE_DEFAULT_RCVBUF;
	cfg->max_queue_len = NFQUEUE_DEFAULT_MAX_QUEUE_LEN;
	cfg->batch = NFQUEUE_DEFAULT_BATCH;
}

static int nfqueue_send_raw(struct nfqueue *q, const void *buf, size_t len)
{
	ssize_t n;

	do {
		n = mnl_socket_sendto(q->nl, buf, len);
	} while (n < 0 && errno == EINTR);
	q->st.sends++;
	return n < 0 ? -1 : 0;
}

/* ---- setup ---- */

/* Reads a whole small procfs file into a malloc'ed string. */
static char *read_proc(const char *path)
{
	FILE *f = fopen(path, "re");
	size_t cap = 16384, len = 0;
	char *buf;

	if (f == NULL)
		return NULL;
	buf = malloc(cap);
	while (buf != NULL) {
		size_t n = fread(buf + len, 1, cap - len - 1, f);

		len += n;
		if (n == 0 || len + 1 < cap)
			break;
		char *bigger = realloc(buf, cap * 2);

		if (bigger == NULL) {
			free(buf);
			buf = NULL;
			break;
		}
		buf = bigger;
		cap *= 2;
	}
	fclose(f);
	if (buf != NULL)
		buf[len] = '\0';
	return buf;
}

/* Reads the peer port id bound to queue_num from procfs (0 if none or unknown). */
static uint32_t nfqueue_proc_peer(uint16_t queue_num)
{
	struct nfqueue_kernel_stats ks;
	char *text = read_proc(PROC_NFQUEUE);
	bool found;

	if (text == NULL)
		return 0;
	found = nfqueue_parse_proc_queue(text, queue_num, &ks);
	free(text);
	return found ? ks.peer_portid : 0;
}

/* Waits for the acknowledgement of message `seq`; returns 0 or a positive errno. Packets that
 * arrive meanwhile (the queue is bound before its parameters are set) are accepted at once. */
static int nfqueue_wait_ack(struct nfqueue *q, uint32_t seq)
{
	uint8_t *buf = q->rxbuf;

	for (;;) {
		struct pollfd pfd = {.fd = q->fd, .events = POLLIN};
		int pr = poll(&pfd, 1, NFQUEUE_SETUP_TIMEOUT_MS);
		ssize_t n;

		if (pr < 0 && errno == EINTR)
			continue;
		if (pr <= 0)
			return pr == 0 ? ETIMEDOUT : errno;
		n = recv(q->fd, buf, NFQUEUE_SLOT_SIZE, MSG_DONTWAIT);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return errno;
		}
		int remaining = (int)n;

		for (const struct nlmsghdr *nlh = (const void *)buf; netlink_msg_ok(nlh, remaining);
			nlh = mnl_nlmsg_next(nlh, &remaining)) {
			if (nlh->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

				if (nlh->nlmsg_len < mnl_nlmsg_size(sizeof(*e)))
					continue;
				if (nlh->nlmsg_seq == seq)
					return -e->error;
				continue;
			}
			if ((nlh->nlmsg_type & 0xff) == NFQNL_MSG_PACKET) {
				struct nlattr *attr[NFQA_MAX + 1] = {0};
				_Alignas(8) char vbuf[NFQUEUE_SMALL_MSG] = {0};
				struct nlmsghdr *v;

				if (nfq_nlmsg_parse(nlh, attr) < 0 || attr[NFQA_PACKET_HDR] == NULL)
					continue;
				const struct nfqnl_msg_packet_hdr *ph =
					mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
				v = nfq_nlmsg_put(vbuf, NFQNL_MSG_VERDICT, q->queue_num);
				nfq_nlmsg_verdict_put(v, (int)ntohl(ph->packet_id), NF_ACCEPT);
				if (nfqueue_send_raw(q, v, v->nlmsg_len) == 0)
					q->st.accepted++;
				q->st.verdict_messages++;
			}
		}
	}
}

static int nfqueue_config_request(struct nfqueue *q, uint32_t seq,
	void (*fill)(struct nlmsghdr *, const void *), const void *arg)
{
	_Alignas(8) char buf[NFQUEUE_SMALL_MSG] = {0}; /* attribute padding goes out as is */
	struct nlmsghdr *nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue_num);

	nlh->nlmsg_flags |= NLM_F_ACK;
	nlh->nlmsg_seq = seq;
	fill(nlh, arg);
	if (nfqueue_send_raw(q, nlh, nlh->nlmsg_len) < 0)
		return errno;
	return nfqueue_wait_ack(q, seq);
}

static void fill_bind(struct nlmsghdr *nlh, const void *arg)
{
	(void)arg;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_BIND);
}

static void fill_unbind(struct nlmsghdr *nlh, const void *arg)
{
	(void)arg;
	nfq_nlmsg_cfg_put_cmd(nlh, AF_INET, NFQNL_CFG_CMD_UNBIND);
}

static void fill_params(struct nlmsghdr *nlh, const void *arg)
{
	struct nfqnl_msg_config_params params;

	(void)arg;
	/* Built here rather than with nfq_nlmsg_cfg_put_params so that the struct's padding is
	 * zeroed, not stack garbage sent to the kernel. */
	memset(&params, 0, sizeof(params));
	params.copy_range = htonl(NFQUEUE_MAX_PAYLOAD);
	params.copy_mode = NFQNL_COPY_PACKET;
	mnl_attr_put(nlh, NFQA_CFG_PARAMS, sizeof(params), &params);
}

static void fill_flags(struct nlmsghdr *nlh, const void *arg)
{
	/* Fail-open keeps PGM flowing when we fall behind; GSO spares the kernel segmenting for
	 * us; conntrack, uid/gid and security context are not needed: the mask switches them off
	 * explicitly in case someone else's configuration of this queue left them on. */
	uint32_t mask = NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO | NFQA_CFG_F_CONNTRACK |
			NFQA_CFG_F_UID_GID | NFQA_CFG_F_SECCTX;

	(void)arg;
	mnl_attr_put_u32(nlh, NFQA_CFG_FLAGS, htonl(NFQA_CFG_F_FAIL_OPEN | NFQA_CFG_F_GSO));
	mnl_attr_put_u32(nlh, NFQA_CFG_MASK, htonl(mask));
}

static void fill_maxlen(struct nlmsghdr *nlh, const void *arg)
{
	nfq_nlmsg_cfg_put_qmaxlen(nlh, *(const uint32_t *)arg);
}

static void nfqueue_free(struct nfqueue *q)
{
	if (q->nl != NULL)
		mnl_socket_close(q->nl);
	free(q->rxbuf);
	free(q->msgs);
	free(q->iovs);
	free(q->txbuf);
	free(q);
}

/* The receive buffer the kernel gave (it doubles the request for its overhead). */
static void nfqueue_read_rcvbuf(struct nfqueue *q)
{
	int val;
	socklen_t len = sizeof(val);

	if (getsockopt(q->fd, SOL_SOCKET, SO_RCVBUF, &val, &len) == 0)
		q->st.rcvbuf_bytes = (uint32_t)val;
}

struct nfqueue *nfqueue_open(const struct nfqueue_config *cfg_in, nfqueue_packet_fn fn, void *ctx,
	char *err, size_t errlen)
{
	struct nfqueue_config cfg;
	struct nfqueue *q;
	int one = 1, e;

	nfqueue_config_default(&cfg);
	if (cfg_in != NULL) {
		cfg.queue_num = cfg_in->queue_num;
		if (cfg_in->rcvbuf_bytes)
			cfg.rcvbuf_bytes = cfg_in->rcvbuf_bytes;
		if (cfg_in->max_queue_len)
			cfg.max_queue_len = cfg_in->max_queue_len;
		if (cfg_in->batch)
			cfg.batch = cfg_in->batch > NFQUEUE_MAX_BATCH ? NFQUEUE_MAX_BATCH
								      : cfg_in->batch;
	}
	if (fn == NULL) {
		snprintf(err, errlen, "nfqueue: no packet callback given");
		return NULL;
	}
	q = calloc(1, sizeof(*q));
	if (q == NULL) {
		snprintf(err, errlen, "nfqueue: out of memory");
		return NULL;
	}
	q->queue_num = cfg.queue_num;
	nfqueue_batcher_init(&q->order);
	q->fn = fn;
	q->ctx = ctx;
	q->batch = cfg.batch;
	q->rxbuf = malloc((size_t)q->batch * NFQUEUE_SLOT_SIZE);
	q->msgs = calloc(q->batch, sizeof(*q->msgs));
	q->iovs = calloc(q->batch, sizeof(*q->iovs));
	q->txbuf = calloc(1, NFQUEUE_TXBUF_SIZE); /* attribute padding is sent as is */
	if (q->rxbuf == NULL || q->msgs == NULL || q->iovs == NULL || q->txbuf == NULL) {
		snprintf(err, errlen, "nfqueue: out of memory for %u receive buffers", q->batch);
		nfqueue_free(q);
		return NULL;
	}
	for (unsigned i = 0; i < q->batch; i++) {
		q->iovs[i].iov_base = q->rxbuf + (size_t)i * NFQUEUE_SLOT_SIZE;
		q->iovs[i].iov_len = NFQUEUE_SLOT_SIZE;
		q->msgs[i].msg_hdr.msg_iov = &q->iovs[i];
		q->msgs[i].msg_hdr.msg_iovlen = 1;
	}

	q->nl = netlink_open(
		&(struct netlink_socket_config){
			.bus = NETLINK_NETFILTER, .rcvbuf = cfg.rcvbuf_bytes, .what = "nfqueue"},
		&q->st.rcvbuf_forced, err, errlen);
	if (q->nl == NULL) {
		nfqueue_free(q);
		return NULL;
	}
	q->fd = mnl_socket_get_fd(q->nl);
	q->portid = mnl_socket_get_portid(q->nl);
	nfqueue_read_rcvbuf(q);
	/* Lost messages are visible as gaps in the packet ids and in the kernel's counters; an
	 * ENOBUFS error on the socket would only interrupt the receive loop. */
	(void)setsockopt(q->fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof(one));

	e = nfqueue_config_request(q, 1, fill_bind, NULL);
	if (e != 0) {
		uint32_t peer = nfqueue_proc_peer(q->queue_num);

		if (e == EPERM && peer != 0 && peer != q->portid)
			snprintf(err, errlen,
				"nfqueue: queue %u is already bound by another process "
				"(netlink port id %u)",
				q->queue_num, peer);
		else if (e == EPERM)
			snprintf(err, errlen,
				"nfqueue: binding queue %u was refused: CAP_NET_ADMIN (root) is "
				"needed",
				q->queue_num);
		else if (e == EOPNOTSUPP || e == ENOENT || e == EPROTONOSUPPORT)
			snprintf(err, errlen,
				"nfqueue: the kernel has no NFQUEUE support (nfnetlink_queue): %s",
				strerror(e));
		else
			snprintf(err, errlen, "nfqueue: cannot bind queue %u: %s", q->queue_num,
				strerror(e));
		nfqueue_free(q);
		return NULL;
	}
	e = nfqueue_config_request(q, 2, fill_params, NULL);
	if (e == 0)
		e = nfqueue_config_request(q, 3, fill_flags, NULL);
	if (e == 0)
		e = nfqueue_config_request(q, 4, fill_maxlen, &cfg.max_queue_len);
	if (e != 0) {
		snprintf(err, errlen,
			"nfqueue: cannot configure queue %u (copy mode, fail-open, "
			"GSO, length %u): %s",
			q->queue_num, cfg.max_queue_len, strerror(e));
		nfqueue_free(q);
		return NULL;
	}
	if (fcntl(q->fd, F_SETFL, fcntl(q->fd, F_GETFL) | O_NONBLOCK) < 0) {
		snprintf(err, errlen, "nfqueue: cannot make the socket non-blocking: %s",
			strerror(errno));
		nfqueue_free(q);
		return NULL;
	}
	return q;
}

void nfqueue_close(struct nfqueue *q)
{
	_Alignas(8) char buf[NFQUEUE_SMALL_MSG] = {0};
	struct nlmsghdr *nlh;

	if (q == NULL)
		return;
	(void)nfqueue_flush(q);
	/* Unbinding makes the kernel drop what is still queued (deferred packets). */
	nlh = nfq_nlmsg_put(buf, NFQNL_MSG_CONFIG, q->queue_num);
	fill_unbind(nlh, NULL);
	(void)nfqueue_send_raw(q, nlh, nlh->nlmsg_len);
	nfqueue_free(q);
}

int nfqueue_fd(const struct nfqueue *q)
{
	return q->fd;
}

/* ---- verdicts ---- */

/* Sends every collected verdict message in one sendto(); the kernel handles them in order. */
static int nfqueue_flush_tx(struct nfqueue *q)
{
	int rc = 0;

	if (q->before_verdicts != NULL)
		q->before_verdicts(q->before_verdicts_ctx);
	if (q->txlen == 0)
		return 0;
	if (nfqueue_send_raw(q, q->txbuf, q->txlen) < 0) {
		q->st.send_errors += q->tx_verdicts;
		rc = -1;
	}
	q->txlen = 0;
	q->tx_verdicts = 0;
	return rc;
}

/* Room for a message of `need` bytes at the end of txbuf, sending what is there when full. */
static char *nfqueue_tx_reserve(struct nfqueue *q, size_t need)
{
	if (q->txlen + need > NFQUEUE_TXBUF_SIZE)
		(void)nfqueue_flush_tx(q);
	return (char *)q->txbuf + q->txlen;
}

static void nfqueue_tx_commit(struct nfqueue *q, const struct nlmsghdr *nlh, unsigned verdicts)
{
	q->txlen += NLMSG_ALIGN(nlh->nlmsg_len);
	q->tx_verdicts += verdicts;
}

static int nf_verdict_code(enum nfqueue_verdict v)
{
	return v == NFQUEUE_DROP ? NF_DROP : NF_ACCEPT;
}

/* ---- verdict ordering (pure) ---- */

void nfqueue_batcher_init(struct nfqueue_batcher *b)
{
	memset(b, 0, sizeof(*b));
}

uint32_t nfqueue_batcher_deliver(struct nfqueue_batcher *b, uint32_t id)
{
	uint32_t skipped = 0;

	/* Ids grow by one per packet the kernel queued; a skipped id is a packet it could not
	 * deliver to the socket (fail-open accepted it). Serial arithmetic survives wrap-around. */
	if (b->have_last_id && (int32_t)(id - b->last_id) > 1)
		skipped = id - b->last_id - 1;
	b->have_last_id = true;
	b->last_id = id;
	b->outstanding++;
	return skipped;
}

static void batcher_close(struct nfqueue_batcher *b, nfqueue_emit_fn emit, void *ctx)
{
	if (!b->batch_open)
		return;
	emit(ctx, true, b->batch_last_id, b->batch_verdict, b->batch_count);
	b->batch_open = false;
	b->batch_count = 0;
}

void nfqueue_batcher_flush(struct nfqueue_batcher *b, nfqueue_emit_fn emit, void *ctx)
{
	batcher_close(b, emit, ctx);
}

uint32_t nfqueue_batcher_holdable(const struct nfqueue_batcher *b, uint32_t limit)
{
	if (!b->batch_open || b->batch_verdict != NFQUEUE_DROP || b->batch_count >= limit)
		return 0;
	return b->batch_count;
}

int nfqueue_batcher_verdict(struct nfqueue_batcher *b, uint32_t id, enum nfqueue_verdict v,
	bool plain, nfqueue_emit_fn emit, void *ctx)
{
	/* A delivered packet: something is open and the id is not newer than the last one. */
	if (b->outstanding == 0 || !b->have_last_id || (int32_t)(b->last_id - id) < 0)
		return -1;
	b->outstanding--;
	if (plain && id == b->last_id && b->outstanding == 0) {
		/* The newest packet and no older one waiting: it may join (or open) a batch. */
		if (b->batch_open && b->batch_verdict != v)
			batcher_close(b, emit, ctx);
		if (!b->batch_open) {
			b->batch_open = true;
			b->batch_verdict = v;
		}
		b->batch_last_id = id;
		b->batch_count++;
		return 0;
	}
	batcher_close(b, emit, ctx);
	if (plain)
		emit(ctx, false, id, v, 1);
	return 0;
}

/* ---- verdict messages ---- */

/* The batcher's output becomes netlink messages in txbuf. */
static void nfqueue_emit(void *ctx, bool batch, uint32_t id, enum nfqueue_verdict v, uint32_t count)
{
	struct nfqueue *q = ctx;
	struct nlmsghdr *nlh;

	nlh = nfq_nlmsg_put(nfqueue_tx_reserve(q, NFQUEUE_SMALL_MSG),
		batch ? NFQNL_MSG_VERDICT_BATCH : NFQNL_MSG_VERDICT, q->queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)id, nf_verdict_code(v));
	nfqueue_tx_commit(q, nlh, count);
	if (batch) {
		q->st.batches++;
		q->st.batched += count;
	} else {
		q->st.verdict_messages++;
	}
}

int nfqueue_flush(struct nfqueue *q)
{
	nfqueue_batcher_flush(&q->order, nfqueue_emit, q);
	return nfqueue_flush_tx(q);
}

uint32_t nfqueue_held(const struct nfqueue *q)
{
	const struct nfqueue_batcher *b = &q->order;

	return b->batch_open && b->batch_verdict == NFQUEUE_DROP ? b->batch_count : 0;
}

void nfqueue_set_hold_drops(struct nfqueue *q, uint32_t n)
{
	q->hold_drops = n;
}

/* The end of a receive round: the verdicts go to the kernel, unless all there is to send is a
   batch of drops that may wait for the next round's (held drops, nfq.h). */
static int nfqueue_round_end(struct nfqueue *q)
{
	if (q->txlen != 0 || nfqueue_batcher_holdable(&q->order, q->hold_drops) == 0)
		return nfqueue_flush(q);
	if (q->before_verdicts != NULL)
		q->before_verdicts(q->before_verdicts_ctx);
	q->st.held_rounds++;
	return 0;
}

void nfqueue_set_before_verdicts(struct nfqueue *q, nfqueue_round_fn fn, void *ctx)
{
	q->before_verdicts = fn;
	q->before_verdicts_ctx = ctx;
}

static int nfqueue_bad_verdict(struct nfqueue *q)
{
	q->st.bad_verdicts++;
	errno = EINVAL;
	return -1;
}

int nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v)
{
	if ((v != NFQUEUE_ACCEPT && v != NFQUEUE_DROP) ||
		nfqueue_batcher_verdict(&q->order, id, v, true, nfqueue_emit, q) < 0)
		return nfqueue_bad_verdict(q);
	if (v == NFQUEUE_DROP)
		q->st.dropped++;
	else
		q->st.accepted++;
	return 0;
}

int nfqueue_verdict_payload(struct nfqueue *q, uint32_t id, const void *buf, size_t len)
{
	struct nlmsghdr *nlh;

	if (buf == NULL || len == 0 || len > NFQUEUE_MAX_PAYLOAD ||
		nfqueue_batcher_verdict(&q->order, id, NFQUEUE_ACCEPT, false, nfqueue_emit, q) < 0)
		return nfqueue_bad_verdict(q);
	nlh = nfq_nlmsg_put(
		nfqueue_tx_reserve(q, NFQUEUE_SLOT_SIZE), NFQNL_MSG_VERDICT, q->queue_num);
	nfq_nlmsg_verdict_put(nlh, (int)id, NF_ACCEPT);
	nfq_nlmsg_verdict_put_pkt(nlh, buf, (uint32_t)len);
	nfqueue_tx_commit(q, nlh, 1);
	q->st.verdict_messages++;
	q->st.rewritten++;
	return 0;
}

/* ---- receive ---- */

int nfqueue_parse_packet(const struct nlmsghdr *nlh, struct nfqueue_packet *pkt)
{
	struct nlattr *attr[NFQA_MAX + 1] = {0};
	const struct nfqnl_msg_packet_hdr *ph;

	memset(pkt, 0, sizeof(*pkt));
	if (nfq_nlmsg_parse(nlh, attr) < 0 || attr[NFQA_PACKET_HDR] == NULL ||
		mnl_attr_get_payload_len(attr[NFQA_PACKET_HDR]) < sizeof(*ph))
		return -1;
	/* libmnl takes attributes up to the message's aligned end: one reaching into that
	   padding would run past the message (past the read, for the last one) */
	for (unsigned i = 0; i <= NFQA_MAX; i++)
		if (attr[i] != NULL && (const uint8_t *)attr[i] + attr[i]->nla_len >
					       (const uint8_t *)nlh + nlh->nlmsg_len)
			return -1;
	ph = mnl_attr_get_payload(attr[NFQA_PACKET_HDR]);
	pkt->id = ntohl(ph->packet_id);
	pkt->hook = ph->hook;
	pkt->hw_protocol = ntohs(ph->hw_protocol);
	if (attr[NFQA_PAYLOAD] == NULL)
		return 1;
	pkt->payload = mnl_attr_get_payload(attr[NFQA_PAYLOAD]);
	pkt->len = mnl_attr_get_payload_len(attr[NFQA_PAYLOAD]);
	pkt->orig_len = (uint32_t)pkt->len;
	/* the u32 attributes are taken only at their size: a short one is not read past */
	if (attr[NFQA_CAP_LEN] != NULL && mnl_attr_get_payload_len(attr[NFQA_CAP_LEN]) >= 4)
		pkt->orig_len = ntohl(mnl_attr_get_u32(attr[NFQA_CAP_LEN]));
	if (attr[NFQA_IFINDEX_INDEV] != NULL &&
		mnl_attr_get_payload_len(attr[NFQA_IFINDEX_INDEV]) >= 4)
		pkt->in_ifindex = ntohl(mnl_attr_get_u32(attr[NFQA_IFINDEX_INDEV]));
	if (attr[NFQA_IFINDEX_OUTDEV] != NULL &&
		mnl_attr_get_payload_len(attr[NFQA_IFINDEX_OUTDEV]) >= 4)
		pkt->out_ifindex = ntohl(mnl_attr_get_u32(attr[NFQA_IFINDEX_OUTDEV]));
	if (attr[NFQA_MARK] != NULL && mnl_attr_get_payload_len(attr[NFQA_MARK]) >= 4)
		pkt->mark = ntohl(mnl_attr_get_u32(attr[NFQA_MARK]));
	if (attr[NFQA_SKB_INFO] != NULL && mnl_attr_get_payload_len(attr[NFQA_SKB_INFO]) >= 4)
		pkt->skb_info = ntohl(mnl_attr_get_u32(attr[NFQA_SKB_INFO]));
	if (attr[NFQA_TIMESTAMP] != NULL && mnl_attr_get_payload_len(attr[NFQA_TIMESTAMP]) >=
						    sizeof(struct nfqnl_msg_packet_timestamp)) {
		struct nfqnl_msg_packet_timestamp ts;

		memcpy(&ts, mnl_attr_get_payload(attr[NFQA_TIMESTAMP]), sizeof(ts));
		pkt->has_timestamp = true;
		pkt->timestamp.tv_sec = (time_t)be64toh(ts.sec);
		pkt->timestamp.tv_usec = (suseconds_t)be64toh(ts.usec);
	}
	return 0;
}

static void nfqueue_handle_packet(struct nfqueue *q, const struct nlmsghdr *nlh)
{
	struct nfqueue_packet pkt;
	int rc = nfqueue_parse_packet(nlh, &pkt);

	if (rc < 0) {
		/* Without the header there is no id to give a verdict for; the packet stays queued
		 * until the queue is unbound. Never seen from a sane kernel. */
		q->st.malformed++;
		return;
	}
	q->st.id_gaps += nfqueue_batcher_deliver(&q->order, pkt.id);
	q->st.messages++;
	if (rc > 0) {
		/* Copy mode is whole packets: a message without payload is broken. Let it pass. */
		q->st.malformed++;
		(void)nfqueue_verdict(q, pkt.id, NFQUEUE_ACCEPT);
		return;
	}
	if (pkt.orig_len > pkt.len)
		q->st.truncated++;
	q->st.packets++;
	q->st.bytes += pkt.len;
	q->fn(q->ctx, q, &pkt);
}

static void nfqueue_handle_datagram(struct nfqueue *q, const uint8_t *buf, size_t len)
{
	int remaining = (int)len;

	for (const struct nlmsghdr *nlh = (const void *)buf; netlink_msg_ok(nlh, remaining);
		nlh = mnl_nlmsg_next(nlh, &remaining)) {
		if (nlh->nlmsg_type == NLMSG_ERROR) {
			const struct nlmsgerr *e = mnl_nlmsg_get_payload(nlh);

			q->st.messages++;
			if (nlh->nlmsg_len >= mnl_nlmsg_size(sizeof(*e)) && e->error != 0) {
				q->st.netlink_errors++;
				q->st.last_netlink_error = -e->error;
			}
			continue;
		}
		if (nlh->nlmsg_type == NLMSG_NOOP || nlh->nlmsg_type == NLMSG_DONE)
			continue;
		if (NFNL_SUBSYS_ID(nlh->nlmsg_type) != NFNL_SUBSYS_QUEUE ||
			NFNL_MSG_TYPE(nlh->nlmsg_type) != NFQNL_MSG_PACKET) {
			q->st.malformed++;
			continue;
		}
		nfqueue_handle_packet(q, nlh);
	}
	if (remaining > 0)
		q->st.malformed++; /* trailing bytes that do not form a message */
}

int nfqueue_process(struct nfqueue *q, unsigned max_rounds)
{
	int handled = 0;

	for (unsigned round = 0; max_rounds == 0 || round < max_rounds; round++) {
		uint64_t before = q->st.packets;
		int n;

		/* No reset of the batch's entries between calls: recvmmsg writes msg_len and
		   msg_flags of every message it fills, and only those are read (the entries have
		   no name or control buffer for it to shrink). */
		n = recvmmsg(q->fd, q->msgs, q->batch, MSG_DONTWAIT, NULL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			if (errno == ENOBUFS) {
				/* Messages were lost; the socket remains usable. */
				q->st.enobufs++;
				continue;
			}
			q->st.recv_errors++;
			(void)nfqueue_flush(q);
			return -1;
		}
		if (n == 0)
			break;
		q->st.rounds++;
		for (int i = 0; i < n; i++) {
			if (q->msgs[i].msg_hdr.msg_flags & MSG_TRUNC) {
				q->st.malformed++;
				continue;
			}
			nfqueue_handle_datagram(q, q->iovs[i].iov_base, q->msgs[i].msg_len);
		}
		(void)nfqueue_round_end(q);
		handled += (int)(q->st.packets - before);
		if ((unsigned)n < q->batch)
			break; /* the socket is empty: spare the extra system call */
	}
	return handled;
}

/* ---- statistics ---- */

void nfqueue_get_stats(const struct nfqueue *q, struct nfqueue_stats *st)
{
	*st = q->st;
	st->pending = q->order.outstanding;
	st->held = nfqueue_held(q);
}

bool nfqueue_parse_proc_queue(const char *text, uint32_t queue_num, struct nfqueue_kernel_stats *ks)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		unsigned v[9];
		/* queue_number peer_portid queue_total copy_mode copy_range queue_dropped
		 * queue_user_dropped id_sequence 1 */
		if (sscanf(line, "%u %u %u %u %u %u %u %u %u", &v[0], &v[1], &v[2], &v[3], &v[4],
			    &v[5], &v[6], &v[7], &v[8]) == 9 &&
			v[0] == queue_num) {
			ks->valid = true;
			ks->queue_num = v[0];
			ks->peer_portid = v[1];
			ks->queue_total = v[2];
			ks->copy_mode = v[3];
			ks->copy_range = v[4];
			ks->queue_dropped = v[5];
			ks->user_dropped = v[6];
			ks->id_sequence = v[7];
			return true;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return false;
}

bool nfqueue_parse_proc_netlink(const char *text, uint32_t portid, uint32_t *drops)
{
	const char *line = text;

	while (line != NULL && *line != '\0') {
		unsigned long long sk;
		unsigned eth, pid, groups, rmem, wmem, dump, locks, drp;

		/* sk Eth Pid Groups Rmem Wmem Dump Locks Drops Inode */
		if (sscanf(line, "%llx %u %u %x %u %u %u %u %u", &sk, &eth, &pid, &groups, &rmem,
			    &wmem, &dump, &locks, &drp) == 9 &&
			eth == NETLINK_NETFILTER && pid == portid) {
			*drops = drp;
			return true;
		}
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	return false;
}

void nfqueue_get_kernel_stats(const struct nfqueue *q, struct nfqueue_kernel_stats *ks)
{
	char *text;

	memset(ks, 0, sizeof(*ks));
	text = read_proc(PROC_NFQUEUE);
	if (text != NULL) {
		(void)nfqueue_parse_proc_queue(text, q->queue_num, ks);
		free(text);
	}
	text = read_proc(PROC_NETLINK);
	if (text != NULL) {
		ks->socket_drops_valid =
			nfqueue_parse_proc_netlink(text, q->portid, &ks->socket_drops);
		free(text);
	}
}
