/*
 * Entry pools and hash tables of the control plane.
 *
 * Pools hand out 32-bit ids for fixed-size entries kept in chunks of up to 1024 entries and
 * 64 KB, so growing never moves an entry and memory is the entries plus one pointer per chunk.
 * When the last entry of a pool is freed, its chunks are released (after a NAK storm the memory
 * goes back).
 *
 * Hash tables chain ids through a link inside each entry. Keys are hashed with SipHash-1-3 under
 * a random key drawn when the core is created, so sequence numbers chosen by an attacker cannot
 * pile up in one bucket.
 */
#include <stdlib.h>
#include <string.h>

#include "control/cp_internal.h"

void cp_pool_init(struct cp_pool *pool, size_t elem_size, size_t link_offset)
{
	memset(pool, 0, sizeof(*pool));
	pool->elem_size = elem_size;
	pool->link_offset = link_offset;
	pool->free_head = CP_NIL;
	pool->chunk_shift = CP_POOL_CHUNK_SHIFT;
	while (pool->chunk_shift > 4 && (elem_size << pool->chunk_shift) > CP_POOL_CHUNK_BYTES)
		pool->chunk_shift--;
}

void cp_pool_destroy(struct cp_pool *pool)
{
	for (uint32_t i = 0; i < pool->nchunks; i++)
		free(pool->chunks[i]);
	free(pool->chunks);
	cp_pool_init(pool, pool->elem_size, pool->link_offset);
}

static uint32_t *pool_link(const struct cp_pool *pool, uint32_t id)
{
	return (uint32_t *)((unsigned char *)cp_pool_at(pool, id) + pool->link_offset);
}

uint32_t cp_pool_alloc(struct cp_pool *pool)
{
	uint32_t id;

	if (pool->free_head != CP_NIL) {
		id = pool->free_head;
		pool->free_head = *pool_link(pool, id);
	} else {
		if (pool->fresh > CP_POOL_MAX_ID)
			return CP_NIL;
		if ((pool->fresh >> pool->chunk_shift) == pool->nchunks) {
			unsigned char *chunk;

			if (pool->nchunks == pool->chunk_cap) {
				uint32_t cap = pool->chunk_cap ? 2 * pool->chunk_cap : 8;
				unsigned char **chunks =
					realloc(pool->chunks, (size_t)cap * sizeof(*chunks));

				if (chunks == NULL)
					return CP_NIL;
				pool->chunks = chunks;
				pool->chunk_cap = cap;
			}
			chunk = malloc(pool->elem_size << pool->chunk_shift);
			if (chunk == NULL)
				return CP_NIL;
			pool->chunks[pool->nchunks++] = chunk;
		}
		id = pool->fresh++;
	}
	memset(cp_pool_at(pool, id), 0, pool->elem_size);
	pool->live++;
	return id;
}

void cp_pool_free(struct cp_pool *pool, uint32_t id)
{
	*pool_link(pool, id) = pool->free_head;
	pool->free_head = id;
	if (--pool->live == 0)
		cp_pool_destroy(pool);
}

size_t cp_pool_bytes(const struct cp_pool *pool)
{
	return ((size_t)pool->nchunks * pool->elem_size << pool->chunk_shift) +
	       (size_t)pool->chunk_cap * sizeof(*pool->chunks);
}

/* ---- SipHash-1-3 (Aumasson, Bernstein) of one 64-bit word ---- */

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

#define SIPROUND(v0, v1, v2, v3)                                                                   \
	do {                                                                                       \
		v0 += v1;                                                                          \
		v1 = rotl64(v1, 13);                                                               \
		v1 ^= v0;                                                                          \
		v0 = rotl64(v0, 32);                                                               \
		v2 += v3;                                                                          \
		v3 = rotl64(v3, 16);                                                               \
		v3 ^= v2;                                                                          \
		v0 += v3;                                                                          \
		v3 = rotl64(v3, 21);                                                               \
		v3 ^= v0;                                                                          \
		v2 += v1;                                                                          \
		v1 = rotl64(v1, 17);                                                               \
		v1 ^= v2;                                                                          \
		v2 = rotl64(v2, 32);                                                               \
	} while (0)

uint64_t cp_hash64(const struct cp_hash_key *key, uint64_t word)
{
	uint64_t v0 = key->k0 ^ 0x736f6d6570736575ull;
	uint64_t v1 = key->k1 ^ 0x646f72616e646f6dull;
	uint64_t v2 = key->k0 ^ 0x6c7967656e657261ull;
	uint64_t v3 = key->k1 ^ 0x7465646279746573ull;
	uint64_t last = (uint64_t)8 << 56; /* message length 8, no tail bytes */

	v3 ^= word;
	SIPROUND(v0, v1, v2, v3);
	v0 ^= word;
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/* ---- chained hash table ---- */

/* Old buckets moved per insert or remove: the move ends long before the table fills again. */
#define HTAB_MIGRATE_STEP 8

static uint32_t *bucket_array(uint32_t n)
{
	uint32_t *b = malloc((size_t)n * sizeof(*b));

	if (b != NULL)
		memset(b, 0xff, (size_t)n * sizeof(*b));
	return b;
}

int cp_htab_init(struct cp_htab *tab, uint32_t nbuckets)
{
	uint32_t n = 1;

	while (n < nbuckets)
		n <<= 1;
	memset(tab, 0, sizeof(*tab));
	tab->buckets = bucket_array(n);
	if (tab->buckets == NULL)
		return -1;
	tab->mask = n - 1;
	return 0;
}

void cp_htab_destroy(struct cp_htab *tab)
{
	free(tab->buckets);
	free(tab->old);
	memset(tab, 0, sizeof(*tab));
}

/* Moves up to `steps` old buckets into the new array. */
static void htab_migrate(struct cp_htab *tab, const struct cp_htab_ops *ops, uint32_t steps)
{
	while (tab->old != NULL) {
		uint32_t id = tab->old[tab->migrated];

		tab->old[tab->migrated] = CP_NIL;
		/* its two buckets in the new array start empty now (see htab_grow) */
		tab->buckets[tab->migrated] = CP_NIL;
		tab->buckets[tab->migrated + tab->old_mask + 1] = CP_NIL;
		while (id != CP_NIL) {
			uint32_t *link = ops->link(ops->ctx, id);
			uint32_t next = *link;
			uint32_t *head = &tab->buckets[ops->hash(ops->ctx, id) & tab->mask];

			*link = *head;
			*head = id;
			id = next;
		}
		if (tab->migrated++ == tab->old_mask) {
			free(tab->old);
			tab->old = NULL;
			tab->migrated = 0;
		}
		if (--steps == 0)
			break;
	}
}

/*
 * Starts doubling; on allocation failure the table keeps working, only fuller. The new array is
 * not cleared here: each pair of its buckets is cleared when their old bucket moves, so the
 * cost of touching megabytes of memory is spread over the move too.
 */
static void htab_grow(struct cp_htab *tab)
{
	uint32_t n = (tab->mask + 1) * 2;
	uint32_t *buckets;

	if (n == 0 || (buckets = malloc((size_t)n * sizeof(*buckets))) == NULL)
		return;
	tab->old = tab->buckets;
	tab->old_mask = tab->mask;
	tab->migrated = 0;
	tab->buckets = buckets;
	tab->mask = n - 1;
}

void cp_htab_insert(struct cp_htab *tab, const struct cp_htab_ops *ops, uint32_t id, uint64_t hash)
{
	uint32_t *head;

	if (tab->old != NULL)
		htab_migrate(tab, ops, HTAB_MIGRATE_STEP);
	else if (tab->count >= tab->mask + 1)
		htab_grow(tab);
	head = cp_htab_slot(tab, hash);
	*ops->link(ops->ctx, id) = *head;
	*head = id;
	tab->count++;
}

void cp_htab_remove(struct cp_htab *tab, const struct cp_htab_ops *ops, uint32_t id, uint64_t hash)
{
	uint32_t *pp;

	if (tab->old != NULL)
		htab_migrate(tab, ops, HTAB_MIGRATE_STEP);
	for (pp = cp_htab_slot(tab, hash); *pp != CP_NIL; pp = ops->link(ops->ctx, *pp)) {
		if (*pp == id) {
			*pp = *ops->link(ops->ctx, id);
			tab->count--;
			return;
		}
	}
}

size_t cp_htab_bytes(const struct cp_htab *tab)
{
	size_t n = tab->buckets != NULL ? (size_t)tab->mask + 1 : 0;

	if (tab->old != NULL)
		n += (size_t)tab->old_mask + 1;
	return n * sizeof(uint32_t);
}
