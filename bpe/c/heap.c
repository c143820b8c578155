/* The heap trainer in C: bpe/heap.py's algorithm, step for step, without the interpreter.
 *
 * Read bpe/heap.py first: it is the reference, and this file does what it does
 * with the same structures, so the two give identical merges, counts, stop
 * reasons and work counters under every tie-break rule (tests/test_heap_c.py,
 * also under AddressSanitizer and UBSan). Phases: (1) index the words that hold
 * each pair and count each pair from its words, (2) heapify one entry per pair,
 * (3) merge loop, one merge per call of `step`: pop the best entry (stale ones
 * are pushed back with their true count, or dropped at zero), rewrite only the
 * words the index lists, in place, and push entries for the pairs whose count
 * went up.
 *
 * What differs from the Python, and why it changes no result:
 * - a word is a head (count, length, the merge that last checked it) and its token ids, in one arena, named
 *   by its offset there (Python: a string, one character a token, numbered in byte order so that words
 *   sharing pairs sit together; here they stay in the counts' order, since the merge loop prefetches the
 *   words it will check, and sorting cost 0.07 s of the 1 GB corpus's 0.17 s start and saved nothing);
 * - a pair is a record in one table (count, the change in this merge, its listed words), found by hash; a
 *   pair whose count reaches zero keeps its record with count 0 and no list, which is what "not in
 *   pair_counts, not in where" means in Python;
 * - the index lists a word once per new pair it gains in a merge (Python: once per site in a one-site
 *   word); a merge checks each listed word once either way, and after the first count pairs are counted
 *   from changes, not lists;
 * - a heap entry is (count, left, right), ordered by the rule as rule.order orders (-count, key of left,
 *   key of right, left, right), in a 4-ary heap; its array is laid out differently from heapq's, but
 *   entries pop in the same order;
 * - step makes the MergeEvent itself (heap_c.py only hands it on).
 *
 * Continuing a run (a tokenizer trained before): the vocab list holds the tokens its merges made after the
 * 256 bytes (made_tokens in trainer.py), each word is given as its token ids (width 4: 4-byte numbers), and
 * events are ranked after those merges (`made`). Everything else is the same: after the first count, the
 * trainer cannot tell a word it was given as ids from one it merged itself.
 *
 * Counts are 64-bit: the sum of every pair's count never grows (a merge
 * replaces three pairs by two), so checking it once at the start (OverflowError
 * beyond 2^63) rules out overflow for good; bpe.train falls back to Python then.
 *
 * Not here: the tie-break rules themselves (rule.py gives each byte's key),
 * stopping at a vocab size (heap_c.py's loop), detail (the Python heap's). */
#include "core.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

enum { RULE_BYTES = 0, RULE_IDS = 1 };          /* cs336: greater bytes win; huggingface, rustbpe: smaller keys */
enum { STOP_NO_PAIRS = 1, STOP_MIN_FREQUENCY = 2 };  /* what step returns instead of a merge */

/* one pair: Python's pair_counts[pair] and where[pair] */
typedef struct {
    int64_t count;     /* the true count now; 0: no word holds it */
    int64_t delta;     /* its change in the merge being made (valid while stamp is that merge's) */
    uint32_t a, b;
    uint32_t *listed;  /* the words listed under it, lazily: some may no longer hold it */
    uint32_t n_listed, cap_listed;
    uint32_t stamp;
} PairRec;

/* a heap entry: the pair and the count it had when pushed (stale once the true count differs) */
typedef struct {
    int64_t count;
    uint32_t a, b;
} Entry;

typedef struct {
    size_t start;    /* where its bytes begin in HeapObject.bytes */
    uint64_t prefix; /* its first 8 bytes as a big-endian number (zeros after a shorter token): most comparisons end here */
    uint32_t len;
} Token;

/* One word in the arena: this head, then its tokens, merged in place. A word is named by its offset in the
 * arena (in 4-byte units, even, so that the head is 8-byte aligned): the index lists offsets, so checking a
 * listed word touches one place in memory, the head and the first tokens together. */
typedef struct {
    int64_t count;
    uint32_t len;
    uint32_t seen; /* the merge that last checked it */
} WordHead;

#define HEAD_UNITS (sizeof(WordHead) / sizeof(uint32_t))

/* the index's lists of up to POOL_MAX words come from a pool, in power-of-two sizes from POOL_MIN (list_room) */
#define POOL_MIN 8
#define POOL_CLASSES 6
#define POOL_MAX (POOL_MIN << (POOL_CLASSES - 1))
#define CHUNK_BYTES (1 << 20)
#define PREFETCH 8 /* listed words ahead: checking a word waits on memory, so the next ones are asked for early */

/* what a merge gathers about one neighbouring token, to fold its changes into a few pair updates (Heap.fold) */
typedef struct {
    int64_t before;     /* as x just before a site: (x, a) loses it, (x, new) gains it */
    int64_t after;      /* as y just after one: (b, y) loses it */
    int64_t after_new;  /* ... and (new, y) gains it (not when y starts the next site: then (new, new) gains) */
    uint32_t rec_before, rec_after; /* the records of (x, new) and (new, y), once known */
    uint32_t stamp;     /* the merge it was gathered in */
} Side;

/* a word (its offset) to list under a pair born in this merge, named by its neighbour until the pair's record is known */
typedef struct {
    uint32_t word, token, side; /* side: LIST_BEFORE (x, new), LIST_AFTER (new, y), LIST_TWINS (new, new) */
} Listing;

enum { LIST_BEFORE = 0, LIST_AFTER = 1, LIST_TWINS = 2 };

typedef struct {
    uint64_t key;  /* a << 32 | b */
    uint32_t rec;  /* index into recs + 1; 0: an empty slot */
} Slot;

typedef struct {
    PyObject_HEAD
    int ready; /* __init__ finished */
    PyObject *vocab;          /* the wrapper's list of every token's bytes, kept in step with toks */
    PyTypeObject *event_type; /* bpe.events.MergeEvent: step returns one */
    uint64_t merges;          /* events made: the next one's rank */
    int rule, reuses;
    uint32_t byte_key[256]; /* RULE_IDS: the rule's key of each byte; a merged token's key is its id */
    /* tokens: their bytes, concatenated */
    uint8_t *bytes;
    size_t n_bytes, cap_bytes;
    Token *toks;
    uint32_t n_tokens, cap_tokens;
    uint32_t *tok_slots; /* reuses: bytes -> id + 1, open addressing, at most half full */
    uint32_t tok_mask;
    /* words, in the order of the counts */
    uint32_t *arena;   /* every word: its head, then its tokens */
    uint32_t *offsets; /* where each word starts: for words() */
    uint32_t n_words;
    /* pairs */
    PairRec *recs;
    uint32_t n_recs, cap_recs;
    Slot *slots;
    uint64_t slot_mask;
    /* the heap and the merge being made */
    Entry *heap;
    size_t heap_n, heap_cap;
    uint32_t stamp;
    uint32_t *touched; /* the records this merge changes */
    size_t n_touched, cap_touched;
    Side *sides; /* by token id, as many as toks */
    uint32_t cap_sides;
    uint32_t *neighbours; /* the token ids whose Side this merge gathered into */
    size_t n_neighbours, cap_neighbours;
    Listing *listings;
    size_t n_listings, cap_listings;
    int64_t twins; /* what (new, new) gains in this merge */
    /* the pool the index's short lists come from (list_room) */
    uint32_t *free_lists[POOL_CLASSES]; /* freed lists of each size, linked through their first 8 bytes */
    uint8_t *chunk_at;                  /* the current chunk's unused part */
    size_t chunk_left;
    void **chunks; /* every chunk, freed with the object */
    size_t n_chunks, cap_chunks;
    /* work counters, totals (bpe/events.py's names) */
    uint64_t heap_pops, stale_pops, heap_pushes, words_checked, words_touched;
    uint32_t *triples; /* while __init__ runs: the merges the words are encoded with (ranks), or NULL */
    size_t n_triples;
} HeapObject;

/* ------------------------------------------------------------------------ */
/* growing arrays (bpe_grow, core.h): every allocation is checked; on failure the caller returns NULL with MemoryError set */

static int grow32(void **array, uint32_t *cap, size_t need, size_t size) {
    size_t c = *cap;
    if (need <= c) return 0;
    if (need > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^32 entries");
        return -1;
    }
    if (bpe_grow(array, &c, need, size) < 0) return -1;
    *cap = (uint32_t)(c > UINT32_MAX ? UINT32_MAX : c);
    return 0;
}

/* ------------------------------------------------------------------------ */
/* tokens */

static uint64_t prefix_of(const uint8_t *p, size_t n) {
    uint64_t x = 0;
    for (size_t i = 0; i < 8; i++) x = x << 8 | (i < n ? p[i] : 0);
    return x;
}

/* tokens t and u compared as bytes (memcmp, then the shorter first) */
static int compare_bytes(const HeapObject *h, uint32_t t, uint32_t u) {
    const Token *x = &h->toks[t], *y = &h->toks[u];
    if (x->prefix != y->prefix) return x->prefix < y->prefix ? -1 : 1;
    uint32_t n = x->len, m = y->len;
    int c = memcmp(h->bytes + x->start, h->bytes + y->start, n < m ? n : m);
    if (c != 0) return c;
    return (n > m) - (n < m);
}

/* < 0 when token t's key is smaller than u's (t wins a tie), as rule.py's token_key compares */
static int compare_keys(const HeapObject *h, uint32_t t, uint32_t u) {
    if (t == u) return 0;
    if (h->rule == RULE_BYTES) return compare_bytes(h, u, t); /* the greater bytes come first */
    uint32_t kt = t < 256 ? h->byte_key[t] : t, ku = u < 256 ? h->byte_key[u] : u;
    return (kt > ku) - (kt < ku);
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
    uint64_t x = 1469598103934665603ULL; /* FNV-1a */
    for (size_t i = 0; i < n; i++) x = (x ^ p[i]) * 1099511628211ULL;
    return x;
}

/* the id of a token with these bytes, or -1 (reuses only) */
static int64_t find_token(const HeapObject *h, const uint8_t *p, size_t n) {
    for (uint64_t i = hash_bytes(p, n) & h->tok_mask;; i = (i + 1) & h->tok_mask) {
        uint32_t id = h->tok_slots[i];
        if (id == 0) return -1;
        id -= 1;
        if (h->toks[id].len == n && memcmp(h->bytes + h->toks[id].start, p, n) == 0) return id;
    }
}

static void slot_token(HeapObject *h, uint32_t id) {
    uint64_t i = hash_bytes(h->bytes + h->toks[id].start, h->toks[id].len) & h->tok_mask;
    while (h->tok_slots[i]) i = (i + 1) & h->tok_mask;
    h->tok_slots[i] = id + 1;
}

/* add token id (the last made) to the bytes -> id table, doubling it when it would be more than half full */
static int index_token(HeapObject *h, uint32_t id) {
    if ((uint64_t)h->n_tokens * 2 > h->tok_mask) {
        uint64_t size = ((uint64_t)h->tok_mask + 1) * 2;
        uint32_t *slots = size <= UINT32_MAX ? calloc(size, sizeof(uint32_t)) : NULL;
        if (slots == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        free(h->tok_slots);
        h->tok_slots = slots;
        h->tok_mask = (uint32_t)(size - 1);
        for (uint32_t t = 0; t < id; t++) slot_token(h, t);
    }
    slot_token(h, id);
    return 0;
}

/* room for a Side per token; new ones zeroed (stamp 0 is no merge's) */
static int grow_sides(HeapObject *h, size_t need) {
    uint32_t before = h->cap_sides;
    if (grow32((void **)&h->sides, &h->cap_sides, need, sizeof(Side)) < 0) return -1;
    memset(h->sides + before, 0, (size_t)(h->cap_sides - before) * sizeof(Side));
    return 0;
}

/* a new token with bytes of a then b: Trainer.mint. Under a rule that reuses tokens, one with those bytes already. */
static int64_t mint(HeapObject *h, uint32_t a, uint32_t b) {
    size_t la = h->toks[a].len, lb = h->toks[b].len;
    if (bpe_grow((void **)&h->bytes, &h->cap_bytes, h->n_bytes + la + lb, 1) < 0) return -1;
    uint8_t *p = h->bytes + h->n_bytes; /* after grow: bytes may have moved */
    memcpy(p, h->bytes + h->toks[a].start, la);
    memcpy(p + la, h->bytes + h->toks[b].start, lb);
    if (h->reuses) {
        int64_t known = find_token(h, p, la + lb);
        if (known >= 0) return known;
    }
    if (la + lb > UINT32_MAX || h->n_tokens == UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "a token or the vocabulary is too large for the compiled trainer");
        return -1;
    }
    if (grow32((void **)&h->toks, &h->cap_tokens, (size_t)h->n_tokens + 1, sizeof(Token)) < 0) return -1;
    if (grow_sides(h, (size_t)h->n_tokens + 1) < 0) return -1;
    PyObject *token = PyBytes_FromStringAndSize((const char *)p, (Py_ssize_t)(la + lb));
    if (token == NULL || PyList_Append(h->vocab, token) < 0) {
        Py_XDECREF(token);
        return -1;
    }
    Py_DECREF(token);
    uint32_t id = h->n_tokens++;
    h->toks[id] = (Token){h->n_bytes, prefix_of(p, la + lb), (uint32_t)(la + lb)};
    h->n_bytes += la + lb;
    if (h->reuses && index_token(h, id) < 0) return -1;
    return id;
}

/* ------------------------------------------------------------------------ */
/* pairs: records found by hash */

static inline uint64_t pair_key(uint32_t a, uint32_t b) { return (uint64_t)a << 32 | b; }

/* where a pair's probe starts: every bit of both ids mixed in (murmur3's finalizer). subtle: a plain multiply
 * and a middle slice of the product let (x, a) for every x with the same low bits start at one slot once ids
 * pass 512, and linear probing walked the runs: 7.7 probes a lookup in the 1 GB corpus's merge loop, 1.3 now */
static inline uint64_t mix(uint64_t key) {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    key *= 0xc4ceb9fe1a85ec53ULL;
    key ^= key >> 33;
    return key;
}

static inline uint64_t slot_of(const HeapObject *h, uint64_t key) { return mix(key) & h->slot_mask; }

/* the record of (a, b), or NULL if the pair never existed */
static PairRec *find_pair(const HeapObject *h, uint32_t a, uint32_t b) {
    uint64_t key = pair_key(a, b);
    for (uint64_t i = slot_of(h, key);; i = (i + 1) & h->slot_mask) {
        if (h->slots[i].rec == 0) return NULL;
        if (h->slots[i].key == key) return &h->recs[h->slots[i].rec - 1];
    }
}

static int rehash(HeapObject *h, uint64_t size) {
    Slot *slots = calloc(size, sizeof(Slot));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    free(h->slots);
    h->slots = slots;
    h->slot_mask = size - 1;
    for (uint32_t r = 0; r < h->n_recs; r++) {
        uint64_t key = pair_key(h->recs[r].a, h->recs[r].b), i = slot_of(h, key);
        while (slots[i].rec) i = (i + 1) & h->slot_mask;
        slots[i].key = key;
        slots[i].rec = r + 1;
    }
    return 0;
}

/* the index of (a, b)'s record, made (count 0, no words) if the pair is new; -1 on error.
 * subtle: it may move recs, so callers hold indexes, never pointers, across it. */
static int64_t pair_rec(HeapObject *h, uint32_t a, uint32_t b) {
    uint64_t key = pair_key(a, b), i = slot_of(h, key);
    for (;; i = (i + 1) & h->slot_mask) {
        if (h->slots[i].rec == 0) break;
        if (h->slots[i].key == key) return h->slots[i].rec - 1;
    }
    if ((uint64_t)(h->n_recs + 1) * 2 > h->slot_mask) { /* keep the table at most half full */
        if (rehash(h, (h->slot_mask + 1) * 2) < 0) return -1;
        for (i = slot_of(h, key); h->slots[i].rec; i = (i + 1) & h->slot_mask) {
        }
    }
    if (grow32((void **)&h->recs, &h->cap_recs, (size_t)h->n_recs + 1, sizeof(PairRec)) < 0) return -1;
    uint32_t r = h->n_recs++;
    memset(&h->recs[r], 0, sizeof(PairRec));
    h->recs[r].a = a;
    h->recs[r].b = b;
    h->slots[i].key = key;
    h->slots[i].rec = r + 1;
    return r;
}

/* ------------------------------------------------------------------------ */
/* the index's lists: a pool. subtle: a merge gives birth to pairs listed under a few words each, and 390,000
 * lists malloc'd, grown and freed one by one cost the 1 GB corpus's 32k run ~0.08 s of its merge loop and its
 * end; a list of up to POOL_MAX words is a block of a chunk the object keeps, and a freed one is reused by the
 * next list of its size. Longer lists stay malloc's, which can give their memory to lists of other sizes (a pool
 * of lists up to 16,384 words held 10 MB more in the 48 MB corpus's merge loop than malloc did, up to 256 4 MB).
 * Under AddressSanitizer a free block and a chunk's unused part are poisoned. */

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION((p), (n))
#define UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define POISON(p, n) ((void)(p), (void)(n))
#define UNPOISON(p, n) ((void)(p), (void)(n))
#endif

static inline int size_class(size_t cap) { return __builtin_ctzll(cap) - __builtin_ctz(POOL_MIN); }

/* a block for a list of cap words (a power of two, POOL_MIN to POOL_MAX); NULL with MemoryError set */
static uint32_t *pool_take(HeapObject *h, size_t cap) {
    int c = size_class(cap);
    uint32_t *block = h->free_lists[c];
    size_t bytes = cap * sizeof(uint32_t);
    if (block != NULL) {
        UNPOISON(block, bytes);
        memcpy(&h->free_lists[c], block, sizeof(uint32_t *));
        return block;
    }
    if (bytes > h->chunk_left) { /* the rest of this chunk, smaller than the block, stays unused */
        if (bpe_grow((void **)&h->chunks, &h->cap_chunks, h->n_chunks + 1, sizeof(void *)) < 0) return NULL;
        uint8_t *chunk = malloc(CHUNK_BYTES);
        if (chunk == NULL) {
            PyErr_NoMemory();
            return NULL;
        }
        POISON(chunk, CHUNK_BYTES);
        h->chunks[h->n_chunks++] = chunk;
        h->chunk_at = chunk;
        h->chunk_left = CHUNK_BYTES;
    }
    block = (uint32_t *)h->chunk_at;
    UNPOISON(block, bytes);
    h->chunk_at += bytes;
    h->chunk_left -= bytes;
    return block;
}

/* give back a list of cap words (NULL: none): to the pool, or to malloc when it is longer than POOL_MAX */
static void list_free(HeapObject *h, uint32_t *list, size_t cap) {
    if (list == NULL) return;
    if (cap > POOL_MAX) {
        free(list);
        return;
    }
    int c = size_class(cap);
    memcpy(list, &h->free_lists[c], sizeof(uint32_t *));
    h->free_lists[c] = list;
    POISON((uint8_t *)list + sizeof(uint32_t *), cap * sizeof(uint32_t) - sizeof(uint32_t *));
}

/* room for need words in p's list (kept in order): its capacity doubles from POOL_MIN; 0, or -1 with an error */
static int list_room(HeapObject *h, PairRec *p, size_t need) {
    if (need <= p->cap_listed) return 0;
    if (need > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^32 entries");
        return -1;
    }
    size_t cap = p->cap_listed ? p->cap_listed : POOL_MIN;
    while (cap < need) cap *= 2;
    uint32_t *list;
    if (p->cap_listed > POOL_MAX) { /* malloc'd already */
        if ((list = realloc(p->listed, cap * sizeof(uint32_t))) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    } else {
        list = cap <= POOL_MAX ? pool_take(h, cap) : malloc(cap * sizeof(uint32_t));
        if (list == NULL) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            return -1;
        }
        if (p->n_listed) memcpy(list, p->listed, p->n_listed * sizeof(uint32_t));
        list_free(h, p->listed, p->cap_listed);
    }
    p->listed = list;
    p->cap_listed = (uint32_t)(cap > UINT32_MAX ? UINT32_MAX : cap);
    return 0;
}

/* list word w under record r (index(where, pair, [w])); a word listed last already is not listed twice */
static int list_word(HeapObject *h, uint32_t r, uint32_t w) {
    PairRec *p = &h->recs[r];
    if (p->n_listed && p->listed[p->n_listed - 1] == w) return 0;
    if (list_room(h, p, (size_t)p->n_listed + 1) < 0) return -1;
    p->listed[p->n_listed++] = w;
    return 0;
}

/* add change to record r's delta in this merge (delta[pair] += change); 0, or -1 on error */
static int add_change_at(HeapObject *h, uint32_t r, int64_t change) {
    PairRec *p = &h->recs[r];
    if (p->stamp != h->stamp) {
        if (bpe_grow((void **)&h->touched, &h->cap_touched, h->n_touched + 1, sizeof(uint32_t)) < 0) return -1;
        h->touched[h->n_touched++] = r;
        p->stamp = h->stamp;
        p->delta = 0;
    }
    p->delta += change;
    return 0;
}

/* add change to the pair's delta in this merge, making its record if it is new; returns the record, or -1 */
static int64_t add_change(HeapObject *h, uint32_t a, uint32_t b, int64_t change) {
    int64_t r = pair_rec(h, a, b);
    if (r < 0 || add_change_at(h, (uint32_t)r, change) < 0) return -1;
    return r;
}

/* ------------------------------------------------------------------------ */
/* the heap: a max-heap in rule order, as heapq keeps rule.order's tuples -- 4-ary rather than binary: half
 * the levels, and the four children of an entry (16 bytes each) share a cache line, so sifting through 400,000
 * entries waits on memory half as often; the order entries pop in is the same */

#define ARITY 4

/* x pops before y: the higher count; on a tie the smaller (key of left, key of right), then the smaller ids */
static inline int before(const HeapObject *h, const Entry *x, const Entry *y) {
    if (x->count != y->count) return x->count > y->count;
    int c = compare_keys(h, x->a, y->a);
    if (c == 0) c = compare_keys(h, x->b, y->b);
    if (c != 0) return c < 0;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static void sift_down(HeapObject *h, size_t i) {
    Entry *heap = h->heap, e = heap[i];
    size_t n = h->heap_n;
    for (;;) {
        size_t first = ARITY * i + 1, best = first;
        if (first >= n) break;
        size_t last = first + ARITY < n ? first + ARITY : n;
        if (ARITY * first + 1 < n) /* the next level down: one of these four groups is read next */
            for (size_t child = first; child < last; child++) __builtin_prefetch(&heap[ARITY * child + 1]);
        for (size_t child = first + 1; child < last; child++)
            if (before(h, &heap[child], &heap[best])) best = child;
        if (!before(h, &heap[best], &e)) break;
        heap[i] = heap[best];
        i = best;
    }
    heap[i] = e;
}

static int push(HeapObject *h, int64_t count, uint32_t a, uint32_t b) {
    if (bpe_grow((void **)&h->heap, &h->heap_cap, h->heap_n + 1, sizeof(Entry)) < 0) return -1;
    Entry e = {count, a, b}, *heap = h->heap;
    size_t i = h->heap_n++;
    while (i > 0) {
        size_t parent = (i - 1) / ARITY;
        if (!before(h, &e, &heap[parent])) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = e;
    return 0;
}

static Entry pop(HeapObject *h) {
    Entry top = h->heap[0];
    h->heap[0] = h->heap[--h->heap_n];
    if (h->heap_n) sift_down(h, 0);
    return top;
}

/* pop stale entries until the top one is current: push them back with their true count, or drop them at zero
 * (Heap._clean_top; a pop and a push, counted as such, done as one sift) */
static void clean_top(HeapObject *h) {
    while (h->heap_n) {
        Entry *top = &h->heap[0];
        int64_t current = find_pair(h, top->a, top->b)->count; /* every entry's pair has a record */
        if (current == top->count) return;
        h->stale_pops++;
        if (current) {
            top->count = current; /* < the stored count: it can only sink */
            sift_down(h, 0);
            h->heap_pushes++;
        } else {
            pop(h);
        }
    }
}

/* ------------------------------------------------------------------------ */
/* merging: rewrite one word in place, adding its changes */

/* the Side of token t for this merge, reset on first use; NULL on error */
static Side *side_of(HeapObject *h, uint32_t t) {
    Side *side = &h->sides[t];
    if (side->stamp != h->stamp) {
        if (bpe_grow((void **)&h->neighbours, &h->cap_neighbours, h->n_neighbours + 1, sizeof(uint32_t)) < 0) return NULL;
        h->neighbours[h->n_neighbours++] = t;
        *side = (Side){0, 0, 0, 0, 0, h->stamp};
    }
    return side;
}

static int list_later(HeapObject *h, uint32_t w, uint32_t token, uint32_t side) {
    if (bpe_grow((void **)&h->listings, &h->cap_listings, h->n_listings + 1, sizeof(Listing)) < 0) return -1;
    h->listings[h->n_listings++] = (Listing){w, token, side};
    return 0;
}

/* Merge every site of (a, b) in word w, left to right, as merge_word and Heap.merge_sites do; 1 if it held one.
 * At a site: (x, a) and (b, y) lose the word's count, (x, new) and (new, y) gain it, where x is the token before
 * and y the one after. The changes are gathered by neighbour (Side) and turned into pair updates once per
 * neighbour by fold, as Heap.fold does, so that a merge looks up a few pairs rather than four per site.
 * subtle: when two sites touch ('abab') the pair between them is shared: the left site takes (b, a) away and
 * adds (new, new); the right one adds nothing on its left. */
static int merge_word(HeapObject *h, uint32_t w, uint32_t a, uint32_t b, uint32_t x_new) {
    WordHead *word = (WordHead *)(h->arena + w);
    uint32_t *t = h->arena + w + HEAD_UNITS, n = word->len;
    int64_t c = word->count;
    uint32_t r = 0;
    while (r + 1 < n && !(t[r] == a && t[r + 1] == b)) r++;
    if (r + 1 >= n) return 0; /* listed lazily: the word no longer holds the pair */
    uint32_t out = r, end = UINT32_MAX; /* tokens before the first site stay; end: where the last site ended */
    while (r < n) {
        if (r + 1 < n && t[r] == a && t[r + 1] == b) {
            if (r > 0 && r != end) { /* not shared: the token before is an old one */
                uint32_t x = t[out - 1];
                Side *side = side_of(h, x);
                if (side == NULL || list_later(h, w, x, LIST_BEFORE) < 0) return -1;
                side->before += c;
            }
            if (r + 2 < n) {
                uint32_t y = t[r + 2];
                Side *side = side_of(h, y);
                if (side == NULL) return -1;
                side->after += c;
                if (r + 3 < n && y == a && t[r + 3] == b) { /* the next site starts at y: (new, new) */
                    h->twins += c;
                    if (list_later(h, w, x_new, LIST_TWINS) < 0) return -1;
                } else {
                    side->after_new += c;
                    if (list_later(h, w, y, LIST_AFTER) < 0) return -1;
                }
            }
            t[out++] = x_new;
            r += 2;
            end = r;
        } else {
            t[out++] = t[r++];
        }
    }
    word->len = out;
    return 1;
}

/* Turn what the words gathered by neighbour into pair-count changes, and list the words under their new pairs.
 * before[x] = 7 (words 3 and 9, counts 5 and 2): (x, a) -7, (x, new) +7, words 3 and 9 listed under (x, new). */
static int fold(HeapObject *h, uint32_t a, uint32_t b, uint32_t x_new) {
    /* subtle: each neighbour's four pairs are scattered over the pair table and the records, so a lookup waits on
     * memory twice; taken in blocks, a block's slots are asked for first, then the records of the pairs that lost,
     * and only then changed, so that the waits overlap (the merge loop of the 1 GB corpus spent half its time here) */
    enum { BLOCK = 16 };
    for (size_t start = 0; start < h->n_neighbours; start += BLOCK) {
        size_t end = start + BLOCK < h->n_neighbours ? start + BLOCK : h->n_neighbours;
        uint32_t lost_before[BLOCK], lost_after[BLOCK];
        for (size_t k = start; k < end; k++) {
            uint32_t t = h->neighbours[k];
            const Side *side = &h->sides[t];
            if (side->before) {
                __builtin_prefetch(&h->slots[slot_of(h, pair_key(t, a))]);
                __builtin_prefetch(&h->slots[slot_of(h, pair_key(t, x_new))]);
            }
            if (side->after) __builtin_prefetch(&h->slots[slot_of(h, pair_key(b, t))]);
            if (side->after_new) __builtin_prefetch(&h->slots[slot_of(h, pair_key(x_new, t))]);
        }
        for (size_t k = start; k < end; k++) { /* the pairs that lose are held by words: their records exist */
            uint32_t t = h->neighbours[k];
            const Side *side = &h->sides[t];
            if (side->before) {
                lost_before[k - start] = (uint32_t)(find_pair(h, t, a) - h->recs);
                __builtin_prefetch(&h->recs[lost_before[k - start]]);
            }
            if (side->after) {
                lost_after[k - start] = (uint32_t)(find_pair(h, b, t) - h->recs);
                __builtin_prefetch(&h->recs[lost_after[k - start]]);
            }
        }
        for (size_t k = start; k < end; k++) {
            uint32_t t = h->neighbours[k];
            Side side = h->sides[t];
            int64_t r;
            if (side.before) {
                if (add_change_at(h, lost_before[k - start], -side.before) < 0 || (r = add_change(h, t, x_new, side.before)) < 0) return -1;
                h->sides[t].rec_before = (uint32_t)r;
            }
            if (side.after && add_change_at(h, lost_after[k - start], -side.after) < 0) return -1;
            if (side.after_new) {
                if ((r = add_change(h, x_new, t, side.after_new)) < 0) return -1;
                h->sides[t].rec_after = (uint32_t)r;
            }
        }
    }
    int64_t twins = -1;
    if (h->twins && (twins = add_change(h, x_new, x_new, h->twins)) < 0) return -1;
    for (size_t k = 0; k < h->n_listings; k++) {
        Listing l = h->listings[k];
        uint32_t r = l.side == LIST_BEFORE ? h->sides[l.token].rec_before : l.side == LIST_AFTER ? h->sides[l.token].rec_after : (uint32_t)twins;
        if (list_word(h, r, l.word) < 0) return -1;
    }
    h->n_neighbours = h->n_listings = 0;
    h->twins = 0;
    return 0;
}

/* apply the merge's changes (Heap.apply): a pair that reaches zero leaves the index, one that went up is pushed */
static int apply(HeapObject *h, uint64_t *pushes) {
    for (size_t k = 0; k < h->n_touched; k++) {
        PairRec *p = &h->recs[h->touched[k]];
        if (p->delta == 0) continue;
        p->count += p->delta;
        if (p->count == 0) {
            list_free(h, p->listed, p->cap_listed);
            p->listed = NULL;
            p->n_listed = p->cap_listed = 0;
        }
        if (p->delta > 0) {
            if (push(h, p->count, p->a, p->b) < 0) return -1;
            (*pushes)++;
        }
    }
    h->n_touched = 0;
    return 0;
}

/* ------------------------------------------------------------------------ */
/* the Python type */

/* ------------------------------------------------------------------------ */
/* continuing a run from words of bytes: each word encoded with the merges made before (trainer.encode_words, the
 * reference), as a tokenizer encodes: of its pairs that are merges, the one made first is merged everywhere in it,
 * left to right; again, until none is. Rounds over a min-heap of (rank, place), as encoder.py's merge_long, so a long
 * word costs O(n log n), not O(n^2). */

#define NO_RANK UINT32_MAX
#define GONE UINT32_MAX /* a place merged into its left neighbour */

typedef struct {
    uint64_t key; /* a << 32 | b */
    uint32_t rank, made; /* rank NO_RANK: an empty slot */
} RankSlot;

typedef struct {
    RankSlot *slots; /* the pairs of which one part is a merged token */
    uint64_t mask;
    uint32_t *byte_rank; /* a << 8 | b -> the rank of the pair of bytes a, b (most lookups: a word starts as bytes) */
    uint32_t *made_of;   /* rank -> the token it makes */
    int32_t *next, *prev;  /* one word's places, linked */
    uint64_t *heap, *sites; /* rank << 32 | place */
    size_t cap, heap_cap, heap_n, sites_cap;
} Ranks;

static void ranks_free(Ranks *r) {
    free(r->slots);
    free(r->byte_rank);
    free(r->made_of);
    free(r->next);
    free(r->prev);
    free(r->heap);
    free(r->sites);
}

/* the table of merges: (a, b, made) triples in rank order (a pair listed twice keeps its first rank); -1 with an error */
static int ranks_init(Ranks *r, const uint32_t *triples, size_t n, uint32_t n_tokens) {
    uint64_t size = 16;
    while (size < 2 * (uint64_t)n) size *= 2;
    r->slots = malloc(size * sizeof(RankSlot));
    r->byte_rank = malloc(65536 * sizeof(uint32_t));
    r->made_of = malloc((n ? n : 1) * sizeof(uint32_t));
    if (r->slots == NULL || r->byte_rank == NULL || r->made_of == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint64_t i = 0; i < size; i++) r->slots[i].rank = NO_RANK;
    for (uint32_t i = 0; i < 65536; i++) r->byte_rank[i] = NO_RANK;
    r->mask = size - 1;
    for (size_t k = 0; k < n; k++) {
        uint32_t a = triples[3 * k], b = triples[3 * k + 1], made = triples[3 * k + 2];
        if (a >= n_tokens || b >= n_tokens || made >= n_tokens || k >= NO_RANK) {
            PyErr_SetString(PyExc_ValueError, "a merge to encode the words with names a token the vocabulary lacks");
            return -1;
        }
        r->made_of[k] = made;
        if ((a | b) < 256) {
            if (r->byte_rank[a << 8 | b] == NO_RANK) r->byte_rank[a << 8 | b] = (uint32_t)k;
            continue;
        }
        uint64_t key = pair_key(a, b), i = mix(key) & r->mask;
        while (r->slots[i].rank != NO_RANK && r->slots[i].key != key) i = (i + 1) & r->mask;
        if (r->slots[i].rank == NO_RANK) r->slots[i] = (RankSlot){key, (uint32_t)k, made};
    }
    return 0;
}

/* the rank of the pair (a, b), or NO_RANK if it is no merge; the token it makes is r->made_of[rank] */
static inline uint32_t rank_of(const Ranks *r, uint32_t a, uint32_t b) {
    if ((a | b) < 256) return r->byte_rank[a << 8 | b];
    uint64_t key = pair_key(a, b);
    for (uint64_t i = mix(key) & r->mask;; i = (i + 1) & r->mask) {
        if (r->slots[i].rank == NO_RANK || r->slots[i].key == key) return r->slots[i].rank;
    }
}

static int rank_push(Ranks *r, uint64_t entry) {
    if (bpe_grow((void **)&r->heap, &r->heap_cap, r->heap_n + 1, sizeof(uint64_t)) < 0) return -1;
    size_t i = r->heap_n++;
    while (i > 0 && r->heap[(i - 1) / 2] > entry) {
        r->heap[i] = r->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    r->heap[i] = entry;
    return 0;
}

static uint64_t rank_pop(Ranks *r) {
    uint64_t top = r->heap[0], last = r->heap[--r->heap_n];
    size_t i = 0, n = r->heap_n;
    for (size_t c; (c = 2 * i + 1) < n; i = c) {
        if (c + 1 < n && r->heap[c + 1] < r->heap[c]) c++;
        if (r->heap[c] >= last) break;
        r->heap[i] = r->heap[c];
    }
    if (n) r->heap[i] = last;
    return top;
}

/* push the pair at place i (with its right neighbour), if it is a merge */
static int push_place(Ranks *r, const uint32_t *t, int32_t i) {
    uint32_t rank;
    if (r->next[i] < 0 || (rank = rank_of(r, t[i], t[r->next[i]])) == NO_RANK) return 0;
    return rank_push(r, (uint64_t)rank << 32 | (uint32_t)i);
}

#define SHORT_WORD 64 /* tokens: a shorter word is encoded in rounds over an array of its pairs' ranks, no heap */

/* encode_word for a word of 2 to SHORT_WORD tokens: each round finds the lowest rank by a scan and merges its sites
 * left to right; a pair whose tokens did not change keeps its rank (rank_of is asked only beside a merge) */
static uint32_t encode_short(const Ranks *r, uint32_t *t, uint32_t n) {
    uint32_t rank[SHORT_WORD], kept[SHORT_WORD];
    uint8_t fresh[SHORT_WORD];
    for (uint32_t i = 0; i + 1 < n; i++) rank[i] = rank_of(r, t[i], t[i + 1]);
    while (n >= 2) {
        uint32_t best = NO_RANK;
        for (uint32_t i = 0; i + 1 < n; i++)
            if (rank[i] < best) best = rank[i];
        if (best == NO_RANK) break;
        uint32_t made = r->made_of[best], w = 0;
        for (uint32_t i = 0; i < n; w++) {
            if (i + 1 < n && rank[i] == best) { /* a site: merged; the next one can start after it ('aaa' -> 'aa a') */
                t[w] = made;
                fresh[w] = 1;
                i += 2;
            } else {
                t[w] = t[i];
                fresh[w] = 0;
                kept[w] = i + 1 < n ? rank[i] : NO_RANK; /* its pair's rank, if its right neighbour is unchanged too */
                i += 1;
            }
        }
        n = w;
        for (uint32_t i = 0; i + 1 < n; i++) rank[i] = fresh[i] || fresh[i + 1] ? rank_of(r, t[i], t[i + 1]) : kept[i];
    }
    return n;
}

/* encode the word's n tokens in place; returns its new length, or -1 with an error */
static int64_t encode_word(Ranks *r, uint32_t *t, uint32_t n) {
    if (n < 2) return n;
    if (n <= SHORT_WORD) return encode_short(r, t, n);
    if (n > r->cap) {
        size_t cap = r->cap;
        if (bpe_grow((void **)&r->next, &cap, n, sizeof(int32_t)) < 0) return -1;
        cap = r->cap;
        if (bpe_grow((void **)&r->prev, &cap, n, sizeof(int32_t)) < 0) return -1;
        r->cap = cap;
    }
    r->heap_n = 0;
    for (uint32_t i = 0; i < n; i++) {
        r->next[i] = i + 1 < n ? (int32_t)(i + 1) : -1;
        r->prev[i] = (int32_t)i - 1;
    }
    for (uint32_t i = 0; i + 1 < n; i++)
        if (push_place(r, t, (int32_t)i) < 0) return -1;
    while (r->heap_n) {
        /* a round: every place holding the lowest rank present, left to right (they pop in order of place) */
        uint32_t rank = (uint32_t)(r->heap[0] >> 32);
        size_t n_sites = 0;
        while (r->heap_n && (uint32_t)(r->heap[0] >> 32) == rank) {
            if (bpe_grow((void **)&r->sites, &r->sites_cap, n_sites + 1, sizeof(uint64_t)) < 0) return -1;
            r->sites[n_sites++] = rank_pop(r);
        }
        for (size_t k = 0; k < n_sites; k++) {
            int32_t i = (int32_t)(uint32_t)r->sites[k], j = r->next[i];
            /* used up earlier in this round, or changed since it was pushed */
            if (t[i] == GONE || j < 0 || rank_of(r, t[i], t[j]) != rank) continue;
            t[i] = r->made_of[rank];
            t[j] = GONE;
            r->next[i] = r->next[j];
            if (r->next[j] >= 0) r->prev[r->next[j]] = i;
            if (push_place(r, t, i) < 0 || (r->prev[i] >= 0 && push_place(r, t, r->prev[i]) < 0)) return -1;
        }
    }
    uint32_t w = 0;
    for (int32_t i = 0; i >= 0; i = r->next[i]) t[w++] = t[i];
    return w;
}

typedef struct {
    PyObject *key; /* held while its bytes are read (NULL: they are a Words', which the caller holds) */
    const uint8_t *p;
    Py_ssize_t n;
    int64_t count;
} Word;

static void release(Word *kept, Py_ssize_t n) {
    for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(kept[i].key);
    free(kept);
}

static void heap_dealloc(HeapObject *h) {
    Py_XDECREF(h->vocab);
    Py_XDECREF(h->event_type);
    for (uint32_t r = 0; r < h->n_recs; r++)
        if (h->recs[r].cap_listed > POOL_MAX) free(h->recs[r].listed); /* the others are in the chunks */
    for (size_t k = 0; k < h->n_chunks; k++) free(h->chunks[k]);
    free(h->chunks);
    free(h->recs);
    free(h->slots);
    free(h->heap);
    free(h->touched);
    free(h->arena);
    free(h->offsets);
    free(h->sides);
    free(h->neighbours);
    free(h->listings);
    free(h->bytes);
    free(h->toks);
    free(h->tok_slots);
    free(h->triples);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

/* the record of (a, b) while the words are first indexed, made if new: through the table of byte pairs (a << 8 | b -> its
 * record + 1) when both are bytes, else by hash (a word given as token ids); -1 on error */
static int64_t first_rec(HeapObject *h, uint32_t *byte_pair, uint32_t a, uint32_t b) {
    if ((a | b) >= 256) return pair_rec(h, a, b);
    uint32_t *r = &byte_pair[a << 8 | b];
    if (*r == 0) {
        int64_t made = pair_rec(h, a, b);
        if (made < 0) return -1;
        *r = (uint32_t)made + 1;
    }
    return *r - 1;
}

/* the pairs of every word, in order: words in the arena's order, then places */
#define PREFETCH_PAIRS 8
typedef struct {
    uint32_t w, j;
} Cursor;

static inline int cursor_next(const HeapObject *h, Cursor *c, uint32_t *a, uint32_t *b) {
    while (c->w < h->n_words) {
        const WordHead *word = (const WordHead *)(h->arena + h->offsets[c->w]);
        if (c->j + 1 < word->len) {
            const uint32_t *t = h->arena + h->offsets[c->w] + HEAD_UNITS;
            *a = t[c->j];
            *b = t[c->j + 1];
            c->j++;
            return 1;
        }
        c->w++;
        c->j = 0;
    }
    return 0;
}

/* Heap(words: dict[bytes, int] or Words, rule: int, byte_keys: bytes of 256 uint32 keys or b"", reuses: bool,
 *      vocab: list of the 256 bytes, then any tokens made before (the wrapper's; merged tokens are appended),
 *      event: MergeEvent, width: 1 (a word is its bytes) or 4 (its token ids, 4 bytes each, this machine's order),
 *      made: merges made before (the first event's rank),
 *      ranks: b"" or, with words of bytes, the merges made before as (left, right, made) uint32 triples in rank
 *             order: each word is first encoded with them (encode_word)) */
/* heap_init, phase 1: the tokens: the 256 bytes, then those a run made before (continuing it), in order, as mint made them */
static int init_tokens(HeapObject *h, PyObject *vocab, int reuses) {
    if (bpe_grow((void **)&h->bytes, &h->cap_bytes, 256, 1) < 0) return -1;
    if (grow32((void **)&h->toks, &h->cap_tokens, 256, sizeof(Token)) < 0) return -1;
    for (uint32_t i = 0; i < 256; i++) {
        h->bytes[i] = (uint8_t)i;
        h->toks[i] = (Token){i, (uint64_t)i << 56, 1};
    }
    h->n_bytes = h->n_tokens = 256;
    if (reuses) {
        if ((h->tok_slots = calloc(1024, sizeof(uint32_t))) == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        h->tok_mask = 1023;
        for (uint32_t i = 0; i < 256; i++) slot_token(h, i);
    }
    for (Py_ssize_t i = 256; i < PyList_GET_SIZE(vocab); i++) {
        PyObject *token = PyList_GET_ITEM(vocab, i);
        size_t n = (size_t)PyBytes_GET_SIZE(token);
        const uint8_t *p = (const uint8_t *)PyBytes_AS_STRING(token);
        if (bpe_grow((void **)&h->bytes, &h->cap_bytes, h->n_bytes + n, 1) < 0) return -1;
        if (grow32((void **)&h->toks, &h->cap_tokens, (size_t)h->n_tokens + 1, sizeof(Token)) < 0) return -1;
        memcpy(h->bytes + h->n_bytes, p, n);
        uint32_t id = h->n_tokens++;
        h->toks[id] = (Token){h->n_bytes, prefix_of(p, n), (uint32_t)n};
        h->n_bytes += n;
        if (reuses && index_token(h, id) < 0) return -1;
    }
    return grow_sides(h, h->n_tokens);
}

/* heap_init, phase 2: the words longer than one token, from a dict or a Words (a counts file's columns, words.c), copied
   into one arena (a head, then the word's tokens); their counts checked, and every pair's count added up so that none
   can overflow later */
static int copy_words(HeapObject *h, PyObject *words, int width) {
    int columns = Py_IS_TYPE(words, &bpe_WordsType);
    if (columns && width != 1) {
        PyErr_SetString(PyExc_ValueError, "a Words holds bytes: width 1");
        return -1;
    }
    const bpe_WordsObject *counted = (const bpe_WordsObject *)words;
    Py_ssize_t n_items = columns ? (Py_ssize_t)counted->n : PyDict_Size(words), pos = 0, n = 0;
    Word *kept = malloc((size_t)(n_items ? n_items : 1) * sizeof(Word));
    if (kept == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    PyObject *key = NULL, *value;
    size_t units = 0; /* the arena's size */
    int64_t total = 0; /* every pair's count added up: never grows, so no count can overflow if it fits */
    for (Py_ssize_t k = 0; k < n_items; k++) {
        const uint8_t *p;
        Py_ssize_t len;
        long long count;
        if (columns) { /* checked as they were added: each count at least 1 */
            p = counted->data + counted->start[k];
            len = (Py_ssize_t)(counted->start[k + 1] - counted->start[k]);
            count = counted->count[k];
        } else {
            if (!PyDict_Next(words, &pos, &key, &value)) break; /* subtle: the dict may shrink below (__index__) */
            if (!PyBytes_Check(key)) {
                PyErr_Format(PyExc_TypeError, "pre-tokens must be bytes, not %.50s", Py_TYPE(key)->tp_name);
                goto fail;
            }
            /* subtle: a count that is not an int runs Python code (__index__), which could change the dict:
             * the keys kept so far are held (Py_INCREF) until their bytes are copied */
            int overflow;
            PyObject *number = PyNumber_Index(value);
            count = number ? PyLong_AsLongLongAndOverflow(number, &overflow) : -1;
            Py_XDECREF(number);
            if (number == NULL || (count == -1 && PyErr_Occurred())) {
                if (PyErr_ExceptionMatches(PyExc_TypeError)) {
                    PyErr_Clear();
                    PyErr_SetString(PyExc_ValueError, "a pre-token's count must be a whole number of at least 1");
                }
                goto fail;
            }
            if (overflow > 0) {
                PyErr_SetString(PyExc_OverflowError, "a pre-token's count is beyond the compiled trainer's 64-bit counters");
                goto fail;
            }
            if (overflow < 0 || count < 1) {
                PyErr_SetString(PyExc_ValueError, "a pre-token's count must be a whole number of at least 1");
                goto fail;
            }
            p = (const uint8_t *)PyBytes_AS_STRING(key);
            len = PyBytes_GET_SIZE(key);
            if (width > 1) { /* token ids: each one a token of the vocab */
                if (len % width) {
                    PyErr_SetString(PyExc_ValueError, "a word of token ids must be a whole number of 4-byte ids");
                    goto fail;
                }
                len /= width;
                for (Py_ssize_t j = 0; j < len; j++) {
                    uint32_t id;
                    memcpy(&id, p + j * width, sizeof id);
                    if (id >= h->n_tokens) {
                        PyErr_Format(PyExc_ValueError, "a word holds token id %u, which the vocabulary (of %u tokens) lacks", id, h->n_tokens);
                        goto fail;
                    }
                }
            }
        }
        if (len < 2) continue;
        int64_t pairs;
        if (len > UINT32_MAX || __builtin_mul_overflow((int64_t)count, (int64_t)(len - 1), &pairs) ||
            __builtin_add_overflow(total, pairs, &total)) {
            PyErr_SetString(PyExc_OverflowError, "the pair counts are beyond the compiled trainer's 64-bit counters");
            goto fail;
        }
        if (!columns) Py_INCREF(key);
        kept[n++] = (Word){columns ? NULL : key, p, len, count};
        units += HEAD_UNITS + (size_t)len + (size_t)len % 2; /* even: the next head stays aligned */
    }
    if ((uint64_t)n > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^32 pre-tokens");
        goto fail;
    }
    h->n_words = (uint32_t)n;
    if (units > UINT32_MAX) {
        PyErr_SetString(PyExc_OverflowError, "the words are beyond the compiled trainer's 2^32 units of memory");
        goto fail;
    }
    h->arena = malloc((units ? units : 1) * sizeof(uint32_t));
    h->offsets = malloc((size_t)(n ? n : 1) * sizeof(uint32_t));
    if (!h->arena || !h->offsets) {
        PyErr_NoMemory();
        goto fail;
    }
    size_t at = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        h->offsets[i] = (uint32_t)at;
        *(WordHead *)(h->arena + at) = (WordHead){kept[i].count, (uint32_t)kept[i].n, 0};
        uint32_t *t = h->arena + at + HEAD_UNITS;
        if (width == 1)
            for (Py_ssize_t j = 0; j < kept[i].n; j++) t[j] = kept[i].p[j];
        else
            memcpy(t, kept[i].p, (size_t)kept[i].n * sizeof(uint32_t));
        at += HEAD_UNITS + (size_t)kept[i].n + (size_t)kept[i].n % 2;
    }
    release(kept, n);
    return 0;
fail:
    release(kept, n);
    return -1;
}

/* heap_init, phase 3 (continuing a run): each word as the merges made before make it; a word of one token never
   merges and is left out */
static int encode_words(HeapObject *h) {
    Ranks r = {0};
    int ok = ranks_init(&r, h->triples, h->n_triples, h->n_tokens) == 0;
    uint32_t kept_words = 0;
    for (uint32_t w = 0; ok && w < h->n_words; w++) {
        WordHead *word = (WordHead *)(h->arena + h->offsets[w]);
        int64_t len = encode_word(&r, h->arena + h->offsets[w] + HEAD_UNITS, word->len);
        ok = len >= 0;
        if (ok) word->len = (uint32_t)len;
        if (len >= 2) h->offsets[kept_words++] = h->offsets[w]; /* a word of one token never merges: left out */
    }
    h->n_words = kept_words;
    ranks_free(&r);
    free(h->triples);
    h->triples = NULL;
    h->n_triples = 0;
    return ok ? 0 : -1;
}

/* heap_init, phase 4: list every word under each pair it holds, once per occurrence; a pair's count is its words'
   counts (the detail below) */
static int index_pairs(HeapObject *h) {
    /* list every word under each pair it holds, once per occurrence; a pair's count is its words' counts.
     * A first pass counts each pair's occurrences, so that each list is made once at its size, and a second lists
     * the words. A pair of two bytes finds its record in a table of 65,536 without hashing (first_rec). Words given
     * as token ids (continuing a run) hold pairs spread over a table of megabytes: each occurrence's record is found
     * once, by hash (rec_of, in the words' order), its slot asked for from memory PREFETCH_PAIRS occurrences ahead,
     * and the passes ask for records (and list ends) ahead too. */
    uint64_t slots = 1024; /* about two slots a word to start with: fewer doublings on the way */
    while (slots < 2 * (uint64_t)h->n_words) slots *= 2;
    if (rehash(h, slots) < 0) return -1;
    uint32_t *byte_pair = calloc(256 * 256, sizeof(uint32_t)); /* a << 8 | b -> its record + 1 */
    if (byte_pair == NULL) {
            PyErr_NoMemory();
            return -1;
        }
    int ids = h->n_tokens > 256;
    size_t n_pairs = 0;
    uint32_t *rec_of = NULL;
    if (ids) {
        for (uint32_t w = 0; w < h->n_words; w++) n_pairs += ((const WordHead *)(h->arena + h->offsets[w]))->len - 1; /* len >= 2 */
        if ((rec_of = malloc((n_pairs ? n_pairs : 1) * sizeof(uint32_t))) == NULL) {
            free(byte_pair);
            {
            PyErr_NoMemory();
            return -1;
        }
        }
        Cursor here = {0}, ahead = {0};
        uint32_t a, b, a2, b2;
        for (int d = 0; d < PREFETCH_PAIRS; d++) cursor_next(h, &ahead, &a2, &b2);
        for (size_t k = 0; cursor_next(h, &here, &a, &b); k++) {
            if (cursor_next(h, &ahead, &a2, &b2) && (a2 | b2) >= 256) __builtin_prefetch(&h->slots[slot_of(h, pair_key(a2, b2))]);
            int64_t r = first_rec(h, byte_pair, a, b);
            if (r < 0) {
                free(byte_pair);
                free(rec_of);
                return -1;
            }
            rec_of[k] = (uint32_t)r;
        }
    }
    size_t k = 0;
    for (uint32_t w = 0; w < h->n_words; w++) {
        const WordHead *word = (const WordHead *)(h->arena + h->offsets[w]);
        const uint32_t *t = h->arena + h->offsets[w] + HEAD_UNITS;
        for (uint32_t j = 0; j + 1 < word->len; j++, k++) {
            int64_t r;
            if (ids) {
                if (k + PREFETCH_PAIRS < n_pairs) __builtin_prefetch(&h->recs[rec_of[k + PREFETCH_PAIRS]]);
                r = rec_of[k];
            } else if ((r = first_rec(h, byte_pair, t[j], t[j + 1])) < 0) {
                free(byte_pair);
                return -1;
            }
            h->recs[r].n_listed++; /* counted here, listed below */
            h->recs[r].count += word->count;
        }
    }
    for (uint32_t r = 0; r < h->n_recs; r++) {
        PairRec *p = &h->recs[r];
        size_t need = p->n_listed;
        p->n_listed = 0;
        if (need > POOL_MAX) { /* a list of its size exactly: malloc'd */
            if ((p->listed = malloc(need * sizeof(uint32_t))) == NULL) {
                free(byte_pair);
                free(rec_of);
                {
            PyErr_NoMemory();
            return -1;
        }
            }
            p->cap_listed = (uint32_t)need;
        } else if (list_room(h, p, need) < 0) {
            free(byte_pair);
            free(rec_of);
            return -1;
        }
    }
    k = 0;
    for (uint32_t w = 0; w < h->n_words; w++) {
        uint32_t at = h->offsets[w];
        const WordHead *word = (const WordHead *)(h->arena + at);
        const uint32_t *t = h->arena + at + HEAD_UNITS;
        for (uint32_t j = 0; j + 1 < word->len; j++, k++) {
            PairRec *p;
            if (ids) {
                if (k + 2 * PREFETCH_PAIRS < n_pairs) __builtin_prefetch(&h->recs[rec_of[k + 2 * PREFETCH_PAIRS]]);
                if (k + PREFETCH_PAIRS < n_pairs) {
                    const PairRec *q = &h->recs[rec_of[k + PREFETCH_PAIRS]];
                    __builtin_prefetch(q->listed + q->n_listed, 1);
                }
                p = &h->recs[rec_of[k]];
            } else {
                p = &h->recs[first_rec(h, byte_pair, t[j], t[j + 1])]; /* found, not made: no error */
            }
            p->listed[p->n_listed++] = at;
        }
    }
    free(byte_pair);
    free(rec_of);
    return 0;
}

/* heap_init, phase 5: one heap entry per pair, heapified */
static int build_heap(HeapObject *h) {
    if (bpe_grow((void **)&h->heap, &h->heap_cap, (size_t)h->n_recs + 1, sizeof(Entry)) < 0) return -1;
    for (uint32_t r = 0; r < h->n_recs; r++) h->heap[r] = (Entry){h->recs[r].count, h->recs[r].a, h->recs[r].b};
    h->heap_n = h->n_recs;
    for (size_t i = h->heap_n / ARITY + 1; i-- > 0;) sift_down(h, i);
    return 0;
}

static int heap_init(HeapObject *h, PyObject *args, PyObject *kwds) {
    static char *names[] = {"words", "rule", "byte_keys", "reuses", "vocab", "event", "width", "made", "ranks", NULL};
    PyObject *words, *vocab, *event;
    int rule, reuses, width = 1;
    unsigned long long made = 0;
    Py_buffer keys, ranks = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oiy*pO!O!|iKy*", names, &words, &rule, &keys, &reuses, &PyList_Type, &vocab,
                                     &PyType_Type, &event, &width, &made, &ranks))
        return -1;
    /* the merges to encode words with, copied: a buffer is not held past this call */
    size_t n_ranks = ranks.buf != NULL ? (size_t)ranks.len / (3 * sizeof(uint32_t)) : 0;
    int ranks_ok = ranks.buf == NULL || ((size_t)ranks.len % (3 * sizeof(uint32_t)) == 0 && (n_ranks == 0 || width == 1));
    if (ranks_ok && n_ranks && h->triples == NULL && (h->triples = malloc(n_ranks * 3 * sizeof(uint32_t))) != NULL) {
        memcpy(h->triples, ranks.buf, n_ranks * 3 * sizeof(uint32_t)); /* freed once the words are encoded, or with the object */
        h->n_triples = n_ranks;
    }
    if (ranks.buf != NULL) PyBuffer_Release(&ranks);
    if (!ranks_ok || (n_ranks && h->n_triples != n_ranks)) {
        PyBuffer_Release(&keys);
        if (ranks_ok)
            PyErr_NoMemory();
        else
            PyErr_SetString(PyExc_ValueError, "ranks are (left, right, made) uint32 triples, for words of bytes (width 1)");
        return -1;
    }
    if (!PyDict_Check(words) && !Py_IS_TYPE(words, &bpe_WordsType)) {
        PyBuffer_Release(&keys);
        PyErr_Format(PyExc_TypeError, "words must be a dict or a Words, not %.50s", Py_TYPE(words)->tp_name);
        return -1;
    }
    if (PyList_GET_SIZE(vocab) < 256 || PyList_GET_SIZE(vocab) > UINT32_MAX / 2 || (width != 1 && width != 4)) {
        PyBuffer_Release(&keys);
        PyErr_SetString(PyExc_ValueError, "vocab must hold the 256 bytes, then any tokens made before; width is 1 or 4");
        return -1;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(vocab); i++) {
        PyObject *token = PyList_GET_ITEM(vocab, i);
        if (!PyBytes_Check(token) || (i < 256 ? PyBytes_GET_SIZE(token) != 1 || (uint8_t)PyBytes_AS_STRING(token)[0] != i
                                               : PyBytes_GET_SIZE(token) < 2 || PyBytes_GET_SIZE(token) > UINT32_MAX)) {
            PyBuffer_Release(&keys);
            PyErr_SetString(PyExc_ValueError, "vocab[i] must be bytes: byte i below 256, a token of two or more bytes after");
            return -1;
        }
    }
    int ok = (rule == RULE_BYTES || rule == RULE_IDS) && (size_t)keys.len == (rule == RULE_IDS ? sizeof(h->byte_key) : 0);
    if (ok && rule == RULE_IDS) memcpy(h->byte_key, keys.buf, sizeof(h->byte_key));
    PyBuffer_Release(&keys);
    if (!ok) {
        PyErr_SetString(PyExc_ValueError, "rule must be 0 (bytes) or 1 (ids, with 256 uint32 byte keys)");
        return -1;
    }
    if (h->bytes != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Heap is initialised once");
        return -1;
    }
    h->rule = rule;
    h->reuses = reuses;
    h->merges = made;
    h->vocab = Py_NewRef(vocab);
    h->event_type = (PyTypeObject *)Py_NewRef(event);

    /* the phases, each a function above: the tokens, the words, (continuing) the words as the merges before make them,
       every pair's list of words, the heap */
    if (init_tokens(h, vocab, reuses) < 0 || copy_words(h, words, width) < 0) return -1;
    if (h->n_triples && encode_words(h) < 0) return -1;
    if (index_pairs(h) < 0 || build_heap(h) < 0) return -1;
    h->ready = 1;
    return 0;
}

/* names interned once: MergeEvent's fields, and the work counters (bpe/events.py's WORK_NAMES) */
static const char *FIELD_NAMES[] = {"rank", "pair", "left", "right", "new_id", "count", "runner_up", "runner_up_count", "words", "detail", "work"};
enum { N_FIELDS = sizeof(FIELD_NAMES) / sizeof(FIELD_NAMES[0]) };
static const char *WORK[] = {"heap_pops", "stale_pops", "heap_pushes", "words_checked", "words_touched", "merges"};
enum { N_WORK = sizeof(WORK) / sizeof(WORK[0]) };
static PyObject *fields[N_FIELDS], *work_names[N_WORK];

/* the vocab's bytes of token t (a borrowed reference), or NULL if the wrapper's list is out of step */
static PyObject *token_bytes(HeapObject *h, uint32_t t) {
    if (PyList_GET_SIZE(h->vocab) != h->n_tokens) {
        PyErr_SetString(PyExc_RuntimeError, "the trainer's vocab list was changed from outside");
        return NULL;
    }
    return PyList_GET_ITEM(h->vocab, t);
}

/* ((name, n), ...) for the counters that moved, then ("merges", 1): what Trainer.merges' `spent` gives */
static PyObject *work_tuple(const uint64_t *work) {
    int n = 1;
    for (int k = 0; k < N_WORK - 1; k++) n += work[k] != 0;
    PyObject *tuple = PyTuple_New(n);
    if (tuple == NULL) return NULL;
    for (int k = 0, i = 0; k < N_WORK; k++) {
        uint64_t value = k < N_WORK - 1 ? work[k] : 1;
        if (!value) continue;
        PyObject *item = Py_BuildValue("(OK)", work_names[k], (unsigned long long)value);
        if (item == NULL) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i++, item);
    }
    return tuple;
}

/* A MergeEvent, made here rather than through its __init__: a frozen dataclass's __init__ sets each field
 * through object.__setattr__ in Python, ~2 us an event, as much as a late merge itself. The fields are set
 * as object.__setattr__ sets them (PyObject_GenericSetAttr), so the object is the same. */
static PyObject *make_event(HeapObject *h, Entry best, uint32_t x_new, const Entry *runner, uint64_t rewritten, const uint64_t *work) {
    PyObject *left = token_bytes(h, best.a), *right = token_bytes(h, best.b);
    if (left == NULL || right == NULL) return NULL;
    PyObject *values[N_FIELDS] = {
        PyLong_FromUnsignedLongLong(h->merges),
        Py_BuildValue("(II)", best.a, best.b),
        Py_NewRef(left),
        Py_NewRef(right),
        PyLong_FromUnsignedLong(x_new),
        PyLong_FromLongLong(best.count),
        runner ? Py_BuildValue("(OO)", token_bytes(h, runner->a), token_bytes(h, runner->b)) : Py_NewRef(Py_None),
        PyLong_FromLongLong(runner ? runner->count : 0),
        PyLong_FromUnsignedLongLong(rewritten),
        Py_NewRef(Py_None),
        work_tuple(work),
    };
    PyObject *event = NULL;
    for (int k = 0; k < N_FIELDS; k++)
        if (values[k] == NULL) goto done;
    event = h->event_type->tp_alloc(h->event_type, 0);
    for (int k = 0; event != NULL && k < N_FIELDS; k++)
        if (PyObject_GenericSetAttr(event, fields[k], values[k]) < 0) Py_CLEAR(event);
    if (event != NULL) h->merges++;
done:
    for (int k = 0; k < N_FIELDS; k++) Py_XDECREF(values[k]);
    return event;
}

/* after an error part way through a merge (out of memory) the structures disagree: no further step */
static PyObject *broken(HeapObject *h) {
    h->ready = 0;
    return NULL;
}

/* step(min_pair_frequency) -> one merge, or STOP_NO_PAIRS / STOP_MIN_FREQUENCY.
 * A merge: (left, right, new_id, count, runner-up pair or None, its count, words rewritten, words checked,
 *           stale pops, heap pushes) -- this merge's share of the work counters; one heap pop each. */
static PyObject *heap_step(HeapObject *h, PyObject *arg) {
    long long min_frequency = PyLong_AsLongLong(arg);
    if (min_frequency == -1 && PyErr_Occurred()) return NULL;
    if (!h->ready) {
        PyErr_SetString(PyExc_RuntimeError, "Heap was not initialised");
        return NULL;
    }
    uint64_t stale = h->stale_pops, pushes = h->heap_pushes;
    /* choose: the best current entry, and the runner-up (the next current one) */
    clean_top(h);
    if (h->heap_n == 0) return PyLong_FromLong(STOP_NO_PAIRS);
    Entry best = pop(h);
    h->heap_pops++;
    clean_top(h);
    if (best.count < min_frequency) {
        if (push(h, best.count, best.a, best.b) < 0) return NULL; /* unchoose: not counted, as in Python */
        return PyLong_FromLong(STOP_MIN_FREQUENCY);
    }
    int has_runner = h->heap_n > 0;
    Entry runner = has_runner ? h->heap[0] : (Entry){0, 0, 0};

    /* merge: the words the index lists for the pair (where.pop(pair)), each checked once */
    int64_t made = mint(h, best.a, best.b);
    if (made < 0) return broken(h);
    uint32_t x_new = (uint32_t)made;
    PairRec *p = find_pair(h, best.a, best.b);
    uint32_t *listed = p->listed, n_listed = p->n_listed, cap_listed = p->cap_listed;
    p->listed = NULL;
    p->n_listed = p->cap_listed = 0;
    h->stamp++;
    if (h->stamp == 0) { /* after 2^32 merges: forget every old stamp */
        for (uint32_t w = 0; w < h->n_words; w++) ((WordHead *)(h->arena + h->offsets[w]))->seen = 0;
        for (uint32_t r = 0; r < h->n_recs; r++) h->recs[r].stamp = 0;
        for (uint32_t t = 0; t < h->cap_sides; t++) h->sides[t].stamp = 0;
        h->stamp = 1;
    }
    uint64_t checked = 0, rewritten = 0;
    for (uint32_t k = 0; k < n_listed; k++) {
        if (k + PREFETCH < n_listed) __builtin_prefetch(h->arena + listed[k + PREFETCH]);
        uint32_t w = listed[k];
        WordHead *word = (WordHead *)(h->arena + w);
        if (word->seen == h->stamp) continue; /* a word is listed once per occurrence it gained */
        word->seen = h->stamp;
        checked++;
        int done = merge_word(h, w, best.a, best.b, x_new);
        if (done < 0) {
            list_free(h, listed, cap_listed);
            return broken(h);
        }
        rewritten += (uint64_t)done;
    }
    list_free(h, listed, cap_listed);
    if (fold(h, best.a, best.b, x_new) < 0) return broken(h);
    /* subtle: merging left to right leaves no occurrence of the pair in any word ('aaa' -> 'Āa'), and the
     * index listed every word that held it, so its count goes to zero whatever the sites added up to */
    int64_t r = add_change(h, best.a, best.b, 0);
    if (r < 0) return broken(h);
    h->recs[r].delta = -h->recs[r].count;
    if (apply(h, &h->heap_pushes) < 0) return broken(h);
    h->words_checked += checked;
    h->words_touched += rewritten;

    uint64_t work[] = {1, h->stale_pops - stale, h->heap_pushes - pushes, checked, rewritten};
    return make_event(h, best, x_new, has_runner ? &runner : NULL, rewritten, work);
}

/* work() -> the work counters' totals so far, in bpe/events.py's names */
static PyObject *heap_work(HeapObject *h, PyObject *unused) {
    return Py_BuildValue("{sKsKsKsKsK}", "heap_pops", (unsigned long long)h->heap_pops, "stale_pops",
                         (unsigned long long)h->stale_pops, "heap_pushes", (unsigned long long)h->heap_pushes, "words_checked",
                         (unsigned long long)h->words_checked, "words_touched", (unsigned long long)h->words_touched);
}

/* pair_counts() -> {(left, right): count} of every pair some word holds: for tests and inspection */
static PyObject *heap_pair_counts(HeapObject *h, PyObject *unused) {
    PyObject *counts = PyDict_New();
    if (counts == NULL) return NULL;
    for (uint32_t r = 0; r < h->n_recs; r++) {
        if (h->recs[r].count == 0) continue;
        PyObject *pair = Py_BuildValue("(II)", h->recs[r].a, h->recs[r].b), *count = PyLong_FromLongLong(h->recs[r].count);
        if (pair == NULL || count == NULL || PyDict_SetItem(counts, pair, count) < 0) {
            Py_XDECREF(pair);
            Py_XDECREF(count);
            Py_DECREF(counts);
            return NULL;
        }
        Py_DECREF(pair);
        Py_DECREF(count);
    }
    return counts;
}

/* words() -> [(token ids, count)] of the words given longer than one token, in their order: for tests and inspection */
static PyObject *heap_words(HeapObject *h, PyObject *unused) {
    PyObject *words = PyList_New(0);
    if (words == NULL) return NULL;
    for (uint32_t w = 0; w < h->n_words; w++) {
        const WordHead *word = (const WordHead *)(h->arena + h->offsets[w]);
        const uint32_t *t = h->arena + h->offsets[w] + HEAD_UNITS;
        PyObject *ids = PyTuple_New(word->len);
        if (ids == NULL) {
            Py_DECREF(words);
            return NULL;
        }
        for (uint32_t j = 0; j < word->len; j++) {
            PyObject *id = PyLong_FromUnsignedLong(t[j]);
            if (id == NULL) {
                Py_DECREF(ids);
                Py_DECREF(words);
                return NULL;
            }
            PyTuple_SET_ITEM(ids, j, id);
        }
        PyObject *item = Py_BuildValue("(NL)", ids, (long long)word->count);
        if (item == NULL || PyList_Append(words, item) < 0) {
            Py_XDECREF(item);
            Py_DECREF(words);
            return NULL;
        }
        Py_DECREF(item);
    }
    return words;
}

/* mint(left, right) -> the id Trainer.mint gives the merge of left and right (no word changes): for tests, since
 * merging whole words never makes the same bytes twice, and so never reaches the huggingface rule's reuse */
static PyObject *heap_mint(HeapObject *h, PyObject *args) {
    unsigned int a, b;
    if (!PyArg_ParseTuple(args, "II", &a, &b)) return NULL;
    if (!h->ready || a >= h->n_tokens || b >= h->n_tokens) {
        PyErr_SetString(PyExc_ValueError, "mint takes two ids of tokens made already");
        return NULL;
    }
    int64_t id = mint(h, a, b);
    return id < 0 ? NULL : PyLong_FromLongLong(id);
}

/* heap_size() -> entries in the heap, stale ones included */
static PyObject *heap_size(HeapObject *h, PyObject *unused) { return PyLong_FromSize_t(h->heap_n); }

static PyMethodDef heap_methods[] = {
    {"step", (PyCFunction)heap_step, METH_O, "step(min_pair_frequency): make the next merge; a tuple, or 1 (no pairs) / 2 (min frequency)"},
    {"work", (PyCFunction)heap_work, METH_NOARGS, "the work counters' totals"},
    {"pair_counts", (PyCFunction)heap_pair_counts, METH_NOARGS, "{(left, right): count} of the pairs present"},
    {"words", (PyCFunction)heap_words, METH_NOARGS, "[(token ids, count)] of the words longer than one byte"},
    {"heap_size", (PyCFunction)heap_size, METH_NOARGS, "entries in the heap, stale ones included"},
    {"mint", (PyCFunction)heap_mint, METH_VARARGS, "mint(left, right): the id of their merge, as Trainer.mint gives it (for tests)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HeapType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.Heap",
    .tp_doc = "Heap(words, rule, byte_keys, reuses): bpe/heap.py's trainer in C; bpe/heap_c.py wraps it.",
    .tp_basicsize = sizeof(HeapObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)heap_init,
    .tp_dealloc = (destructor)heap_dealloc,
    .tp_methods = heap_methods,
};

int bpe_heap_init(PyObject *module) {
    for (int k = 0; k < N_FIELDS; k++)
        if (fields[k] == NULL && (fields[k] = PyUnicode_InternFromString(FIELD_NAMES[k])) == NULL) return -1;
    for (int k = 0; k < N_WORK; k++)
        if (work_names[k] == NULL && (work_names[k] = PyUnicode_InternFromString(WORK[k])) == NULL) return -1;
    if (PyType_Ready(&HeapType) < 0) return -1;
    Py_INCREF(&HeapType);
    if (PyModule_AddObject(module, "Heap", (PyObject *)&HeapType) < 0) {
        Py_DECREF(&HeapType);
        return -1;
    }
    if (PyModule_AddIntConstant(module, "RULE_BYTES", RULE_BYTES) < 0 || PyModule_AddIntConstant(module, "RULE_IDS", RULE_IDS) < 0 ||
        PyModule_AddIntConstant(module, "STOP_NO_PAIRS", STOP_NO_PAIRS) < 0 ||
        PyModule_AddIntConstant(module, "STOP_MIN_FREQUENCY", STOP_MIN_FREQUENCY) < 0)
        return -1;
    return 0;
}
