/* The compiled encoder: Tokenizer.encode's merging by rank, over the compiled pre-tokenizer.

   Exactly tokenizer.py's rounds: in a pre-token's ids, the lowest-ranked pair present is merged
   everywhere it occurs, left to right ('a a a' with a+a: the first two only), then the next
   lowest, until no pair is a merge (within the first `limit` merges). A short pre-token is merged
   in place (Tokenizer._rounds), a long one with a heap over a linked list (Tokenizer._merge_long),
   each the same rounds. Each unique pre-token is merged once and its ids cached; the cache holds
   one `limit` at a time and is emptied when full.

   Encoder(ids, merges, kind, seed): ids maps each token's bytes to its id (Tokenizer.ids), merges
   lists (left, right) bytes in rank order (a merge whose parts are not both tokens never applies),
   kind is the pre-tokenizer encode() runs (-1: none, a regex of the user's: Python cuts the text
   and merge() takes each pre-token), seed keys the hashes.
   Not here: checking a vocabulary, or the sentences for what is wrong with one (tokenizer.py
   does both; a byte the vocabulary lacks makes encode() return None, and Python says why). */
#include "encode.h"

#include <stdlib.h>
#include <string.h>

#include "structmember.h"

#define NO_RANK UINT32_MAX
#define SHORT_WORD 128          /* longer pre-tokens are merged with the heap */
#define CACHE_MAX_LEN 256       /* longer pre-tokens are not cached */
#define CACHE_ENTRIES (1 << 19) /* the cache is emptied when it holds this many */

typedef struct {
    PyObject_HEAD int kind; /* a BPE_KIND_*, or -1: pre-tokens come from Python (a regex of the user's) */
    PyObject *ids;          /* bytes -> id, for the special tokens */
    uint64_t seed; /* the pair table's */
    int64_t byte_ids[256]; /* -1: the vocabulary lacks the byte */
    uint32_t n_merges;
    uint32_t *made;      /* rank -> the id that merge makes */
    uint64_t *pair_keys; /* left id << 32 | right id */
    uint32_t *pair_ranks;
    size_t pair_mask;
    bpe_bytesmap cache; /* pre-token -> (offset in cache_ids, length) */
    uint32_t *cache_ids;
    size_t cache_ids_used, cache_ids_cap;
    uint32_t cache_limit;
    uint32_t *out; /* ids of the call in progress */
    size_t out_used, out_cap;
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

static inline void heap_push(uint64_t *heap, size_t *size, uint64_t item) {
    size_t i = (*size)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap[parent] <= item) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = item;
}

static inline uint64_t heap_pop(uint64_t *heap, size_t *size) {
    uint64_t top = heap[0], item = heap[--(*size)];
    size_t i = 0, n = *size;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1] < heap[child]) child++;
        if (item <= heap[child]) break;
        heap[i] = heap[child];
        i = child;
    }
    if (n) heap[i] = item;
    return top;
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
    uint32_t *next = PyMem_Malloc(n * sizeof(uint32_t)), *prev = PyMem_Malloc(n * sizeof(uint32_t));
    uint32_t *sites = PyMem_Malloc(3 * n * sizeof(uint32_t));
    uint8_t *alive = PyMem_Malloc(n);
    uint64_t *heap = PyMem_Malloc(3 * n * sizeof(uint64_t)); /* n - 1 pairs, then at most two pushes per merge */
    Py_ssize_t result = -1;
    if (!next || !prev || !sites || !alive || !heap) goto done;
    size_t size = 0;
    for (size_t i = 0; i < n; i++) {
        next[i] = i + 1 < n ? (uint32_t)(i + 1) : UINT32_MAX;
        prev[i] = i ? (uint32_t)(i - 1) : UINT32_MAX;
        alive[i] = 1;
        if (i + 1 < n) {
            uint32_t rank = rank_of(e, ids[i], ids[i + 1], limit);
            if (rank != NO_RANK) heap_push(heap, &size, (uint64_t)rank << 32 | i);
        }
    }
    while (size) {
        uint32_t rank = (uint32_t)(heap[0] >> 32);
        size_t n_sites = 0;
        while (size && (uint32_t)(heap[0] >> 32) == rank) sites[n_sites++] = (uint32_t)heap_pop(heap, &size);
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
                if (r != NO_RANK) heap_push(heap, &size, (uint64_t)r << 32 | i);
            }
            uint32_t before = prev[i];
            if (before != UINT32_MAX) {
                uint32_t r = rank_of(e, ids[before], ids[i], limit);
                if (r != NO_RANK) heap_push(heap, &size, (uint64_t)r << 32 | before);
            }
        }
    }
    size_t kept = 0;
    for (size_t i = 0; i < n; i++)
        if (alive[i]) ids[kept++] = ids[i];
    result = (Py_ssize_t)kept;
done:
    PyMem_Free(next);
    PyMem_Free(prev);
    PyMem_Free(sites);
    PyMem_Free(alive);
    PyMem_Free(heap);
    return result;
}

/* ---------------------------------------------------------------------------------------------
   appending a pre-token's ids to the output */

enum { OK = 0, NO_MEMORY = -1, MISSING_BYTE = -2 };

static int reserve(uint32_t **buffer, size_t *cap, size_t used, size_t more) {
    if (more <= *cap - used) return OK;
    size_t want = *cap ? *cap : 1024;
    while (more > want - used) {
        if (want > SIZE_MAX / 8) return NO_MEMORY;
        want *= 2;
    }
    uint32_t *grown = PyMem_Realloc(*buffer, want * sizeof(uint32_t));
    if (!grown) return NO_MEMORY;
    *buffer = grown;
    *cap = want;
    return OK;
}

/* merge word (its bytes) into the ids at the end of the output */
static int merge_into_out(Encoder *e, const uint8_t *word, size_t n, uint32_t limit, size_t *count) {
    if (reserve(&e->out, &e->out_cap, e->out_used, n) < 0) return NO_MEMORY;
    uint32_t *ids = e->out + e->out_used;
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
    return OK;
}

static int append_word(Encoder *e, const uint8_t *word, size_t n, uint32_t limit) {
    if (n == 0) return OK;
    if (n > CACHE_MAX_LEN) {
        size_t count;
        int status = merge_into_out(e, word, n, limit, &count);
        if (status == OK) e->out_used += count;
        return status;
    }
    if (limit != e->cache_limit || e->cache.used >= CACHE_ENTRIES) { /* the cache holds one limit's ids */
        bpe_bytesmap_clear(&e->cache);
        e->cache_ids_used = 0;
        e->cache_limit = limit;
    }
    uint64_t hash = bpe_hash(word, n, &e->cache.key);
    bpe_entry *hit = bpe_bytesmap_get(&e->cache, word, n, hash);
    if (hit) {
        if (reserve(&e->out, &e->out_cap, e->out_used, hit->value2) < 0) return NO_MEMORY;
        memcpy(e->out + e->out_used, e->cache_ids + hit->value, hit->value2 * sizeof(uint32_t));
        e->out_used += hit->value2;
        return OK;
    }
    size_t count;
    int status = merge_into_out(e, word, n, limit, &count);
    if (status != OK) return status;
    if (reserve(&e->cache_ids, &e->cache_ids_cap, e->cache_ids_used, count) == OK) {
        bpe_entry *entry = bpe_bytesmap_add(&e->cache, word, n, hash);
        if (entry) { /* not cached when memory is short: encoding goes on without it */
            memcpy(e->cache_ids + e->cache_ids_used, e->out + e->out_used, count * sizeof(uint32_t));
            entry->value = e->cache_ids_used;
            entry->value2 = (uint32_t)count;
            e->cache_ids_used += count;
        }
    }
    e->out_used += count;
    return OK;
}

static PyObject *take_out(Encoder *e, int status) {
    if (status == NO_MEMORY) return PyErr_NoMemory();
    if (status == MISSING_BYTE) Py_RETURN_NONE;
    PyObject *list = PyList_New((Py_ssize_t)e->out_used);
    if (!list) return NULL;
    for (size_t k = 0; k < e->out_used; k++) {
        PyObject *id = PyLong_FromUnsignedLong(e->out[k]);
        if (!id) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)k, id);
    }
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

/* encode(data, limit, special_tokens=()) -> list of ids, or None when a byte is not in the vocabulary.
   data is UTF-8 bytes (invalid bytes kept, as surrogateescape keeps them); special_tokens (bytes, each in ids)
   are cut out and become their ids; the rest is pre-tokenized by the encoder's kind and merged. */
static PyObject *encoder_encode(Encoder *e, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "limit", "special_tokens", NULL};
    Py_buffer buffer;
    Py_ssize_t limit_arg;
    PyObject *tokens = NULL;
    uint32_t limit;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*n|O", names, &buffer, &limit_arg, &tokens)) return NULL;
    bpe_specials sp;
    PyObject *result = NULL;
    uint32_t *special_ids = NULL;
    if (e->kind < 0) {
        PyErr_SetString(PyExc_ValueError, "this encoder has no pre-tokenizer (kind -1): merge() each pre-token");
        goto done_buffer;
    }
    if (check_limit(e, limit_arg, &limit) < 0 || bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    if (sp.count) {
        special_ids = PyMem_Malloc((size_t)sp.count * sizeof(uint32_t));
        if (!special_ids) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t t = 0; t < sp.count; t++) {
            PyObject *id = PyDict_GetItemWithError(e->ids, PySequence_Fast_GET_ITEM(sp.owner, sp.index[t]));
            unsigned long value = id ? PyLong_AsUnsignedLong(id) : 0;
            if (!id || PyErr_Occurred() || value > UINT32_MAX) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyError, "a special token is not in the vocabulary");
                goto done;
            }
            special_ids[t] = (uint32_t)value;
        }
    }
    const uint8_t *s = buffer.buf;
    size_t n = (size_t)buffer.len, pos = 0;
    int status = OK;
    e->out_used = 0;
    bpe_specials_reset(&sp, s, n);
    for (;;) {
        size_t cut = n, start, end;
        Py_ssize_t which = -1;
        if (!bpe_specials_next(&sp, s, n, pos, &cut, &which)) cut = n;
        while (status == OK && bpe_next_pretoken(e->kind, s, cut, &pos, &start, &end)) status = append_word(e, s + start, end - start, limit);
        if (status != OK || which < 0) break;
        if ((status = reserve(&e->out, &e->out_cap, e->out_used, 1)) != OK) break;
        e->out[e->out_used++] = special_ids[which];
        pos = cut + sp.len[which];
    }
    result = take_out(e, status);
done:
    PyMem_Free(special_ids);
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
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
    e->out_used = 0;
    int status = append_word(e, word.buf, (size_t)word.len, limit);
    PyBuffer_Release(&word);
    PyObject *list = take_out(e, status);
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
    bpe_hashkey cache_key;
    bpe_key_init(&cache_key, seed, 0);
    size_t slots = 16;
    while (slots < 2 * (size_t)n_merges + 16) slots *= 2;
    e->made = PyMem_Malloc(((size_t)n_merges + 1) * sizeof(uint32_t));
    e->pair_keys = PyMem_Malloc(slots * sizeof(uint64_t));
    e->pair_ranks = PyMem_Malloc(slots * sizeof(uint32_t));
    if (!e->made || !e->pair_keys || !e->pair_ranks || bpe_bytesmap_init(&e->cache, &cache_key) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    memset(e->pair_ranks, 0xFF, slots * sizeof(uint32_t));
    e->pair_mask = slots - 1;
    e->cache_limit = e->n_merges;
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
    PyMem_Free(e->cache_ids);
    PyMem_Free(e->out);
    bpe_bytesmap_free(&e->cache);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

static PyMethodDef encoder_methods[] = {
    {"encode", (PyCFunction)(void (*)(void))encoder_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(data, limit, special_tokens=()): the ids of UTF-8 bytes, or None when a byte is not in the vocabulary."},
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
