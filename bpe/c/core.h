/* bpe._core: what the C files of the compiled core share.
 *
 * Each file adds its types and functions to the one module through an init
 * function declared here and called from module.c. */
#ifndef BPE_CORE_H
#define BPE_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdint.h>
#include <stdlib.h>

#include "hash.h"

int bpe_heap_init(PyObject *module); /* heap.c: the heap trainer (bpe/heap.py), type Heap */
int bpe_pretokenize_init(PyObject *module); /* pretokenize.c: the named pre-tokenizers (pretokenize_c.py), type PreTokenCounter */
int bpe_encode_init(PyObject *module);     /* encode.c: Tokenizer.encode's merging by rank (encode_c.py), type Encoder */
int bpe_ranks_init(PyObject *module);      /* ranks.c: reading a tiktoken rank file (load.parse_tiktoken) */
int bpe_words_init(PyObject *module);      /* words.c: a counts file's tokens and counts (counts_file.py), type Words */
int bpe_hash_init(PyObject *module);       /* bytesmap.c: whether the processor has AES (hash.h); keyed_hash, siphash13, HASH for the tests */
int bpe_spm_init(PyObject *module);        /* spm.c: the SentencePiece family (bpe/sentencepiece/): normalizer, trainer, encoders */

/* words.c's Words, which heap.c also reads: word k is data[start[k]:start[k + 1]], counted count[k] times */
typedef struct {
    PyObject_HEAD
    uint8_t *data; /* every token's bytes, concatenated in the order added */
    size_t n_data, cap_data;
    uint64_t *start; /* n + 1 */
    int64_t *count;  /* each at least 1 */
    uint64_t *hash;  /* each token's, to rehash the table */
    size_t n, cap;
    uint32_t *slots; /* open addressing, at most half full: the word's index + 1, 0 for an empty slot */
    size_t mask;
    bpe_hashkey key; /* the hash's key, random per process: a file made to collide in one run does not in the next */
    size_t longest;  /* the most slots one token's lookup has read (the tests) */
} bpe_WordsObject;

extern PyTypeObject bpe_WordsType;

/* Room for `need` items of `size` bytes in *array, whose capacity *cap doubles (from 8): 0, or -1 with
   MemoryError set (the array is left as it was). heap.c's and words.c's growing arrays. */
static inline int bpe_grow(void **array, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    if (need > SIZE_MAX / 2 / size) {
        PyErr_NoMemory();
        return -1;
    }
    size_t n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    void *p = realloc(*array, n * size);
    if (p == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    *array = p;
    *cap = n;
    return 0;
}

#endif
