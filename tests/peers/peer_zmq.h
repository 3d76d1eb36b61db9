/*
 * Shared by the ZeroMQ peers (zmq-pub, zmq-sub): the options both ends of a session take alike
 * and opening the socket. Define PEER_NAME (it prefixes the messages) before including this.
 *
 * ZeroMQ facts built in here: ZMQ_MULTICAST_HOPS defaults to 1, so nothing would cross a router;
 * ZMQ_RATE (kbit/s) is the OpenPGM rate limit of both ends; a high-water mark of 0 means none,
 * so neither end drops messages silently.
 */
#ifndef PEER_ZMQ_H
#define PEER_ZMQ_H

#ifndef PEER_NAME
#error "define PEER_NAME before including peer_zmq.h"
#endif

#include <zmq.h>

#include "peer_common.h"

struct peer_zmq_options {
	const char *endpoint; /* epgm://... or pgm://... */
	uint64_t rate_kbps;   /* ZMQ_RATE */
	uint64_t recovery_ivl_ms;
	uint64_t hops; /* ZMQ_MULTICAST_HOPS */
};

#define PEER_ZMQ_OPTIONS(z)                                                                        \
	PEER_OPT_REQUIRED("endpoint", 'e', &(z)->endpoint),                                        \
		PEER_OPT_U64("zmq-rate", 0, &(z)->rate_kbps, 1, 10000000),                         \
		PEER_OPT_U64("recovery-ivl", 0, &(z)->recovery_ivl_ms, 1, 3600000),                \
		PEER_OPT_U64("hops", 0, &(z)->hops, 1, 255)

static inline bool peer_zmq_set_int(void *sock, int name, int value, const char *what)
{
	if (zmq_setsockopt(sock, name, &value, sizeof(value)) != 0) {
		fprintf(stderr, PEER_NAME ": setting %s to %d: %s\n", what, value,
			zmq_strerror(zmq_errno()));
		return false;
	}
	return true;
}

/*
 * A ZMQ_PUB or ZMQ_SUB socket (a SUB subscribed to everything) with the session's options and
 * ZMQ_LINGER linger_ms, connected to the endpoint; NULL on failure (reported).
 */
static inline void *peer_zmq_open(
	void *ctx, int type, const struct peer_zmq_options *o, int linger_ms)
{
	void *sock = zmq_socket(ctx, type);
	bool ok = true;

	if (sock == NULL) {
		fprintf(stderr, PEER_NAME ": zmq_socket: %s\n", zmq_strerror(zmq_errno()));
		return NULL;
	}
	ok &= peer_zmq_set_int(sock, ZMQ_RATE, (int)o->rate_kbps, "ZMQ_RATE");
	ok &= peer_zmq_set_int(sock, ZMQ_RECOVERY_IVL, (int)o->recovery_ivl_ms, "ZMQ_RECOVERY_IVL");
	ok &= peer_zmq_set_int(sock, ZMQ_MULTICAST_HOPS, (int)o->hops, "ZMQ_MULTICAST_HOPS");
	if (type == ZMQ_PUB)
		ok &= peer_zmq_set_int(sock, ZMQ_SNDHWM, 0, "ZMQ_SNDHWM");
	else
		ok &= peer_zmq_set_int(sock, ZMQ_RCVHWM, 0, "ZMQ_RCVHWM");
	ok &= peer_zmq_set_int(sock, ZMQ_LINGER, linger_ms, "ZMQ_LINGER");
	if (ok && type == ZMQ_SUB)
		ok = zmq_setsockopt(sock, ZMQ_SUBSCRIBE, "", 0) == 0;
	if (!ok) {
		zmq_close(sock);
		return NULL;
	}
	if (zmq_connect(sock, o->endpoint) != 0) {
		fprintf(stderr, PEER_NAME ": zmq_connect %s: %s\n", o->endpoint,
			zmq_strerror(zmq_errno()));
		zmq_close(sock);
		return NULL;
	}
	return sock;
}

#endif /* PEER_ZMQ_H */
