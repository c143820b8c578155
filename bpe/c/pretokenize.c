/* Pre-tokenizing GPT-2's, GPT-4's (cl100k) and GPT-4o's (o200k) regexes at compiled speed, exactly.

   Each scanner below is one of pretokenize.PATTERNS written out by hand: it returns where the
   regex's match starting at a position ends, trying the alternatives in order and backtracking
   exactly as the `regex` module does (the comments say how each backtrack resolves). The
   character classes come from `regex` itself (unicode_classes.h, written by
   bpe/unicode_classes.py), so a character is a letter here exactly when \p{L} matches it there.
   tests/test_compiled_encoder.py holds the two to the same pre-tokens on text over all of
   Unicode, invalid UTF-8 and real corpora.

   Not here: any other regex (Python runs it), merging (encode.c). */
#include "encode.h"

#include <stdlib.h>
#include <string.h>

#include "structmember.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif

#include "unicode_classes.h"

#define L BPE_CLASS_L
#define N BPE_CLASS_N
#define S BPE_CLASS_S
#define U BPE_CLASS_U
#define W BPE_CLASS_W
#define NL BPE_CLASS_NL
#define N_CODE_POINTS 0x110000

static uint8_t classes[N_CODE_POINTS]; /* class bits of each code point, filled from the runs once */
static uint8_t folded[0x180];          /* the contraction letter a code point matches case-insensitively, or 0 */

static void fill_tables(void) {
    size_t runs = sizeof(bpe_class_runs) / sizeof(bpe_class_runs[0]);
    for (size_t r = 0; r < runs; r++) {
        unsigned int end = r + 1 < runs ? bpe_class_runs[r + 1][0] : N_CODE_POINTS;
        memset(classes + bpe_class_runs[r][0], (int)bpe_class_runs[r][1], end - bpe_class_runs[r][0]);
    }
    for (size_t f = 0; f < sizeof(bpe_folded_letters) / sizeof(bpe_folded_letters[0]); f++)
        if (bpe_folded_letters[f][0] < sizeof(folded)) folded[bpe_folded_letters[f][0]] = (uint8_t)bpe_folded_letters[f][1];
}

/* The character at s[i] (i < n): its class bits, code point and length in bytes. A byte that does
   not begin a valid UTF-8 sequence -- as Python's strict decoder judges: no overlong forms, no
   surrogates, nothing past U+10FFFF, nothing cut short -- is one character of no class, the lone
   surrogate surrogateescape makes of it. */
#if defined(__GNUC__)
#define HOT_INLINE inline __attribute__((always_inline))
#else
#define HOT_INLINE inline
#endif

static HOT_INLINE uint8_t char_at(const uint8_t *s, size_t i, size_t n, uint32_t *cp, size_t *len) {
    uint8_t b = s[i];
    size_t left = n - i;
    if (b < 0x80) {
        *cp = b;
        *len = 1;
        return classes[b];
    }
    if (b >= 0xC2 && b <= 0xDF) {
        if (left >= 2 && (s[i + 1] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x1F) << 6) | (s[i + 1] & 0x3F);
            *len = 2;
            return classes[*cp];
        }
    } else if (b >= 0xE0 && b <= 0xEF) {
        uint8_t lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        if (left >= 3 && s[i + 1] >= lo && s[i + 1] <= hi && (s[i + 2] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            *len = 3;
            return classes[*cp];
        }
    } else if (b >= 0xF0 && b <= 0xF4) {
        uint8_t lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        if (left >= 4 && s[i + 1] >= lo && s[i + 1] <= hi && (s[i + 2] & 0xC0) == 0x80 && (s[i + 3] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) | ((uint32_t)(s[i + 2] & 0x3F) << 6) |
                  (s[i + 3] & 0x3F);
            *len = 4;
            return classes[*cp];
        }
    }
    *cp = 0xDC00 + b;
    *len = 1;
    return 0;
}

size_t bpe_invalid_utf8(const uint8_t *s, size_t n) {
    size_t bad = 0, len;
    uint32_t cp;
    for (size_t i = 0; i < n; i += len) {
        char_at(s, i, n, &cp, &len);
        bad += len == 1 && s[i] >= 0x80; /* one byte of 0x80 and above alone: not valid UTF-8 */
    }
    return bad;
}

static HOT_INLINE uint8_t class_at(const uint8_t *s, size_t i, size_t n, size_t *len) {
    uint32_t cp;
    return char_at(s, i, n, &cp, len);
}

/* the end of the run of characters from i that have one of the bits in mask */
static inline size_t run_in(const uint8_t *s, size_t i, size_t n, uint8_t mask) {
    while (i < n) {
        size_t len;
        if (!(class_at(s, i, n, &len) & mask)) break;
        i += len;
    }
    return i;
}

/* the same, at most `most` characters */
static inline size_t run_in_max(const uint8_t *s, size_t i, size_t n, uint8_t mask, int most) {
    for (int k = 0; k < most && i < n; k++) {
        size_t len;
        if (!(class_at(s, i, n, &len) & mask)) break;
        i += len;
    }
    return i;
}

/* the end of the run of characters from i that have none of the bits in mask */
static inline size_t run_out(const uint8_t *s, size_t i, size_t n, uint8_t mask) {
    while (i < n) {
        size_t len;
        if (class_at(s, i, n, &len) & mask) break;
        i += len;
    }
    return i;
}

/* [\r\n]* (cl100k) or [\r\n/]* (o200k) */
static inline size_t run_newlines(const uint8_t *s, size_t i, size_t n, int slash) {
    while (i < n && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/'))) i++;
    return i;
}

/* Whitespace at i (a character in \s), the regexes' last alternatives:
   cl100k, o200k: \s*[\r\n]+ | \s+(?!\S) | \s+      gpt2: \s+(?!\S) | \s+
   \s*[\r\n]+: \s* takes the whole run and gives characters back until [\r\n]+ can match, so the
   match ends just after the run's last \r or \n. \s+(?!\S): the whole run at the end of the text;
   before anything else, all but its last character, if that leaves one. Otherwise \s+: the run. */
static inline size_t whitespace(const uint8_t *s, size_t i, size_t n, int newlines) {
    size_t p = i, last = i, after_newline = 0;
    while (p < n) {
        size_t len;
        uint8_t k = class_at(s, p, n, &len);
        if (!(k & S)) break;
        if (k & NL) after_newline = p + len;
        last = p;
        p += len;
    }
    if (newlines && after_newline) return after_newline;
    if (p == n) return n;
    if (last > i) return last;
    return p;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at i (s[i] is '): its end, or 0. Case-insensitive as regex is:
   'S and 'ſ (U+017F) too. */
static size_t contraction(const uint8_t *s, size_t i, size_t n) {
    uint32_t cp;
    size_t len, j = i + 1;
    if (j >= n) return 0;
    char_at(s, j, n, &cp, &len);
    uint8_t first = cp < sizeof(folded) ? folded[cp] : 0;
    if (first == 's' || first == 't' || first == 'm' || first == 'd') return j + len;
    if (first != 'r' && first != 'v' && first != 'l') return 0;
    j += len;
    if (j >= n) return 0;
    char_at(s, j, n, &cp, &len);
    uint8_t second = cp < sizeof(folded) ? folded[cp] : 0;
    if (((first == 'r' || first == 'v') && second == 'e') || (first == 'l' && second == 'l')) return j + len;
    return 0;
}

static inline size_t optional_contraction(const uint8_t *s, size_t i, size_t n) {
    if (i < n && s[i] == '\'') {
        size_t end = contraction(s, i, n);
        if (end) return end;
    }
    return i;
}

/* gpt2: '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static size_t next_gpt2(const uint8_t *s, size_t i, size_t n) {
    if (s[i] == '\'' && i + 1 < n) {
        uint8_t c = s[i + 1];
        if (c == 's' || c == 'd' || c == 'm' || c == 't') return i + 2;
        if (i + 2 < n) {
            uint8_t d = s[i + 2];
            if ((c == 'l' && d == 'l') || (c == 'v' && d == 'e') || (c == 'r' && d == 'e')) return i + 3;
        }
    }
    size_t len;
    size_t j = i;
    uint8_t k = class_at(s, i, n, &len);
    if (s[i] == ' ' && i + 1 < n) { /* ' ?' takes the space when a letter, number or other follows */
        uint8_t next = class_at(s, i + 1, n, &len);
        if (!(next & S)) {
            j = i + 1;
            k = next;
        }
    }
    if (k & L) return run_in(s, j, n, L);
    if (k & N) return run_in(s, j, n, N);
    if (!(k & S)) return run_out(s, j, n, L | N | S);
    return whitespace(s, i, n, 0);
}

/* cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static size_t next_cl100k(const uint8_t *s, size_t i, size_t n) {
    if (s[i] == '\'') {
        size_t end = contraction(s, i, n);
        if (end) return end;
    }
    size_t len0, len1 = 0;
    uint8_t k0 = class_at(s, i, n, &len0), k1 = 0;
    if (k0 & L) return run_in(s, i, n, L);
    size_t i1 = i + len0;
    if (i1 < n) k1 = class_at(s, i1, n, &len1);
    if (!(k0 & (L | N | NL)) && i1 < n && (k1 & L)) return run_in(s, i1, n, L); /* one character of any other kind, then letters */
    if (k0 & N) return run_in_max(s, i, n, N, 3);
    if (s[i] == ' ' && i1 < n && !(k1 & (L | N | S))) return run_newlines(s, run_out(s, i1, n, L | N | S), n, 0);
    if (!(k0 & (L | N | S))) return run_newlines(s, run_out(s, i, n, L | N | S), n, 0);
    return whitespace(s, i, n, 1);
}

/* o200k, with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], P = [^\r\n\p{L}\p{N}],
   C = (?i:'s|'t|'re|'ve|'m|'ll|'d):  P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ' ?[^\s\p{L}\p{N}]+[\r\n/]*' | \s*[\r\n]+ | \s+(?!\S) | \s+ */
static size_t next_o200k(const uint8_t *s, size_t i, size_t n) {
    size_t len0;
    uint8_t k0 = class_at(s, i, n, &len0);
    /* P? is greedy: with the character at i as P first, then without (a mark is both P and U, W) */
    size_t starts[2];
    int n_starts = 0;
    if (!(k0 & (L | N | NL)) && i + len0 < n) starts[n_starts++] = i + len0;
    starts[n_starts++] = i;
    for (int t = 0; t < n_starts; t++) { /* P?U*W+C? */
        size_t p = starts[t], after_w = 0, len;
        while (p < n) { /* U* takes its whole run, noting where its last W (Lm, Lo, M) ends */
            uint8_t k = class_at(s, p, n, &len);
            if (!(k & U)) break;
            if (k & W) after_w = p + len;
            p += len;
        }
        if (p < n && (class_at(s, p, n, &len) & W)) return optional_contraction(s, run_in(s, p, n, W), n);
        /* else U* gives characters back until W+ can take one: the run's last W, alone (what follows it is not W) */
        if (after_w) return optional_contraction(s, after_w, n);
    }
    for (int t = 0; t < n_starts; t++) { /* P?U+W*C? */
        size_t u = run_in(s, starts[t], n, U);
        if (u > starts[t]) return optional_contraction(s, run_in(s, u, n, W), n);
    }
    if (k0 & N) return run_in_max(s, i, n, N, 3);
    if (s[i] == ' ' && i + 1 < n) {
        size_t len;
        if (!(class_at(s, i + 1, n, &len) & (L | N | S))) return run_newlines(s, run_out(s, i + 1, n, L | N | S), n, 1);
    }
    if (!(k0 & (L | N | S))) return run_newlines(s, run_out(s, i, n, L | N | S), n, 1);
    return whitespace(s, i, n, 1);
}

int bpe_next_pretoken(int kind, const uint8_t *s, size_t n, size_t *pos, size_t *start, size_t *end) {
    size_t i = *pos;
    switch (kind) {
    case BPE_KIND_NONE: /* the whole text, when there is one */
        if (i >= n) return 0;
        *start = i;
        *end = *pos = n;
        return 1;
    case BPE_KIND_WHITESPACE: /* \S+ */
        i = run_in(s, i, n, S);
        if (i >= n) {
            *pos = n;
            return 0;
        }
        *start = i;
        *end = *pos = run_out(s, i, n, S);
        return 1;
    default:
        if (i >= n) return 0;
        *start = i;
        *end = *pos = kind == BPE_KIND_GPT2 ? next_gpt2(s, i, n) : kind == BPE_KIND_CL100K ? next_cl100k(s, i, n) : next_o200k(s, i, n);
        return 1;
    }
}

/* ---------------------------------------------------------------------------------------------
   special tokens */

static const uint8_t *find(const uint8_t *s, size_t n, const uint8_t *token, size_t len) {
#ifdef _WIN32
    for (size_t i = 0; len <= n && i <= n - len; i++)
        if (memcmp(s + i, token, len) == 0) return s + i;
    return NULL;
#else
    return memmem(s, n, token, len); /* two-way: linear, like str.find, however repetitive the token */
#endif
}

int bpe_specials_init(bpe_specials *sp, PyObject *tokens) {
    memset(sp, 0, sizeof(*sp));
    if (!tokens || tokens == Py_None) return 0;
    PyObject *seq = PySequence_Fast(tokens, "special tokens must be a sequence of bytes");
    if (!seq) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    sp->owner = seq;
    sp->count = count;
    if (!count) return 0;
    sp->data = PyMem_Calloc((size_t)count, sizeof(*sp->data));
    sp->len = PyMem_Calloc((size_t)count, sizeof(*sp->len));
    sp->index = PyMem_Calloc((size_t)count, sizeof(*sp->index));
    sp->next = PyMem_Calloc((size_t)count, sizeof(*sp->next));
    if (!sp->data || !sp->len || !sp->index || !sp->next) {
        PyErr_NoMemory();
        bpe_specials_free(sp);
        return -1;
    }
    for (Py_ssize_t t = 0; t < count; t++) {
        PyObject *token = PySequence_Fast_GET_ITEM(seq, t);
        if (!PyBytes_Check(token) || PyBytes_GET_SIZE(token) == 0) {
            PyErr_SetString(PyExc_TypeError, "special tokens must be non-empty bytes");
            bpe_specials_free(sp);
            return -1;
        }
        /* insertion sort, longest first; equal lengths keep their order (two equal-length tokens never match at one place) */
        size_t len = (size_t)PyBytes_GET_SIZE(token);
        Py_ssize_t at = t;
        while (at > 0 && sp->len[at - 1] < len) {
            sp->data[at] = sp->data[at - 1];
            sp->len[at] = sp->len[at - 1];
            sp->index[at] = sp->index[at - 1];
            at--;
        }
        sp->data[at] = (const uint8_t *)PyBytes_AS_STRING(token);
        sp->len[at] = len;
        sp->index[at] = t;
    }
    return 0;
}

void bpe_specials_free(bpe_specials *sp) {
    PyMem_Free(sp->data);
    PyMem_Free(sp->len);
    PyMem_Free(sp->index);
    PyMem_Free(sp->next);
    Py_CLEAR(sp->owner);
    memset(sp, 0, sizeof(*sp));
}

static size_t find_from(const bpe_specials *sp, Py_ssize_t t, const uint8_t *s, size_t n, size_t pos) {
    if (pos >= n) return SIZE_MAX;
    const uint8_t *at = find(s + pos, n - pos, sp->data[t], sp->len[t]);
    return at ? (size_t)(at - s) : SIZE_MAX;
}

void bpe_specials_reset(bpe_specials *sp, const uint8_t *s, size_t n) {
    for (Py_ssize_t t = 0; t < sp->count; t++) sp->next[t] = find_from(sp, t, s, n, 0);
}

int bpe_specials_next(bpe_specials *sp, const uint8_t *s, size_t n, size_t pos, size_t *start, Py_ssize_t *which) {
    size_t best = SIZE_MAX;
    Py_ssize_t chosen = -1;
    for (Py_ssize_t t = 0; t < sp->count; t++) {
        if (sp->next[t] < pos) sp->next[t] = find_from(sp, t, s, n, pos); /* passed over: look again from here */
        if (sp->next[t] < best) {                                         /* a tie keeps the earlier, longer token */
            best = sp->next[t];
            chosen = t;
        }
    }
    if (chosen < 0) return 0;
    *start = best;
    *which = chosen;
    return 1;
}

/* ---------------------------------------------------------------------------------------------
   Python: pre-tokens in order, and counting them */

static int check_kind(int kind) {
    if (kind < 0 || kind >= BPE_KINDS) {
        PyErr_Format(PyExc_ValueError, "unknown pre-tokenizer kind %d", kind);
        return -1;
    }
    return 0;
}

/* pretokens(data, kind, special_tokens=()) -> list of bytes: the pre-tokens in order, each special token kept whole */
static PyObject *pretokens(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "kind", "special_tokens", NULL};
    Py_buffer buffer;
    int kind;
    PyObject *tokens = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*i|O", names, &buffer, &kind, &tokens)) return NULL;
    bpe_specials sp;
    PyObject *out = NULL;
    if (check_kind(kind) < 0 || bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    out = PyList_New(0);
    if (!out) goto done;
    const uint8_t *s = buffer.buf;
    size_t n = (size_t)buffer.len, pos = 0;
    bpe_specials_reset(&sp, s, n);
    while (pos <= n) {
        size_t cut = n, start, end;
        Py_ssize_t which = -1;
        if (bpe_specials_next(&sp, s, n, pos, &cut, &which) == 0) cut = n;
        while (bpe_next_pretoken(kind, s, cut, &pos, &start, &end)) {
            PyObject *piece = PyBytes_FromStringAndSize((const char *)s + start, (Py_ssize_t)(end - start));
            if (!piece || PyList_Append(out, piece) < 0) {
                Py_XDECREF(piece);
                Py_CLEAR(out);
                goto done;
            }
            Py_DECREF(piece);
        }
        if (which < 0) break;
        PyObject *special = PyBytes_FromStringAndSize((const char *)s + cut, (Py_ssize_t)sp.len[which]);
        if (!special || PyList_Append(out, special) < 0) {
            Py_XDECREF(special);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(special);
        pos = cut + sp.len[which];
    }
done:
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
    return out;
}

/* PreTokenCounter(kind, seed): counts of unique pre-tokens over many calls of add(), as Tally keeps them.

   One open-addressing table (linear probing, at most half full) whose slots hold keys of up to 15 bytes themselves
   (all but ~0.5 % of the pre-tokens of prose) as the block hash.h hashes, so counting one is a hash of one block and
   one slot; longer keys live in
   an arena. One-byte pre-tokens (a third of them: spaces, newlines, punctuation) are counted in a plain array. Counting
   waits on memory (the table of a large corpus is tens of megabytes): each pre-token's slot is prefetched when it is
   found and counted PENDING pre-tokens later, so that the wait overlaps with scanning the next ones. */
#define PENDING 16 /* a power of two */
#define SHORT_KEY BPE_BLOCK_MAX
#define FIRST_SLOTS 4096
#define HUGE_PAGE (2u << 20)

typedef struct {
    uint64_t k0, k1; /* the key's block (bpe_block_of) when it has at most SHORT_KEY bytes; else k0 is its offset in the arena */
    uint64_t count;
    uint32_t len;   /* 0: the slot is empty (a pre-token is never empty) */
    uint32_t check; /* the hash's top half: a long key is compared byte by byte only when this matches */
} count_slot;

typedef struct {
    const uint8_t *s; /* the pre-token in the text add() was given (which outlives the queue: add() empties it) */
    uint64_t k0, k1, hash;
    uint32_t len;
} pending;

typedef struct {
    PyObject_HEAD int kind;
    bpe_hashkey key;
    count_slot *table; /* mask + 1 slots */
    size_t mask, used;
    uint8_t *arena; /* the keys longer than SHORT_KEY */
    size_t arena_used, arena_cap;
    uint64_t single[256]; /* the one-byte pre-tokens' counts */
    pending queue[PENDING];
    size_t queued, head; /* the queue's entries, oldest first, end just before head (mod PENDING) */
    size_t longest;      /* the most slots one pre-token's lookup has read: a few, unless its keys collide (the tests) */
} Counter;

/* A key of at most SHORT_KEY bytes as its block (bpe_block_of): k0 = bytes 0-7, k1 = bytes 8-14, zero-padded, its
   length in k1's top byte. Two unaligned loads where the text goes on for 16 bytes (limit is its end), masked to the
   key's length; else copied. */
static HOT_INLINE void key_words(const uint8_t *s, size_t len, const uint8_t *limit, uint64_t *k0, uint64_t *k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (limit - s >= 16) {
        uint64_t w0, w1;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + 8, 8);
        if (len < 8) { /* the first len bytes are the low ones */
            *k0 = w0 & ((1ULL << (8 * len)) - 1);
            *k1 = (uint64_t)len << 56;
        } else {
            *k0 = w0;
            *k1 = (w1 & ((1ULL << (8 * (len - 8))) - 1)) | (uint64_t)len << 56;
        }
        return;
    }
#endif
    bpe_block_of(s, len, k0, k1);
}

static uint64_t slot_hash(const Counter *self, const count_slot *slot) {
    return slot->len <= SHORT_KEY ? bpe_hash_block(slot->k0, slot->k1, &self->key) : bpe_hash(self->arena + slot->k0, slot->len, &self->key);
}

/* a table of zeroed slots; one of megabytes in 2 MB pages where the system has them (Linux's transparent huge pages,
   when asked for): the slots are visited at random, and with 4 KB pages most visits would also miss the TLB */
static count_slot *new_table(size_t slots) {
    size_t bytes = slots * sizeof(count_slot);
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes >= HUGE_PAGE) {
        void *table = aligned_alloc(HUGE_PAGE, bytes);
        if (!table) return NULL;
        madvise(table, bytes, MADV_HUGEPAGE); /* only advice: without it the table is the same, in small pages */
        return memset(table, 0, bytes);
    }
#endif
    return calloc(slots, sizeof(count_slot));
}

static int grow_table(Counter *self) {
    if (self->mask >= SIZE_MAX / 2 / sizeof(count_slot)) return -1;
    size_t size = (self->mask + 1) * 2;
    count_slot *table = new_table(size);
    if (!table) return -1;
    for (size_t k = 0; k <= self->mask; k++) {
        const count_slot *slot = &self->table[k];
        if (!slot->len) continue;
        size_t i = (size_t)slot_hash(self, slot) & (size - 1);
        while (table[i].len) i = (i + 1) & (size - 1);
        table[i] = *slot;
    }
    free(self->table);
    self->table = table;
    self->mask = size - 1;
    return 0;
}

/* a new key (p's) in an empty slot */
static int insert(Counter *self, const pending *p) {
    if ((self->used + 1) * 2 > self->mask + 1 && grow_table(self) < 0) return -1;
    uint64_t k0 = p->k0;
    if (p->len > SHORT_KEY) { /* into the arena */
        if (p->len > self->arena_cap - self->arena_used) {
            size_t cap = self->arena_cap ? self->arena_cap : 1 << 16;
            while (p->len > cap - self->arena_used) {
                if (cap > SIZE_MAX / 2) return -1;
                cap *= 2;
            }
            uint8_t *arena = realloc(self->arena, cap);
            if (!arena) return -1;
            self->arena = arena;
            self->arena_cap = cap;
        }
        memcpy(self->arena + self->arena_used, p->s, p->len);
        k0 = self->arena_used;
        self->arena_used += p->len;
    }
    size_t i = (size_t)p->hash & self->mask;
    while (self->table[i].len) i = (i + 1) & self->mask;
    self->table[i] = (count_slot){k0, p->k1, 1, p->len, (uint32_t)(p->hash >> 32)};
    self->used++;
    return 0;
}

/* count a queued pre-token in the table */
static HOT_INLINE int settle(Counter *self, const pending *p) {
    for (size_t i = (size_t)p->hash & self->mask, probes = 1;; i = (i + 1) & self->mask, probes++) {
        count_slot *slot = &self->table[i];
        if (probes > self->longest) self->longest = probes;
        if (!slot->len) return insert(self, p);
        if (slot->len != p->len) continue;
        if (p->len <= SHORT_KEY ? slot->k0 == p->k0 && slot->k1 == p->k1
                                : slot->check == (uint32_t)(p->hash >> 32) && memcmp(self->arena + slot->k0, p->s, p->len) == 0) {
            slot->count++; /* subtle: cannot pass 2**64: that many pre-tokens would be far more text than any disk holds */
            return 0;
        }
    }
}

/* count one pre-token, s[0:len] (limit: the end of the text it is in): queue it, its slot prefetched, and count the
   oldest queued one */
static HOT_INLINE int count_one(Counter *self, const uint8_t *s, size_t len, const uint8_t *limit) {
    if (len == 1) {
        self->single[s[0]]++;
        return 0;
    }
    pending *p = &self->queue[self->head];
    if (self->queued == PENDING) {
        if (settle(self, p) < 0) return -1;
    } else {
        self->queued++;
    }
    p->s = s;
    p->len = (uint32_t)len;
    if (len <= SHORT_KEY) {
        key_words(s, len, limit, &p->k0, &p->k1);
        p->hash = bpe_hash_block(p->k0, p->k1, &self->key);
    } else {
        p->k0 = p->k1 = 0;
        p->hash = bpe_hash(s, len, &self->key);
    }
    __builtin_prefetch(&self->table[(size_t)p->hash & self->mask], 1);
    self->head = (self->head + 1) & (PENDING - 1);
    return 0;
}

/* count every queued pre-token (before add() returns: they point into its text) */
static int settle_all(Counter *self) {
    for (; self->queued; self->queued--)
        if (settle(self, &self->queue[(self->head - self->queued) & (PENDING - 1)]) < 0) return -1;
    return 0;
}

static int counter_init(Counter *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"kind", "seed", NULL};
    int kind;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iK", names, &kind, &seed)) return -1;
    if (check_kind(kind) < 0) return -1;
    free(self->table);
    free(self->arena);
    memset((char *)self + offsetof(Counter, kind), 0, sizeof(Counter) - offsetof(Counter, kind));
    self->table = new_table(FIRST_SLOTS);
    if (!self->table) {
        PyErr_NoMemory();
        return -1;
    }
    self->mask = FIRST_SLOTS - 1;
    self->kind = kind;
    bpe_key_init(&self->key, seed, 0);
    return 0;
}

static void counter_dealloc(Counter *self) {
    free(self->table);
    free(self->arena);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* one loop per scanner, so that each is inlined into its loop */
#define COUNT_WITH(next)                                                 \
    for (size_t pos = 0, end; pos < n; pos = end) {                      \
        end = next(s, pos, n);                                           \
        if (count_one(self, s + pos, end - pos, limit) < 0) return -1;   \
    }                                                                    \
    return 0

/* count the pre-tokens of s[0:n], a piece of a text that ends at limit */
static int count_piece(Counter *self, const uint8_t *s, size_t n, const uint8_t *limit) {
    switch (self->kind) {
    case BPE_KIND_GPT2:
        COUNT_WITH(next_gpt2);
    case BPE_KIND_CL100K:
        COUNT_WITH(next_cl100k);
    case BPE_KIND_O200K:
        COUNT_WITH(next_o200k);
    default: {
        size_t pos = 0, start, end;
        while (bpe_next_pretoken(self->kind, s, n, &pos, &start, &end))
            if (count_one(self, s + start, end - start, limit) < 0) return -1;
        return 0;
    }
    }
}

/* count a document: its pieces between special tokens, or each line of them; -1 when out of memory */
static int count_document(Counter *self, bpe_specials *sp, const uint8_t *s, size_t n, int split_lines) {
    const uint8_t *limit = s + n;
    size_t pos = 0;
    bpe_specials_reset(sp, s, n);
    for (;;) {
        size_t cut = n;
        Py_ssize_t which = -1;
        if (!bpe_specials_next(sp, s, n, pos, &cut, &which)) cut = n;
        if (split_lines) {
            while (pos < cut) {
                const uint8_t *newline = memchr(s + pos, '\n', cut - pos);
                size_t line_end = newline ? (size_t)(newline - s) + 1 : cut;
                if (count_piece(self, s + pos, line_end - pos, limit) < 0) return -1;
                pos = line_end;
            }
        } else if (count_piece(self, s + pos, cut - pos, limit) < 0) {
            return -1;
        }
        if (which < 0) break;
        pos = cut + sp->len[which];
    }
    return settle_all(self);
}

/* add(data, special_tokens=(), split_lines=False): count a document's pre-tokens (special tokens cut out, not counted;
   with split_lines each line, newline kept, on its own) */
static PyObject *counter_add(Counter *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "special_tokens", "split_lines", NULL};
    Py_buffer buffer;
    PyObject *tokens = NULL;
    int split_lines = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|Op", names, &buffer, &tokens, &split_lines)) return NULL;
    bpe_specials sp;
    PyObject *result = NULL;
    if (bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    if (count_document(self, &sp, buffer.buf, (size_t)buffer.len, split_lines) < 0) {
        self->queued = 0; /* what was queued is not counted: the counter is incomplete, and says so */
        PyErr_NoMemory();
    } else {
        result = Py_NewRef(Py_None);
    }
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
    return result;
}

/* counts() -> {pre-token bytes: count} */
static PyObject *counter_counts(Counter *self, PyObject *unused) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (size_t k = 0; k <= self->mask + 256; k++) {
        uint8_t bytes[16], byte; /* a block */
        const uint8_t *key;
        size_t len;
        uint64_t count;
        if (k <= self->mask) {
            const count_slot *slot = &self->table[k];
            if (!slot->len) continue;
            len = slot->len;
            count = slot->count;
            if (len <= SHORT_KEY) {
                memcpy(bytes, &slot->k0, 8);
                memcpy(bytes + 8, &slot->k1, 8);
                key = bytes;
            } else {
                key = self->arena + slot->k0;
            }
        } else {
            byte = (uint8_t)(k - self->mask - 1);
            count = self->single[byte];
            if (!count) continue;
            key = &byte;
            len = 1;
        }
        PyObject *token = PyBytes_FromStringAndSize((const char *)key, (Py_ssize_t)len);
        PyObject *number = token ? PyLong_FromUnsignedLongLong(count) : NULL;
        if (!number || PyDict_SetItem(out, token, number) < 0) {
            Py_XDECREF(token);
            Py_XDECREF(number);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(token);
        Py_DECREF(number);
    }
    return out;
}

static Py_ssize_t counter_len(Counter *self) {
    Py_ssize_t n = (Py_ssize_t)self->used;
    for (int b = 0; b < 256; b++) n += self->single[b] != 0;
    return n;
}

static PyMethodDef counter_methods[] = {
    {"add", (PyCFunction)(void (*)(void))counter_add, METH_VARARGS | METH_KEYWORDS, "Count a document's pre-tokens."},
    {"counts", (PyCFunction)counter_counts, METH_NOARGS, "The counts so far, as a dict of bytes to int."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods counter_sequence = {.sq_length = (lenfunc)counter_len};

static PyMemberDef counter_members[] = {
    {"longest_probe", T_PYSSIZET, offsetof(Counter, longest), READONLY, "the most table slots one pre-token's lookup has read"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject CounterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.PreTokenCounter",
    .tp_basicsize = sizeof(Counter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PreTokenCounter(kind, seed): counts of unique pre-tokens, as pretokenize.Tally keeps them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)counter_init,
    .tp_dealloc = (destructor)counter_dealloc,
    .tp_methods = counter_methods,
    .tp_members = counter_members,
    .tp_as_sequence = &counter_sequence,
};

/* class_table() -> bytes: the class bits of every code point, for the test that compares them with regex */
static PyObject *class_table(PyObject *self, PyObject *unused) { return PyBytes_FromStringAndSize((const char *)classes, N_CODE_POINTS); }

static PyMethodDef functions[] = {
    {"pretokens", (PyCFunction)(void (*)(void))pretokens, METH_VARARGS | METH_KEYWORDS,
     "pretokens(data, kind, special_tokens=()): the pre-tokens of UTF-8 bytes in order, special tokens kept whole."},
    {"class_table", class_table, METH_NOARGS, "The class bits of every code point (unicode_classes.h)."},
    {NULL, NULL, 0, NULL},
};

int bpe_pretokenize_init(PyObject *module) {
    fill_tables();
    if (PyType_Ready(&CounterType) < 0) return -1;
    if (PyModule_AddObjectRef(module, "PreTokenCounter", (PyObject *)&CounterType) < 0) return -1;
    if (PyModule_AddFunctions(module, functions) < 0) return -1;
    if (PyModule_AddStringConstant(module, "REGEX_VERSION", BPE_REGEX_VERSION) < 0) return -1;
    static const char *kind_names[BPE_KINDS] = {"none", "gpt2", "cl100k", "o200k", "whitespace"};
    PyObject *kinds = PyDict_New();
    if (!kinds) return -1;
    for (int k = 0; k < BPE_KINDS; k++) {
        PyObject *value = PyLong_FromLong(k);
        if (!value || PyDict_SetItemString(kinds, kind_names[k], value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(kinds);
            return -1;
        }
        Py_DECREF(value);
    }
    int failed = PyModule_AddObjectRef(module, "KINDS", kinds) < 0;
    Py_DECREF(kinds);
    return failed ? -1 : 0;
}
