/* The compiled encoder: Tokenizer.encode's merging by rank, over the compiled pre-tokenizer.

   Exactly tokenizer.py's rounds: in a pre-token's ids, the lowest-ranked pair present is merged
   everywhere it occurs, left to right ('a a a' with a+a: the first two only), then the next
   lowest, until no pair is a merge (within the first `limit` merges). A short pre-token is merged
   in place (Tokenizer._rounds), a long one with a heap over a linked list (Tokenizer._merge_long),
   each the same rounds. Each unique pre-token is merged once and its ids cached; the cache holds
   one `limit` at a time and is emptied when full.

   Fast as memory allows (prose is mostly pre-tokens met before): the text is scanned a chunk of
   pre-tokens ahead (bpe_fill_spans), each short pre-token's cache slot prefetched as it is found; a
   slot holds the pre-token's bytes and, for up to three ids (nearly all), the ids themselves, so a
   cached pre-token is one slot read and one branch (the cache starts with the vocabulary's single
   bytes, so that they take the same path). The list of ids is made in one pass from one int object
   per id, made once, and the whole encode runs without the GIL, so threads encode at once
   (encode_batch), each with a state (cache, output) of its own.

   Encoder(ids, merges, kind, seed): ids maps each token's bytes to its id (Tokenizer.ids), merges
   lists (left, right) bytes in rank order (a merge whose parts are not both tokens never applies),
   kind is the pre-tokenizer encode() runs (-1: none, a regex of the user's: Python cuts the text
   and merge() takes each pre-token), seed keys the hashes.
   Not here: checking a vocabulary, or the sentences for what is wrong with one (tokenizer.py
   does both; a byte the vocabulary lacks makes encode() return None, and Python says why). */
#include "encode.h"
#include "minheap.h"

#include <stdlib.h>
#include <string.h>

#include "pythread.h"
#include "structmember.h"

#if defined(__GNUC__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE
#endif

#define NO_RANK UINT32_MAX
#define SHORT_WORD 128          /* longer pre-tokens are merged with the heap */
#define CACHE_MAX_LEN 256       /* longer pre-tokens are not cached */
#define CACHE_ENTRIES (1 << 19) /* the cache is emptied when it holds this many */
#define FIRST_SLOTS 4096
#define MAX_PROBE 64           /* a pre-token whose slot is further from its hash's is not cached (none is, unless keys collide) */
#define INT_OBJECTS (1 << 20)  /* ids below this have one int object, shared by every Encoder (take_out) */
#define INT_BLOCK 4096         /* made this many at a time, in order, so that the objects of ids near one another are too */
#define INT_BLOCKS (INT_OBJECTS / INT_BLOCK)
#define NOGIL_BYTES 1024       /* texts this long are encoded without the GIL */

/* a cached short pre-token: its block, and its ids (inline up to three, else where they begin in cache_ids) */
typedef struct {
    uint64_t k0, k1; /* k1 == 0: the slot is empty (a block's last byte is its length, never 0) */
    uint32_t ids[3];
    uint32_t n;
} short_slot;

/* what one encode call works with: one thread's cache and output (the Encoder keeps those not in use) */
typedef struct state {
    short_slot *slots; /* mask + 1, at most half full */
    size_t mask, used;
    bpe_bytesmap long_cache; /* pre-tokens of BPE_BLOCK_MAX + 1 to CACHE_MAX_LEN bytes -> (offset in cache_ids, length) */
    uint32_t *cache_ids;     /* the ids of cached pre-tokens with more than three */
    size_t cache_ids_used, cache_ids_cap;
    uint32_t cache_limit; /* the limit the cache's ids were merged with */
    uint32_t *out;        /* the ids of the call in progress */
    size_t out_used, out_cap;
    /* every id the state's cache and output have held, as far as making their int objects goes (note_ids): the largest,
       and the blocks of INT_BLOCK ids they are in (those below INT_OBJECTS). Never cleared: a block made stays made. */
    uint32_t largest;
    uint64_t blocks[INT_BLOCKS / 64];
    struct state *next; /* the next free state */
    bpe_span spans[BPE_CHUNK_ROOM];
} state;

typedef struct {
    PyObject_HEAD int kind; /* a BPE_KIND_*, or -1: pre-tokens come from Python (a regex of the user's) */
    PyObject *ids;          /* bytes -> id, for the special tokens */
    uint64_t seed;          /* the pair table's */
    bpe_hashkey key;        /* the caches' */
    int64_t byte_ids[256];  /* -1: the vocabulary lacks the byte */
    uint32_t n_merges;
    uint32_t *made;      /* rank -> the id that merge makes */
    uint64_t *pair_keys; /* left id << 32 | right id */
    uint32_t *pair_ranks;
    size_t pair_mask;
    state *free_states; /* states not in use (the GIL guards the list) */
    PyObject *inert; /* frozenset of the ranks of merges that never apply (a part is no token) */
} Encoder;

static inline uint64_t mix64(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7FB5D329728EA185ULL;
    x ^= x >> 27;
    x *= 0x81DADEF4BC2DD44DULL;
    x ^= x >> 33;
    return x;
}

/* the rank of the pair (a, b) if it is among the first `limit` merges, else NO_RANK */
static inline uint32_t rank_of(const Encoder *e, uint32_t a, uint32_t b, uint32_t limit) {
    uint64_t key = (uint64_t)a << 32 | b;
    size_t i = (size_t)mix64(key ^ e->seed) & e->pair_mask;
    for (;;) {
        uint32_t rank = e->pair_ranks[i];
        if (rank == NO_RANK) return NO_RANK;
        if (e->pair_keys[i] == key) return rank < limit ? rank : NO_RANK;
        i = (i + 1) & e->pair_mask;
    }
}

/* ---------------------------------------------------------------------------------------------
   merging one pre-token's ids */

/* Tokenizer._rounds, in place: returns the new length. ranks has room for n - 1. */
static size_t merge_short(const Encoder *e, uint32_t *ids, uint32_t *ranks, size_t n, uint32_t limit) {
    if (n < 2) return n;
    for (size_t k = 0; k + 1 < n; k++) ranks[k] = rank_of(e, ids[k], ids[k + 1], limit);
    for (;;) {
        uint32_t rank = NO_RANK;
        size_t i = 0;
        for (size_t k = 0; k + 1 < n; k++) /* the lowest rank present, its first place */
            if (ranks[k] < rank) {
                rank = ranks[k];
                i = k;
            }
        if (rank == NO_RANK) return n;
        uint32_t made = e->made[rank];
        for (;;) { /* merge at i, then at the next place holding rank to the right */
            ids[i] = made;
            memmove(ids + i + 1, ids + i + 2, (n - i - 2) * sizeof(*ids));
            memmove(ranks + i, ranks + i + 1, (n - i - 2) * sizeof(*ranks));
            n--;
            if (i > 0) ranks[i - 1] = rank_of(e, ids[i - 1], ids[i], limit);
            if (i + 1 < n) ranks[i] = rank_of(e, ids[i], ids[i + 1], limit);
            /* subtle: the pairs beside a merge hold the new token, so never this rank: look to the right only */
            size_t j = i + 1;
            while (j + 1 < n && ranks[j] != rank) j++;
            if (j + 1 >= n) break;
            i = j;
        }
    }
}

/* Tokenizer._merge_long: the same rounds in O(n log n), a heap of (rank, place) over a linked list.
   Each round first takes every place holding the lowest rank present off the heap (they come off
   left to right), then merges them in that order, skipping those an earlier merge of the round used
   up or changed. subtle: the round's places are all taken off before any merge, since a merge can
   push a pair of lower rank (a merge list may rank (x, xy) below x + y) that must wait for the next
   round, as in Tokenizer._rounds. -1 when out of memory. */
static Py_ssize_t merge_long(const Encoder *e, uint32_t *ids, size_t n, uint32_t limit) {
    if (n < 2) return (Py_ssize_t)n;
    if (n >= UINT32_MAX) return -1;
    /* malloc, not PyMem_Malloc: this runs without the GIL */
    uint32_t *next = malloc(n * sizeof(uint32_t)), *prev = malloc(n * sizeof(uint32_t));
    uint32_t *sites = malloc(3 * n * sizeof(uint32_t));
    uint8_t *alive = malloc(n);
    uint64_t *heap = malloc(3 * n * sizeof(uint64_t)); /* n - 1 pairs, then at most two pushes per merge */
    Py_ssize_t result = -1;
    if (!next || !prev || !sites || !alive || !heap) goto done;
    size_t size = 0;
    for (size_t i = 0; i < n; i++) {
        next[i] = i + 1 < n ? (uint32_t)(i + 1) : UINT32_MAX;
        prev[i] = i ? (uint32_t)(i - 1) : UINT32_MAX;
        alive[i] = 1;
        if (i + 1 < n) {
            uint32_t rank = rank_of(e, ids[i], ids[i + 1], limit);
            if (rank != NO_RANK) bpe_minheap_push(heap, &size, (uint64_t)rank << 32 | i);
        }
    }
    while (size) {
        uint32_t rank = (uint32_t)(heap[0] >> 32);
        size_t n_sites = 0;
        while (size && (uint32_t)(heap[0] >> 32) == rank) sites[n_sites++] = (uint32_t)bpe_minheap_pop(heap, &size);
        for (size_t k = 0; k < n_sites; k++) {
            uint32_t i = sites[k];
            uint32_t j = alive[i] ? next[i] : UINT32_MAX;
            if (j == UINT32_MAX || rank_of(e, ids[i], ids[j], limit) != rank) continue; /* used up, or changed since pushed */
            ids[i] = e->made[rank];
            alive[j] = 0;
            uint32_t after = next[j];
            next[i] = after;
            if (after != UINT32_MAX) {
                prev[after] = i;
                uint32_t r = rank_of(e, ids[i], ids[after], limit);
                if (r != NO_RANK) bpe_minheap_push(heap, &size, (uint64_t)r << 32 | i);
            }
            uint32_t before = prev[i];
            if (before != UINT32_MAX) {
                uint32_t r = rank_of(e, ids[before], ids[i], limit);
                if (r != NO_RANK) bpe_minheap_push(heap, &size, (uint64_t)r << 32 | before);
            }
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (alive[i]) ids[kept++] = ids[i];
    result = (Py_ssize_t)kept;
done:
    free(next);
    free(prev);
    free(sites);
    free(alive);
    free(heap);
    return result;
}

/* ---------------------------------------------------------------------------------------------
   a state: one thread's cache and output (no Python here: it runs without the GIL) */

enum { OK = 0, NO_MEMORY = -1, MISSING_BYTE = -2 };

static int reserve(uint32_t **buffer, size_t *cap, size_t used, size_t more) {
    if (more <= *cap - used) return OK;
    size_t want = *cap ? *cap : 1024;
    while (more > want - used) {
        if (want > SIZE_MAX / 8) return NO_MEMORY;
        want *= 2;
    }
    uint32_t *grown = realloc(*buffer, want * sizeof(uint32_t));
    if (!grown) return NO_MEMORY;
    *buffer = grown;
    *cap = want;
    return OK;
}

/* ids the output is given (by a merge, or as a special token's or a byte's), for take_out to have their int objects */
static void note_ids(state *st, const uint32_t *ids, size_t n) {
    for (size_t k = 0; k < n; k++) {
        uint32_t id = ids[k];
        if (id > st->largest) st->largest = id;
        if (id < INT_OBJECTS) st->blocks[id / INT_BLOCK / 64] |= 1ULL << (id / INT_BLOCK % 64);
    }
}

/* the one-byte pre-tokens of the vocabulary into the empty cache: each is its byte's id whatever the limit, and
   the encoder's loop then finds them as it finds any other pre-token (no branch of their own) */
static void seed_bytes(const Encoder *e, state *st) {
    for (int b = 0; b < 256; b++) {
        if (e->byte_ids[b] < 0) continue; /* not in the vocabulary: merged, and found missing, as before */
        uint64_t k0 = (uint64_t)b, k1 = 1ULL << 56;
        size_t i = (size_t)bpe_hash_block(k0, k1, &e->key) & st->mask;
        while (st->slots[i].k1) i = (i + 1) & st->mask;
        st->slots[i] = (short_slot){k0, k1, {(uint32_t)e->byte_ids[b], 0, 0}, 1};
        note_ids(st, st->slots[i].ids, 1);
        st->used++;
    }
}

static state *new_state(const Encoder *e) {
    state *st = calloc(1, sizeof(state));
    if (!st) return NULL;
    st->slots = bpe_zeroed_table(FIRST_SLOTS * sizeof(short_slot));
    if (!st->slots || bpe_bytesmap_init(&st->long_cache, &e->key) < 0) {
        free(st->slots);
        free(st);
        return NULL;
    }
    st->mask = FIRST_SLOTS - 1;
    st->cache_limit = e->n_merges;
    seed_bytes(e, st);
    return st;
}

static void free_state(state *st) {
    free(st->slots);
    bpe_bytesmap_free(&st->long_cache);
    free(st->cache_ids);
    free(st->out);
    free(st);
}

static void clear_cache(const Encoder *e, state *st, uint32_t limit) {
    memset(st->slots, 0, (st->mask + 1) * sizeof(short_slot));
    st->used = 0;
    seed_bytes(e, st);
    bpe_bytesmap_clear(&st->long_cache);
    st->cache_ids_used = 0;
    st->cache_limit = limit;
}

static int grow_slots(const Encoder *e, state *st) {
    if (st->mask >= SIZE_MAX / 2 / sizeof(short_slot)) return NO_MEMORY;
    size_t size = (st->mask + 1) * 2;
    short_slot *slots = bpe_zeroed_table(size * sizeof(short_slot));
    if (!slots) return NO_MEMORY;
    for (size_t k = 0; k <= st->mask; k++) {
        const short_slot *old = &st->slots[k];
        if (!old->k1) continue;
        size_t i = (size_t)bpe_hash_block(old->k0, old->k1, &e->key) & (size - 1);
        while (slots[i].k1) i = (i + 1) & (size - 1);
        slots[i] = *old;
    }
    free(st->slots);
    st->slots = slots;
    st->mask = size - 1;
    return OK;
}

/* merge word (its bytes) into the ids at the end of the output; *count: how many */
static int merge_into_out(const Encoder *e, state *st, const uint8_t *word, size_t n, uint32_t limit, size_t *count) {
    if (reserve(&st->out, &st->out_cap, st->out_used, n + 3) < 0) return NO_MEMORY;
    uint32_t *ids = st->out + st->out_used;
    for (size_t k = 0; k < n; k++) {
        int64_t id = e->byte_ids[word[k]];
        if (id < 0) return MISSING_BYTE;
        ids[k] = (uint32_t)id;
    }
    if (n <= SHORT_WORD) {
        uint32_t ranks[SHORT_WORD];
        *count = merge_short(e, ids, ranks, n, limit);
    } else {
        Py_ssize_t kept = merge_long(e, ids, n, limit);
        if (kept < 0) return NO_MEMORY;
        *count = (size_t)kept;
    }
    note_ids(st, ids, *count);
    return OK;
}

/* keep the ids just merged (count of them at the end of the output) as the short pre-token span's, in the empty slot
   at i, unless the cache is short of memory or the slot is too far from the hash's (MAX_PROBE): encoding goes on */
static void cache_short(const Encoder *e, state *st, const bpe_span *span, size_t count) {
    const uint32_t *ids = st->out + st->out_used;
    uint32_t where = 0;
    if (count > 3) {
        if (count > UINT32_MAX || st->cache_ids_used > UINT32_MAX - count ||
            reserve(&st->cache_ids, &st->cache_ids_cap, st->cache_ids_used, count) < 0)
            return;
        where = (uint32_t)st->cache_ids_used;
        memcpy(st->cache_ids + where, ids, count * sizeof(uint32_t));
        st->cache_ids_used += count;
    }
    if ((st->used + 1) * 2 > st->mask + 1 && grow_slots(e, st) < 0) return;
    size_t i = (size_t)span->hash & st->mask;
    for (size_t probes = 1; st->slots[i].k1; i = (i + 1) & st->mask)
        if (++probes > MAX_PROBE) return;
    short_slot *slot = &st->slots[i];
    slot->k0 = span->k0;
    slot->k1 = span->k1;
    slot->n = (uint32_t)count;
    if (count <= 3)
        memcpy(slot->ids, ids, count * sizeof(uint32_t));
    else
        slot->ids[0] = where;
    st->used++;
}

/* a pre-token longer than a block: from the long cache, or merged (and cached, up to CACHE_MAX_LEN bytes) */
static int append_long(const Encoder *e, state *st, const uint8_t *word, size_t n, uint32_t limit) {
    size_t count;
    if (n > CACHE_MAX_LEN) {
        int status = merge_into_out(e, st, word, n, limit, &count);
        if (status == OK) st->out_used += count;
        return status;
    }
    uint64_t hash = bpe_hash(word, n, &st->long_cache.key);
    bpe_entry *hit = bpe_bytesmap_get(&st->long_cache, word, n, hash);
    if (hit) {
        if (reserve(&st->out, &st->out_cap, st->out_used, hit->value2 + 3) < 0) return NO_MEMORY;
        memcpy(st->out + st->out_used, st->cache_ids + hit->value, hit->value2 * sizeof(uint32_t));
        st->out_used += hit->value2;
        return OK;
    }
    int status = merge_into_out(e, st, word, n, limit, &count);
    if (status != OK) return status;
    if (reserve(&st->cache_ids, &st->cache_ids_cap, st->cache_ids_used, count) == OK) {
        bpe_entry *entry = bpe_bytesmap_add(&st->long_cache, word, n, hash);
        if (entry) { /* not cached when memory is short: encoding goes on without it */
            memcpy(st->cache_ids + st->cache_ids_used, st->out + st->out_used, count * sizeof(uint32_t));
            entry->value = st->cache_ids_used;
            entry->value2 = (uint32_t)count;
            st->cache_ids_used += count;
        }
    }
    st->out_used += count;
    return OK;
}

/* one pre-token's ids at the end of the output, from whichever cache holds them, or merged */
static int append_word(const Encoder *e, state *st, const uint8_t *word, size_t n, uint32_t limit) {
    if (n == 0) return OK;
    if (n > BPE_BLOCK_MAX) return append_long(e, st, word, n, limit);
    bpe_span span = {word, n, 0, 0, 0};
    bpe_block_of(word, n, &span.k0, &span.k1);
    span.hash = bpe_hash_block(span.k0, span.k1, &e->key);
    for (size_t i = (size_t)span.hash & st->mask;; i = (i + 1) & st->mask) {
        const short_slot *slot = &st->slots[i];
        if (!slot->k1) break;
        if (slot->k0 == span.k0 && slot->k1 == span.k1) {
            const uint32_t *ids = slot->n <= 3 ? slot->ids : st->cache_ids + slot->ids[0];
            if (reserve(&st->out, &st->out_cap, st->out_used, slot->n + 3) < 0) return NO_MEMORY;
            memcpy(st->out + st->out_used, ids, slot->n * sizeof(uint32_t));
            st->out_used += slot->n;
            return OK;
        }
    }
    size_t count;
    int status = merge_into_out(e, st, word, n, limit, &count);
    if (status != OK) return status;
    cache_short(e, st, &span, count);
    st->out_used += count;
    return OK;
}

/* a span the loop below did not find in the slot of its hash: further along its probe, cached with more than three
   ids, longer than a block, or new (merged, and cached); its ids at the end of the output */
static NOINLINE int append_span(const Encoder *e, state *st, const bpe_span *span, uint32_t limit) {
    if (span->len > BPE_BLOCK_MAX) return append_long(e, st, span->p, span->len, limit);
    for (size_t i = (size_t)span->hash & st->mask;; i = (i + 1) & st->mask) {
        const short_slot *slot = &st->slots[i];
        if (!slot->k1) break;
        if (slot->k0 == span->k0 && slot->k1 == span->k1) {
            const uint32_t *ids = slot->n <= 3 ? slot->ids : st->cache_ids + slot->ids[0];
            if (reserve(&st->out, &st->out_cap, st->out_used, slot->n + 3) < 0) return NO_MEMORY;
            memcpy(st->out + st->out_used, ids, slot->n * sizeof(uint32_t));
            st->out_used += slot->n;
            return OK;
        }
    }
    size_t merged;
    int status = merge_into_out(e, st, span->p, span->len, limit, &merged);
    if (status != OK) return status;
    cache_short(e, st, span, merged);
    st->out_used += merged;
    return OK;
}

/* The ids of the pre-tokens of s[*pos:n] (a text with no special token in it), a chunk at a time: found and their
   slots prefetched (bpe_fill_spans), then each read from its slot, or merged and cached. */
static int encode_piece(const Encoder *e, state *st, const uint8_t *s, size_t n, const uint8_t *limit_text, uint32_t limit) {
    size_t pos = 0;
    while (pos < n) {
        if (st->used >= CACHE_ENTRIES) clear_cache(e, st, limit);
        bpe_chunk_table t = {limit_text, &e->key, (const char *)st->slots, st->mask, sizeof(short_slot)};
        size_t before = pos, count = bpe_fill_spans(e->kind, s, n, &pos, st->spans, &t);
        /* every id stands for at least one byte: room for the chunk's, and three more for the inline copies below */
        if (reserve(&st->out, &st->out_cap, st->out_used, pos - before + 3) < 0) return NO_MEMORY;
        uint32_t *out = st->out;
        size_t w = st->out_used;
        const short_slot *slots = st->slots;
        size_t mask = st->mask;
        for (size_t k = 0; k < count; k++) {
            const bpe_span *span = &st->spans[k];
            const short_slot *slot = &slots[span->hash & mask];
            /* nearly every pre-token, one byte or fifteen: in the slot of its hash, its ids there (three copied, whatever
               n is); one branch, nearly always taken. A longer span's key matches no slot. */
            memcpy(out + w, slot->ids, 3 * sizeof(uint32_t));
            if ((((slot->k0 ^ span->k0) | (slot->k1 ^ span->k1)) == 0) & (slot->n <= 3)) {
                w += slot->n;
                continue;
            }
            st->out_used = w;
            int status = append_span(e, st, span, limit);
            if (status != OK) return status;
            if (reserve(&st->out, &st->out_cap, st->out_used, pos - before + 3) < 0) return NO_MEMORY;
            out = st->out;
            w = st->out_used;
            slots = st->slots; /* a new pre-token may have grown the table */
            mask = st->mask;
        }
        st->out_used = w;
    }
    return OK;
}

/* encode s[0:n]: the pieces between special tokens (sp), and the special tokens' ids */
static int encode_text(const Encoder *e, state *st, const uint8_t *s, size_t n, bpe_specials *sp, const uint32_t *special_ids, uint32_t limit) {
    if (limit != st->cache_limit) clear_cache(e, st, limit); /* the cache holds one limit's ids */
    st->out_used = 0;
    size_t pos = 0;
    bpe_specials_reset(sp, s, n);
    for (;;) {
        size_t cut = n;
        Py_ssize_t which = -1;
        if (!bpe_specials_next(sp, s, n, pos, &cut, &which)) cut = n;
        int status = encode_piece(e, st, s + pos, cut - pos, s + n, limit);
        if (status != OK) return status;
        if (which < 0) return OK;
        if (reserve(&st->out, &st->out_cap, st->out_used, 1) < 0) return NO_MEMORY;
        note_ids(st, &special_ids[which], 1);
        st->out[st->out_used++] = special_ids[which];
        pos = cut + sp->len[which];
    }
}

/* ---------------------------------------------------------------------------------------------
   Python: the states, the ids as a list, the calls */

/* a state for this call (the GIL held): a free one, or a new one */
static state *take_state(Encoder *e) {
    state *st = e->free_states;
    if (st) {
        e->free_states = st->next;
        return st;
    }
    st = new_state(e);
    if (!st) PyErr_NoMemory();
    return st;
}

static void give_state(Encoder *e, state *st) {
    st->next = e->free_states;
    e->free_states = st;
}

/* One int object per id below INT_OBJECTS, made once for the process and shared by every Encoder (the GIL guards
   them): a list of ids is then a copy of pointers, and the objects of the frequent ids (the low ones: merges are made
   in order of frequency) sit together in memory, made a block at a time in order. The references a long list takes
   are counted per id (taken) and added to each object's count once, rather than one increment per item: the items
   are scattered over megabytes of objects, the counts over a small array. */
static PyObject **ints; /* NULL where the block is not made yet */
static uint32_t *taken; /* per id: the references the list being made takes (0 between calls) */
static size_t n_ints;   /* the room in both */

/* the object of id (< INT_OBJECTS) made, with its block: 0, or -1 with an exception set */
static int make_int(uint32_t id) {
    if (id >= n_ints) {
        size_t want = ((size_t)id / INT_BLOCK + 1) * INT_BLOCK;
        PyObject **grown = PyMem_Realloc(ints, want * sizeof(PyObject *));
        if (grown) ints = grown;
        uint32_t *counts = grown ? PyMem_Realloc(taken, want * sizeof(uint32_t)) : NULL;
        if (!counts) {
            PyErr_NoMemory();
            return -1;
        }
        taken = counts;
        memset(ints + n_ints, 0, (want - n_ints) * sizeof(PyObject *));
        memset(taken + n_ints, 0, (want - n_ints) * sizeof(uint32_t));
        n_ints = want;
    }
    for (size_t i = (size_t)id / INT_BLOCK * INT_BLOCK, end = i + INT_BLOCK; i < end; i++)
        if (!ints[i] && !(ints[i] = PyLong_FromSize_t(i))) return -1;
    return 0;
}

static int make_noted_ints(const state *st);
static PyObject *list_of_ids(const uint32_t *out, size_t n, uint32_t largest);

/* the state's output as a list of ints, or as a bytearray of native uint32 (as_array 4) or uint16 (as_array 2: an id
   past 65535 is an OverflowError), or None (a missing byte) */
static PyObject *take_out(state *st, int status, int as_array) {
    if (status == NO_MEMORY) return PyErr_NoMemory();
    if (status == MISSING_BYTE) Py_RETURN_NONE;
    if (as_array == 4) return PyByteArray_FromStringAndSize((const char *)st->out, (Py_ssize_t)(st->out_used * sizeof(uint32_t)));
    if (as_array == 2) {
        PyObject *array = PyByteArray_FromStringAndSize(NULL, (Py_ssize_t)(st->out_used * sizeof(uint16_t)));
        if (!array) return NULL;
        uint16_t *to = (uint16_t *)PyByteArray_AS_STRING(array);
        uint32_t wide = 0;
        for (size_t k = 0; k < st->out_used; k++) {
            wide |= st->out[k];
            to[k] = (uint16_t)st->out[k];
        }
        if (wide > UINT16_MAX) {
            Py_DECREF(array);
            PyErr_SetString(PyExc_OverflowError, "an id does not fit in 16 bits");
            return NULL;
        }
        return array;
    }
    if (make_noted_ints(st) < 0) return NULL;
    return list_of_ids(st->out, st->out_used, st->largest);
}

/* the int objects of every block of ids the state has noted (note_ids), made: 0, or -1 with an exception set */
static int make_noted_ints(const state *st) {
    for (size_t b = 0; b < INT_BLOCKS; b++)
        if ((st->blocks[b / 64] >> (b % 64)) & 1 && (b * INT_BLOCK >= n_ints || !ints[b * INT_BLOCK]) && make_int((uint32_t)(b * INT_BLOCK)) < 0)
            return -1;
    return 0;
}

/* out[0:n] as a list of ints, their objects made (make_noted_ints); largest: at least the largest id among them */
static PyObject *list_of_ids(const uint32_t *out, size_t n, uint32_t largest) {
    if (largest >= INT_OBJECTS || n < largest / 8 + 1 || n > UINT32_MAX) { /* a reference each: huge ids, few ids (none), or more than taken counts */
        PyObject *list = PyList_New((Py_ssize_t)n);
        if (!list) return NULL;
        PyObject **items = ((PyListObject *)list)->ob_item;
        for (size_t k = 0; k < n; k++) {
            uint32_t id = out[k];
            if (!(items[k] = id < INT_OBJECTS ? Py_NewRef(ints[id]) : PyLong_FromUnsignedLong(id))) {
                Py_DECREF(list); /* the items not set yet are NULL: list_dealloc skips them */
                return NULL;
            }
        }
        return list;
    }
    /* one pass, into items the list takes over once they are all set: PyList_New(n) would zero them first, 8 bytes per id
       written twice (the list is what PyList_New(n) makes: ob_item from PyMem_Malloc, allocated == size) */
    PyObject *list = PyList_New(0);
    PyObject **items = list ? PyMem_Malloc(n * sizeof(PyObject *)) : NULL;
    if (!items) {
        Py_XDECREF(list);
        return list ? PyErr_NoMemory() : NULL;
    }
    for (size_t k = 0; k < n; k++) {
        uint32_t id = out[k];
        items[k] = ints[id];
        taken[id]++;
    }
    for (size_t id = 0; id <= largest; id++)
        if (taken[id]) {
            Py_SET_REFCNT(ints[id], Py_REFCNT(ints[id]) + (Py_ssize_t)taken[id]);
            taken[id] = 0;
        }
    ((PyListObject *)list)->ob_item = items;
    ((PyListObject *)list)->allocated = (Py_ssize_t)n;
    Py_SET_SIZE(list, (Py_ssize_t)n);
    return list;
}

static int check_limit(Encoder *e, Py_ssize_t limit, uint32_t *out) {
    if (limit < 0) {
        PyErr_SetString(PyExc_ValueError, "limit must be at least 0");
        return -1;
    }
    *out = (size_t)limit < e->n_merges ? (uint32_t)limit : e->n_merges;
    return 0;
}

/* *out: the id of each of sp's tokens, in sp's order (PyMem_Malloc'd; NULL when there are none): 0, or -1 with an
   exception set (a token not in the vocabulary) */
static int special_ids_of(const Encoder *e, const bpe_specials *sp, uint32_t **out) {
    *out = NULL;
    if (!sp->count) return 0;
    uint32_t *ids = PyMem_Malloc((size_t)sp->count * sizeof(uint32_t));
    if (!ids) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t t = 0; t < sp->count; t++) {
        PyObject *id = PyDict_GetItemWithError(e->ids, PySequence_Fast_GET_ITEM(sp->owner, sp->index[t]));
        unsigned long value = id ? PyLong_AsUnsignedLong(id) : 0;
        if (!id || PyErr_Occurred() || value > UINT32_MAX) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a special token is not in the vocabulary");
            PyMem_Free(ids);
            return -1;
        }
        ids[t] = (uint32_t)value;
    }
    *out = ids;
    return 0;
}

/* encode(data, limit, special_tokens=(), as_array=0) -> list of ids (as_array 4 or 2: a bytearray of native uint32 or uint16), or
   None where the Python path must encode: a byte not in the vocabulary, or a str that UTF-8 cannot hold (a lone
   surrogate). data is a str or UTF-8 bytes (invalid bytes kept, as surrogateescape keeps them); special_tokens
   (bytes, each in ids) are cut out and become their ids; the rest is pre-tokenized by the encoder's kind and merged.
   A str's UTF-8 is the one Python keeps with it (PyUnicode_AsUTF8AndSize: an ASCII str's own bytes, no copy). */
static PyObject *encoder_encode(Encoder *e, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "limit", "special_tokens", "as_array", NULL};
    PyObject *data;
    Py_ssize_t limit_arg;
    PyObject *tokens = NULL;
    int as_array = 0;
    uint32_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On|Oi", names, &data, &limit_arg, &tokens, &as_array)) return NULL;
    if (as_array != 0 && as_array != 2 && as_array != 4) {
        PyErr_SetString(PyExc_ValueError, "as_array is 0 (a list), 2 or 4 (the bytes per id)");
        return NULL;
    }
    if (e->kind < 0) {
        PyErr_SetString(PyExc_ValueError, "this encoder has no pre-tokenizer (kind -1): merge() each pre-token");
        return NULL;
    }
    if (check_limit(e, limit_arg, &limit) < 0) return NULL;
    Py_buffer buffer = {0};
    const uint8_t *s;
    size_t n;
    if (PyUnicode_Check(data)) {
        Py_ssize_t size;
        s = (const uint8_t *)PyUnicode_AsUTF8AndSize(data, &size);
        if (!s) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) return NULL;
            PyErr_Clear(); /* a lone surrogate: the Python path encodes it, as tiktoken does */
            Py_RETURN_NONE;
        }
        n = (size_t)size;
    } else {
        if (PyObject_GetBuffer(data, &buffer, PyBUF_SIMPLE) < 0) return NULL;
        s = buffer.buf;
        n = (size_t)buffer.len;
    }
    bpe_specials sp;
    PyObject *result = NULL;
    uint32_t *special_ids = NULL;
    state *st = NULL;
    if (bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    if (special_ids_of(e, &sp, &special_ids) < 0) goto done;
    if (!(st = take_state(e))) goto done;
    int status;
    if (n >= NOGIL_BYTES) { /* the text, the special tokens (sp owns them) and the state stay ours meanwhile */
        Py_BEGIN_ALLOW_THREADS status = encode_text(e, st, s, n, &sp, special_ids, limit);
        Py_END_ALLOW_THREADS
    } else {
        status = encode_text(e, st, s, n, &sp, special_ids, limit);
    }
    result = take_out(st, status, as_array);
    give_state(e, st);
done:
    PyMem_Free(special_ids);
    bpe_specials_free(&sp);
done_buffer:
    if (buffer.obj) PyBuffer_Release(&buffer);
    return result;
}

/* the list of encode_many: for each text a list of its ids in all (ends[i]: where text i's end; SIZE_MAX: None), their
   objects made (make_noted_ints); largest: at least the largest id in all. Where the ids are many, as list_of_ids's one
   pass does, each list takes its items without a reference each, and the references are added to each object once,
   counted per id over every list (a reference each touched megabytes of objects: a sixth of a batch's time) */
static PyObject *lists_of_ids(const uint32_t *all, size_t all_used, const size_t *ends, Py_ssize_t count, uint32_t largest) {
    PyObject *result = PyList_New(count);
    if (!result) return NULL;
    int counted = largest < INT_OBJECTS && all_used >= largest / 8 + 1 && all_used <= UINT32_MAX, failed = 0;
    size_t from = 0;
    for (Py_ssize_t i = 0; i < count && !failed; i++) {
        if (ends[i] == SIZE_MAX) {
            PyList_SET_ITEM(result, i, Py_NewRef(Py_None));
            continue;
        }
        size_t n = ends[i] - from;
        PyObject *list;
        if (!counted || !n) {
            list = list_of_ids(all + from, n, largest);
        } else {
            list = PyList_New(0);
            PyObject **items = list ? PyMem_Malloc(n * sizeof(PyObject *)) : NULL;
            if (list && !items) {
                Py_CLEAR(list);
                PyErr_NoMemory();
            }
            if (list) {
                for (size_t k = 0; k < n; k++) {
                    uint32_t id = all[from + k];
                    items[k] = ints[id];
                    taken[id]++;
                }
                ((PyListObject *)list)->ob_item = items;
                ((PyListObject *)list)->allocated = (Py_ssize_t)n;
                Py_SET_SIZE(list, (Py_ssize_t)n);
            }
        }
        if (!list) {
            failed = 1; /* the items after it stay NULL: list_dealloc skips them */
            break;
        }
        PyList_SET_ITEM(result, i, list);
        from = ends[i];
    }
    if (counted) /* the references the lists made so far hold, also when one could not be made (result's dealloc gives them back) */
        for (size_t id = 0; id <= largest; id++)
            if (taken[id]) {
                Py_SET_REFCNT(ints[id], Py_REFCNT(ints[id]) + (Py_ssize_t)taken[id]);
                taken[id] = 0;
            }
    if (failed) Py_CLEAR(result);
    return result;
}

/* encode_many(texts, limit, special_tokens=()) -> list: encode() of each str of texts (a list or tuple), in order, in one
   call: each a list of ids, or None where the Python path must encode it (a lone surrogate, a byte not in the
   vocabulary). Every text's UTF-8 is taken first (the GIL held), then all are encoded with one state, without the GIL
   when they hold NOGIL_BYTES or more together, then their lists are made: the ~3 us of Python calls a text costs in
   encode() are gone, and threads given runs of texts (Tokenizer's batches) encode at once. */
static PyObject *encoder_encode_many(Encoder *e, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"texts", "limit", "special_tokens", NULL};
    PyObject *texts_arg, *tokens = NULL;
    Py_ssize_t limit_arg;
    uint32_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "On|O", names, &texts_arg, &limit_arg, &tokens)) return NULL;
    if (e->kind < 0) {
        PyErr_SetString(PyExc_ValueError, "this encoder has no pre-tokenizer (kind -1): merge() each pre-token");
        return NULL;
    }
    if (check_limit(e, limit_arg, &limit) < 0) return NULL;
    PyObject *texts = PySequence_Tuple(texts_arg); /* ours: a list another thread changes meanwhile moves none of them */
    if (!texts) return NULL;
    Py_ssize_t count = PyTuple_GET_SIZE(texts);
    size_t room = count ? (size_t)count : 1;
    const uint8_t **starts = PyMem_Calloc(room, sizeof(*starts));
    size_t *lengths = PyMem_Calloc(room, sizeof(*lengths));
    size_t *ends = PyMem_Calloc(room, sizeof(*ends)); /* where each text's ids end in all; SIZE_MAX: None */
    PyObject *result = NULL;
    uint32_t *special_ids = NULL, *all = NULL;
    size_t all_used = 0, all_cap = 0, total = 0;
    state *st = NULL;
    bpe_specials sp;
    int specials_made = 0;
    if (!starts || !lengths || !ends) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *item = PyTuple_GET_ITEM(texts, i);
        if (!PyUnicode_Check(item)) {
            PyErr_Format(PyExc_TypeError, "encode_many takes str texts, not %.80s", Py_TYPE(item)->tp_name);
            goto done;
        }
        Py_ssize_t size;
        const char *utf8 = PyUnicode_AsUTF8AndSize(item, &size);
        if (!utf8) {
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError)) goto done;
            PyErr_Clear(); /* a lone surrogate: None, for the Python path */
            continue;
        }
        starts[i] = (const uint8_t *)utf8;
        lengths[i] = (size_t)size;
        total += (size_t)size;
    }
    if (bpe_specials_init(&sp, tokens) < 0) goto done;
    specials_made = 1;
    if (special_ids_of(e, &sp, &special_ids) < 0) goto done;
    if (!(st = take_state(e))) goto done;
    int status = OK;
    PyThreadState *saved = total >= NOGIL_BYTES ? PyEval_SaveThread() : NULL; /* the texts (in our tuple), sp and st stay ours */
    for (Py_ssize_t i = 0; i < count; i++) {
        ends[i] = SIZE_MAX;
        if (!starts[i]) continue;
        int done_text = encode_text(e, st, starts[i], lengths[i], &sp, special_ids, limit);
        if (done_text == MISSING_BYTE) continue;
        if (done_text != OK || reserve(&all, &all_cap, all_used, st->out_used) != OK) {
            status = NO_MEMORY;
            break;
        }
        if (st->out_used) memcpy(all + all_used, st->out, st->out_used * sizeof(uint32_t));
        all_used += st->out_used;
        ends[i] = all_used;
    }
    if (saved) PyEval_RestoreThread(saved);
    if (status != OK) {
        PyErr_NoMemory();
        goto done;
    }
    if (make_noted_ints(st) < 0) goto done;
    result = lists_of_ids(all, all_used, ends, count, st->largest);
done:
    if (st) give_state(e, st);
    free(all);
    PyMem_Free(special_ids);
    if (specials_made) bpe_specials_free(&sp);
    PyMem_Free(starts);
    PyMem_Free(lengths);
    PyMem_Free(ends);
    Py_DECREF(texts);
    return result;
}

/* merge(word, limit) -> tuple of ids (or None): one pre-token, as Tokenizer._word_ids gives it */
static PyObject *encoder_merge(Encoder *e, PyObject *args) {
    Py_buffer word;
    Py_ssize_t limit_arg;
    uint32_t limit;
    if (!PyArg_ParseTuple(args, "y*n", &word, &limit_arg)) return NULL;
    if (check_limit(e, limit_arg, &limit) < 0) {
        PyBuffer_Release(&word);
        return NULL;
    }
    state *st = take_state(e);
    if (!st) {
        PyBuffer_Release(&word);
        return NULL;
    }
    if (limit != st->cache_limit) clear_cache(e, st, limit);
    if (st->used >= CACHE_ENTRIES) clear_cache(e, st, limit);
    st->out_used = 0;
    int status = append_word(e, st, word.buf, (size_t)word.len, limit);
    PyBuffer_Release(&word);
    PyObject *list = take_out(st, status, 0);
    give_state(e, st);
    if (!list || list == Py_None) return list;
    PyObject *tuple = PyList_AsTuple(list);
    Py_DECREF(list);
    return tuple;
}

/* ---------------------------------------------------------------------------------------------
   building it */

static int lookup_id(PyObject *ids, PyObject *token, uint32_t *out) {
    PyObject *id = PyDict_GetItemWithError(ids, token);
    if (!id) return PyErr_Occurred() ? -1 : 0;
    unsigned long value = PyLong_AsUnsignedLong(id);
    if (PyErr_Occurred()) return -1;
    if (value > UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "ids must be below 2**32");
        return -1;
    }
    *out = (uint32_t)value;
    return 1;
}

static int encoder_init(Encoder *e, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"ids", "merges", "kind", "seed", NULL};
    PyObject *ids, *merges;
    int kind;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!iK", names, &PyDict_Type, &ids, &PyList_Type, &merges, &kind, &seed)) return -1;
    if (kind < -1 || kind >= BPE_KINDS) {
        PyErr_Format(PyExc_ValueError, "unknown pre-tokenizer kind %d", kind);
        return -1;
    }
    if (e->made) {
        PyErr_SetString(PyExc_RuntimeError, "an Encoder is built once");
        return -1;
    }
    Py_ssize_t n_merges = PyList_GET_SIZE(merges);
    if ((size_t)n_merges >= NO_RANK) {
        PyErr_SetString(PyExc_ValueError, "too many merges");
        return -1;
    }
    e->kind = kind;
    e->seed = seed;
    e->ids = Py_NewRef(ids);
    e->n_merges = (uint32_t)n_merges;
    for (int b = 0; b < 256; b++) {
        char byte = (char)b;
        PyObject *token = PyBytes_FromStringAndSize(&byte, 1);
        uint32_t id;
        int found = token ? lookup_id(ids, token, &id) : -1;
        Py_XDECREF(token);
        if (found < 0) return -1;
        e->byte_ids[b] = found ? (int64_t)id : -1;
    }
    bpe_key_init(&e->key, seed, 0);
    size_t slots = 16;
    while (slots < 2 * (size_t)n_merges + 16) slots *= 2;
    e->made = PyMem_Malloc(((size_t)n_merges + 1) * sizeof(uint32_t));
    e->pair_keys = PyMem_Malloc(slots * sizeof(uint64_t));
    e->pair_ranks = PyMem_Malloc(slots * sizeof(uint32_t));
    if (!e->made || !e->pair_keys || !e->pair_ranks) {
        PyErr_NoMemory();
        return -1;
    }
    memset(e->pair_ranks, 0xFF, slots * sizeof(uint32_t));
    e->pair_mask = slots - 1;
    e->inert = PyFrozenSet_New(NULL);
    if (!e->inert) return -1;
    for (Py_ssize_t rank = 0; rank < n_merges; rank++) {
        PyObject *pair = PyList_GET_ITEM(merges, rank);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 || !PyBytes_Check(PyTuple_GET_ITEM(pair, 0)) ||
            !PyBytes_Check(PyTuple_GET_ITEM(pair, 1))) {
            PyErr_Format(PyExc_TypeError, "merge %zd is not a tuple of two bytes", rank + 1);
            return -1;
        }
        uint32_t left, right, made;
        int has_left = lookup_id(ids, PyTuple_GET_ITEM(pair, 0), &left);
        int has_right = has_left > 0 ? lookup_id(ids, PyTuple_GET_ITEM(pair, 1), &right) : has_left;
        if (has_left < 0 || has_right < 0) return -1;
        e->made[rank] = UINT32_MAX;
        if (!has_left || !has_right) { /* a part that is not a token: it never applies (Tokenizer.inert) */
            PyObject *number = PyLong_FromSsize_t(rank);
            int failed = !number || PySet_Add(e->inert, number) < 0;
            Py_XDECREF(number);
            if (failed) return -1;
            continue;
        }
        PyObject *joined = PyBytes_FromStringAndSize(NULL, PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0)) + PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 1)));
        if (!joined) return -1;
        memcpy(PyBytes_AS_STRING(joined), PyBytes_AS_STRING(PyTuple_GET_ITEM(pair, 0)), PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0)));
        memcpy(PyBytes_AS_STRING(joined) + PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 0)), PyBytes_AS_STRING(PyTuple_GET_ITEM(pair, 1)),
               PyBytes_GET_SIZE(PyTuple_GET_ITEM(pair, 1)));
        int has_made = lookup_id(ids, joined, &made);
        Py_DECREF(joined);
        if (has_made < 0) return -1;
        if (!has_made) {
            PyErr_Format(PyExc_ValueError, "merge %zd makes a token that is not in the vocabulary", rank + 1);
            return -1;
        }
        e->made[rank] = made;
        uint64_t key = (uint64_t)left << 32 | right;
        size_t i = (size_t)mix64(key ^ seed) & e->pair_mask;
        while (e->pair_ranks[i] != NO_RANK && e->pair_keys[i] != key) i = (i + 1) & e->pair_mask;
        if (e->pair_ranks[i] == NO_RANK) { /* subtle: a pair listed twice keeps its first rank, as Tokenizer.ranks does */
            e->pair_keys[i] = key;
            e->pair_ranks[i] = (uint32_t)rank;
        }
    }
    return 0;
}

static void encoder_dealloc(Encoder *e) {
    Py_CLEAR(e->ids);
    Py_CLEAR(e->inert);
    PyMem_Free(e->made);
    PyMem_Free(e->pair_keys);
    PyMem_Free(e->pair_ranks);
    while (e->free_states) {
        state *st = e->free_states;
        e->free_states = st->next;
        free_state(st);
    }
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyMethodDef encoder_methods[] = {
    {"encode_many", (PyCFunction)(void (*)(void))encoder_encode_many, METH_VARARGS | METH_KEYWORDS,
     "encode_many(texts, limit, special_tokens=()): encode() of each str of texts in one call, in order: each a list of ids, or None "
     "where the Python path must encode it."},
    {"encode", (PyCFunction)(void (*)(void))encoder_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(data, limit, special_tokens=(), as_array=0): the ids of a str or UTF-8 bytes (as_array 4 or 2: a bytearray of uint32 or uint16), "
     "or None where the Python path must encode (a byte not in the vocabulary, a lone surrogate)."},
    {"merge", (PyCFunction)encoder_merge, METH_VARARGS, "merge(word, limit): the ids of one pre-token, as a tuple."},
    {NULL, NULL, 0, NULL},
};

/* ---------------------------------------------------------------------------------------------
   checking and indexing a vocabulary: the Tokenizer constructor's loops */

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* index_vocab(vocab, merges) -> (vocab, merges, ids), or None where the Python checks must run (and name what is wrong).
   What tokenizer._checked_vocab, _checked_merges and the ids loop make, for the plain case: vocab a dict of ints in
   [0, 2**32) to non-empty bytes, merges a list of 2-tuples of non-empty bytes; ids maps each token to its lowest id,
   filled in the order of the ids, as the Python loop fills it. */
static PyObject *index_vocab(PyObject *self, PyObject *args) {
    PyObject *vocab, *merges;
    if (!PyArg_ParseTuple(args, "OO", &vocab, &merges)) return NULL;
    if (!PyDict_CheckExact(vocab) || !PyList_CheckExact(merges)) Py_RETURN_NONE;
    Py_ssize_t n = PyDict_GET_SIZE(vocab), pos = 0, k = 0;
    for (Py_ssize_t m = 0; m < PyList_GET_SIZE(merges); m++) {
        PyObject *pair = PyList_GET_ITEM(merges, m);
        if (!PyTuple_CheckExact(pair) || PyTuple_GET_SIZE(pair) != 2) Py_RETURN_NONE;
        for (int side = 0; side < 2; side++) {
            PyObject *part = PyTuple_GET_ITEM(pair, side);
            if (!PyBytes_CheckExact(part) || PyBytes_GET_SIZE(part) == 0) Py_RETURN_NONE;
        }
    }
    uint64_t *order = PyMem_Malloc(((size_t)n + 1) * sizeof(uint64_t)); /* id << 32 | place */
    PyObject **values = PyMem_Malloc(((size_t)n + 1) * sizeof(PyObject *));
    PyObject *key, *value, *ids = NULL, *result = NULL;
    int sorted = 1;
    if (!order || !values) {
        PyErr_NoMemory();
        goto done;
    }
    while (PyDict_Next(vocab, &pos, &key, &value)) {
        if (!PyLong_CheckExact(key) || !PyBytes_CheckExact(value) || PyBytes_GET_SIZE(value) == 0) goto irregular;
        int overflow;
        long long id = PyLong_AsLongLongAndOverflow(key, &overflow);
        if (overflow || id < 0 || id > (long long)UINT32_MAX) goto irregular;
        order[k] = (uint64_t)id << 32 | (uint64_t)k;
        values[k] = value;
        if (k && order[k] < order[k - 1]) sorted = 0;
        k++;
    }
    if (!sorted) qsort(order, (size_t)n, sizeof(uint64_t), compare_u64);
    ids = PyDict_New();
    if (!ids) goto done;
    for (k = 0; k < n; k++) {
        PyObject *token = values[(uint32_t)order[k]], *id = PyLong_FromUnsignedLongLong(order[k] >> 32);
        PyObject *kept = id ? PyDict_SetDefault(ids, token, id) : NULL; /* subtle: equal bytes under two ids share the first */
        Py_XDECREF(id);
        if (!kept) goto done;
    }
    PyObject *vocab_copy = PyDict_Copy(vocab), *merges_copy = PyList_GetSlice(merges, 0, PyList_GET_SIZE(merges));
    if (vocab_copy && merges_copy) result = PyTuple_Pack(3, vocab_copy, merges_copy, ids);
    Py_XDECREF(vocab_copy);
    Py_XDECREF(merges_copy);
    goto done;
irregular:
    result = Py_NewRef(Py_None);
done:
    Py_XDECREF(ids);
    PyMem_Free(order);
    PyMem_Free(values);
    return result;
}

static PyMethodDef functions[] = {
    {"index_vocab", index_vocab, METH_VARARGS, "index_vocab(vocab, merges): (vocab, merges, ids) as the Tokenizer checks and builds them, or None."},
    {NULL, NULL, 0, NULL},
};

static PyMemberDef encoder_members[] = {
    {"kind", T_INT, offsetof(Encoder, kind), READONLY, "the pre-tokenizer encode() runs (a KINDS value), or -1: none"},
    {"inert", T_OBJECT, offsetof(Encoder, inert), READONLY, "the ranks of the merges that never apply (Tokenizer.inert)"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject EncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.Encoder",
    .tp_basicsize = sizeof(Encoder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Encoder(ids, merges, kind, seed): Tokenizer.encode's merging by rank, compiled.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)encoder_init,
    .tp_dealloc = (destructor)encoder_dealloc,
    .tp_methods = encoder_methods,
    .tp_members = encoder_members,
};

int bpe_encode_init(PyObject *module) {
    if (PyType_Ready(&EncoderType) < 0) return -1;
    if (PyModule_AddFunctions(module, functions) < 0) return -1;
    return PyModule_AddObjectRef(module, "Encoder", (PyObject *)&EncoderType);
}
