/*
 * Interception rules, internal: what is queued at which hook (shared by both backends), and the
 * nftables backend, which talks nf_tables netlink itself (libmnl) rather than running nft.
 *
 * The nftables table, one base chain per hook (prerouting, input) at priority mangle - 1 (before
 * the mangle table's chains, where the iptables backend puts its jumps first), and behind each a
 * short tree of regular chains:
 *
 * Two tables of the same layout, `ip NAME` and `ip6 NAME`, each committed in its own batch
 * (dataplane/README: why not one `inet` table). In the ip6 table `meta l4proto` is the upper
 * layer after any extension headers, `@th` the PGM (or UDP) header behind them, `ip6 length`
 * the payload length and multicast is ff00::/8; the policing sets are keyed on ip6 saddr.
 *
 *   prerouting                                   every packet of the hook walks this chain
 *     ip protocol 113 <ODATA, not too short> accept      ODATA leaves here: one rule
 *     ip protocol 113 goto pgm-prerouting
 *     udp dport <ports> <ODATA at 12, not too short> accept
 *     udp dport <ports> goto udp-prerouting
 *   pgm-prerouting / udp-prerouting              PGM other than ODATA
 *     ip length < 36 (44) goto queue-prerouting           too short for a PGM header
 *     <type == T> [ip daddr 224.0.0.0/4] goto queue-prerouting   one rule per queued type
 *     <type == SPM|RDATA> ip daddr 224.0.0.0/4 counter <queue>   any interface: replicated
 *   queue-prerouting
 *     [fib daddr type != local accept]                    input only
 *     iifname "IF" counter <queue>                        one rule per interface
 *   steer-prerouting                             only with several workers (queues): every
 *                                                <queue> above is `goto steer-HOOK` instead
 *     ip protocol 113 @th,104,8 LO-HI counter <queue + k>  worker k's GSI bytes, k = 1..n-1
 *     ip protocol 113 counter <queue>                      worker 0, and too short for a GSI
 *     @th,168,8 LO-HI counter <queue + k>                  the same over UDP
 *     counter <queue>
 *
 *   defrag                                       no packet enters it
 *     meta l4proto tcp tproxy to :9                        registers the kernel's reassembly
 *                                                          at prerouting (dataplane/README)
 *
 * There is no forward hook: SPM and RDATA to a group, the packets whose copies need decisions
 * of their own, are taken at prerouting and replicated by the daemon (router/assist/packet.c),
 * so the kernel forwards every copy of everything else without entering netfilter after routing.
 * The forward hook of earlier versions is in rules_hooks as retired: nothing is installed there and
 * the iptables backend removes a chain an earlier version left.
 *
 * Every match is a native expression (payload, meta, fib, cmp, bitwise): nothing goes through
 * the xtables compatibility layer for a packet that is not queued. ODATA, the fast path, costs
 * one rule at prerouting (jumps, interface sets and `meta length` each cost tens of nanoseconds
 * a rule, so none of them is on ODATA's path). `accept` ends only this table's chain: the packet
 * goes on to every other table's chains at the hook, as with no rule at all.
 *
 * <queue> is the nftables queue statement when the kernel has it (CONFIG_NFT_QUEUE), otherwise
 * the xtables NFQUEUE target through nft_compat (what iptables-nft uses; reached only by packets
 * being queued). Both with bypass. The table is replaced, created or removed in one netlink
 * batch: one transaction.
 */
#ifndef PGMROUTER_RULES_LAYOUT_H
#define PGMROUTER_RULES_LAYOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/rules.h"

#define RULES_IPPROTO_PGM 113

/* PGM type nibbles (RFC 3208 8). */
#define RULES_T_SPM   0x0
#define RULES_T_POLL  0x1
#define RULES_T_POLR  0x2
#define RULES_T_ODATA 0x4
#define RULES_T_RDATA 0x5
#define RULES_T_NAK   0x8
#define RULES_T_NNAK  0x9
#define RULES_T_NCF   0xa

/* The policing class (enum rules_police_class) of a PGM type, -1 for none. */
int rules_police_class_of(uint8_t type);

/* One hook's interception: the PGM types queued there. ODATA appears in none. */
struct rules_hook {
	enum rules_ipt_chain chain;
	const char *nft_chain;	 /* our nft base chain, also the hook's name */
	const char *ipt_builtin; /* the built-in mangle chain that jumps to ours */
	const char *suffix;	 /* our iptables chain: NAME-suffix */
	unsigned hooknum;	 /* NF_INET_* */
	bool by_output;		 /* match the egress interface (forward) */
	bool local_only;	 /* destination is one of our addresses (input) */
	unsigned ntypes;
	uint8_t types[4];
	unsigned nmcast_types; /* queued only with a multicast destination */
	uint8_t mcast_types[2];
	/* Queued with a multicast destination whatever the interface: the datagrams the daemon
	   replicates itself (SPM, RDATA), so that no copy of anything needs the forward hook. */
	unsigned nrepl_types;
	uint8_t repl_types[2];
	/* A hook of earlier versions (the forward hook): installs nothing there, removes what an
	   earlier version left. */
	bool retired;
	/* Queued on the interface when unicast and not addressed to us: NAKs receivers send their
	   source directly, past the router (counted per session, router/assist/packet.c). */
	unsigned ntransit_types;
	uint8_t transit_types[1];
};
extern const struct rules_hook rules_hooks[RULES_IPT_CHAIN_COUNT];

#define RULES_MAX_INTERFACES 256

/* A growing text for the scripts both backends render. After an allocation failure further
 * printing does nothing and rules_text_finish() frees the text and returns NULL; otherwise it
 * returns the text (NULL if nothing was printed), the caller's to free. */
struct rules_text {
	char *s;
	size_t len, cap;
	bool failed;
};
void rules_text_printf(struct rules_text *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
char *rules_text_finish(struct rules_text *t);

/* The rules' name (cfg->name: letters, digits, '_' and '-', at most 16) and interface names
 * (rules_ifname_valid, at most RULES_MAX_INTERFACES of them), checked by both backends. */
bool rules_name_valid(const char *name);
bool rules_ifnames_valid(const char *const *ifnames, size_t count);

/* IP datagrams shorter than this cannot hold a PGM header behind a 20-byte IP header (and the
 * UDP header when encapsulated): queued whatever they are, so the daemon counts them. */
unsigned rules_short_datagram_len(bool udp);

/* How the nftables table hands a packet to the queue. */
enum rules_nft_queue {
	RULES_NFT_QUEUE_STATEMENT, /* the queue expression (CONFIG_NFT_QUEUE) */
	RULES_NFT_QUEUE_XT,	   /* the xtables NFQUEUE target through nft_compat */
};
const char *rules_nft_queue_name(enum rules_nft_queue q);

/*
 * The netlink batch that replaces the table with the rules for the interfaces (install) or
 * removes it (install = false; no error when it does not exist), for tests: malloc'ed into
 * *buf. Returns the number of messages inside the batch, -1 on an invalid name or no memory.
 */
int rules_nft_encode(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install, enum rules_nft_queue q, uint8_t **buf,
	size_t *len);

/* Commits that batch. Returns 0, or -1 with one sentence in err (the kernel's error and which
 * message it refused). */
int rules_nft_commit(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install, enum rules_nft_queue q, char *err,
	size_t errlen);

/* Whether a queue rule of that kind can be committed: a throw-away table (ip) with one such rule,
 * created and deleted in one batch. Returns 0, or -1 with the kernel's reason in err. */
int rules_nft_probe(
	const struct rules_config *cfg, enum rules_nft_queue q, char *err, size_t errlen);

/* Table `ip NAME` (`ip6 NAME`): 1 exists, 0 does not, -1 cannot tell (err set). */
int rules_nft_table_exists(enum rules_family family, const char *name, char *err, size_t errlen);
/* Deletes table `ip NAME` (`ip6 NAME`) if it exists (the mangle table iptables-nft created for
 * us). */
int rules_nft_table_delete(enum rules_family family, const char *name, char *err, size_t errlen);

/* Packets and bytes of the queue rules, per hook, from a rule dump of the family's table. */
int rules_nft_read_counters(const struct rules_config *cfg, enum rules_family family,
	struct rules_counters *c, char *err, size_t errlen);
/* The dump parser (exposed for tests): NFT_MSG_NEWRULE messages of the table, in buf. */
void rules_nft_parse_dump(const uint8_t *buf, size_t len, struct rules_counters *c);

#endif /* PGMROUTER_RULES_LAYOUT_H */
