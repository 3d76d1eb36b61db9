/*
 * Shared by the OpenPGM peers (pgm-send, pgm-recv): the options both ends of a session take
 * alike. Include peer_common.h first.
 */
#ifndef PEER_PGM_H
#define PEER_PGM_H

#include <pgm/pgm.h>

#include "peer_common.h"

struct peer_pgm_options {
	const char *network; /* OpenPGM network string, interface address first */
	uint64_t dport;
	struct peer_udp_ports udp; /* 0: PGM over IP */
	uint64_t hops;		   /* multicast TTL */
	bool router_alert;
	uint64_t fec_group; /* on-demand parity with this transmission group size, 0 = none */
	bool multicast_loop;
};

#define PEER_PGM_DEFAULTS                                                                          \
	{                                                                                          \
		.dport = DEFAULT_DATA_DESTINATION_PORT, .hops = 16                                 \
	}

#define PEER_PGM_OPTIONS(p)                                                                        \
	PEER_OPT_REQUIRED("network", 'n', &(p)->network),                                          \
		PEER_OPT_U64("port", 's', &(p)->dport, 1, 65535),                                  \
		PEER_OPT_UDP_PORTS("udp", 'u', &(p)->udp),                                         \
		PEER_OPT_U64("hops", 0, &(p)->hops, 1, 255),                                       \
		PEER_OPT_FLAG("router-alert", 'A', &(p)->router_alert),                            \
		PEER_OPT_POW2("fec", 0, &(p)->fec_group, 2, 128),                                  \
		PEER_OPT_FLAG("loop", 0, &(p)->multicast_loop)

#endif /* PEER_PGM_H */
