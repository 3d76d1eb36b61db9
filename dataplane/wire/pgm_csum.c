/*
 * Internet checksum (RFC 1071) for PGM (RFC 3208 section 8) and the UDP/IP layers around it, and
 * the incremental update of RFC 1624 for in-place rewrites.
 *
 * Partial sums exchanged through the API are sums of big-endian 16-bit words held in host
 * integers, so a caller can add host-order pseudo-header fields to them directly. Internally the
 * bulk loop sums native 64-bit words: one's-complement addition is byte-order independent up to
 * a final byte swap (RFC 1071, 2.(B)), which is applied once per call. The loop uses GCC/Clang
 * vector extensions (portable C, no assembly).
 */
#include <string.h>

#include "dataplane/wire/pgm_wire.h"

/*
 * Fold a 64-bit one's-complement accumulator to 16 bits. Adding a value to its own rotation
 * leaves the end-around-carry sum of its two halves in the upper half: three operations per
 * halving instead of a chain of masks and shifts.
 */
static inline uint32_t fold64(uint64_t sum)
{
	uint32_t half;

	sum += sum >> 32 | sum << 32;
	half = (uint32_t)(sum >> 32);
	half += half >> 16 | half << 16;
	return half >> 16;
}

static inline uint32_t load32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* Two 64-bit lanes: SSE2 on x86-64, NEON on arm64, plain scalar code elsewhere. */
typedef uint64_t u64x2 __attribute__((vector_size(16)));

static inline u64x2 load128(const uint8_t *p)
{
	u64x2 v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/*
 * One's-complement sum of at most CHUNK bytes in native byte order, folded to 16 bits. The
 * bulk loop splits every 64-bit lane into its two 32-bit halves and adds them into 64-bit
 * accumulators, so no carry is lost and none has to be propagated inside the loop; four
 * accumulators keep the additions independent. Within a chunk no accumulator can overflow:
 * each adds below len / 8 values under 2^32. Offsets advance in multiples of 4, so every byte
 * keeps its position within its 16-bit word.
 */
#define CHUNK ((size_t)1 << 30)

static inline __attribute__((always_inline)) uint64_t sum_chunk(const uint8_t *p, size_t len)
{
	const u64x2 low = {0xffffffffu, 0xffffffffu};
	u64x2 a0 = {0, 0}, a1 = {0, 0}, a2 = {0, 0}, a3 = {0, 0}, acc;
	uint64_t sum;

	while (len >= 64) {
		u64x2 x = load128(p), y = load128(p + 16), z = load128(p + 32), w = load128(p + 48);

		a0 += (x & low) + (z & low);
		a1 += (x >> 32) + (z >> 32);
		a2 += (y & low) + (w & low);
		a3 += (y >> 32) + (w >> 32);
		p += 64;
		len -= 64;
	}
	while (len >= 16) {
		u64x2 x = load128(p);

		a0 += x & low;
		a1 += x >> 32;
		p += 16;
		len -= 16;
	}
	acc = (a0 + a1) + (a2 + a3);
	sum = acc[0] + acc[1];
	while (len >= 4) {
		sum += load32(p);
		p += 4;
		len -= 4;
	}
	if (len > 0) {
		/* The last 1 to 3 bytes at their native positions, zero padded. */
		uint8_t tail[4] = {0, 0, 0, 0};
		uint32_t word;

		tail[0] = p[0];
		if (len > 1)
			tail[1] = p[1];
		if (len > 2)
			tail[2] = p[2];
		memcpy(&word, tail, sizeof(word));
		sum += word;
	}
	return sum; /* below 2^62: no carry was lost */
}

static uint32_t sum_native(const uint8_t *p, size_t len)
{
	uint64_t sum = 0;

	if (len <= CHUNK) /* every PGM packet */
		return fold64(sum_chunk(p, len));
	/* Chunks start at multiples of 4, so byte positions within words are kept. */
	while (len > CHUNK) {
		sum += fold64(sum_chunk(p, CHUNK));
		p += CHUNK;
		len -= CHUNK;
	}
	return fold64(sum + fold64(sum_chunk(p, len)));
}

static inline uint16_t native_to_be_words(uint32_t folded)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (uint16_t)((folded >> 8 | folded << 8) & 0xffff);
#else
	return (uint16_t)folded;
#endif
}

uint32_t pgm_csum_partial(const void *buf, size_t len, uint32_t sum)
{
	uint64_t total = (uint64_t)sum + native_to_be_words(sum_native(buf, len));

	/* One end-around carry keeps it in 32 bits: at most 0xffffffff + 0xffff. */
	return (uint32_t)((total & 0xffffffffu) + (total >> 32));
}

uint16_t pgm_csum_fold(uint32_t sum)
{
	uint16_t csum = (uint16_t)~fold64(sum);

	/* 8: "a computed checksum of zero is transmitted as all ones"; 0 means "none". */
	return csum == 0 ? 0xffff : csum;
}

uint16_t pgm_ip_header_checksum(const uint8_t *h, size_t len)
{
	uint32_t sum = pgm_csum_partial(h, len, 0);

	sum = (sum & 0xffff) + (sum >> 16);
	sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum; /* no "0 means none" here: the plain complement */
}

bool pgm_csum_verifies(const void *buf, size_t len)
{
	/* All ones reads the same in either byte order: no swap needed. */
	return sum_native(buf, len) == 0xffff;
}

uint16_t pgm_checksum(const uint8_t *tpdu, size_t len)
{
	uint32_t sum;
	uint16_t field;

	if (len < PGM_HEADER_LEN)
		return pgm_csum_fold(pgm_csum_partial(tpdu, len, 0));
	/* Sum everything, then subtract the stored field (adding its complement), which is cheaper
	 * than splitting the buffer around it. */
	sum = pgm_csum_partial(tpdu, len, 0);
	field = (uint16_t)(tpdu[6] << 8 | tpdu[7]);
	return pgm_csum_fold(sum + (uint16_t)~field);
}

void pgm_checksum_set(uint8_t *tpdu, size_t len)
{
	uint16_t csum;

	if (len < PGM_HEADER_LEN)
		return;
	tpdu[6] = 0;
	tpdu[7] = 0;
	csum = pgm_csum_fold(pgm_csum_partial(tpdu, len, 0));
	tpdu[6] = (uint8_t)(csum >> 8);
	tpdu[7] = (uint8_t)csum;
}

uint16_t pgm_csum_update(uint16_t csum, const void *old_words, const void *new_words, size_t n)
{
	const uint8_t *o = old_words, *w = new_words;
	uint32_t sum = (uint16_t)~csum;
	size_t i;

	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m'). */
	for (i = 0; i < n; i++) {
		sum += (uint16_t) ~(o[2 * i] << 8 | o[2 * i + 1]);
		sum += (uint32_t)(w[2 * i] << 8 | w[2 * i + 1]);
	}
	return pgm_csum_fold(sum);
}
