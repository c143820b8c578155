/* The compiled encoder and pre-tokenizer: what pretokenize.c, bytesmap.c and encode.c share.

   Everything here works on bytes: text is UTF-8, and a byte that does not begin a valid
   UTF-8 character is a character of its own in no class -- what the Python path sees when
   it decodes with surrogateescape (a lone surrogate, \p{Cs}). */
#ifndef BPE_ENCODE_H
#define BPE_ENCODE_H

#include "core.h"
#include "hash.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the pre-tokenizers with a scanner here; any other regex is run by Python */
enum { BPE_KIND_NONE = 0, BPE_KIND_GPT2 = 1, BPE_KIND_CL100K = 2, BPE_KIND_O200K = 3, BPE_KIND_WHITESPACE = 4, BPE_KINDS = 5 };

/* ---- pretokenize.c ---- */

/* The next pre-token of s[*pos:n] (a text with no special token in it): its start and end;
   0 when there is none left. *pos moves past it. */
int bpe_next_pretoken(int kind, const uint8_t *s, size_t n, size_t *pos, size_t *start, size_t *end);

/* Pre-tokens a chunk at a time, keyed for a table: a span is one pre-token p[0:len]; one of up to BPE_BLOCK_MAX bytes
   also has its block (bpe_block_of) and its hash (bpe_hash_block) under the table's key, and its slot prefetched; a
   longer one has a key no block has (so that it matches no slot: its last byte is 16 or more) and a hash of no use.
   A chunk is BPE_CHUNK pre-tokens or a few more (a block of 64 bytes is taken whole): BPE_CHUNK_ROOM spans. */
#define BPE_CHUNK 256
#define BPE_CHUNK_ROOM (BPE_CHUNK + 64)
typedef struct {
    const uint8_t *p;
    size_t len;
    uint64_t k0, k1; /* together: they are stored as one 16-byte block */
    uint64_t hash;
} bpe_span;

typedef struct {
    const uint8_t *limit;     /* where the readable bytes of the text end (a block may be loaded 16 bytes at a time) */
    const bpe_hashkey *key;   /* the table's */
    const char *table;        /* the slot of hash h is at table + (h & mask) * stride */
    size_t mask, stride;
} bpe_chunk_table;

/* A chunk of the pre-tokens of s[*pos:n] (a text with no special token in it), keyed for table t: how many (at most
   BPE_CHUNK_ROOM). *pos moves past them: the text is done when it reaches n. */
size_t bpe_fill_spans(int kind, const uint8_t *s, size_t n, size_t *pos, bpe_span *spans, const bpe_chunk_table *t);

/* How many of s[0:n]'s bytes are not part of a valid UTF-8 character: the lone surrogates Python's
   surrogateescape decoding makes (pretokenize.invalid_bytes). */
size_t bpe_invalid_utf8(const uint8_t *s, size_t n);

/* Special tokens, found as pretokenize.find_specials finds them: left to right, not overlapping,
   the longest of those starting at one place. */
typedef struct {
    Py_ssize_t count;
    const uint8_t **data; /* longest first */
    size_t *len;
    Py_ssize_t *index; /* the token's place in the sequence it was given in */
    PyObject *owner;   /* keeps the bytes alive */
    /* the tokens by first byte, searched for together: group g is members[group_at[g]:group_at[g + 1]] (indices above,
       longest first), group_bytes[g] their lengths' sum; found[g] its next place (SIZE_MAX: none left), found_which[g]
       the token there */
    Py_ssize_t groups;
    Py_ssize_t *members, *group_at;
    size_t *group_bytes, *found;
    Py_ssize_t *found_which;
} bpe_specials;

/* From a tuple or list of non-empty bytes (NULL or None: none); -1 with an exception set on bad input. */
int bpe_specials_init(bpe_specials *sp, PyObject *tokens);
void bpe_specials_free(bpe_specials *sp);
/* Start searching s[0:n] from the beginning. */
void bpe_specials_reset(bpe_specials *sp, const uint8_t *s, size_t n);
/* The next special token at or after pos: 1 with its start and its index in the sequence given, 0 if none. */
int bpe_specials_next(bpe_specials *sp, const uint8_t *s, size_t n, size_t pos, size_t *start, Py_ssize_t *which);

/* ---- bytesmap.c: bytes -> (value, value2) ---- */

/* An entry of the table itself (open addressing: no second lookup for the entry). */
typedef struct {
    uint64_t hash; /* 0: the slot is empty (a key whose hash is 0 is stored as 1) */
    uint64_t key;  /* the key's bytes themselves (zero-padded) when it has at most 8, else their offset in the arena */
    size_t value;  /* what the user keeps: a count, an offset */
    uint32_t len;
    uint32_t value2;
} bpe_entry;

typedef struct {
    bpe_entry *table; /* mask + 1 slots, at most half of them used */
    size_t mask;
    size_t used;
    uint8_t *arena; /* keys longer than 8 bytes */
    size_t arena_used, arena_cap;
    bpe_hashkey key; /* what its keys are hashed with: bpe_hash(key, n, &m->key) */
} bpe_bytesmap;

int bpe_bytesmap_init(bpe_bytesmap *m, const bpe_hashkey *key);
/* a zeroed table of `bytes`, in 2 MB pages where Linux has them (a big table read at random); free() frees it; NULL when out of memory */
void *bpe_zeroed_table(size_t bytes);
void bpe_bytesmap_free(bpe_bytesmap *m);
void bpe_bytesmap_clear(bpe_bytesmap *m);
/* Put key (value 0) in the empty slot get() stopped at; NULL when out of memory. */
bpe_entry *bpe_bytesmap_add(bpe_bytesmap *m, const uint8_t *key, size_t n, uint64_t hash);

static inline const uint8_t *bpe_key(const bpe_bytesmap *m, const bpe_entry *e) {
    return e->len <= 8 ? (const uint8_t *)&e->key : m->arena + e->key;
}

/* The entry holding key, or NULL. */
static inline bpe_entry *bpe_bytesmap_get(const bpe_bytesmap *m, const uint8_t *key, size_t n, uint64_t hash) {
    uint64_t word = 0;
    if (n <= 8) memcpy(&word, key, n);
    for (size_t i = (size_t)hash & m->mask;; i = (i + 1) & m->mask) {
        bpe_entry *e = &m->table[i];
        if (!e->hash) return NULL;
        if (e->hash != hash || e->len != n) continue;
        if (n <= 8 ? e->key == word : memcmp(m->arena + e->key, key, n) == 0) return e;
    }
}

/* The entry holding key, added (value 0) if new; NULL when out of memory. */
static inline bpe_entry *bpe_bytesmap_put(bpe_bytesmap *m, const uint8_t *key, size_t n, uint64_t hash) {
    bpe_entry *e = bpe_bytesmap_get(m, key, n, hash);
    return e ? e : bpe_bytesmap_add(m, key, n, hash);
}

#endif
