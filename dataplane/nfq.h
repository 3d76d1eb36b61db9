/*
 * NFQUEUE consumer (libmnl + libnetfilter_queue): the daemon's receive path.
 *
 * One netlink socket bound to one queue. The queue is configured for the whole packet
 * (NFQNL_COPY_PACKET), fail-open (packets the queue cannot hold are accepted by the kernel, so PGM
 * keeps flowing when the daemon falls behind), GSO (no software segmentation for our sake) and
 * without conntrack information. The module is event-loop agnostic: the caller polls
 * nfqueue_fd() for reading and calls nfqueue_process(), which receives many messages per system
 * call (recvmmsg), hands every packet to the callback and sends the verdicts.
 *
 * Verdicts. The callback (or later code, for a deferred packet) gives each packet exactly one
 * verdict with nfqueue_verdict() or nfqueue_verdict_payload(). Plain verdicts given in packet order
 * are coalesced into one NFQNL_MSG_VERDICT_BATCH message ("every queued packet up to id N"), which
 * is sent at the end of each receive round or before any verdict that cannot join the batch (a
 * different verdict, a rewritten payload, a deferred packet), so the kernel sees verdicts in
 * packet order. Verdict messages are collected in one send buffer and written with one sendto()
 * per flush. A packet the callback leaves without a verdict stays queued until the caller gives
 * one; `pending` in the statistics counts such packets.
 *
 * Held drops. With nfqueue_set_hold_drops(), a round whose only output would be an open batch of
 * drop verdicts, fewer than the limit set, sends nothing: the batch stays open for the next
 * round's packets, and one system call later settles them all. A dropped packet that waits in the
 * kernel's queue a little longer is seen by no one (it counts in the queue's length, and holds
 * none of the fail-open room that matters: at most the limit of max_queue_len), while a router
 * woken for one or two packets at a time saves a send per wakeup. The caller bounds the wait in
 * time: while nfqueue_held() is nonzero it calls nfqueue_flush() within its bound.
 */
#ifndef PGMROUTER_NFQ_H
#define PGMROUTER_NFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/time.h>

#define NFQUEUE_DEFAULT_RCVBUF	      (8u * 1024 * 1024)
#define NFQUEUE_DEFAULT_MAX_QUEUE_LEN 4096u
#define NFQUEUE_DEFAULT_BATCH	      32u /* messages per recvmmsg() */
#define NFQUEUE_MAX_PAYLOAD	      0xffffu /* an IPv4 datagram: the copy range and the largest rewrite */

struct nfqueue_config {
	uint16_t queue_num;
	uint32_t rcvbuf_bytes;	/* socket receive buffer; 0 = NFQUEUE_DEFAULT_RCVBUF */
	uint32_t max_queue_len; /* NFQA_CFG_QUEUE_MAXLEN; 0 = NFQUEUE_DEFAULT_MAX_QUEUE_LEN */
	uint32_t batch;		/* messages per receive call; 0 = NFQUEUE_DEFAULT_BATCH */
};
void nfqueue_config_default(struct nfqueue_config *cfg);

/* One queued packet, valid only during the callback. */
struct nfqueue_packet {
	uint32_t id;	      /* the kernel's packet id, for the verdict */
	uint8_t hook;	      /* NF_INET_PRE_ROUTING, NF_INET_LOCAL_IN, NF_INET_FORWARD, ... */
	uint16_t hw_protocol; /* ethertype, host order (0x0800 for IPv4) */
	uint32_t in_ifindex;  /* NFQA_IFINDEX_INDEV, 0 if absent */
	uint32_t out_ifindex; /* NFQA_IFINDEX_OUTDEV, 0 if absent (PREROUTING, INPUT) */
	uint32_t mark;
	uint32_t skb_info;	/* NFQA_SKB_INFO flags (NFQA_SKB_CSUMNOTREADY, NFQA_SKB_GSO, ...) */
	const uint8_t *payload; /* the IP datagram */
	size_t len;
	uint32_t orig_len;  /* NFQA_CAP_LEN when the copy is shorter than the packet, else len */
	bool has_timestamp; /* NFQA_TIMESTAMP is present only when the kernel stamped the skb */
	struct timeval timestamp;
};

struct nlmsghdr;
/* One NFQNL_MSG_PACKET message taken apart (nfqueue_process() does it for each): 0, -1 without
 * a usable packet header (no id for a verdict), 1 without a payload (only the header fields). */
int nfqueue_parse_packet(const struct nlmsghdr *nlh, struct nfqueue_packet *pkt);

struct nfqueue;
typedef void (*nfqueue_packet_fn)(void *ctx, struct nfqueue *q, const struct nfqueue_packet *pkt);

enum nfqueue_verdict {
	NFQUEUE_ACCEPT,
	NFQUEUE_DROP,
};

/*
 * Opens the netlink socket, binds the queue and configures it. On failure returns NULL and writes
 * one sentence naming the cause into err (for example the queue is bound by another process, or
 * the kernel has no nfnetlink_queue).
 */
struct nfqueue *nfqueue_open(const struct nfqueue_config *cfg, nfqueue_packet_fn fn, void *ctx,
	char *err, size_t errlen);
/* Sends the verdicts not yet sent, unbinds the queue (the kernel drops whatever is still queued)
 * and frees everything. */
void nfqueue_close(struct nfqueue *q);
int nfqueue_fd(const struct nfqueue *q);

/*
 * Receives and dispatches what is readable without blocking, at most max_rounds receive calls
 * (0 = until the socket is empty). Returns the number of packets handled, or -1 when the socket
 * failed in a way the caller should report (errno set); ENOBUFS is counted, not returned.
 */
int nfqueue_process(struct nfqueue *q, unsigned max_rounds);

/* Verdicts. Return 0, or -1 with errno set (EINVAL: payload too large; send failures). */
int nfqueue_verdict(struct nfqueue *q, uint32_t id, enum nfqueue_verdict v);
/* Accept with the payload replaced by buf (copied at once; the caller may reuse buf). */
int nfqueue_verdict_payload(struct nfqueue *q, uint32_t id, const void *buf, size_t len);
/* Sends collected verdicts now (nfqueue_process does this at the end of every round). */
int nfqueue_flush(struct nfqueue *q);
/* Drop verdicts given and not yet sent (held past a round's end): 0 when none. */
uint32_t nfqueue_held(const struct nfqueue *q);
/* The most drop verdicts a round may leave unsent (held drops); 0, the default: none, and the next
 * round's end sends whatever is held. */
void nfqueue_set_hold_drops(struct nfqueue *q, uint32_t n);
/*
 * fn runs before every send of verdicts and at the end of every receive round: a caller that
 * holds back its own output made while handling packets (rawsock batches) sends it there, so it
 * still leaves before those packets' verdicts, as it would unbatched. NULL: none.
 */
typedef void (*nfqueue_round_fn)(void *ctx);
void nfqueue_set_before_verdicts(struct nfqueue *q, nfqueue_round_fn fn, void *ctx);

/* The kernel's view of one queue: a line of /proc/net/netfilter/nfnetlink_queue. */
struct nfqueue_kernel_stats {
	bool valid;
	uint32_t queue_num;
	uint32_t peer_portid;
	uint32_t queue_total; /* packets waiting for a verdict now */
	uint32_t copy_mode, copy_range;
	uint32_t queue_dropped; /* queue full without fail-open */
	uint32_t user_dropped;	/* could not be delivered to the socket, without fail-open */
	uint32_t id_sequence;	/* the last packet id handed out */
	/* From /proc/net/netlink: packets the socket's full receive buffer refused (sk_drops). */
	bool socket_drops_valid;
	uint32_t socket_drops;
};

struct nfqueue_stats {
	uint64_t rounds;   /* receive calls that returned data */
	uint64_t messages; /* netlink messages received */
	uint64_t packets;  /* packets handed to the callback */
	uint64_t bytes;
	uint64_t accepted, dropped, rewritten; /* verdicts by kind */
	uint64_t verdict_messages;	       /* NFQNL_MSG_VERDICT messages sent */
	uint64_t batches;		       /* NFQNL_MSG_VERDICT_BATCH messages sent */
	uint64_t batched;		       /* verdicts carried by those batches */
	uint64_t sends;			       /* sendto() calls */
	uint64_t held_rounds;		       /* receive rounds that held their drops, no send */
	uint32_t held;			       /* drop verdicts held now */
	uint64_t pending;		       /* packets delivered and still without a verdict */
	uint64_t id_gaps;	 /* ids skipped: packets the kernel could not deliver to us
				    (accepted by fail-open when the receive buffer was full) */
	uint64_t truncated;	 /* packets copied shorter than their length */
	uint64_t enobufs;	 /* ENOBUFS from the socket */
	uint64_t recv_errors;	 /* other receive failures */
	uint64_t send_errors;	 /* verdicts that could not be sent */
	uint64_t netlink_errors; /* error replies from the kernel (e.g. unknown packet id) */
	int last_netlink_error;	 /* errno of the last one */
	uint64_t malformed;	 /* messages without a packet header or payload */
	uint64_t bad_verdicts;	 /* nfqueue_verdict calls with invalid arguments */
	uint32_t rcvbuf_bytes;	 /* the receive buffer the kernel granted */
	bool rcvbuf_forced;	 /* SO_RCVBUFFORCE worked (root) */
};
void nfqueue_get_stats(const struct nfqueue *q, struct nfqueue_stats *st);
/* Reads the kernel's counters for our queue and socket from procfs. */
void nfqueue_get_kernel_stats(const struct nfqueue *q, struct nfqueue_kernel_stats *ks);

/*
 * The verdict ordering rules, a pure state machine (nfq.c drives it; exposed for tests).
 *
 * A batch verdict for id N settles every packet still queued with an id up to N, so a packet can
 * join the open batch only when it is the newest one delivered and no older packet still waits
 * for its verdict. Everything else is sent singly, after the open batch, so the kernel sees the
 * verdicts in packet order.
 */
struct nfqueue_batcher {
	bool batch_open;
	enum nfqueue_verdict batch_verdict;
	uint32_t batch_last_id;
	uint32_t batch_count;
	bool have_last_id;
	uint32_t last_id;     /* the newest packet delivered */
	uint64_t outstanding; /* delivered packets without a verdict */
};
/* What to send: a batch (every queued id up to `id`, `count` verdicts) or one packet's verdict. */
typedef void (*nfqueue_emit_fn)(
	void *ctx, bool batch, uint32_t id, enum nfqueue_verdict v, uint32_t count);
void nfqueue_batcher_init(struct nfqueue_batcher *b);
/* A packet was delivered; returns how many ids were skipped since the previous one. */
uint32_t nfqueue_batcher_deliver(struct nfqueue_batcher *b, uint32_t id);
/* A verdict for a delivered packet. `plain` false (a rewritten payload) never joins a batch: the
 * open batch is emitted and the caller sends the packet's own message. Returns 0, or -1 (nothing
 * emitted) when the id cannot be a delivered packet without a verdict. */
int nfqueue_batcher_verdict(struct nfqueue_batcher *b, uint32_t id, enum nfqueue_verdict v,
	bool plain, nfqueue_emit_fn emit, void *ctx);
void nfqueue_batcher_flush(struct nfqueue_batcher *b, nfqueue_emit_fn emit, void *ctx);
/* The verdicts the open batch could hold back (a batch of drops, fewer than `limit`); else 0. */
uint32_t nfqueue_batcher_holdable(const struct nfqueue_batcher *b, uint32_t limit);

/* Parsers of the procfs files (exposed for tests). Return true when `queue_num` / `portid` was
 * found in the text. */
bool nfqueue_parse_proc_queue(
	const char *text, uint32_t queue_num, struct nfqueue_kernel_stats *ks);
bool nfqueue_parse_proc_netlink(const char *text, uint32_t portid, uint32_t *drops);

#endif /* PGMROUTER_NFQ_H */
