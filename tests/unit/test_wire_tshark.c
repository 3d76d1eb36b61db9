/*
 * An independent cross-check of the codec with Wireshark's PGM dissector: every catalog packet
 * (every builder, every option, both address families) is wrapped in IPv4 or IPv6, some in UDP
 * on 3055/3056, written to a pcap, and decoded by tshark with PGM, IP and UDP checksum
 * verification on. tshark must flag nothing, find every checksum good, and read the same
 * fields we parsed: type, ports, GSI, sequence numbers, NLAs, every option's bytes and the
 * values it decodes, the NAK list.
 *
 * Wireshark 4.0 needs "-d udp.port==3055,pgm" for the encapsulation ports (no default
 * registration), and has no case for SPMR (0x0C): it leaves SPMRs undecoded, so for those only
 * "not malformed" is checked. Two broken packets at the end prove that tshark's checks are on.
 */
#include <arpa/inet.h>
#include <check.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wire_test.h"
#include "tests/unit/check_run.h"

#define MAX_CASES 128

/* ---- a minimal PDML reader: one <field .../> per line ---- */

struct pdml_field {
	char *name, *show, *showname, *value;
};

struct pdml_packet {
	struct pdml_field *fields;
	size_t n, cap;
};

/* The value of attribute `attr` in an XML line, entities decoded; NULL if absent. */
static char *attribute(const char *line, const char *attr)
{
	char key[32];
	const char *start, *end;
	char *out, *o;

	snprintf(key, sizeof(key), " %s=\"", attr);
	start = strstr(line, key);
	if (start == NULL)
		return NULL;
	start += strlen(key);
	end = strchr(start, '"');
	if (end == NULL)
		return NULL;
	out = o = malloc((size_t)(end - start) + 1);
	ck_assert_ptr_nonnull(out);
	while (start < end) {
		static const char *const entities[][2] = {{"&quot;", "\""}, {"&amp;", "&"},
			{"&lt;", "<"}, {"&gt;", ">"}, {"&apos;", "'"}};
		size_t k;

		for (k = 0; k < 5; k++)
			if (strncmp(start, entities[k][0], strlen(entities[k][0])) == 0)
				break;
		if (k < 5) {
			*o++ = entities[k][1][0];
			start += strlen(entities[k][0]);
		} else {
			*o++ = *start++;
		}
	}
	*o = '\0';
	return out;
}

static size_t read_pdml(FILE *f, struct pdml_packet *packets, size_t max)
{
	char *line = NULL;
	size_t cap = 0, n = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) > 0) {
		struct pdml_packet *p;
		struct pdml_field *fld;

		if (strstr(line, "<packet>") != NULL) {
			ck_assert_uint_lt(n, max);
			n++;
			continue;
		}
		if (n == 0 || strstr(line, "<field ") == NULL)
			continue;
		p = &packets[n - 1];
		if (p->n == p->cap) {
			p->cap = p->cap ? 2 * p->cap : 64;
			p->fields = realloc(p->fields, p->cap * sizeof(*p->fields));
			ck_assert_ptr_nonnull(p->fields);
		}
		fld = &p->fields[p->n++];
		fld->name = attribute(line, "name");
		fld->show = attribute(line, "show");
		fld->showname = attribute(line, "showname");
		fld->value = attribute(line, "value");
	}
	free(line);
	return n;
}

static void free_pdml(struct pdml_packet *packets, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < packets[i].n; k++) {
			free(packets[i].fields[k].name);
			free(packets[i].fields[k].show);
			free(packets[i].fields[k].showname);
			free(packets[i].fields[k].value);
		}
		free(packets[i].fields);
	}
}

/* The nth field (0-based) called name, or NULL. */
static const struct pdml_field *field(const struct pdml_packet *p, const char *name, unsigned nth)
{
	size_t k;

	for (k = 0; k < p->n; k++)
		if (p->fields[k].name != NULL && strcmp(p->fields[k].name, name) == 0 && nth-- == 0)
			return &p->fields[k];
	return NULL;
}

/* ---- comparison helpers ---- */

static const char *case_name;

static unsigned long number(const struct pdml_packet *p, const char *name)
{
	const struct pdml_field *f = field(p, name, 0);

	ck_assert_msg(f != NULL && f->show != NULL, "%s: tshark shows no %s", case_name, name);
	return strtoul(f->show, NULL, 0);
}

static void expect_number(const struct pdml_packet *p, const char *name, unsigned long ours)
{
	unsigned long theirs = number(p, name);

	ck_assert_msg(theirs == ours, "%s: %s is %lu for tshark, %lu for us", case_name, name,
		theirs, ours);
}

static void hex(const uint8_t *bytes, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", bytes[i]);
	out[2 * len] = '\0';
}

static void expect_value(const struct pdml_packet *p, const char *name, unsigned nth,
	const uint8_t *bytes, size_t len)
{
	const struct pdml_field *f = field(p, name, nth);
	char ours[1024];

	hex(bytes, len, ours);
	ck_assert_msg(f != NULL && f->value != NULL, "%s: tshark shows no %s", case_name, name);
	ck_assert_msg(strcmp(f->value, ours) == 0, "%s: %s is %s for tshark, %s for us", case_name,
		name, f->value, ours);
}

/* An NLA as tshark prints it under prefix.ipv4 / prefix.ipv6, and its AFI field. */
static void expect_nla(const struct pdml_packet *p, const char *afi_field, const char *prefix,
	const struct pgm_nla *nla)
{
	char name[64];
	const struct pdml_field *f;
	uint8_t addr[16];

	expect_number(p, afi_field, nla->afi);
	snprintf(name, sizeof(name), "%s.%s", prefix, nla->afi == PGM_AFI_IP ? "ipv4" : "ipv6");
	f = field(p, name, 0);
	ck_assert_msg(f != NULL && f->show != NULL, "%s: tshark shows no %s", case_name, name);
	ck_assert_msg(inet_pton(nla->afi == PGM_AFI_IP ? AF_INET : AF_INET6, f->show, addr) == 1,
		"%s: %s = %s", case_name, name, f->show);
	ck_assert_msg(memcmp(addr, nla->addr, pgm_nla_len(nla)) == 0, "%s: %s is %s", case_name,
		name, f->show);
}

static bool has_showname(const struct pdml_packet *p, const char *name, const char *showname)
{
	unsigned i;
	const struct pdml_field *f;

	for (i = 0; (f = field(p, name, i)) != NULL; i++)
		if (f->showname != NULL && strcmp(f->showname, showname) == 0)
			return true;
	return false;
}

/* tshark's unnamed per-option items ("Option: Join, Length: 8") carry the option's bytes. */
static void expect_options(const struct pdml_packet *p, const struct pgm_packet *pkt)
{
	const struct pgm_options *o = &pkt->opt;
	size_t k;
	unsigned i = 1;
	char ours[1024];

	expect_number(p, "pgm.opts.tlen", o->total_len);
	expect_number(p, "pgm.opts.len", 4);
	for (k = 0; k < p->n; k++) {
		const struct pdml_field *f = &p->fields[k];
		size_t len;

		if (f->name == NULL || f->name[0] != '\0' || f->show == NULL ||
			strncmp(f->show, "Option: ", 8) != 0)
			continue;
		ck_assert_msg(i < o->count, "%s: tshark sees more options than we do", case_name);
		len = pkt->tpdu[o->offset[i] + 1];
		hex(pkt->tpdu + o->offset[i], len, ours);
		ck_assert_msg(f->value != NULL && strcmp(f->value, ours) == 0,
			"%s: option %u is %s for tshark, %s for us", case_name, i,
			f->value ? f->value : "-", ours);
		i++;
	}
	ck_assert_msg(i == o->count, "%s: tshark sees %u options, we see %u", case_name, i - 1,
		o->count - 1u);

	/* The values Wireshark decodes itself. */
	if (pgm_opt_has(o, PGM_OPT_NAK_LIST)) {
		/* "List(N): ..." then "List: ..." items of 8 SQNs each */
		const struct pdml_field *f = field(p, "pgm.opts.nak.list", 0);
		char theirs[1024] = "";
		unsigned j;

		ck_assert_msg(f != NULL && f->showname != NULL, "%s: no NAK list", case_name);
		ck_assert_uint_eq(
			strtoul(f->showname + strlen("List("), NULL, 10), o->nak_list_count);
		for (j = 0; (f = field(p, "pgm.opts.nak.list", j)) != NULL; j++)
			strncat(theirs, f->value, sizeof(theirs) - strlen(theirs) - 1);
		hex(o->nak_list, 4u * o->nak_list_count, ours);
		ck_assert_msg(strcmp(theirs, ours) == 0, "%s: NAK list %s for tshark, %s for us",
			case_name, theirs, ours);
	}
	if (pgm_opt_has(o, PGM_OPT_FRAGMENT)) {
		expect_number(p, "pgm.opts.fragment.first_sqn", o->frag_first_sqn);
		expect_number(p, "pgm.opts.fragment.fragment_offset", o->frag_offset);
		expect_number(p, "pgm.opts.fragment.total_length", o->frag_apdu_len);
	}
	if (pgm_opt_has(o, PGM_OPT_JOIN))
		expect_number(p, "pgm.opts.join.min_join", o->join_min_sqn);
	if (pgm_opt_has(o, PGM_OPT_NAK_BO_IVL)) {
		expect_number(p, "pgm.opts.nak_bo_ivl.bo_ivl", o->nak_bo_ivl);
		expect_number(p, "pgm.opts.nak_bo_ivl.bo_ivl_sqn", o->nak_bo_ivl_sqn);
	}
	if (pgm_opt_has(o, PGM_OPT_NAK_BO_RNG)) {
		/* Wireshark labels the first word "min", RFC 3208 15.4.2 calls it the maximum. */
		expect_number(p, "pgm.opts.nak_bo_rng.min_bo_ivl", o->nak_bo_max);
		expect_number(p, "pgm.opts.nak_bo_rng.max_bo_ivl", o->nak_bo_min);
	}
	if (pgm_opt_has(o, PGM_OPT_REDIRECT))
		expect_nla(p, "pgm.opts.redirect.afi", "pgm.opts.redirect.dlr", &o->redirect);
	if (pgm_opt_has(o, PGM_OPT_PARITY_PRM)) {
		expect_number(p, "pgm.opts.parity_prm.op", o->parity_prm_flags);
		expect_number(p, "pgm.opts.parity_prm.prm_grp", o->parity_tgs);
	}
	if (pgm_opt_has(o, PGM_OPT_PGMCC_DATA) || pgm_opt_has(o, PGM_OPT_PGMCC_FEEDBACK)) {
		uint8_t ts[4] = {(uint8_t)(o->pgmcc_tstamp >> 24), (uint8_t)(o->pgmcc_tstamp >> 16),
			(uint8_t)(o->pgmcc_tstamp >> 8), (uint8_t)o->pgmcc_tstamp};

		/* a 32-bit field Wireshark declares 16 bits wide: compare its bytes */
		expect_value(p, "pgm.opts.ccdata.tstamp", 0, ts, 4);
		expect_nla(p, "pgm.opts.ccdata.afi", "pgm.opts.ccdata.acker", &o->pgmcc_nla);
		if (pgm_opt_has(o, PGM_OPT_PGMCC_FEEDBACK))
			expect_number(p, "pgm.opts.ccdata.lossrate", o->pgmcc_loss_rate);
	}
}

static void expect_packet(const struct pdml_packet *p, const struct wire_test_case *c,
	const uint8_t *datagram, size_t len)
{
	static const struct pgm_udp_ports ports = {.enabled = true,
		.ucast_port = PGM_DEFAULT_UDP_UCAST_PORT,
		.mcast_port = PGM_DEFAULT_UDP_MCAST_PORT};
	const struct pdml_field *protocols = field(p, "frame.protocols", 0);
	struct pgm_packet pkt;
	struct pgm_ip ip;

	case_name = c->name;
	ck_assert_int_eq(pgm_parse_datagram(datagram, len, &ports, 0, &ip, &pkt), PGM_ERR_OK);
	/* nothing malformed, no expert info at all */
	ck_assert_msg(field(p, "_ws.malformed", 0) == NULL, "%s: malformed for tshark", c->name);
	ck_assert_msg(field(p, "_ws.expert", 0) == NULL, "%s: expert info from tshark", c->name);
	if (ip.version == 4)
		ck_assert_msg(has_showname(p, "ip.checksum.status", "Header checksum status: Good"),
			"%s: IPv4 header checksum", c->name);
	if (ip.udp) {
		ck_assert_msg(has_showname(p, "udp.checksum.status", "Checksum Status: Good"),
			"%s: UDP checksum", c->name);
		expect_number(p, "udp.srcport", ip.udp_sport);
		expect_number(p, "udp.dstport", ip.udp_dport);
	}
	ck_assert_ptr_nonnull(protocols);
	if (pkt.type == PGM_SPMR) {
		/* Wireshark 4.0 has no SPMR case and hands the bytes to "data". */
		ck_assert_msg(strstr(protocols->show, "pgm") == NULL,
			"%s: tshark now decodes SPMR: extend this test", c->name);
		return;
	}
	ck_assert_msg(strstr(protocols->show, ip.udp ? ":udp:pgm" : ":pgm") != NULL,
		"%s: protocols %s", c->name, protocols->show);

	if (pkt.checksum != 0)
		ck_assert_msg(has_showname(p, "pgm.hdr.cksum.status", "Checksum Status: Good"),
			"%s: PGM checksum not good for tshark", c->name);
	else
		ck_assert_msg(
			has_showname(p, "pgm.hdr.cksum.status", "Checksum Status: Not present"),
			"%s: PGM checksum 0", c->name);
	expect_number(p, "pgm.hdr.sport", pkt.sport);
	expect_number(p, "pgm.hdr.dport", pkt.dport);
	expect_number(p, "pgm.hdr.type", pkt.type);
	expect_number(p, "pgm.hdr.opts", pkt.opt_flags);
	expect_number(p, "pgm.hdr.tsdulen", pkt.tsdu_len);
	expect_value(p, "pgm.hdr.gsi", 0, pkt.gsi, PGM_GSI_LEN);

	switch (pkt.type) {
	case PGM_SPM:
		expect_number(p, "pgm.spm.sqn", pkt.sqn);
		expect_number(p, "pgm.spm.trail", pkt.trail);
		expect_number(p, "pgm.spm.lead", pkt.lead);
		expect_nla(p, "pgm.spm.pathafi", "pgm.spm.path", &pkt.path);
		break;
	case PGM_ODATA:
	case PGM_RDATA: /* Wireshark reuses the SPM fields for data */
		expect_number(p, "pgm.spm.sqn", pkt.sqn);
		expect_number(p, "pgm.spm.trail", pkt.trail);
		break;
	case PGM_NAK:
	case PGM_NNAK:
	case PGM_NCF:
		expect_number(p, "pgm.nak.sqn", pkt.sqn);
		expect_nla(p, "pgm.nak.srcafi", "pgm.nak.src", &pkt.nak_src);
		expect_nla(p, "pgm.nak.grpafi", "pgm.nak.grp", &pkt.nak_grp);
		break;
	case PGM_POLL:
		expect_number(p, "pgm.poll.sqn", pkt.sqn);
		expect_number(p, "pgm.poll.round", pkt.poll_round);
		expect_number(p, "pgm.poll.subtype", pkt.poll_s_type);
		expect_nla(p, "pgm.poll.pathafi", "pgm.poll.path", &pkt.path);
		expect_number(p, "pgm.poll.backoff_ivl", pkt.poll_bo_ivl);
		expect_number(p, "pgm.poll.rand_str", pkt.poll_rand);
		expect_number(p, "pgm.poll.matching_bmask", pkt.poll_mask);
		break;
	case PGM_POLR:
		expect_number(p, "pgm.polr.sqn", pkt.sqn);
		expect_number(p, "pgm.polr.round", pkt.polr_round);
		break;
	case PGM_ACK:
		expect_number(p, "pgm.ack.maxsqn", pkt.sqn);
		expect_number(p, "pgm.ack.bitmap", pkt.ack_bitmap);
		break;
	default:
		ck_abort_msg("%s: unexpected type", c->name);
	}
	if (pkt.opt.count > 0)
		expect_options(p, &pkt);
	else
		ck_assert_msg(field(p, "pgm.opts.tlen", 0) == NULL, "%s: options?", c->name);
}

START_TEST(test_tshark_cross_check)
{
	struct wire_test_case *cases = calloc(MAX_CASES, sizeof(*cases));
	static uint8_t datagrams[MAX_CASES + 2][WIRE_TEST_MAX_TPDU + 64];
	size_t lens[MAX_CASES + 2], n, i, got, control;
	struct pdml_packet *packets = calloc(MAX_CASES + 4, sizeof(*packets));
	char path[256], cmd[1024];
	const char *tmpdir = getenv("TMPDIR");
	pcap_dumper_t *dumper;
	pcap_t *dead;
	FILE *f;
	int fd;

	ck_assert_ptr_nonnull(cases);
	ck_assert_ptr_nonnull(packets);
	ck_assert_msg(system("tshark -v >/dev/null 2>&1") == 0,
		"tshark is not installed (Debian package tshark)");
	n = wire_test_catalog(cases, MAX_CASES);
	ck_assert_uint_le(n, MAX_CASES);

	snprintf(path, sizeof(path), "%s/pgm-wire-XXXXXX.pcap", tmpdir ? tmpdir : "/tmp");
	fd = mkstemps(path, 5);
	ck_assert_int_ge(fd, 0);
	dead = pcap_open_dead(DLT_RAW, 65535);
	f = fdopen(fd, "wb");
	ck_assert_ptr_nonnull(f);
	dumper = pcap_dump_fopen(dead, f);
	ck_assert_ptr_nonnull(dumper);
	for (i = 0; i < n; i++) {
		struct pcap_pkthdr h = {.ts = {.tv_sec = 1700000000, .tv_usec = (long)i}};

		lens[i] = pgm_build_ip(datagrams[i], sizeof(datagrams[i]), &cases[i].ip,
			cases[i].tpdu, cases[i].len);
		ck_assert_msg(lens[i] > 0, "%s: pgm_build_ip", cases[i].name);
		h.caplen = h.len = (bpf_u_int32)lens[i];
		pcap_dump((u_char *)dumper, &h, datagrams[i]);
	}
	/* Negative controls on an SPM over plain IPv4 whose last option is OPT_RST: a bad PGM
	 * checksum, and that option's length running past the packet. */
	for (control = 0; control < n; control++)
		if (strcmp(cases[control].name, "spm-nbr-unreach-rst-v4") == 0)
			break;
	ck_assert_uint_lt(control, n);
	for (i = n; i < n + 2; i++) {
		struct pcap_pkthdr h = {.ts = {.tv_sec = 1700000001, .tv_usec = (long)i}};
		uint8_t *d = datagrams[i];

		memcpy(d, datagrams[control], lens[control]);
		lens[i] = lens[control];
		if (i == n)
			d[lens[i] - 1] ^= 0x01; /* last byte of the last option */
		else
			d[lens[i] - 3] = 0xff; /* OPT_RST's length byte */
		h.caplen = h.len = (bpf_u_int32)lens[i];
		pcap_dump((u_char *)dumper, &h, d);
	}
	pcap_dump_close(dumper);
	pcap_close(dead);

	snprintf(cmd, sizeof(cmd),
		"tshark -n -r '%s' -o pgm.check_checksum:TRUE -o ip.check_checksum:TRUE "
		"-o udp.check_checksum:TRUE -d udp.port==3055,pgm -d udp.port==3056,pgm -T pdml "
		"2>/dev/null",
		path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	got = read_pdml(f, packets, MAX_CASES + 4);
	ck_assert_int_eq(pclose(f), 0);
	unlink(path);
	ck_assert_uint_eq(got, n + 2);

	for (i = 0; i < n; i++)
		expect_packet(&packets[i], &cases[i], datagrams[i], lens[i]);
	/* the controls: tshark does see broken packets */
	ck_assert(has_showname(&packets[n], "pgm.hdr.cksum.status", "Checksum Status: Bad"));
	ck_assert(field(&packets[n + 1], "_ws.expert", 0) != NULL ||
		  field(&packets[n + 1], "_ws.malformed", 0) != NULL);

	free_pdml(packets, got);
	free(packets);
	free(cases);
}
END_TEST

static Suite *tshark_suite(void)
{
	Suite *s = suite_create("wire_tshark");
	TCase *tc = tcase_create("tshark");

	tcase_set_timeout(tc, 120); /* tshark takes a second or two, more on a loaded machine */
	tcase_add_test(tc, test_tshark_cross_check);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run(tshark_suite());
}
