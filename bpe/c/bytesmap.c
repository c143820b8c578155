/* A hash map from byte strings to numbers, for counting pre-tokens, caching a word's ids and
   indexing a rank file's tokens (encode.h has the lookups, inlined where they are used). Open
   addressing with linear probing, the entries in the table itself and the table at most half
   full, so a lookup usually reads one entry; keys of up to 8 bytes (most pre-tokens) are kept
   in the entry, longer ones in an arena. The hash is keyed with a per-process random seed (given
   by Python, os.urandom), so text made to collide for one run does not collide in the next. */
#include "encode.h"

#include <stdlib.h>

#define FIRST_SLOTS 1024

int bpe_bytesmap_init(bpe_bytesmap *m, uint64_t seed) {
    memset(m, 0, sizeof(*m));
    m->seed = seed;
    m->table = calloc(FIRST_SLOTS, sizeof(bpe_entry));
    if (!m->table) return -1;
    m->mask = FIRST_SLOTS - 1;
    return 0;
}

void bpe_bytesmap_free(bpe_bytesmap *m) {
    free(m->table);
    free(m->arena);
    memset(m, 0, sizeof(*m));
}

void bpe_bytesmap_clear(bpe_bytesmap *m) {
    memset(m->table, 0, (m->mask + 1) * sizeof(bpe_entry));
    m->used = 0;
    m->arena_used = 0;
}

static int grow(bpe_bytesmap *m) {
    if (m->mask >= SIZE_MAX / 2 / sizeof(bpe_entry)) return -1;
    size_t size = (m->mask + 1) * 2;
    bpe_entry *table = calloc(size, sizeof(bpe_entry));
    if (!table) return -1;
    for (size_t k = 0; k <= m->mask; k++) {
        if (!m->table[k].hash) continue;
        size_t i = (size_t)m->table[k].hash & (size - 1);
        while (table[i].hash) i = (i + 1) & (size - 1);
        table[i] = m->table[k];
    }
    free(m->table);
    m->table = table;
    m->mask = size - 1;
    return 0;
}

bpe_entry *bpe_bytesmap_add(bpe_bytesmap *m, const uint8_t *key, size_t n, uint64_t hash) {
    if (n > UINT32_MAX) return NULL;
    if ((m->used + 1) * 2 > m->mask + 1 && grow(m) < 0) return NULL;
    uint64_t stored = 0;
    if (n <= 8) {
        memcpy(&stored, key, n);
    } else {
        if (n > m->arena_cap - m->arena_used) {
            size_t cap = m->arena_cap ? m->arena_cap : 4096;
            while (n > cap - m->arena_used) {
                if (cap > SIZE_MAX / 2) return NULL;
                cap *= 2;
            }
            uint8_t *arena = realloc(m->arena, cap);
            if (!arena) return NULL;
            m->arena = arena;
            m->arena_cap = cap;
        }
        memcpy(m->arena + m->arena_used, key, n);
        stored = m->arena_used;
        m->arena_used += n;
    }
    size_t i = (size_t)hash & m->mask;
    while (m->table[i].hash) i = (i + 1) & m->mask;
    bpe_entry *e = &m->table[i];
    e->hash = hash;
    e->key = stored;
    e->len = (uint32_t)n;
    e->value = 0;
    e->value2 = 0;
    m->used++;
    return e;
}
