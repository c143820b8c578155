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

/* PreTokenCounter(kind, seed): counts of unique pre-tokens over many calls of add(), as Tally keeps them */
/* Counts of short pre-tokens (at most 8 bytes: most of them) gather first in a small direct-mapped table that stays in
   the processor's cache; a pre-token that takes another's place there moves that one's count into the map. */
#define HOT_SLOTS 32768
#define HOT_LEN_SHIFT 56 /* hot.tally: the key's length above this bit, its count below */

typedef struct {
    uint64_t key;   /* the bytes, zero-padded */
    uint64_t tally; /* len << HOT_LEN_SHIFT | count; 0: empty */
} hot_slot;

typedef struct {
    PyObject_HEAD int kind;
    bpe_bytesmap map;
    hot_slot *hot;
} Counter;

static int counter_init(Counter *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"kind", "seed", NULL};
    int kind;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iK", names, &kind, &seed)) return -1;
    if (check_kind(kind) < 0) return -1;
    bpe_bytesmap_free(&self->map);
    PyMem_Free(self->hot);
    self->hot = PyMem_Calloc(HOT_SLOTS, sizeof(hot_slot));
    if (!self->hot || bpe_bytesmap_init(&self->map, seed) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    self->kind = kind;
    return 0;
}

static void counter_dealloc(Counter *self) {
    bpe_bytesmap_free(&self->map);
    PyMem_Free(self->hot);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* add count occurrences of s[0:n] to the map */
static int count_in_map(Counter *self, const uint8_t *s, size_t n, size_t count) {
    bpe_entry *e = bpe_bytesmap_put(&self->map, s, n, bpe_hash(s, n, self->map.seed));
    if (!e) return -1;
    e->value += count;
    return 0;
}

/* move a hot slot's count into the map and empty it */
static int flush_hot(Counter *self, hot_slot *slot) {
    if (!slot->tally) return 0;
    uint8_t bytes[8];
    memcpy(bytes, &slot->key, 8);
    int status = count_in_map(self, bytes, (size_t)(slot->tally >> HOT_LEN_SHIFT), (size_t)(slot->tally & ((1ULL << HOT_LEN_SHIFT) - 1)));
    slot->tally = 0;
    return status;
}

/* count one pre-token, s[0:len] */
static inline int count_one(Counter *self, const uint8_t *s, size_t len) {
    if (len > 8) return count_in_map(self, s, len, 1);
    uint64_t key = 0;
    memcpy(&key, s, len);
    uint64_t mixed = (key ^ ((uint64_t)len << HOT_LEN_SHIFT) ^ self->map.seed) * 0x9E3779B97F4A7C15ULL;
    hot_slot *slot = &self->hot[(mixed >> 40) & (HOT_SLOTS - 1)];
    if (slot->key != key || slot->tally >> HOT_LEN_SHIFT != len) {
        if (flush_hot(self, slot) < 0) return -1;
        slot->key = key;
        slot->tally = (uint64_t)len << HOT_LEN_SHIFT;
    }
    slot->tally++; /* subtle: a count cannot reach 2**56 (that many pre-tokens would be petabytes of text) */
    return 0;
}

/* one loop per scanner, so that each is inlined into its loop */
#define COUNT_WITH(next)                                          \
    for (size_t pos = 0, end; pos < n; pos = end) {               \
        end = next(s, pos, n);                                    \
        if (count_one(self, s + pos, end - pos) < 0) return -1;   \
    }                                                             \
    return 0

static int count_piece(Counter *self, const uint8_t *s, size_t n) {
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
            if (count_one(self, s + start, end - start) < 0) return -1;
        return 0;
    }
    }
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
    const uint8_t *s = buffer.buf;
    size_t n = (size_t)buffer.len, pos = 0;
    bpe_specials_reset(&sp, s, n);
    for (;;) {
        size_t cut = n;
        Py_ssize_t which = -1;
        if (!bpe_specials_next(&sp, s, n, pos, &cut, &which)) cut = n;
        if (split_lines) {
            while (pos < cut) {
                const uint8_t *newline = memchr(s + pos, '\n', cut - pos);
                size_t line_end = newline ? (size_t)(newline - s) + 1 : cut;
                if (count_piece(self, s + pos, line_end - pos) < 0) goto no_memory;
                pos = line_end;
            }
        } else if (count_piece(self, s + pos, cut - pos) < 0) {
            goto no_memory;
        }
        if (which < 0) break;
        pos = cut + sp.len[which];
    }
    result = Py_NewRef(Py_None);
    goto done;
no_memory:
    PyErr_NoMemory();
done:
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
    return result;
}

/* counts() -> {pre-token bytes: count} */
static PyObject *counter_counts(Counter *self, PyObject *unused) {
    for (size_t k = 0; k < HOT_SLOTS; k++)
        if (flush_hot(self, &self->hot[k]) < 0) return PyErr_NoMemory();
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (size_t k = 0; k <= self->map.mask; k++) {
        bpe_entry *e = &self->map.table[k];
        if (!e->hash) continue;
        PyObject *key = PyBytes_FromStringAndSize((const char *)bpe_key(&self->map, e), e->len);
        PyObject *count = key ? PyLong_FromSize_t(e->value) : NULL;
        if (!count || PyDict_SetItem(out, key, count) < 0) {
            Py_XDECREF(key);
            Py_XDECREF(count);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(key);
        Py_DECREF(count);
    }
    return out;
}

static Py_ssize_t counter_len(Counter *self) {
    for (size_t k = 0; k < HOT_SLOTS; k++)
        if (flush_hot(self, &self->hot[k]) < 0) {
            PyErr_NoMemory();
            return -1;
        }
    return (Py_ssize_t)self->map.used;
}

static PyMethodDef counter_methods[] = {
    {"add", (PyCFunction)(void (*)(void))counter_add, METH_VARARGS | METH_KEYWORDS, "Count a document's pre-tokens."},
    {"counts", (PyCFunction)counter_counts, METH_NOARGS, "The counts so far, as a dict of bytes to int."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods counter_sequence = {.sq_length = (lenfunc)counter_len};

static PyTypeObject CounterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.PreTokenCounter",
    .tp_basicsize = sizeof(Counter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PreTokenCounter(kind, seed): counts of unique pre-tokens, as pretokenize.Tally keeps them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)counter_init,
    .tp_dealloc = (destructor)counter_dealloc,
    .tp_methods = counter_methods,
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
