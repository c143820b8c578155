/* A hash map from byte strings to numbers, for counting pre-tokens, caching a word's ids and
   indexing a rank file's tokens (encode.h has the lookups, inlined where they are used). Open
   addressing with linear probing, the entries in the table itself and the table at most half
   full, so a lookup usually reads one entry; keys of up to 8 bytes (most pre-tokens) are kept
   in the entry, longer ones in an arena. The hash is keyed with a per-process random seed (given
   by Python, os.urandom), so text made to collide for one run does not collide in the next
   (hash.h, whose key stretching is here too). */
#include "encode.h"

#include <stdlib.h>
#if defined(__linux__)
#include <sys/mman.h>
#endif

#define FIRST_SLOTS 1024
#define HUGE_PAGE (2u << 20)

/* a zeroed table; one of megabytes in 2 MB pages where the system has them (Linux's transparent huge pages, when
   asked for): its slots are visited at random, and with 4 KB pages most visits would also miss the TLB. free() frees it. */
void *bpe_zeroed_table(size_t bytes) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE) {
        void *table = aligned_alloc(HUGE_PAGE, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
        if (!table) return NULL;
        madvise(table, bytes, MADV_HUGEPAGE); /* only advice, and before the first touch: without it the table is the same, in small pages */
        return memset(table, 0, bytes);
    }
#endif
    return calloc(1, bytes);
}

int bpe_hash_aes = 0;

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void bpe_key_init(bpe_hashkey *key, uint64_t seed, int force_sip) {
    uint64_t state = seed;
    key->sip[0] = splitmix64(&state);
    key->sip[1] = splitmix64(&state);
    for (int r = 0; r < 5; r++) {
        key->aes[r][0] = splitmix64(&state);
        key->aes[r][1] = splitmix64(&state);
    }
    key->use_aes = bpe_hash_aes && !force_sip;
}

int bpe_bytesmap_init(bpe_bytesmap *m, const bpe_hashkey *key) {
    memset(m, 0, sizeof(*m));
    m->key = *key;
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

/* ---------------------------------------------------------------------------------------------
   the hash itself, for the tests */

/* keyed_hash(data, seed, siphash=False) -> int: the hash the core's tables give data under seed (siphash: as where
   the processor has no AES instructions) */
static PyObject *keyed_hash(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "seed", "siphash", NULL};
    Py_buffer data;
    unsigned long long seed;
    int siphash = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*K|p", names, &data, &seed, &siphash)) return NULL;
    bpe_hashkey key;
    bpe_key_init(&key, seed, siphash);
    uint64_t h = bpe_hash(data.buf, (size_t)data.len, &key);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLongLong(h);
}

/* siphash13(data, k0, k1) -> int: SipHash-1-3 itself under the key (k0, k1), for the test that compares it with the
   reference */
static PyObject *siphash13(PyObject *self, PyObject *args) {
    Py_buffer data;
    bpe_hashkey key;
    if (!PyArg_ParseTuple(args, "y*KK", &data, &key.sip[0], &key.sip[1])) return NULL;
    uint64_t h = bpe_siphash13(data.buf, (size_t)data.len, &key);
    PyBuffer_Release(&data);
    return PyLong_FromUnsignedLongLong(h);
}

static PyMethodDef functions[] = {
    {"keyed_hash", (PyCFunction)(void (*)(void))keyed_hash, METH_VARARGS | METH_KEYWORDS,
     "keyed_hash(data, seed, siphash=False): the hash the core's tables give data under seed."},
    {"siphash13", siphash13, METH_VARARGS, "siphash13(data, k0, k1): SipHash-1-3 of data under the key (k0, k1)."},
    {NULL, NULL, 0, NULL},
};

int bpe_hash_init(PyObject *module) {
#if BPE_HASH_AES && (defined(__GNUC__) || defined(__clang__))
    __builtin_cpu_init();
    bpe_hash_aes = __builtin_cpu_supports("aes") != 0;
#endif
    if (PyModule_AddStringConstant(module, "HASH", bpe_hash_aes ? "aes-4 (keys up to 15 bytes), siphash-1-3" : "siphash-1-3") < 0) return -1;
    return PyModule_AddFunctions(module, functions);
}
