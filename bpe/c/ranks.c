/* Reading a tiktoken rank file fast: load.parse_tiktoken's parsing and merges_from_ranks, compiled.

   load_ranks(text, seed, cached) reads 'base64-token rank' lines in the plain form OpenAI's files
   have (ASCII, one space, '\n' between lines, canonical base64), and splits each token as tiktoken
   would build it from lower-ranked tokens (load._rank_merge: join the lowest-ranked adjacent pair,
   the leftmost of equals, until no pair ranks below the token itself; it must end in two parts,
   its merge). That splitting is two thirds of the time for o200k_base, so it also hands back the
   merges as a few bytes (each merge's parts as places in the file) that load.py keeps on disk:
   given them again as `cached`, it checks that each merge's parts make its token and both rank
   below it, and takes them instead of splitting every token again. For anything else -- another
   layout, a token or rank listed twice, a byte without a rank, a token that cannot be made -- it
   returns None, and load.py's Python parser reads the file, or says in one sentence what is
   wrong with it. tests/test_core_ranks.py holds the two to the same results. */
#include "encode.h"

#include <stdlib.h>

#define DEAD (UINT32_MAX - 1) /* a part joined into its left neighbour */
#define NONE UINT32_MAX
#define HOT_RANKS 16384 /* tokens below this rank are also kept in a small table: most parts are such frequent tokens */

static int8_t base64_value[256];

static void fill_base64(void) {
    memset(base64_value, -1, sizeof(base64_value));
    const char *alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int k = 0; k < 64; k++) base64_value[(uint8_t)alphabet[k]] = (int8_t)k;
}

/* Canonical base64 of s[0:n] into out (room for n / 4 * 3): its length, or -1 where Python's strict decoder
   might read it otherwise (or not at all): a length not a multiple of 4, a stray '=', bits it would drop. */
static Py_ssize_t decode_base64(const uint8_t *s, size_t n, uint8_t *out) {
    if (n == 0 || n % 4) return -1;
    size_t pad = s[n - 1] == '=' ? (s[n - 2] == '=' ? 2 : 1) : 0, used = 0;
    for (size_t i = 0; i < n; i += 4) {
        uint32_t word = 0;
        int last = i + 4 == n;
        for (int k = 0; k < 4; k++) {
            int value = base64_value[s[i + k]];
            if (value < 0) {
                if (!(last && s[i + k] == '=' && (size_t)k >= 4 - pad)) return -1;
                value = 0;
            }
            word = word << 6 | (uint32_t)value;
        }
        out[used++] = (uint8_t)(word >> 16);
        if (!last || pad < 2) out[used++] = (uint8_t)(word >> 8);
        if (!last || pad < 1) out[used++] = (uint8_t)word;
        if (last && ((pad == 1 && (word & 0xFF)) || (pad == 2 && (word & 0xFFFF)))) return -1;
    }
    return (Py_ssize_t)used;
}

/* ---- the tokens, indexed by their bytes ---- */

typedef struct {
    uint8_t *bytes;  /* every token, one after another */
    size_t *start;   /* token k is bytes[start[k]:start[k + 1]], k in file order */
    uint32_t *rank;  /* its rank */
    uint32_t *order; /* the tokens' places, by rank */
    size_t count;
    bpe_bytesmap all, hot;         /* bytes -> rank (value) and place (value2); hot: the tokens below HOT_RANKS */
    uint32_t byte_rank[256];       /* one- and two-byte tokens, looked up in arrays */
    uint32_t pair_rank[1 << 16];
} ranked;

/* the rank of s[0:n], and its place if asked, or NONE */
static inline uint32_t lookup(const ranked *r, const uint8_t *s, size_t n, uint32_t *place) {
    if (!place && n <= 2) return n == 1 ? r->byte_rank[s[0]] : r->pair_rank[s[0] << 8 | s[1]];
    uint64_t hash = bpe_hash(s, n, &r->all.key);
    bpe_entry *e = bpe_bytesmap_get(&r->hot, s, n, hash);
    if (!e) e = bpe_bytesmap_get(&r->all, s, n, hash);
    if (!e) return NONE;
    if (place) *place = e->value2;
    return (uint32_t)e->value;
}

static int compare_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* Parse text into r: 1, 0 when it is not in the plain form (or lists a token or rank twice), -1 out of memory. */
static int parse(ranked *r, const uint8_t *s, size_t n) {
    size_t lines = 1;
    for (const uint8_t *p = s; (p = memchr(p, '\n', (size_t)(s + n - p))) != NULL; p++) lines++;
    r->bytes = PyMem_Malloc(n / 4 * 3 + 4);
    r->start = PyMem_Malloc((lines + 1) * sizeof(size_t));
    r->rank = PyMem_Malloc(lines * sizeof(uint32_t));
    r->order = PyMem_Malloc(lines * sizeof(uint32_t));
    uint64_t *sorted = PyMem_Malloc(lines * sizeof(uint64_t));
    int status = -1;
    if (!r->bytes || !r->start || !r->rank || !r->order || !sorted) goto done;
    size_t pos = 0, used = 0, k = 0;
    status = 0;
    while (pos < n) {
        const uint8_t *newline = memchr(s + pos, '\n', n - pos);
        size_t end = newline ? (size_t)(newline - s) : n;
        if (end == pos) { /* an empty line */
            pos = end + 1;
            continue;
        }
        const uint8_t *space = memchr(s + pos, ' ', end - pos);
        if (!space) goto done;
        size_t mid = (size_t)(space - s), digits = end - mid - 1;
        if (digits == 0 || digits > 10) goto done;
        uint64_t rank = 0;
        for (size_t d = mid + 1; d < end; d++) {
            if (s[d] < '0' || s[d] > '9') goto done;
            rank = rank * 10 + (uint64_t)(s[d] - '0');
        }
        Py_ssize_t len = decode_base64(s + pos, mid - pos, r->bytes + used);
        if (rank >= NONE - 1 || len <= 0) goto done;
        r->start[k] = used;
        r->rank[k] = (uint32_t)rank;
        sorted[k] = rank << 32 | k;
        used += (size_t)len;
        k++;
        pos = end + 1;
    }
    r->start[k] = used;
    r->count = k;
    if (k == 0 || k >= NONE / 2) goto done;
    qsort(sorted, k, sizeof(uint64_t), compare_u64);
    for (size_t i = 0; i < k; i++) {
        if (i && sorted[i] >> 32 == sorted[i - 1] >> 32) goto done; /* a rank given twice */
        r->order[i] = (uint32_t)sorted[i];
    }
    memset(r->byte_rank, 0xFF, sizeof(r->byte_rank));
    memset(r->pair_rank, 0xFF, sizeof(r->pair_rank));
    status = -1;
    for (size_t i = 0; i < k; i++) {
        const uint8_t *token = r->bytes + r->start[i];
        size_t len = r->start[i + 1] - r->start[i];
        uint64_t hash = bpe_hash(token, len, &r->all.key);
        if (bpe_bytesmap_get(&r->all, token, len, hash)) {
            status = 0; /* a token given twice */
            goto done;
        }
        bpe_entry *e = bpe_bytesmap_add(&r->all, token, len, hash);
        if (!e) goto done;
        e->value = r->rank[i];
        e->value2 = (uint32_t)i;
        if (r->rank[i] < HOT_RANKS) {
            if (!(e = bpe_bytesmap_add(&r->hot, token, len, hash))) goto done;
            e->value = r->rank[i];
            e->value2 = (uint32_t)i;
        }
        if (len == 1) r->byte_rank[token[0]] = r->rank[i];
        if (len == 2) r->pair_rank[token[0] << 8 | token[1]] = r->rank[i];
    }
    status = 1;
done:
    PyMem_Free(sorted);
    return status;
}

/* ---- recovering the merges ---- */

static inline void push(uint64_t *heap, size_t *size, uint64_t item) {
    size_t i = (*size)++;
    while (i > 0 && heap[(i - 1) / 2] > item) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = item;
}

static inline uint64_t pop(uint64_t *heap, size_t *size) {
    uint64_t top = heap[0], item = heap[--(*size)];
    size_t i = 0;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= *size) break;
        if (child + 1 < *size && heap[child + 1] < heap[child]) child++;
        if (item <= heap[child]) break;
        heap[i] = heap[child];
        i = child;
    }
    if (*size) heap[i] = item;
    return top;
}

typedef struct {
    uint32_t *next; /* where the part starting at i ends (n: at the end; DEAD: joined into its left neighbour) */
    uint32_t *prev; /* where the part before it starts (NONE: it is the first) */
    uint32_t *pair; /* the rank of the pair starting at i, if below the token's own; else NONE */
    uint64_t *heap; /* (rank << 32 | i), checked against pair[] when taken */
} scratch;

#if defined(__GNUC__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)0)
#endif

/* where the pair of parts starting at i ends, or 0 when there is no part after it */
static inline uint32_t pair_end(const scratch *w, uint32_t n, uint32_t i) {
    uint32_t j = w->next[i];
    return j < n ? w->next[j] : 0;
}

/* the rank of token[i:end] if it is below `below`, else NONE */
static inline uint32_t rank_below(const ranked *r, const uint8_t *token, uint32_t i, uint32_t end, uint32_t below) {
    uint32_t rank = lookup(r, token + i, end - i, NULL);
    return rank < below ? rank : NONE;
}

/* start fetching the table slots a lookup of token[i:end] will read (two lookups after a join: their misses overlap) */
static inline void prefetch(const ranked *r, const uint8_t *token, uint32_t i, uint32_t end) {
    if (end - i <= 2) return;
    uint64_t hash = bpe_hash(token + i, end - i, &r->all.key);
    PREFETCH(&r->hot.table[hash & r->hot.mask]);
    PREFETCH(&r->all.table[hash & r->all.mask]);
}

/* load._rank_merge: where token (n >= 2 bytes) splits into its last two parts, or 0 when it does not end in two */
static uint32_t split_point(const ranked *r, const scratch *w, const uint8_t *token, uint32_t n, uint32_t below) {
    size_t size = 0, parts = n;
    for (uint32_t i = 0; i < n; i++) {
        w->next[i] = i + 1;
        w->prev[i] = i ? i - 1 : NONE;
    }
    for (uint32_t i = 0; i + 1 < n; i++)
        if ((w->pair[i] = rank_below(r, token, i, i + 2, below)) != NONE) push(w->heap, &size, (uint64_t)w->pair[i] << 32 | i);
    w->pair[n - 1] = NONE;
    while (size) {
        uint64_t item = pop(w->heap, &size);
        uint32_t rank = (uint32_t)(item >> 32), i = (uint32_t)item;
        if (w->next[i] == DEAD || w->pair[i] != rank) continue; /* joined into a neighbour, or its pair changed since */
        uint32_t j = w->next[i];
        w->next[i] = w->next[j];
        w->next[j] = DEAD;
        parts--;
        if (w->next[i] < n) w->prev[w->next[i]] = i;
        uint32_t before = w->prev[i], after_end = pair_end(w, n, i);
        if (after_end) prefetch(r, token, i, after_end);
        if (before != NONE) prefetch(r, token, before, w->next[i]);
        w->pair[i] = after_end ? rank_below(r, token, i, after_end, below) : NONE;
        if (w->pair[i] != NONE) push(w->heap, &size, (uint64_t)w->pair[i] << 32 | i);
        if (before != NONE && (w->pair[before] = rank_below(r, token, before, w->next[i], below)) != NONE)
            push(w->heap, &size, (uint64_t)w->pair[before] << 32 | before);
    }
    return parts == 2 ? w->next[0] : 0;
}

/* Whether cached (from an earlier load_ranks of this very file: each merge's two parts as places in the file, uint32
   little-endian, in rank order) is what recovering the merges gives: each pair's bytes make the token, and both
   parts rank below it. A cache of another file, cut short or changed, is not used. What this cannot tell: another
   split of a token into two lower-ranked tokens (plausible, and wrong); load.py reads back only what this user
   kept and signed (load._kept_merges), and this check keeps every place it reads inside the file. */
static int cache_fits(const ranked *r, const uint8_t *cached, size_t size) {
    size_t made = 0;
    for (size_t k = 0; k < r->count; k++) made += r->start[k + 1] - r->start[k] >= 2;
    if (size != made * 8) return 0;
    const uint8_t *p = cached;
    for (size_t i = 0; i < r->count; i++) {
        uint32_t k = r->order[i], left, right;
        size_t n = r->start[k + 1] - r->start[k];
        if (n < 2) continue;
        memcpy(&left, p, 4);
        memcpy(&right, p + 4, 4);
        p += 8;
        if (left >= r->count || right >= r->count || r->rank[left] >= r->rank[k] || r->rank[right] >= r->rank[k]) return 0;
        size_t nl = r->start[left + 1] - r->start[left], nr = r->start[right + 1] - r->start[right];
        const uint8_t *token = r->bytes + r->start[k];
        if (nl + nr != n || memcmp(token, r->bytes + r->start[left], nl) || memcmp(token + nl, r->bytes + r->start[right], nr)) return 0;
    }
    return 1;
}

/* load_ranks(text, seed, cached=None) -> (tokens, ranks, merges, cache) or None.
   tokens and ranks in the file's order; merges, (left, right) in rank order, hold the same bytes objects as tokens;
   cache: what to give as `cached` next time (None when `cached` was used). */
static PyObject *load_ranks(PyObject *self, PyObject *args) {
    PyObject *arg, *cached = Py_None;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "UK|O", &arg, &seed, &cached)) return NULL;
    if (!PyUnicode_IS_ASCII(arg)) Py_RETURN_NONE;
    Py_ssize_t size;
    const uint8_t *s = (const uint8_t *)PyUnicode_AsUTF8AndSize(arg, &size); /* ASCII: the str's own bytes, no copy */
    if (!s) return NULL;
    ranked *r = PyMem_Calloc(1, sizeof(ranked));
    scratch w = {NULL, NULL, NULL, NULL};
    PyObject *tokens = NULL, *ranks = NULL, *merges = NULL, *result = NULL, *cache = NULL;
    bpe_hashkey key;
    bpe_key_init(&key, seed, 0);
    if (!r || bpe_bytesmap_init(&r->all, &key) < 0 || bpe_bytesmap_init(&r->hot, &key) < 0) goto no_memory;
    int parsed = parse(r, s, (size_t)size);
    if (parsed < 0) goto no_memory;
    if (parsed == 0) goto irregular;
    for (int b = 0; b < 256; b++)
        if (r->byte_rank[b] == NONE) goto irregular; /* a byte without a rank */
    size_t longest = 2;
    for (size_t k = 0; k < r->count; k++)
        if (r->start[k + 1] - r->start[k] > longest) longest = r->start[k + 1] - r->start[k];
    if (longest >= DEAD) goto irregular;
    w.next = PyMem_Malloc(longest * sizeof(uint32_t));
    w.prev = PyMem_Malloc(longest * sizeof(uint32_t));
    w.pair = PyMem_Malloc(longest * sizeof(uint32_t));
    w.heap = PyMem_Malloc(3 * longest * sizeof(uint64_t)); /* n - 1 pairs, then at most two pushes per join */
    tokens = PyList_New((Py_ssize_t)r->count);
    ranks = PyList_New((Py_ssize_t)r->count);
    merges = PyList_New(0);
    if (!w.next || !w.prev || !w.pair || !w.heap || !tokens || !ranks || !merges) goto no_memory;
    for (size_t k = 0; k < r->count; k++) {
        PyObject *token = PyBytes_FromStringAndSize((const char *)r->bytes + r->start[k], (Py_ssize_t)(r->start[k + 1] - r->start[k]));
        PyObject *rank = token ? PyLong_FromUnsignedLong(r->rank[k]) : NULL;
        if (!rank) {
            Py_XDECREF(token);
            goto done;
        }
        PyList_SET_ITEM(tokens, (Py_ssize_t)k, token);
        PyList_SET_ITEM(ranks, (Py_ssize_t)k, rank);
    }
    int from_cache = PyBytes_Check(cached) && cache_fits(r, (const uint8_t *)PyBytes_AS_STRING(cached), (size_t)PyBytes_GET_SIZE(cached));
    const uint8_t *next_pair = from_cache ? (const uint8_t *)PyBytes_AS_STRING(cached) : NULL;
    uint8_t *out_pair = NULL;
    if (!from_cache) {
        size_t made = 0;
        for (size_t k = 0; k < r->count; k++) made += r->start[k + 1] - r->start[k] >= 2;
        if (!(cache = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)(8 * made)))) goto done;
        out_pair = (uint8_t *)PyBytes_AS_STRING(cache);
    }
    for (size_t i = 0; i < r->count; i++) {
        uint32_t k = r->order[i];
        const uint8_t *token = r->bytes + r->start[k];
        uint32_t n = (uint32_t)(r->start[k + 1] - r->start[k]), left, right;
        if (n < 2) continue;
        if (from_cache) {
            memcpy(&left, next_pair, 4);
            memcpy(&right, next_pair + 4, 4);
            next_pair += 8;
        } else {
            uint32_t cut = split_point(r, &w, token, n, r->rank[k]);
            if (!cut) goto irregular; /* cannot be made from two tokens of lower rank: the Python path says so */
            lookup(r, token, cut, &left);
            lookup(r, token + cut, n - cut, &right);
            memcpy(out_pair, &left, 4);
            memcpy(out_pair + 4, &right, 4);
            out_pair += 8;
        }
        PyObject *pair = PyTuple_Pack(2, PyList_GET_ITEM(tokens, left), PyList_GET_ITEM(tokens, right));
        int failed = !pair || PyList_Append(merges, pair) < 0;
        Py_XDECREF(pair);
        if (failed) goto done;
    }
    result = PyTuple_Pack(4, tokens, ranks, merges, cache ? cache : Py_None);
    goto done;
irregular:
    result = Py_NewRef(Py_None);
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    Py_XDECREF(tokens);
    Py_XDECREF(ranks);
    Py_XDECREF(merges);
    Py_XDECREF(cache);
    PyMem_Free(w.next);
    PyMem_Free(w.prev);
    PyMem_Free(w.pair);
    PyMem_Free(w.heap);
    if (r) {
        bpe_bytesmap_free(&r->all);
        bpe_bytesmap_free(&r->hot);
        PyMem_Free(r->bytes);
        PyMem_Free(r->start);
        PyMem_Free(r->rank);
        PyMem_Free(r->order);
        PyMem_Free(r);
    }
    return result;
}

static PyMethodDef functions[] = {
    {"load_ranks", load_ranks, METH_VARARGS,
     "load_ranks(text, seed, cached=None): (tokens, ranks, merges, cache) of a rank file in OpenAI's plain form, or None (load.py's parser reads it)."},
    {NULL, NULL, 0, NULL},
};

int bpe_ranks_init(PyObject *module) {
    fill_base64();
    return PyModule_AddFunctions(module, functions);
}
