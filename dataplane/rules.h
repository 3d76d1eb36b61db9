/*
 * Interception rules: the netfilter rules that hand PGM packets to our NFQUEUE.
 *
 * The daemon owns a table (nftables) or three chains in the mangle table (iptables) and touches
 * nothing else; the only rules it adds to built-in chains are the jumps to its own chains. Every
 * install replaces whatever an earlier instance left (after a crash) in one transaction (one
 * nf_tables netlink batch, `iptables-restore --noflush`), so a failed install leaves nothing new
 * behind.
 *
 * What is queued, per interface with router assist (the contract with control/control.h):
 *  - prerouting: NCF, POLL and POLR arriving on the interface: seen once, before routing. NCFs
 *    and POLLs are hop by hop and never forwarded, and a POLL must reach the router even when
 *    the TSI has no other egress; POLRs come unicast to us (answers to our DLR polls), multicast
 *    with the source's address (an upstream DLR's redirecting POLR, consumed one hop below it),
 *    or unicast through us (accepted unchanged). Also NAK and NNAK arriving on the interface with
 *    a multicast destination (RFC 3208 receivers, Microsoft's TTL-1 copy of every NAK): the
 *    router counts them and neither confirms nor forwards them; a group it has not joined would
 *    never reach input;
 *  - input: NAK, NNAK and RDATA addressed to one of the router's own addresses, arriving on the
 *    interface;
 *  - prerouting, from any interface: SPM and RDATA to a group, whose copies the daemon makes
 *    itself along the kernel's multicast route (router/assist/packet.c), so that no rule at all
 *    sits after the routing decision, where the kernel would run it for every copy of every
 *    forwarded packet (a PGMROUTER-FWD chain an earlier version left is removed);
 *  - the same for PGM over UDP (either encapsulation port as destination; the PGM type is 12
 *    bytes into the UDP datagram);
 *  - datagrams too short to hold a PGM header, at each of those hooks and interfaces;
 *  - ODATA is never matched: it stays on the kernel's fast path, and it is the first thing each
 *    hook's rules test, so that it walks one rule per hook and nothing in the xtables
 *    compatibility layer (dataplane/rules_layout.h has the layout and the measurements).
 * Every queue rule has bypass: with no consumer bound to the queue the kernel accepts the packet,
 * so PGM keeps flowing unassisted while the daemon is down. The rules live at mangle priority
 * (nftables: mangle - 1, just before the mangle table) so an accept verdict continues into the
 * filter table: the administrator's filter rules still apply to what we accept. No packet mark
 * is read or written.
 *
 * Backends:
 *  - nftables (table `ip NAME`): committed over nf_tables netlink (no tool needed). Its queue
 *    rules use the queue statement when the kernel has it (CONFIG_NFT_QUEUE), otherwise the
 *    xtables NFQUEUE target through nft_compat, as iptables-nft does; every match is native.
 *  - iptables (the xtables NFQUEUE target with the u32 match, either iptables flavour): for
 *    kernels without nf_tables; the same chains in ip6tables for IPv6 (dataplane/README: which
 *    extension headers the PGM type is read behind). With iptables-nft (and ip6tables-nft),
 *    the first use of the mangle table creates it with its built-in chains; if it did not exist
 *    before our install and holds nothing but empty ACCEPT built-in chains at removal, removal
 *    deletes it again, so the ruleset is exactly as before.
 * rules_install() with RULES_BACKEND_AUTO probes nftables first by committing a throw-away
 * table that holds a queue rule (queue statement, then xtables target), and falls back to
 * iptables.
 *
 * Installing blocks for as long as the kernel or the tools take (milliseconds); it happens at
 * start-up, at exit and when the set of assisted interfaces changes.
 */
#ifndef PGMROUTER_RULES_H
#define PGMROUTER_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dataplane/wire/pgm_wire.h"

enum rules_backend {
	RULES_BACKEND_AUTO = 0, /* as a request: probe nftables, then iptables */
	RULES_BACKEND_NFT,
	RULES_BACKEND_IPTABLES,
};
const char *rules_backend_name(enum rules_backend b); /* "auto", "nftables", "iptables" */
bool rules_backend_parse(const char *text, enum rules_backend *b);

#define RULES_DEFAULT_NAME "pgmrouter"
#define RULES_NAME_MAX	   24

/*
 * Policing: packets of the kinds a host can flood the daemon with are rate-limited before the
 * queue, per source address and, so that a host changing its source address cannot win
 * either, per interface (each class its own bucket on each interface). A packet over either
 * limit is dropped and counted by the rule. NAK and NCF senders retry (a receiver repeats its
 * NAK after NAK_RPT_IVL, the router its NAK upstream at NAK_RPT_RTE), SPMs recur every
 * heartbeat: a dropped one costs a repeat, a queue the daemon cannot drain costs everyone's
 * NCFs. ODATA, RDATA and datagrams too short for a PGM header are not policed.
 */
enum rules_police_class {
	RULES_POLICE_NAK, /* NAK, NNAK */
	RULES_POLICE_NCF, /* NCF */
	RULES_POLICE_SPM, /* SPM, POLL, POLR */
	RULES_POLICE_CLASS_COUNT,
};
enum rules_police_key {
	RULES_POLICE_SOURCE,	/* one bucket per source address */
	RULES_POLICE_INTERFACE, /* one bucket per input interface */
	RULES_POLICE_KEY_COUNT,
};
const char *rules_police_class_name(enum rules_police_class k); /* "nak", "ncf", "spm" */

struct rules_police {
	uint32_t rate;	/* packets per second; 0: not policed */
	uint32_t burst; /* packets */
};
/* The defaults (rules_police_default; the settings table's): per source, per interface. */
#define RULES_POLICE_NAK_RATE  500
#define RULES_POLICE_NAK_BURST 100
#define RULES_POLICE_NCF_RATE  500
#define RULES_POLICE_NCF_BURST 100
#define RULES_POLICE_SPM_RATE  1000
#define RULES_POLICE_SPM_BURST 200
#define RULES_POLICE_IF_RATE   2000
#define RULES_POLICE_IF_BURST  400
extern const struct rules_police rules_police_default[RULES_POLICE_CLASS_COUNT]
						     [RULES_POLICE_KEY_COUNT];
#define RULES_POLICE_BURST_MAX 10000 /* iptables' hashlimit takes no more */
#define RULES_POLICE_RATE_MAX  1000000

struct rules_config {
	char name[RULES_NAME_MAX]; /* nft table name; iptables chains are NAME-PRE/-IN/-FWD in
				      upper case. Letters, digits, '_' and '-' only, at most 16. */
	uint16_t queue_num;
	/* Queues queue_num .. queue_num + workers - 1, a session's packets all to one of them
	   (rules_worker_of_gsi); 1: queue_num alone, the rules exactly as without workers.
	   More than one needs the nftables backend. */
	uint16_t workers;
	bool udp;			/* also intercept PGM over UDP */
	struct pgm_port_set udp_ports; /* its destination ports, default 3055-3056 */
	/* The iptables backend's tools, looked up in PATH when not absolute; the ip6tables ones
	   for the IPv6 chains. */
	char iptables_restore[64];
	char iptables_save[64];
	char ip6tables_restore[64];
	char ip6tables_save[64];
	/* per class and key; defaults in rules_config_default */
	struct rules_police police[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT];
};
void rules_config_default(struct rules_config *cfg);

/*
 * Steering by session: with several workers (queues), every packet of a TSI goes to the same
 * queue, whichever way it travels (SPM and RDATA from the source, NAKs from receivers, NCFs
 * from upstream): the queue is picked from the last byte of the GSI, which sits at the same
 * place of the PGM header in every packet type and is the same in both directions (the ports
 * are swapped upstream, so they are not used). Worker k of n takes the bytes b with
 * b * n / 256 == k: a range of them, one payload comparison in the rules. All sessions of one
 * GSI (one source host) share a worker.
 */
#define RULES_WORKERS_MAX    64
#define RULES_GSI_STEER_BYTE 13 /* the GSI's last byte, into the PGM header */
unsigned rules_worker_of_gsi(const uint8_t gsi[PGM_GSI_LEN], unsigned workers);
/* The GSI bytes worker k of n takes: lo..hi. */
void rules_worker_range(unsigned k, unsigned workers, uint8_t *lo, uint8_t *hi);
/* The worker the rules hand an IP datagram (IPv4 or IPv6 without extension headers; PGM or
   PGM over UDP, udp saying which) to: what the rules do, for tests and for checking. Too short
   for the GSI: worker 0, as the rules do. */
unsigned rules_worker_of_datagram(const uint8_t *ip, size_t len, bool udp, unsigned workers);

/* An interface name can be written into a rule (no wildcard or quoting characters). */
bool rules_ifname_valid(const char *name);

/* The address families intercepted: a table (nftables) or chains (iptables) each. */
enum rules_family { RULES_IPV4, RULES_IPV6, RULES_FAMILY_COUNT };
const char *rules_family_name(enum rules_family f); /* "ip", "ip6": nft's names */

/* ---- script generation (pure; no root needed) ---- */

/* The nftables table as an nft -f script (with the queue statement) that replaces our table
 * with rules for the given interfaces (install), or removes it (install = false): what the
 * nftables backend commits over netlink, for reading and for `nft -f` on a kernel with the
 * queue statement. malloc'ed; NULL on an invalid name or no memory. */
char *rules_nft_script(
	const struct rules_config *cfg, const char *const *ifnames, size_t count, bool install);
/* The same for either family's table (rules_nft_script is the ip one). */
char *rules_nft_script_family(const struct rules_config *cfg, enum rules_family family,
	const char *const *ifnames, size_t count, bool install);

/* What `iptables-save -t mangle` shows of ours. */
enum rules_ipt_chain { RULES_IPT_PRE, RULES_IPT_IN, RULES_IPT_FWD, RULES_IPT_CHAIN_COUNT };
struct rules_ipt_state {
	bool chain_present[RULES_IPT_CHAIN_COUNT];
	unsigned jumps[RULES_IPT_CHAIN_COUNT]; /* jump rules from the built-in chain */
	unsigned rules[RULES_IPT_CHAIN_COUNT]; /* rules inside our chain */
	bool table_present;   /* a *mangle section (iptables-nft prints one even for no table) */
	bool nf_tables;	      /* iptables is the nf_tables flavour */
	bool foreign_content; /* rules or chains of others, or a built-in policy not ACCEPT */
};
void rules_ipt_parse_save(
	const struct rules_config *cfg, const char *save_text, struct rules_ipt_state *st);
/* Our chain's name, e.g. "PGMROUTER-FWD", into buf (at least 32 bytes). */
const char *rules_ipt_chain_name(
	const struct rules_config *cfg, enum rules_ipt_chain c, char *buf, size_t len);
/* iptables-restore --noflush script that turns the current state into our rules for the given
 * interfaces (install), or removes every trace of them (install = false). */
char *rules_ipt_script(const struct rules_config *cfg, const struct rules_ipt_state *current,
	const char *const *ifnames, size_t count, bool install);
/* The same for either family: the ip6 one is for ip6tables-restore (dataplane/README: how the
 * PGM type is read behind IPv6 extension headers). */
char *rules_ipt_script_family(const struct rules_config *cfg, enum rules_family family,
	const struct rules_ipt_state *current, const char *const *ifnames, size_t count,
	bool install);
char *rules_ipt_probe_script(const struct rules_config *cfg);
char *rules_ipt_probe_script_family(const struct rules_config *cfg, enum rules_family family);

/* ---- applying ---- */

struct rules;
struct rules *rules_new(const struct rules_config *cfg);
/* Frees the handle and leaves the rules as they are (use rules_remove first at exit). */
void rules_free(struct rules *r);

/*
 * Detects the backend (want = AUTO) or uses the given one, and installs rules for the interfaces,
 * replacing whatever an earlier run left. Returns 0, or -1 with one sentence in err naming the
 * cause (not root, tool missing, no NFQUEUE support, the tool's own message); on failure nothing
 * of ours is left installed.
 */
int rules_install(struct rules *r, enum rules_backend want, const char *const *ifnames,
	size_t count, char *err, size_t errlen);
/* Replaces the rules with ones for a new set of interfaces, atomically. On failure the previous
 * rules stay. */
int rules_update(
	struct rules *r, const char *const *ifnames, size_t count, char *err, size_t errlen);
/* Removes every rule and chain of ours (also those of a crashed earlier run). */
int rules_remove(struct rules *r, char *err, size_t errlen);

/*
 * Packets and bytes the queue rules matched, per hook (indexed by enum rules_ipt_chain for both
 * backends), since the rules were last installed or updated. Compared with the kernel's queue id
 * sequence this shows how many matched packets were not queued: the kernel accepted them
 * unassisted (bypass with no consumer bound, fail-open with the queue full). Runs the tool.
 */
struct rules_counters {
	uint64_t packets[RULES_IPT_CHAIN_COUNT];
	uint64_t bytes[RULES_IPT_CHAIN_COUNT];
	/* packets dropped over a policing limit, both hooks together */
	uint64_t policed[RULES_POLICE_CLASS_COUNT][RULES_POLICE_KEY_COUNT];
	/* of the packets above, IPv6 ones (the ip6 table) */
	uint64_t packets_ipv6[RULES_IPT_CHAIN_COUNT];
};
int rules_read_counters(struct rules *r, struct rules_counters *c, char *err, size_t errlen);
/* Adds one family's counters (as read from its table or chains) to sum. */
void rules_counters_add(struct rules_counters *sum, const struct rules_counters *one,
	enum rules_family family);
/* The parser of `iptables-save -c -t mangle` (exposed for tests). */
void rules_parse_ipt_counters(
	const struct rules_config *cfg, const char *text, struct rules_counters *c);

bool rules_installed(const struct rules *r);
/* Whether the family's rules are in place. IPv4's are whenever rules_installed(); IPv6's may
 * fail alone (a kernel without nf_tables for ip6): rules_install and rules_update then still
 * succeed, the reason is kept and the failures counted. */
bool rules_family_installed(const struct rules *r, enum rules_family f);
const char *rules_family_unavailable_reason(const struct rules *r, enum rules_family f);
uint64_t rules_family_failures(const struct rules *r, enum rules_family f);
enum rules_backend rules_backend(const struct rules *r); /* AUTO until installed */
/* Why the nftables backend was not chosen ("" if it was, or was not probed). */
const char *rules_nft_unavailable_reason(const struct rules *r);
/* How the installed backend queues, for show: "queue statement", "xtables NFQUEUE target (the
 * kernel has no nftables queue statement, CONFIG_NFT_QUEUE)"; "" for iptables. */
const char *rules_backend_detail(const struct rules *r, char *buf, size_t len);
/* The interface set of the last successful install or update. */
size_t rules_interfaces(const struct rules *r, const char *const **names);

#endif /* PGMROUTER_RULES_H */
