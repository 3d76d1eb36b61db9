/*
 * IPv4 fragmentation of the router's own datagrams (ipfrag.h).
 */
#include "dataplane/wire/ipfrag.h"

#include <string.h>

#include "dataplane/wire/pgm_wire.h"

#define IP_DF	   0x4000u
#define IP_MF	   0x2000u
#define IP_OFFMASK 0x1fffu
#define IPOPT_EOL  0
#define IPOPT_NOP  1
#define IPOPT_COPY 0x80

/* The header length of a well-formed datagram of exactly len bytes, else 0. */
static size_t ipfrag_header(const uint8_t *ip, size_t len)
{
	size_t ihl;

	if (ip == NULL || len < 20 || len > 0xffff || (ip[0] >> 4) != 4)
		return 0;
	ihl = (size_t)(ip[0] & 0x0f) * 4;
	if (ihl < 20 || ihl > len || (size_t)(ip[2] << 8 | ip[3]) != len)
		return 0;
	return ihl;
}

/* Data bytes in each fragment but the last. */
static size_t ipfrag_step(size_t mtu, size_t ihl)
{
	return (mtu - ihl) & ~(size_t)7;
}

enum ipfrag_result ipfrag_plan(const uint8_t *ip, size_t len, size_t mtu, unsigned *count)
{
	size_t ihl = ipfrag_header(ip, len), step;

	*count = 1;
	if (ihl == 0)
		return IPFRAG_MALFORMED;
	if (len <= mtu)
		return IPFRAG_FITS;
	if ((ip[6] << 8 | ip[7]) & IP_DF)
		return IPFRAG_DF;
	if (mtu < ihl + 8)
		return IPFRAG_MTU_SMALL;
	step = ipfrag_step(mtu, ihl);
	*count = (unsigned)((len - ihl + step - 1) / step);
	return IPFRAG_SPLIT;
}

/* The later fragments' options: those without the copied flag become NOPs (ip_options_fragment);
 * a malformed length ends the walk with the rest NOPs too. */
static void ipfrag_options(uint8_t *h, size_t ihl)
{
	size_t i = 20;

	while (i < ihl) {
		size_t olen;

		if (h[i] == IPOPT_EOL)
			return;
		if (h[i] == IPOPT_NOP) {
			i++;
			continue;
		}
		olen = i + 1 < ihl ? h[i + 1] : 0;
		if (olen < 2 || olen > ihl - i) {
			memset(h + i, IPOPT_NOP, ihl - i);
			return;
		}
		if (!(h[i] & IPOPT_COPY))
			memset(h + i, IPOPT_NOP, olen);
		i += olen;
	}
}

size_t ipfrag_build(const uint8_t *ip, size_t len, size_t mtu, unsigned index, uint16_t id,
	uint8_t *out)
{
	size_t ihl = ipfrag_header(ip, len), step = ipfrag_step(mtu, ihl), off, n, total;
	unsigned frag = (unsigned)(ip[6] << 8 | ip[7]);
	unsigned word;
	uint16_t c;

	off = (size_t)index * step;
	n = len - ihl - off < step ? len - ihl - off : step;
	total = ihl + n;
	memcpy(out, ip, ihl);
	if (index > 0)
		ipfrag_options(out, ihl);
	memcpy(out + ihl, ip + ihl + off, n);
	out[2] = (uint8_t)(total >> 8);
	out[3] = (uint8_t)total;
	out[4] = (uint8_t)(id >> 8);
	out[5] = (uint8_t)id;
	word = ((frag & IP_OFFMASK) + (unsigned)(off / 8)) & IP_OFFMASK;
	if (off + n < len - ihl || (frag & IP_MF))
		word |= IP_MF;
	out[6] = (uint8_t)(word >> 8);
	out[7] = (uint8_t)word;
	out[10] = out[11] = 0;
	c = pgm_ip_header_checksum(out, ihl);
	out[10] = (uint8_t)(c >> 8);
	out[11] = (uint8_t)c;
	return total;
}
