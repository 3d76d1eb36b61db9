/*
 * Shared by the ZeroMQ peers (zmq-pub, zmq-sub): the options both ends of a session take alike.
 * Include peer_common.h first.
 */
#ifndef PEER_ZMQ_H
#define PEER_ZMQ_H

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

#endif /* PEER_ZMQ_H */
