/* The SentencePiece family, compiled: exact twins of bpe/sentencepiece/'s hot paths.

   - Normalizer: sentencepiece's Normalizer::Normalize (normalizer.py): the charsmap's Darts trie walked byte by
     byte, the longest of the first 32 keys replacing, the whitespace rules, malformed UTF-8 one U+FFFD a byte.
   - SpmCorpus: the trainer's phase 2 (trainer.py prepare) on many lines: normalize, cut at meta pieces and the
     delimiter, count the characters; then, once Python has chosen the characters by coverage, replace the rest
     by U+2585, split into words and count them, sorted as sentencepiece sorts them.
   - SpmTrainer: the merge loop (trainer.py Trainer): symbols, positions, the lazy heap, AcceptSymbol, one step a
     merge, the same events.
   - SpmEncoder: sentencepiece's encoder (encoder.py): symbols merged by piece score, UNUSED resegmented, byte
     fallback or fused <unk>.
   - HFBpe: HuggingFace's BPE by merge rank for one pre-token (hf.py HFTokenizer._merge).

   Text is UTF-8 bytes at the boundaries and code points (uint32) inside the trainer. Python checks what it
   passes (spec.py, normalizer.py's CharsMap, model_file.py); the charsmap is checked here again, so no input
   sends a walk outside its arrays. tests/test_core_sentencepiece.py holds each to its Python twin, also under
   ASan/UBSan. */
#include "encode.h"
#include "minheap.h"

#include <string.h>

#include "pythread.h"

#define UNK_CP 0x2585u
#define BOUNDARY_CP 0x1Fu
#define SPACE_CP 0x2581u
#define MAX_TRIE_RESULTS 32
#define N_CODEPOINTS 0x110000u

static const uint8_t REPLACEMENT[3] = {0xEF, 0xBF, 0xBD};
static const uint8_t SPACE_UTF8[3] = {0xE2, 0x96, 0x81};

/* ---------------------------------------------------------------------------------------------
   UTF-8, as sentencepiece reads it (util.cc DecodeUTF8) */

static inline int is_trail(uint8_t b) { return (b & 0xC0) == 0x80; }
static inline int valid_cp(uint32_t c) { return c < 0xD800 || (c >= 0xE000 && c <= 0x10FFFF); }

/* the length of the valid character at s (n bytes left) and its code point, or 0 when malformed */
static inline size_t utf8_char(const uint8_t *s, size_t n, uint32_t *cp) {
    uint8_t b0 = s[0];
    if (b0 < 0x80) {
        *cp = b0;
        return 1;
    }
    if (n >= 2 && (b0 & 0xE0) == 0xC0) {
        uint32_t c = (uint32_t)(b0 & 0x1F) << 6 | (s[1] & 0x3F);
        if (is_trail(s[1]) && c >= 0x80) {
            *cp = c;
            return 2;
        }
    } else if (n >= 3 && (b0 & 0xF0) == 0xE0) {
        uint32_t c = (uint32_t)(b0 & 0x0F) << 12 | (uint32_t)(s[1] & 0x3F) << 6 | (s[2] & 0x3F);
        if (is_trail(s[1]) && is_trail(s[2]) && c >= 0x800 && valid_cp(c)) {
            *cp = c;
            return 3;
        }
    } else if (n >= 4 && (b0 & 0xF8) == 0xF0) {
        uint32_t c = (uint32_t)(b0 & 0x07) << 18 | (uint32_t)(s[1] & 0x3F) << 12 | (uint32_t)(s[2] & 0x3F) << 6 | (s[3] & 0x3F);
        if (is_trail(s[1]) && is_trail(s[2]) && is_trail(s[3]) && c >= 0x10000 && valid_cp(c)) {
            *cp = c;
            return 4;
        }
    }
    return 0;
}

static inline size_t utf8_put(uint8_t *out, uint32_t c) {
    if (c < 0x80) {
        out[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (uint8_t)(0xC0 | c >> 6);
        out[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (uint8_t)(0xE0 | c >> 12);
        out[1] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
        out[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (uint8_t)(0xF0 | c >> 18);
    out[1] = (uint8_t)(0x80 | (c >> 12 & 0x3F));
    out[2] = (uint8_t)(0x80 | (c >> 6 & 0x3F));
    out[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* bpe_grow without setting an exception: for the threads that run without the GIL */
static inline int bpe_grow_quiet(void **array, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    if (need > SIZE_MAX / 2 / size) return -1;
    size_t n = *cap ? *cap : 8;
    while (n < need) n *= 2;
    void *p = realloc(*array, n * size);
    if (p == NULL) return -1;
    *array = p;
    *cap = n;
    return 0;
}

/* a str of code points (each valid: they come from decoding) */
static PyObject *str_of(const uint32_t *cps, size_t n) {
    return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, cps, (Py_ssize_t)n);
}

static inline uint64_t mix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7FB5D329728EA185ULL;
    x ^= x >> 27;
    x *= 0x81DADEF4BC2DD44DULL;
    x ^= x >> 33;
    return x;
}

/* a growable array of bytes */
typedef struct {
    uint8_t *p;
    size_t n, cap;
} Buf;

static inline int buf_add(Buf *b, const void *src, size_t k) { /* -1 when out of memory, no exception set */
    if (k == 0) return 0; /* subtle: memcpy to a buffer not yet made, even of 0 bytes, is undefined */
    if (bpe_grow_quiet((void **)&b->p, &b->cap, b->n + k, 1) < 0) return -1;
    memcpy(b->p + b->n, src, k);
    b->n += k;
    return 0;
}

/* a list of non-empty bytes objects, copied, sorted longest first (for longest-first matching) */
typedef struct {
    uint8_t **data;
    size_t *len;
    Py_ssize_t n;
    uint8_t first[256]; /* which bytes start one */
} Strings;

static void strings_free(Strings *s) {
    for (Py_ssize_t i = 0; i < s->n; i++) free(s->data[i]);
    free(s->data);
    free(s->len);
    memset(s, 0, sizeof(*s));
}

static int strings_init(Strings *s, PyObject *seq) {
    memset(s, 0, sizeof(*s));
    PyObject *fast = PySequence_Fast(seq, "expected a sequence of bytes");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    s->data = calloc((size_t)n + 1, sizeof(uint8_t *));
    s->len = calloc((size_t)n + 1, sizeof(size_t));
    if (!s->data || !s->len) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyBytes_Check(item) || PyBytes_GET_SIZE(item) == 0) {
            Py_DECREF(fast);
            PyErr_SetString(PyExc_TypeError, "expected non-empty bytes");
            return -1;
        }
        size_t k = (size_t)PyBytes_GET_SIZE(item);
        s->data[s->n] = malloc(k);
        if (!s->data[s->n]) {
            Py_DECREF(fast);
            PyErr_NoMemory();
            return -1;
        }
        memcpy(s->data[s->n], PyBytes_AS_STRING(item), k);
        s->len[s->n++] = k;
    }
    Py_DECREF(fast);
    /* longest first (insertion sort: a handful, or the 259 meta pieces once) */
    for (Py_ssize_t i = 1; i < s->n; i++) {
        uint8_t *d = s->data[i];
        size_t l = s->len[i];
        Py_ssize_t j = i - 1;
        while (j >= 0 && s->len[j] < l) {
            s->data[j + 1] = s->data[j];
            s->len[j + 1] = s->len[j];
            j--;
        }
        s->data[j + 1] = d;
        s->len[j + 1] = l;
    }
    for (Py_ssize_t i = 0; i < s->n; i++) s->first[s->data[i][0]] = 1;
    return 0;
}

/* the length of the longest string starting at s, 0 if none */
static inline size_t strings_match(const Strings *set, const uint8_t *s, size_t n) {
    if (!set->n || !set->first[s[0]]) return 0;
    for (Py_ssize_t i = 0; i < set->n; i++)
        if (set->len[i] <= n && memcmp(set->data[i], s, set->len[i]) == 0) return set->len[i];
    return 0;
}

/* ---------------------------------------------------------------------------------------------
   the normalizer */

typedef struct {
    uint32_t *units;
    size_t n_units;
    uint8_t *values;
    size_t n_values;
    int dummy, extra, escape, suffix;
    Strings user; /* user-defined symbols: copied, not mapped (the encoder's PrefixMatcher) */
    uint8_t *plain; /* 0x10000: a character of the BMP that is no space and starts no key and no user-defined symbol:
                       copied as it is, in runs (most text), without a walk of the trie a character */
    int plain_space; /* ' ' starts no key and no user-defined symbol: it is itself */
} Norm;

static inline size_t darts_offset(uint32_t unit) { return (size_t)(unit >> 10) << ((unit & (1u << 9)) >> 6); }
static inline uint32_t darts_label(uint32_t unit) { return unit & 0x800000FFu; }

/* Darts' validate, and sentencepiece's checks of the blob (normalizer.py CharsMap) */
static int charsmap_load(Norm *m, const uint8_t *blob, size_t n) {
    if (n == 0) return 0; /* identity */
    if (n <= 4) return -1;
    uint32_t size = (uint32_t)blob[0] | (uint32_t)blob[1] << 8 | (uint32_t)blob[2] << 16 | (uint32_t)blob[3] << 24;
    if ((size_t)size >= n - 4 || size < 1024 || size % 1024) return -1;
    m->n_units = size / 4;
    m->units = malloc(size);
    m->n_values = n - 4 - size;
    m->values = malloc(m->n_values);
    if (!m->units || !m->values) return -2;
    for (size_t i = 0; i < m->n_units; i++) {
        const uint8_t *u = blob + 4 + 4 * i;
        m->units[i] = (uint32_t)u[0] | (uint32_t)u[1] << 8 | (uint32_t)u[2] << 16 | (uint32_t)u[3] << 24;
    }
    memcpy(m->values, blob + 4 + size, m->n_values);
    if (m->values[m->n_values - 1] != 0) return -1;
    uint32_t root = m->units[0];
    if (darts_label(root) != 0 || (root >> 8 & 1) || darts_offset(root) == 0 || (darts_offset(root) | 0xFF) >= m->n_units) return -1;
    for (size_t i = 1; i < m->n_units; i++) {
        uint32_t unit = m->units[i];
        if (darts_label(unit) <= 0xFF) {
            size_t child = i ^ darts_offset(unit);
            if ((child | 0xFF) >= m->n_units) return -1;
            if ((unit >> 8 & 1) && darts_label(m->units[child]) <= 0xFF) return -1;
        } else if ((unit & 0x7FFFFFFFu) >= m->n_values) {
            return -1;
        }
    }
    return 0;
}

static void norm_free(Norm *m) {
    free(m->plain);
    free(m->units);
    free(m->values);
    strings_free(&m->user);
    memset(m, 0, sizeof(*m));
}

/* -1 with an exception set */
static int norm_init(Norm *m, Py_buffer *charsmap, int dummy, int extra, int escape, int suffix, PyObject *user) {
    memset(m, 0, sizeof(*m));
    m->dummy = dummy;
    m->extra = extra;
    m->escape = escape;
    m->suffix = suffix;
    int status = charsmap_load(m, charsmap->buf, (size_t)charsmap->len);
    if (status == -2) {
        PyErr_NoMemory();
        return -1;
    }
    if (status < 0) {
        PyErr_SetString(PyExc_ValueError, "The precompiled character map is broken.");
        return -1;
    }
    if (strings_init(&m->user, user) < 0) return -1;
    m->plain = malloc(0x10000);
    if (!m->plain) {
        PyErr_NoMemory();
        return -1;
    }
    for (uint32_t c = 0; c < 0x10000; c++) {
        uint8_t bytes[4];
        size_t k = utf8_put(bytes, c), i = 0;
        if (m->units) { /* walk its bytes: plain if the walk stops before the character ends (no key starts with it) */
            size_t node = darts_offset(m->units[0]);
            for (; i < k; i++) {
                node ^= bytes[i];
                uint32_t unit = m->units[node];
                if (darts_label(unit) != bytes[i]) break;
                node ^= darts_offset(unit);
            }
        }
        int starts_nothing = !m->user.first[bytes[0]] && (!m->units || i < k);
        m->plain[c] = c != ' ' && c != 0 && (c < 0xD800 || c > 0xDFFF) && starts_nothing;
        if (c == ' ') m->plain_space = starts_nothing;
    }
    return 0;
}

/* NormalizePrefix: what s becomes (*out, *out_len: into the values, into s, or U+FFFD) and the bytes consumed */
static inline size_t norm_prefix(const Norm *m, const uint8_t *s, size_t n, const uint8_t **out, size_t *out_len) {
    size_t user = strings_match(&m->user, s, n);
    if (user) {
        *out = s;
        *out_len = user;
        return user;
    }
    if (m->units) {
        const uint32_t *units = m->units;
        size_t node = darts_offset(units[0]);
        size_t best = 0, value = 0, found = 0;
        for (size_t i = 0; i < n; i++) {
            node ^= s[i];
            uint32_t unit = units[node];
            if (darts_label(unit) != s[i]) break;
            node ^= darts_offset(unit);
            if (unit >> 8 & 1) {
                if (found < MAX_TRIE_RESULTS) { /* the longest of the first 32 */
                    best = i + 1;
                    value = units[node] & 0x7FFFFFFFu;
                }
                found++;
            }
        }
        if (best) {
            *out = m->values + value;
            *out_len = strlen((const char *)m->values + value); /* the values end with NUL: checked */
            return best;
        }
    }
    uint32_t cp;
    size_t k = utf8_char(s, n, &cp);
    if (k) {
        *out = s;
        *out_len = k;
        return k;
    }
    *out = REPLACEMENT;
    *out_len = 3;
    return 1;
}

/* Normalizer::Normalize of s into out (appended); -1 when out of memory */
static int norm_run(const Norm *m, const uint8_t *s, size_t n, Buf *out) {
    size_t pos = 0;
    const uint8_t *p;
    size_t pl;
    if (m->extra) {
        while (pos < n) {
            size_t consumed = norm_prefix(m, s + pos, n - pos, &p, &pl);
            if (!(pl == 1 && p[0] == ' ')) break;
            pos += consumed;
        }
    }
    if (pos == n) return 0;
    const uint8_t *ws = m->escape ? SPACE_UTF8 : (const uint8_t *)" ";
    size_t wl = m->escape ? 3 : 1, begin = out->n;
    if (!m->suffix && m->dummy && buf_add(out, ws, wl) < 0) return -1;
    int prev_space = m->extra;
    while (pos < n) {
        size_t end = pos; /* a run of characters the map leaves alone and that hold no space: copied at once */
        while (end < n) {
            if (s[end] < 0x80) {
                if (!m->plain[s[end]]) break;
                end++;
                continue;
            }
            uint32_t cp;
            size_t k = utf8_char(s + end, n - end, &cp);
            if (!k || cp > 0xFFFF || !m->plain[cp]) break;
            end += k;
        }
        if (end > pos) {
            if (buf_add(out, s + pos, end - pos) < 0) return -1;
            pos = end;
            prev_space = 0;
            continue;
        }
        size_t consumed;
        if (s[pos] == ' ' && m->plain_space) { /* the space between words: NormalizePrefix would give ' ' */
            p = s + pos;
            pl = consumed = 1;
        } else {
            consumed = norm_prefix(m, s + pos, n - pos, &p, &pl);
        }
        if (prev_space)
            while (pl && p[0] == ' ') p++, pl--;
        if (pl) {
            size_t run = 0; /* copy the bytes between spaces at once */
            for (size_t k = 0; k < pl; k++) {
                if (p[k] != ' ') continue;
                if (buf_add(out, p + run, k - run) < 0 || buf_add(out, ws, wl) < 0) return -1;
                run = k + 1;
            }
            if (buf_add(out, p + run, pl - run) < 0) return -1;
            prev_space = p[pl - 1] == ' ';
        }
        pos += consumed;
        if (!m->extra) prev_space = 0;
    }
    if (m->extra)
        while (out->n - begin >= wl && memcmp(out->p + out->n - wl, ws, wl) == 0) out->n -= wl;
    if (m->suffix && m->dummy && buf_add(out, ws, wl) < 0) return -1;
    return 0;
}

typedef struct {
    PyObject_HEAD Norm norm;
    Buf out;
} Normalizer;

/* Normalizer(charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, treat_whitespace_as_suffix, user_defined) */
static int normalizer_init(Normalizer *self, PyObject *args, PyObject *kwargs) {
    Py_buffer charsmap;
    int dummy, extra, escape, suffix;
    PyObject *user;
    if (!PyArg_ParseTuple(args, "y*ppppO", &charsmap, &dummy, &extra, &escape, &suffix, &user)) return -1;
    norm_free(&self->norm);
    int status = norm_init(&self->norm, &charsmap, dummy, extra, escape, suffix, user);
    PyBuffer_Release(&charsmap);
    return status;
}

static void normalizer_dealloc(Normalizer *self) {
    norm_free(&self->norm);
    free(self->out.p);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* normalize(data: bytes) -> bytes */
static PyObject *normalizer_normalize(Normalizer *self, PyObject *arg) {
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    self->out.n = 0;
    int status = norm_run(&self->norm, data.buf, (size_t)data.len, &self->out);
    PyBuffer_Release(&data);
    if (status < 0) return PyErr_NoMemory();
    return PyBytes_FromStringAndSize((const char *)self->out.p, (Py_ssize_t)self->out.n);
}

static PyMethodDef normalizer_methods[] = {
    {"normalize", (PyCFunction)normalizer_normalize, METH_O, "normalize(data: bytes) -> bytes, as Normalizer::Normalize"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject NormalizerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.SpmNormalizer",
    .tp_doc = "SpmNormalizer(charsmap, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces, suffix, user_defined): "
              "sentencepiece's normalizer (bpe/sentencepiece/normalizer.py).",
    .tp_basicsize = sizeof(Normalizer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)normalizer_init,
    .tp_dealloc = (destructor)normalizer_dealloc,
    .tp_methods = normalizer_methods,
};

/* ---------------------------------------------------------------------------------------------
   running a job on several threads (Python's own thread API, so it builds wherever Python does) */

typedef struct {
    void (*fn)(void *);
    void *arg;
    PyThread_type_lock done;
} Job;

static void job_main(void *p) {
    Job *job = p;
    job->fn(job->arg);
    PyThread_release_lock(job->done);
}

/* fn(args[k]) for k < n, on n threads (this one among them), without the GIL; a thread that cannot be started
   runs its job here. Called with the GIL held. */
static void run_parallel(void (*fn)(void *), void **args, int n) {
    Job jobs[16];
    int started[16] = {0};
    if (n > 16) n = 16;
    for (int k = 1; k < n; k++) {
        jobs[k] = (Job){fn, args[k], PyThread_allocate_lock()};
        if (jobs[k].done && PyThread_acquire_lock(jobs[k].done, 1) && PyThread_start_new_thread(job_main, &jobs[k]) != PYTHREAD_INVALID_THREAD_ID)
            started[k] = 1;
    }
    Py_BEGIN_ALLOW_THREADS;
    fn(args[0]);
    for (int k = 1; k < n; k++) {
        if (started[k]) {
            PyThread_acquire_lock(jobs[k].done, 1); /* released by the thread when its job is done */
            PyThread_release_lock(jobs[k].done);
        } else {
            fn(args[k]);
        }
    }
    Py_END_ALLOW_THREADS;
    for (int k = 1; k < n; k++)
        if (jobs[k].done) PyThread_free_lock(jobs[k].done);
}

/* ---------------------------------------------------------------------------------------------
   the corpus: lines -> normalized sentences -> words */

/* the sentences of one share of the lines, as the thread that read them left them */
typedef struct {
    uint32_t *text; /* the sentences' code points, one after the other */
    size_t n_text, cap_text;
    size_t *ends; /* where each sentence ends in text */
    size_t n_sent, cap_ends;
} Segment;

typedef struct {
    PyObject_HEAD Norm norm;
    Strings meta; /* meta pieces, cut out of the normalized text (GlobalReplace) */
    uint8_t *delim;
    size_t delim_len;
    uint64_t seed;
    bpe_hashkey key; /* the word table's: its keys are the training text's words (hash.h) */
    int threads;
    Segment *segs; /* the sentences, share after share, in the order read */
    size_t n_segs, cap_segs;
    int64_t *counts; /* N_CODEPOINTS: how often each code point occurs */
    uint32_t *seen;  /* the code points with a count, in the order first merged in */
    size_t n_seen, cap_seen;
    /* the words, once made */
    uint32_t *wtext;
    size_t n_wtext;
    size_t *wstart; /* n_words + 1 */
    int64_t *wcount;
    size_t n_words;
} Corpus;

static void corpus_clear_words(Corpus *c) {
    free(c->wtext);
    free(c->wstart);
    free(c->wcount);
    c->wtext = NULL;
    c->wstart = NULL;
    c->wcount = NULL;
    c->n_wtext = c->n_words = 0;
}

static void corpus_dealloc(Corpus *c) {
    norm_free(&c->norm);
    strings_free(&c->meta);
    free(c->delim);
    for (size_t k = 0; k < c->n_segs; k++) {
        free(c->segs[k].text);
        free(c->segs[k].ends);
    }
    free(c->segs);
    free(c->counts);
    free(c->seen);
    corpus_clear_words(c);
    Py_TYPE(c)->tp_free((PyObject *)c);
}

/* SpmCorpus(charsmap, add_dummy_prefix, remove_extra_whitespaces, treat_whitespace_as_suffix, meta_pieces, delimiter, seed,
   threads) */
static int corpus_init(Corpus *c, PyObject *args, PyObject *kwargs) {
    Py_buffer charsmap, delim;
    int dummy, extra, suffix, threads = 1;
    PyObject *meta;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*pppOy*K|i", &charsmap, &dummy, &extra, &suffix, &meta, &delim, &seed, &threads)) return -1;
    if (c->counts) {
        PyErr_SetString(PyExc_TypeError, "SpmCorpus is set up once");
        goto fail;
    }
    PyObject *none = PyTuple_New(0);
    int status = none ? norm_init(&c->norm, &charsmap, dummy, extra, 1, suffix, none) : -1;
    Py_XDECREF(none);
    if (status < 0 || strings_init(&c->meta, meta) < 0) goto fail;
    c->delim_len = (size_t)delim.len;
    c->delim = malloc(c->delim_len + 1);
    c->counts = calloc(N_CODEPOINTS, sizeof(int64_t));
    if (!c->delim || !c->counts) {
        PyErr_NoMemory();
        goto fail;
    }
    memcpy(c->delim, delim.buf, c->delim_len);
    c->seed = seed;
    bpe_key_init(&c->key, seed, 0);
    c->threads = threads < 1 ? 1 : threads > 16 ? 16 : threads;
    PyBuffer_Release(&charsmap);
    PyBuffer_Release(&delim);
    return 0;
fail:
    PyBuffer_Release(&charsmap);
    PyBuffer_Release(&delim);
    return -1;
}

/* a share of the lines, read by one thread */
typedef struct {
    const Corpus *c;
    const uint8_t **data;
    const size_t *len;
    size_t n;
    Buf line, cut; /* scratch: a normalized line, and it with the meta pieces cut out */
    Segment seg;     /* what it read: handed to the corpus */
    int64_t *counts; /* N_CODEPOINTS, made when first needed */
    uint32_t *seen;  /* the code points counted, each once */
    size_t n_seen, cap_seen;
    int failed;
} LinePart;

/* one line: normalize, cut at meta pieces (GlobalReplace), then replace the delimiter (StrReplaceAll), decode;
   an empty result is no sentence. -1 when out of memory */
static int part_add(LinePart *part, const uint8_t *s, size_t n) {
    const Corpus *c = part->c;
    part->line.n = 0;
    if (norm_run(&c->norm, s, n, &part->line) < 0) return -1;
    if (c->meta.n) { /* into part->cut: each meta piece, longest first at each place, becomes one boundary */
        part->cut.n = 0;
        const uint8_t *p = part->line.p;
        size_t len = part->line.n, pos = 0, run = 0;
        while (pos < len) {
            /* subtle: byte by byte, not character by character as the PrefixMatcher goes: a meta piece starts with a
               leading byte, never with a continuation byte, so it can only match where a character starts */
            size_t k = c->meta.first[p[pos]] ? strings_match(&c->meta, p + pos, len - pos) : 0;
            if (k) {
                uint8_t boundary = BOUNDARY_CP;
                if (buf_add(&part->cut, p + run, pos - run) < 0 || buf_add(&part->cut, &boundary, 1) < 0) return -1;
                pos += k;
                run = pos;
            } else {
                pos++;
            }
        }
        if (buf_add(&part->cut, p + run, len - run) < 0) return -1;
    }
    const Buf *line = c->meta.n ? &part->cut : &part->line;
    const uint8_t *p = line->p;
    Segment *seg = &part->seg;
    size_t len = line->n, pos = 0, begin = seg->n_text;
    if (bpe_grow_quiet((void **)&seg->text, &seg->cap_text, seg->n_text + len, sizeof(uint32_t)) < 0) return -1;
    while (pos < len) {
        uint32_t cp;
        size_t k;
        if (c->delim_len && c->delim_len <= len - pos && memcmp(p + pos, c->delim, c->delim_len) == 0) {
            cp = BOUNDARY_CP;
            k = c->delim_len;
        } else if (p[pos] < 0x80) {
            cp = p[pos];
            k = 1;
        } else {
            k = utf8_char(p + pos, len - pos, &cp);
            if (!k) { /* never: valid UTF-8 */
                cp = 0xFFFD;
                k = 1;
            }
        }
        seg->text[seg->n_text++] = cp;
        pos += k;
    }
    if (seg->n_text == begin) return 0;
    for (size_t i = begin; i < seg->n_text; i++) {
        uint32_t cp = seg->text[i];
        if (part->counts[cp]++ == 0) {
            if (bpe_grow_quiet((void **)&part->seen, &part->cap_seen, part->n_seen + 1, sizeof(uint32_t)) < 0) return -1;
            part->seen[part->n_seen++] = cp;
        }
    }
    if (bpe_grow_quiet((void **)&seg->ends, &seg->cap_ends, seg->n_sent + 1, sizeof(size_t)) < 0) return -1;
    seg->ends[seg->n_sent++] = seg->n_text;
    return 0;
}

static void part_lines(void *arg) {
    LinePart *part = arg;
    part->counts = calloc(N_CODEPOINTS, sizeof(int64_t));
    if (!part->counts) {
        part->failed = 1;
        return;
    }
    for (size_t i = 0; i < part->n; i++)
        if (part_add(part, part->data[i], part->len[i]) < 0) {
            part->failed = 1;
            return;
        }
}

/* the lines data[i][0:len[i]], normalized, cut and counted on the corpus's threads, kept in order; -1 with an
   exception set */
static int corpus_read(Corpus *c, const uint8_t **data, const size_t *len, size_t n) {
    LinePart parts[16];
    void *args[16];
    int k = c->threads, status = -1;
    if ((size_t)k > n / 256 + 1) k = (int)(n / 256 + 1); /* a few lines: one thread */
    memset(parts, 0, sizeof(parts));
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += len[i];
    /* shares of about equal bytes, in order */
    size_t at = 0, consumed = 0;
    for (int j = 0; j < k; j++) {
        size_t goal = total / (size_t)k * (size_t)(j + 1), first = at;
        while (at < n && (j == k - 1 || consumed < goal)) consumed += len[at++];
        parts[j] = (LinePart){.c = c, .data = data + first, .len = len + first, .n = at - first};
        args[j] = &parts[j];
    }
    run_parallel(part_lines, args, k);
    for (int j = 0; j < k; j++)
        if (parts[j].failed) {
            PyErr_NoMemory();
            goto done;
        }
    if (bpe_grow((void **)&c->segs, &c->cap_segs, c->n_segs + (size_t)k, sizeof(Segment)) < 0) goto done;
    for (int j = 0; j < k; j++) { /* each share's sentences after the ones before, as they are: no copy */
        LinePart *part = &parts[j];
        for (size_t i = 0; i < part->n_seen; i++) {
            uint32_t cp = part->seen[i];
            if (c->counts[cp] == 0) {
                if (bpe_grow((void **)&c->seen, &c->cap_seen, c->n_seen + 1, sizeof(uint32_t)) < 0) goto done;
                c->seen[c->n_seen++] = cp;
            }
            c->counts[cp] += part->counts[cp];
        }
        c->segs[c->n_segs++] = part->seg;
        memset(&part->seg, 0, sizeof(Segment)); /* the corpus owns it now */
    }
    status = 0;
done:
    for (int j = 0; j < 16; j++) {
        free(parts[j].line.p);
        free(parts[j].cut.p);
        free(parts[j].seg.text);
        free(parts[j].seg.ends);
        free(parts[j].counts);
        free(parts[j].seen);
    }
    return status;
}

/* add_lines(lines: sequence of bytes): normalized, cut and counted on the corpus's threads, kept in order */
static PyObject *corpus_add_lines(Corpus *c, PyObject *lines) {
    if (!c->counts) {
        PyErr_SetString(PyExc_TypeError, "SpmCorpus was not set up");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(lines, "add_lines takes a sequence of bytes");
    if (!fast) return NULL;
    size_t n = (size_t)PySequence_Fast_GET_SIZE(fast);
    const uint8_t **data = malloc((n + 1) * sizeof(uint8_t *));
    size_t *len = malloc((n + 1) * sizeof(size_t));
    PyObject *result = NULL;
    if (!data || !len) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, (Py_ssize_t)i);
        if (!PyBytes_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "add_lines takes a sequence of bytes");
            goto done;
        }
        data[i] = (const uint8_t *)PyBytes_AS_STRING(item);
        len[i] = (size_t)PyBytes_GET_SIZE(item);
    }
    if (corpus_read(c, data, len, n) == 0) result = Py_NewRef(Py_None); /* the bytes objects stay alive: fast holds them */
done:
    free(data);
    free(len);
    Py_DECREF(fast);
    return result;
}

/* add_files(paths, max_sentence_length, input_sentence_size) -> (kept, empty, too long, holding U+2585):
   trainer.py's read_lines and select in C, without a bytes object a line. Each file is read whole and split
   with getline's rules (on '\n', '\r' kept, no line after a last '\n'); a line is dropped when empty, over
   max_sentence_length bytes or holding U+2585; reading stops at input_sentence_size lines kept (0: never). */
static PyObject *corpus_add_files(Corpus *c, PyObject *args) {
    PyObject *paths;
    Py_ssize_t max_len, limit;
    if (!PyArg_ParseTuple(args, "Onn", &paths, &max_len, &limit)) return NULL;
    if (!c->counts) {
        PyErr_SetString(PyExc_TypeError, "SpmCorpus was not set up");
        return NULL;
    }
    PyObject *fast = PySequence_Fast(paths, "add_files takes a sequence of paths");
    if (!fast) return NULL;
    Py_ssize_t n_files = PySequence_Fast_GET_SIZE(fast);
    uint8_t **buffers = calloc((size_t)n_files + 1, sizeof(uint8_t *));
    const uint8_t **data = NULL;
    size_t *len = NULL, n = 0, cap = 0, cap_len = 0, empty = 0, too_long = 0, reserved = 0;
    PyObject *result = NULL;
    int stop = 0;
    if (!buffers) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t f = 0; f < n_files && !stop; f++) {
        PyObject *path = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(fast, f), &path)) goto done;
        FILE *file = fopen(PyBytes_AS_STRING(path), "rb");
        if (!file) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, PySequence_Fast_GET_ITEM(fast, f));
            Py_DECREF(path);
            goto done;
        }
        Py_DECREF(path);
        size_t size = 0, cap_buf = 0;
        uint8_t *buf = NULL;
        for (;;) {
            if (bpe_grow((void **)&buf, &cap_buf, size + (1 << 16), 1) < 0) {
                fclose(file);
                free(buf);
                goto done;
            }
            size_t got = fread(buf + size, 1, cap_buf - size, file);
            size += got;
            if (got == 0) break;
        }
        int failed = ferror(file);
        fclose(file);
        buffers[f] = buf;
        if (failed) {
            PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, PySequence_Fast_GET_ITEM(fast, f));
            goto done;
        }
        for (size_t pos = 0; pos < size && !stop;) {
            const uint8_t *end = memchr(buf + pos, '\n', size - pos);
            size_t line = end ? (size_t)(end - (buf + pos)) : size - pos;
            const uint8_t *s = buf + pos;
            pos += line + 1;
            if (line == 0) {
                empty++;
            } else if (line > (size_t)max_len) {
                too_long++;
            } else {
                int unk = 0; /* U+2585 is E2 96 85 */
                for (const uint8_t *q = s; !unk && (q = memchr(q, 0xE2, line - (size_t)(q - s))) != NULL && q + 2 < s + line; q++)
                    unk = q[1] == 0x96 && q[2] == 0x85;
                if (unk) {
                    reserved++;
                    continue;
                }
                if (bpe_grow((void **)&data, &cap, n + 1, sizeof(uint8_t *)) < 0 || bpe_grow((void **)&len, &cap_len, n + 1, sizeof(size_t)) < 0)
                    goto done;
                data[n] = s;
                len[n++] = line;
                if (limit > 0 && n >= (size_t)limit) stop = 1;
            }
        }
    }
    if (corpus_read(c, data, len, n) == 0) result = Py_BuildValue("(nnnn)", (Py_ssize_t)n, (Py_ssize_t)empty, (Py_ssize_t)too_long, (Py_ssize_t)reserved);
done:
    for (Py_ssize_t f = 0; buffers && f < n_files; f++) free(buffers[f]);
    free(buffers);
    free(data);
    free(len);
    Py_DECREF(fast);
    return result;
}

/* char_counts() -> {code point: count} */
static PyObject *corpus_char_counts(Corpus *c, PyObject *unused) {
    PyObject *out = PyDict_New();
    if (!out || !c->counts) return out;
    for (size_t i = 0; i < c->n_seen; i++) {
        uint32_t cp = c->seen[i];
        PyObject *k = PyLong_FromUnsignedLong(cp), *v = PyLong_FromLongLong(c->counts[cp]);
        if (!k || !v || PyDict_SetItem(out, k, v) < 0) {
            Py_XDECREF(k);
            Py_XDECREF(v);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(k);
        Py_DECREF(v);
    }
    return out;
}

/* sentences() -> list of str (for tests) */
static PyObject *corpus_sentences(Corpus *c, PyObject *unused) {
    PyObject *out = PyList_New(0);
    for (size_t j = 0; out && j < c->n_segs; j++) {
        const Segment *seg = &c->segs[j];
        for (size_t k = 0; k < seg->n_sent; k++) {
            size_t begin = k ? seg->ends[k - 1] : 0;
            PyObject *sentence = str_of(seg->text + begin, seg->ends[k] - begin);
            if (!sentence || PyList_Append(out, sentence) < 0) {
                Py_XDECREF(sentence);
                Py_CLEAR(out);
                break;
            }
            Py_DECREF(sentence);
        }
    }
    return out;
}

typedef struct {
    const uint32_t *p;
    size_t n;
    int64_t count;
    uint64_t hash;
} WordRef;

/* a word's hash: its code points' bytes under the table's key (hash.h: keyed in every block, as the text is anyone's) */
static inline uint64_t hash_cps(const uint32_t *p, size_t n, const bpe_hashkey *key) {
    return bpe_hash((const uint8_t *)p, n * sizeof(uint32_t), key);
}

/* a table of the distinct words, refs[slot - 1]: the words point into the corpus's own text */
typedef struct {
    uint64_t *slots; /* the hash's high half << 32 | index into refs + 1; 0: empty */
    size_t mask;
    WordRef *refs;
    size_t n, cap;
} WordTable;

static int word_table_grow(WordTable *w) {
    size_t size = w->mask ? (w->mask + 1) * 2 : 1 << 12;
    uint64_t *slots = calloc(size, sizeof(uint64_t));
    if (!slots) return -1;
    for (size_t k = 0; k < w->n; k++) {
        size_t i = (size_t)w->refs[k].hash & (size - 1);
        while (slots[i]) i = (i + 1) & (size - 1);
        slots[i] = (w->refs[k].hash & 0xFFFFFFFF00000000ULL) | (k + 1);
    }
    free(w->slots);
    w->slots = slots;
    w->mask = size - 1;
    return 0;
}

/* count the word p[0:n] `count` more times: its index in refs, or -1 when out of memory */
static Py_ssize_t word_table_add(WordTable *w, const uint32_t *p, size_t n, uint64_t hash, int64_t count) {
    uint64_t tag = hash & 0xFFFFFFFF00000000ULL;
    for (size_t i = (size_t)hash & w->mask;; i = (i + 1) & w->mask) {
        uint64_t slot = w->slots[i];
        if (!slot) break;
        if ((slot & 0xFFFFFFFF00000000ULL) != tag) continue;
        WordRef *r = &w->refs[(uint32_t)slot - 1];
        if (r->hash == hash && r->n == n) {
            size_t k = 0;
            while (k < n && r->p[k] == p[k]) k++; /* words are short: no call to memcmp */
            if (k == n) {
                r->count += count;
                return (Py_ssize_t)((uint32_t)slot - 1);
            }
        }
    }
    if (w->n >= UINT32_MAX - 1 || bpe_grow_quiet((void **)&w->refs, &w->cap, w->n + 1, sizeof(WordRef)) < 0) return -1;
    w->refs[w->n++] = (WordRef){p, n, count, hash};
    if (w->n * 2 > w->mask + 1) return word_table_grow(w) < 0 ? -1 : (Py_ssize_t)w->n - 1; /* rehashes the new word too */
    size_t i = (size_t)hash & w->mask;
    while (w->slots[i]) i = (i + 1) & w->mask;
    w->slots[i] = tag | w->n;
    return (Py_ssize_t)w->n - 1;
}

/* A small cache in front of the word table for the frequent words, which are most of the text: a word of at
   most HOT_LEN code points is kept whole in the entry, so a hit reads nothing but the entry (a lookup in the big
   table reads its slot, its ref and the word's text, three cache misses: half the time of the first count). */
#define HOT_WORDS 4096
#define HOT_LEN 7
typedef struct {
    uint64_t hash;
    uint32_t ref; /* index into the table's refs + 1; 0: empty */
    uint32_t n;
    uint32_t cps[HOT_LEN];
} HotWord;

static int count_word(WordTable *table, HotWord *hot, const uint32_t *p, size_t n, uint64_t hash) {
    HotWord *h = &hot[hash & (HOT_WORDS - 1)];
    if (h->ref && h->hash == hash && h->n == n) {
        size_t k = 0;
        while (k < n && h->cps[k] == p[k]) k++; /* at most HOT_LEN: no call to memcmp */
        if (k == n) {
            table->refs[h->ref - 1].count++;
            return 0;
        }
    }
    Py_ssize_t ref = word_table_add(table, p, n, hash, 1);
    if (ref < 0) return -1;
    if (n <= HOT_LEN) { /* the latest word takes the entry */
        h->hash = hash;
        h->ref = (uint32_t)ref + 1;
        h->n = (uint32_t)n;
        memcpy(h->cps, p, n * sizeof(uint32_t));
    }
    return 0;
}

/* a share of the sentences, split into words by one thread */
typedef struct {
    Corpus *c;
    Segment *seg; /* the sentences it splits */
    const uint8_t *keep;
    int split, suffix, allow;
    WordTable table;
    int failed;
} WordPart;

static void part_words(void *arg) {
    WordPart *part = arg;
    Corpus *c = part->c;
    int split = part->split, suffix = part->suffix, allow = part->allow;
    WordTable *table = &part->table;
    HotWord *hot = calloc(HOT_WORDS, sizeof(HotWord));
    if (!hot || word_table_grow(table) < 0) {
        free(hot);
        part->failed = 1;
        return;
    }
    Segment *seg = part->seg;
    for (size_t k = 0; k < seg->n_sent; k++) {
        size_t first = k ? seg->ends[k - 1] : 0;
        uint32_t *s = seg->text + first;
        size_t n = seg->ends[k] - first, begin = 0;
        for (size_t i = 0; i < n; i++) /* every code point not kept becomes <unk> */
            if (!part->keep[s[i]]) s[i] = UNK_CP;
        while (begin < n) {
            size_t end = n;
            if (split && suffix) { /* SplitIntoWords: a word ends after its '▁' */
                int in_ws = 0;
                for (size_t i = begin; i < n; i++) {
                    int ws = s[i] == SPACE_CP;
                    if (ws) {
                        in_ws = 1;
                    } else if (in_ws) {
                        in_ws = 0;
                        if (allow && i > begin) {
                            end = i;
                            break;
                        }
                    }
                    if (ws && !allow && i + 1 < n) {
                        end = i + 1;
                        break;
                    }
                }
            } else if (split) { /* a word starts at its '▁' (a run of them, when whitespace-only pieces are allowed) */
                int in_ws = 1;
                for (size_t i = begin; i < n; i++) {
                    int ws = s[i] == SPACE_CP;
                    if (i > begin && ws && (!in_ws || !allow)) {
                        end = i;
                        break;
                    }
                    if (in_ws && !ws) in_ws = 0;
                }
            }
            int status;
            if (split) {
                status = count_word(table, hot, s + begin, end - begin, hash_cps(s + begin, end - begin, &c->key));
            } else { /* each sentence a word of its own, counted once, in the order read */
                status = bpe_grow_quiet((void **)&table->refs, &table->cap, table->n + 1, sizeof(WordRef));
                if (status == 0) table->refs[table->n++] = (WordRef){s + begin, end - begin, 1, 0};
            }
            if (status < 0) {
                part->failed = 1;
                free(hot);
                return;
            }
            begin = end;
        }
    }
    free(hot);
}

/* make_words(required: bytes of uint32 code points, split_by_whitespace, treat_whitespace_as_suffix,
   allow_whitespace_only_pieces): every code point not required becomes U+2585; then the words (or whole
   sentences, each counted once) with their counts, in the order first seen (trainer.py prepare).
   subtle: sentencepiece sorts the words (count descending, then bytes); the compiled trainer keeps them in the
   order first seen, since no merge depends on the order: words are independent, a word's places stay left to
   right, and the heap orders by frequency, length and string, which no two symbols share. Python sorts them
   when it lists them (Corpus.all_words). */
static PyObject *corpus_make_words(Corpus *c, PyObject *args) {
    Py_buffer required;
    int split, suffix, allow;
    if (!PyArg_ParseTuple(args, "y*ppp", &required, &split, &suffix, &allow)) return NULL;
    corpus_clear_words(c);
    uint8_t *keep = calloc(N_CODEPOINTS, 1);
    WordPart *parts = calloc(c->n_segs + 1, sizeof(WordPart));
    void **args_ = calloc(c->n_segs + 1, sizeof(void *));
    PyObject *result = NULL;
    if (!keep || !parts || !args_) {
        PyErr_NoMemory();
        goto done;
    }
    for (Py_ssize_t i = 0; i + 4 <= required.len; i += 4) {
        uint32_t cp;
        memcpy(&cp, (const uint8_t *)required.buf + i, 4);
        if (cp < N_CODEPOINTS) keep[cp] = 1;
    }
    for (size_t j = 0; j < c->n_segs; j++) { /* a share of the lines a thread read, split by a thread */
        parts[j] = (WordPart){c, &c->segs[j], keep, split, suffix, allow, {0}, 0};
        args_[j] = &parts[j];
    }
    for (size_t j = 0; j < c->n_segs; j += 16) run_parallel(part_words, args_ + j, (int)(c->n_segs - j < 16 ? c->n_segs - j : 16));
    if (!c->n_segs) { /* no line: no word */
        c->n_words = 0;
        result = PyLong_FromSize_t(0);
        goto done;
    }
    WordTable *table = &parts[0].table;
    for (size_t j = 0; j < c->n_segs; j++)
        if (parts[j].failed) {
            PyErr_NoMemory();
            goto done;
        }
    for (size_t j = 1; j < c->n_segs; j++) { /* the later shares' words into the first's, in order */
        WordTable *other = &parts[j].table;
        for (size_t i = 0; i < other->n; i++) {
            const WordRef *r = &other->refs[i];
            int status = split ? (word_table_add(table, r->p, r->n, r->hash, r->count) < 0 ? -1 : 0)
                               : bpe_grow((void **)&table->refs, &table->cap, table->n + 1, sizeof(WordRef));
            if (status < 0) {
                if (!PyErr_Occurred()) PyErr_NoMemory();
                goto done;
            }
            if (!split) table->refs[table->n++] = *r;
        }
    }
    size_t total = 0;
    for (size_t i = 0; i < table->n; i++) total += table->refs[i].n;
    c->wtext = malloc((total + 1) * sizeof(uint32_t));
    c->wstart = malloc((table->n + 1) * sizeof(size_t));
    c->wcount = malloc((table->n + 1) * sizeof(int64_t));
    if (!c->wtext || !c->wstart || !c->wcount) {
        corpus_clear_words(c);
        PyErr_NoMemory();
        goto done;
    }
    c->wstart[0] = 0;
    for (size_t i = 0; i < table->n; i++) {
        memcpy(c->wtext + c->n_wtext, table->refs[i].p, table->refs[i].n * sizeof(uint32_t));
        c->n_wtext += table->refs[i].n;
        c->wstart[i + 1] = c->n_wtext;
        c->wcount[i] = table->refs[i].count;
    }
    c->n_words = table->n;
    result = PyLong_FromSize_t(table->n);
done:
    for (size_t j = 0; parts && j < c->n_segs; j++) {
        free(parts[j].table.slots);
        free(parts[j].table.refs);
    }
    free(parts);
    free(args_);
    free(keep);
    PyBuffer_Release(&required);
    return result;
}

/* words() -> list of (str, count) */
static PyObject *corpus_words(Corpus *c, PyObject *unused) {
    PyObject *out = PyList_New((Py_ssize_t)c->n_words);
    for (size_t k = 0; out && k < c->n_words; k++) {
        PyObject *item = Py_BuildValue("(NL)", str_of(c->wtext + c->wstart[k], c->wstart[k + 1] - c->wstart[k]), (long long)c->wcount[k]);
        if (!item) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)k, item);
    }
    return out;
}

static PyMethodDef corpus_methods[] = {
    {"add_lines", (PyCFunction)corpus_add_lines, METH_O, "add_lines(lines): normalize, cut and count each line"},
    {"add_files", (PyCFunction)corpus_add_files, METH_VARARGS, "add_files(paths, max_sentence_length, input_sentence_size) -> (kept, empty, too long, reserved)"},
    {"char_counts", (PyCFunction)corpus_char_counts, METH_NOARGS, "char_counts() -> {code point: count}"},
    {"sentences", (PyCFunction)corpus_sentences, METH_NOARGS, "sentences() -> list of str"},
    {"make_words", (PyCFunction)corpus_make_words, METH_VARARGS, "make_words(required, split, suffix, allow) -> number of words"},
    {"words", (PyCFunction)corpus_words, METH_NOARGS, "words() -> list of (word, count)"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject CorpusType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.SpmCorpus",
    .tp_doc = "SpmCorpus(charsmap, add_dummy_prefix, remove_extra_whitespaces, suffix, meta_pieces, delimiter, seed): "
              "the SentencePiece trainer's sentences and words (bpe/sentencepiece/trainer.py prepare).",
    .tp_basicsize = sizeof(Corpus),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)corpus_init,
    .tp_dealloc = (destructor)corpus_dealloc,
    .tp_methods = corpus_methods,
};

/* ---------------------------------------------------------------------------------------------
   the trainer's merge loop (trainer.py Trainer, bpe_model_trainer.cc) */

#define NONE (-1)
#define INVALID (-2) /* a pair that may not be made (why_invalid): remembered, as it never changes */
#define ERASED (-3)  /* a pair symbol dropped from the cache: asking for it again makes a new one */
#define EDGE (-5)    /* in the rows: before and after each word */
#define ANY_SCRIPT (-1)
#define INHERITED 255 /* in the script table: takes the script before it */
#define STOP_NO_CANDIDATES 0

typedef struct {
    int32_t sid;
    uint32_t left, right; /* in the rows, which hold every word: no lookup of where the word starts */
} Position;

typedef struct {
    int32_t left, right; /* a pair's symbols; NONE for a character */
    uint32_t piece;      /* where its code points start in the arena */
    uint32_t char_len;
    int64_t freq;
    Position *pos; /* every place ever added, stale ones too */
    size_t n_pos, cap_pos;
    uint8_t active, pending, stale, unk;
} Sym;

typedef struct {
    int64_t freq;
    uint32_t char_len;
    int32_t sym;
    uint64_t seq;
} Entry;

typedef struct {
    PyObject_HEAD uint8_t *scripts; /* N_CODEPOINTS: the script of each code point, Hiragana/Katakana/U+30FC as Han */
    int max_len, split_digits, split_by_number, split_by_script, split_by_ws, suffix, allow_ws;
    int32_t *rows; /* the words as symbols, NONE where a place was merged into its left neighbour, EDGE around each */
    size_t *row_start; /* word k is rows[row_start[k]:row_start[k + 1] - 1] */
    int64_t *weight;
    size_t n_words;
    Sym *syms;
    size_t n_syms, cap_syms;
    uint32_t *arena;
    size_t n_arena, cap_arena;
    int32_t *char_sym; /* N_CODEPOINTS */
    uint64_t *keys;    /* the pair cache: left << 32 | right -> vals */
    int32_t *vals;
    size_t mask, used;
    Entry *heap;
    size_t n_heap, cap_heap;
    uint64_t pushes;
    int32_t *pending;
    size_t n_pending, cap_pending;
    bpe_bytesmap made; /* the pieces merged so far */
    uint64_t seed;
    uint32_t *scratch; /* a pair's code points while it is checked */
    size_t cap_scratch;
    struct HotPair *hot; /* HOT_PAIRS: the pairs asked for lately, in front of the cache */
} Trainer;

/* A direct-mapped cache in front of the pair cache: the same pairs are asked for again and again (the first
   count asks for every adjacent pair of the corpus), and an entry here is read without the cache's misses. */
#define HOT_PAIRS 16384
struct HotPair {
    uint64_t key; /* left << 32 | right, + 1; 0: empty */
    int32_t val;  /* the symbol, or INVALID */
};

static inline size_t hot_index(uint64_t key) { return (size_t)((key * 0x9E3779B97F4A7C15ULL) >> 50); /* 14 bits */ }

static inline int is_decimal(uint32_t c) { return (c >= 0x30 && c <= 0x39) || (c >= 0xFF10 && c <= 0xFF19); }

/* IsValidSentencePiece (trainer.py why_invalid, without the why) */
static int valid_piece(const Trainer *t, const uint32_t *cps, size_t n) {
    if (n == 0 || n > (size_t)t->max_len) return 0;
    int all_ws = 1;
    for (size_t i = 0; i < n; i++)
        if (cps[i] != SPACE_CP) all_ws = 0;
    int prev = ANY_SCRIPT;
    for (size_t pos = 0; pos < n; pos++) {
        uint32_t c = cps[pos];
        if (c == UNK_CP || c == 0 || c == BOUNDARY_CP || c == 0x20 || !valid_cp(c)) return 0;
        if (c == SPACE_CP) {
            if (t->allow_ws && all_ws) continue;
            int last = pos == n - 1;
            if (t->suffix) {
                if ((t->split_by_ws && !last) || (!t->split_by_ws && !last && pos == 0)) return 0;
            } else if ((t->split_by_ws && pos > 0) || (!t->split_by_ws && pos > 0 && last)) {
                return 0;
            }
            continue;
        }
        int s = t->scripts[c];
        if (s == INHERITED) s = prev;
        if (!t->split_by_number && is_decimal(c)) s = ANY_SCRIPT;
        if (t->split_digits && is_decimal(c) && n > 1) return 0;
        if (t->split_by_script && s != ANY_SCRIPT && prev != ANY_SCRIPT && prev != s) return 0;
        prev = s;
    }
    return 1;
}

/* a new symbol with the given code points; its index, or -1 when out of memory */
static int32_t new_sym(Trainer *t, int32_t left, int32_t right, const uint32_t *cps, size_t n) {
    if (t->n_syms >= INT32_MAX || bpe_grow((void **)&t->syms, &t->cap_syms, t->n_syms + 1, sizeof(Sym)) < 0 ||
        bpe_grow((void **)&t->arena, &t->cap_arena, t->n_arena + n, sizeof(uint32_t)) < 0)
        return -1;
    if (t->n_arena + n > UINT32_MAX) {
        PyErr_NoMemory();
        return -1;
    }
    Sym *s = &t->syms[t->n_syms];
    memset(s, 0, sizeof(*s));
    s->left = left;
    s->right = right;
    s->piece = (uint32_t)t->n_arena;
    s->char_len = (uint32_t)n;
    s->active = 1;
    s->stale = 1;
    s->unk = n == 1 && cps[0] == UNK_CP;
    memcpy(t->arena + t->n_arena, cps, n * sizeof(uint32_t));
    t->n_arena += n;
    return (int32_t)t->n_syms++;
}

/* GetCharSymbol */
static int32_t char_symbol(Trainer *t, uint32_t c) {
    if (t->char_sym[c] >= 0) return t->char_sym[c];
    int32_t s = new_sym(t, NONE, NONE, &c, 1);
    if (s >= 0) t->char_sym[c] = s;
    return s;
}

static int cache_grow(Trainer *t) {
    size_t size = t->mask ? (t->mask + 1) * 2 : 1 << 16;
    uint64_t *keys = malloc(size * sizeof(uint64_t));
    int32_t *vals = malloc(size * sizeof(int32_t));
    if (!keys || !vals) {
        free(keys);
        free(vals);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < size; i++) vals[i] = NONE;
    for (size_t k = 0; t->mask && k <= t->mask; k++) {
        if (t->vals[k] == NONE) continue;
        size_t i = (size_t)mix(t->keys[k] ^ t->seed) & (size - 1);
        while (vals[i] != NONE) i = (i + 1) & (size - 1);
        keys[i] = t->keys[k];
        vals[i] = t->vals[k];
    }
    free(t->keys);
    free(t->vals);
    t->keys = keys;
    t->vals = vals;
    t->mask = size - 1;
    return 0;
}

/* the cache's slot for key: the one holding it, or the empty one where it would go */
static inline size_t cache_slot(const Trainer *t, uint64_t key) {
    size_t i = (size_t)mix(key ^ t->seed) & t->mask;
    while (t->vals[i] != NONE && t->keys[i] != key) i = (i + 1) & t->mask;
    return i;
}

/* GetPairSymbol: the pair's symbol, made when first asked; NONE if it may not be made; -4 when out of memory */
static int32_t pair_symbol(Trainer *t, int32_t left, int32_t right) {
    if (left < 0 || right < 0 || t->syms[left].unk || t->syms[right].unk) return NONE;
    uint64_t key = (uint64_t)(uint32_t)left << 32 | (uint32_t)right;
    struct HotPair *hot = &t->hot[hot_index(key)];
    if (hot->key == key + 1) return hot->val >= 0 ? hot->val : NONE;
    size_t i = cache_slot(t, key);
    int32_t v = t->vals[i];
    if (v >= 0 || v == INVALID) {
        hot->key = key + 1;
        hot->val = v;
        return v >= 0 ? v : NONE;
    }
    size_t n = (size_t)t->syms[left].char_len + t->syms[right].char_len;
    int valid = 0;
    if (n <= (size_t)t->max_len) {
        if (bpe_grow((void **)&t->scratch, &t->cap_scratch, n, sizeof(uint32_t)) < 0) return -4;
        memcpy(t->scratch, t->arena + t->syms[left].piece, t->syms[left].char_len * sizeof(uint32_t));
        memcpy(t->scratch + t->syms[left].char_len, t->arena + t->syms[right].piece, t->syms[right].char_len * sizeof(uint32_t));
        valid = valid_piece(t, t->scratch, n);
    }
    int32_t made = INVALID;
    if (valid) {
        made = new_sym(t, left, right, t->scratch, n);
        if (made < 0) return -4;
        t->syms[made].char_len = (uint32_t)n;
    }
    if (v == NONE) { /* a new key: count it, growing the table first if it is half full */
        if ((t->used + 1) * 2 > t->mask + 1) {
            if (cache_grow(t) < 0) return -4;
            i = cache_slot(t, key);
        }
        t->used++;
        t->keys[i] = key;
    }
    t->vals[i] = made;
    hot = &t->hot[hot_index(key)];
    hot->key = key + 1;
    hot->val = made;
    return made >= 0 ? made : NONE;
}

static inline int entry_better(const Trainer *t, const Entry *a, const Entry *b) {
    if (a->freq != b->freq) return a->freq > b->freq;
    if (a->char_len != b->char_len) return a->char_len < b->char_len;
    const uint32_t *x = t->arena + t->syms[a->sym].piece, *y = t->arena + t->syms[b->sym].piece;
    for (uint32_t k = 0; k < a->char_len; k++)
        if (x[k] != y[k]) return x[k] < y[k];
    return a->seq < b->seq;
}

static int heap_push_sym(Trainer *t, int32_t sym) {
    if (bpe_grow((void **)&t->heap, &t->cap_heap, t->n_heap + 1, sizeof(Entry)) < 0) return -1;
    Entry e = {t->syms[sym].freq, t->syms[sym].char_len, sym, ++t->pushes};
    size_t i = t->n_heap++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!entry_better(t, &e, &t->heap[parent])) break;
        t->heap[i] = t->heap[parent];
        i = parent;
    }
    t->heap[i] = e;
    return 0;
}

static void heap_pop_top(Trainer *t) {
    Entry last = t->heap[--t->n_heap];
    size_t i = 0, n = t->n_heap;
    if (!n) return;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && entry_better(t, &t->heap[child + 1], &t->heap[child])) child++;
        if (!entry_better(t, &t->heap[child], &last)) break;
        t->heap[i] = t->heap[child];
        i = child;
    }
    t->heap[i] = last;
}

static inline void recompute(Sym *s) { /* ComputeFreq */
    if (!s->stale) return;
    if (s->freq == 0) {
        free(s->pos);
        s->pos = NULL;
        s->n_pos = s->cap_pos = 0;
    }
    s->stale = 0;
}

static int queue_sym(Trainer *t, int32_t sym) {
    if (t->syms[sym].pending) return 0;
    if (bpe_grow((void **)&t->pending, &t->cap_pending, t->n_pending + 1, sizeof(int32_t)) < 0) return -1;
    t->syms[sym].pending = 1;
    t->pending[t->n_pending++] = sym;
    return 0;
}

static int flush_pending(Trainer *t) {
    for (size_t k = 0; k < t->n_pending; k++) {
        Sym *s = &t->syms[t->pending[k]];
        s->pending = 0;
        if (!s->active) continue;
        recompute(s);
        if (heap_push_sym(t, t->pending[k]) < 0) return -1;
    }
    t->n_pending = 0;
    return 0;
}

/* the symbol of the best current entry, left on the heap, or NONE; -4 when out of memory */
static int32_t clean_top(Trainer *t) {
    while (t->n_heap) {
        Entry top = t->heap[0];
        Sym *s = &t->syms[top.sym];
        if (!s->active) {
            heap_pop_top(t);
        } else if (s->stale) {
            heap_pop_top(t);
            recompute(s);
            if (heap_push_sym(t, top.sym) < 0) return -4;
        } else if (top.freq != s->freq) {
            heap_pop_top(t);
        } else {
            return top.sym;
        }
    }
    return NONE;
}

static void drop_sym(Trainer *t, int32_t sym) {
    Sym *s = &t->syms[sym];
    if (s->left >= 0) {
        uint64_t key = (uint64_t)(uint32_t)s->left << 32 | (uint32_t)s->right;
        size_t i = cache_slot(t, key);
        if (t->vals[i] == sym) t->vals[i] = ERASED;
        struct HotPair *hot = &t->hot[hot_index(key)];
        if (hot->key == key + 1) hot->key = 0;
    }
    s->active = 0;
    free(s->pos);
    s->pos = NULL;
    s->n_pos = s->cap_pos = 0;
}

static int add_position(Sym *s, int32_t sid, uint32_t left, uint32_t right) {
    if (bpe_grow((void **)&s->pos, &s->cap_pos, s->n_pos + 1, sizeof(Position)) < 0) return -1;
    s->pos[s->n_pos++] = (Position){sid, left, right};
    return 0;
}

/* ResetFreq and AddNewPair, on places in the rows (-1: no neighbour there): -1 when out of memory */
static int lose(Trainer *t, int32_t sid, int64_t left, int64_t right, int32_t best) {
    if (left < 0 || right < 0) return 0;
    int32_t sym = pair_symbol(t, t->rows[left], t->rows[right]);
    if (sym == -4) return -1;
    if (sym >= 0 && sym != best) {
        t->syms[sym].freq -= t->weight[sid];
        t->syms[sym].stale = 1;
    }
    return 0;
}

static int gain(Trainer *t, int32_t sid, int64_t left, int64_t right) {
    if (left < 0 || right < 0) return 0;
    int32_t sym = pair_symbol(t, t->rows[left], t->rows[right]);
    if (sym == -4) return -1;
    if (sym < 0) return 0;
    if (add_position(&t->syms[sym], sid, (uint32_t)left, (uint32_t)right) < 0) return -1;
    t->syms[sym].freq += t->weight[sid];
    return queue_sym(t, sym);
}

/* AcceptSymbol: the number of places rewritten, or -1 when out of memory */
static Py_ssize_t accept_sym(Trainer *t, int32_t best) {
    Py_ssize_t done = 0;
    size_t n = t->syms[best].n_pos;
    int32_t a = t->syms[best].left, b = t->syms[best].right;
    int32_t *rows = t->rows;
    for (size_t k = 0; k < n; k++) {
        /* most of the time goes to reading rows[p.left] (a symbol's places are spread over the corpus): ask for the
           row of a place a few ahead now, so that it is in the cache when its turn comes */
        if (k + 16 < n) __builtin_prefetch(&rows[t->syms[best].pos[k + 16].left]);
        Position p = t->syms[best].pos[k]; /* subtle: re-read, the symbol table may have moved */
        if (rows[p.left] != a || rows[p.right] != b) continue; /* a place an earlier merge changed */
        /* the neighbours: skip the places merged away; the EDGE around the word stops the search */
        int64_t after = (int64_t)p.right + 1, before = (int64_t)p.left - 1;
        while (rows[after] == NONE) after++;
        while (rows[before] == NONE) before--;
        if (rows[after] == EDGE) after = -1;
        if (rows[before] == EDGE) before = -1;
        if (lose(t, p.sid, before, p.left, best) < 0 || lose(t, p.sid, p.right, after, best) < 0) return -1;
        rows[p.left] = best;
        rows[p.right] = NONE;
        if (gain(t, p.sid, before, p.left) < 0 || gain(t, p.sid, p.left, after) < 0) return -1;
        done++;
    }
    drop_sym(t, best);
    return done;
}

static void trainer_free(Trainer *t) {
    for (size_t k = 0; k < t->n_syms; k++) free(t->syms[k].pos);
    free(t->syms);
    free(t->scripts);
    free(t->rows);
    free(t->row_start);
    free(t->weight);
    free(t->arena);
    free(t->char_sym);
    free(t->keys);
    free(t->vals);
    free(t->heap);
    free(t->pending);
    free(t->scratch);
    free(t->hot);
    if (t->made.table) bpe_bytesmap_free(&t->made);
    uint8_t *keep = (uint8_t *)t + sizeof(PyObject);
    memset(keep, 0, sizeof(Trainer) - sizeof(PyObject));
}

static void trainer_dealloc(Trainer *t) {
    trainer_free(t);
    Py_TYPE(t)->tp_free((PyObject *)t);
}

/* the words from an SpmCorpus (its made words) or a sequence of (str, count) */
static int load_words(Trainer *t, PyObject *words) {
    if (PyObject_TypeCheck(words, &CorpusType)) {
        Corpus *c = (Corpus *)words;
        if (c->n_wtext + c->n_words >= INT32_MAX) goto too_big;
        t->n_words = c->n_words;
        t->rows = malloc((c->n_wtext + c->n_words + 2) * sizeof(int32_t));
        t->row_start = malloc((c->n_words + 1) * sizeof(size_t));
        t->weight = malloc((c->n_words + 1) * sizeof(int64_t));
        if (!t->rows || !t->row_start || !t->weight) goto no_memory;
        if (c->n_words) memcpy(t->weight, c->wcount, c->n_words * sizeof(int64_t));
        size_t at = 0;
        t->rows[at++] = EDGE;
        for (size_t k = 0; k < c->n_words; k++) {
            t->row_start[k] = at;
            for (size_t i = c->wstart[k]; i < c->wstart[k + 1]; i++) {
                int32_t s = char_symbol(t, c->wtext[i]);
                if (s < 0) return -1;
                t->rows[at++] = s;
            }
            t->rows[at++] = EDGE;
        }
        t->row_start[c->n_words] = at;
        return 0;
    }
    PyObject *fast = PySequence_Fast(words, "words must be an SpmCorpus or a sequence of (str, count)");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    size_t at = 0, cap = 0;
    t->n_words = (size_t)n;
    t->row_start = malloc(((size_t)n + 1) * sizeof(size_t));
    t->weight = malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!t->row_start || !t->weight || bpe_grow((void **)&t->rows, &cap, 1, sizeof(int32_t)) < 0) {
        Py_DECREF(fast);
        goto no_memory;
    }
    t->rows[at++] = EDGE;
    for (Py_ssize_t k = 0; k < n; k++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, k), *word;
        long long count;
        if (!PyArg_ParseTuple(item, "UL", &word, &count)) {
            Py_DECREF(fast);
            return -1;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(word);
        if (at + (size_t)len + 1 >= INT32_MAX) {
            Py_DECREF(fast);
            goto too_big;
        }
        if (bpe_grow((void **)&t->rows, &cap, at + (size_t)len + 1, sizeof(int32_t)) < 0) {
            Py_DECREF(fast);
            return -1;
        }
        t->row_start[k] = at;
        for (Py_ssize_t i = 0; i < len; i++) {
            int32_t s = char_symbol(t, (uint32_t)PyUnicode_READ_CHAR(word, i));
            if (s < 0) {
                Py_DECREF(fast);
                return -1;
            }
            t->rows[at++] = s;
        }
        t->rows[at++] = EDGE;
        t->weight[k] = count;
    }
    t->row_start[n] = at;
    Py_DECREF(fast);
    return 0;
too_big:
    PyErr_SetString(PyExc_ValueError, "The corpus is too large for the compiled SentencePiece trainer (2**31 characters).");
    return -1;
no_memory:
    PyErr_NoMemory();
    return -1;
}

/* SpmTrainer(words, scripts, max_sentencepiece_length, split_digits, split_by_number, split_by_unicode_script,
   split_by_whitespace, treat_whitespace_as_suffix, allow_whitespace_only_pieces, seed) */
static int trainer_init(Trainer *t, PyObject *args, PyObject *kwargs) {
    PyObject *words;
    Py_buffer scripts;
    unsigned long long seed;
    int max_len, digits, number, script, ws, suffix, allow;
    if (!PyArg_ParseTuple(args, "Oy*ippppppK", &words, &scripts, &max_len, &digits, &number, &script, &ws, &suffix, &allow, &seed)) return -1;
    trainer_free(t);
    int status = -1;
    if ((size_t)scripts.len != N_CODEPOINTS) {
        PyErr_SetString(PyExc_ValueError, "scripts must hold one byte per code point (0x110000)");
        goto done;
    }
    t->max_len = max_len;
    t->split_digits = digits;
    t->split_by_number = number;
    t->split_by_script = script;
    t->split_by_ws = ws;
    t->suffix = suffix;
    t->allow_ws = allow;
    t->seed = seed;
    t->scripts = malloc(N_CODEPOINTS);
    t->char_sym = malloc(N_CODEPOINTS * sizeof(int32_t));
    t->hot = calloc(HOT_PAIRS, sizeof(struct HotPair));
    bpe_hashkey key;
    bpe_key_init(&key, seed, 0);
    if (!t->scripts || !t->char_sym || !t->hot || bpe_bytesmap_init(&t->made, &key) < 0 || cache_grow(t) < 0) {
        if (!PyErr_Occurred()) PyErr_NoMemory();
        goto done;
    }
    memcpy(t->scripts, scripts.buf, N_CODEPOINTS);
    memset(t->char_sym, 0xFF, N_CODEPOINTS * sizeof(int32_t));
    if (load_words(t, words) < 0) goto done;
    /* every adjacent pair once, in word order: the valid ones are candidates. Two passes: the first makes the
       symbols (in the order first seen) and counts their places, the second lists the places into arrays made
       at their size (a realloc a place was a third of the time) */
    size_t n_rows = t->row_start[t->n_words];
    int32_t *at = malloc((n_rows + 1) * sizeof(int32_t)); /* the pair symbol starting at each place, or NONE */
    if (!at) {
        PyErr_NoMemory();
        goto done;
    }
    for (size_t sid = 0; sid < t->n_words; sid++) {
        size_t begin = t->row_start[sid], end = t->row_start[sid + 1] - 1; /* the EDGE after the word */
        at[begin - 1] = NONE;
        for (size_t i = begin + 1; i < end; i++) {
            int32_t left = t->rows[i - 1], right = t->rows[i];
            at[i - 1] = NONE;
            if (t->syms[left].unk || t->syms[right].unk) continue;
            int32_t sym = pair_symbol(t, left, right);
            if (sym == -4) {
                free(at);
                goto done;
            }
            if (sym < 0) continue;
            at[i - 1] = sym;
            t->syms[sym].cap_pos++; /* counted here, allocated below */
            t->syms[sym].freq += t->weight[sid];
            if (queue_sym(t, sym) < 0) {
                free(at);
                goto done;
            }
        }
        at[end - 1] = NONE;
    }
    for (size_t k = 0; k < t->n_syms; k++) {
        Sym *s = &t->syms[k];
        if (s->cap_pos && !(s->pos = malloc(s->cap_pos * sizeof(Position)))) {
            s->cap_pos = 0; /* trainer_free frees what was made */
            free(at);
            PyErr_NoMemory();
            goto done;
        }
    }
    for (size_t sid = 0; sid < t->n_words; sid++) {
        size_t begin = t->row_start[sid], end = t->row_start[sid + 1] - 1;
        for (size_t i = begin; i + 1 < end; i++)
            if (at[i] >= 0) {
                Sym *s = &t->syms[at[i]];
                s->pos[s->n_pos++] = (Position){(int32_t)sid, (uint32_t)i, (uint32_t)i + 1};
            }
    }
    free(at);
    if (flush_pending(t) < 0) goto done;
    status = 0;
done:
    PyBuffer_Release(&scripts);
    return status;
}

static PyObject *piece_str(const Trainer *t, int32_t sym) { return str_of(t->arena + t->syms[sym].piece, t->syms[sym].char_len); }

/* step() -> (left, right, frequency, runner-up left or None, runner-up right or None, runner-up frequency,
   places rewritten, (pieces dropped as already made, ...)), or 0 when no candidate is left */
static PyObject *trainer_step(Trainer *t, PyObject *unused) {
    if (!t->syms) {
        PyErr_SetString(PyExc_TypeError, "SpmTrainer was not set up");
        return NULL;
    }
    PyObject *dropped = PyList_New(0);
    if (!dropped) return NULL;
    for (;;) {
        int32_t best = clean_top(t);
        if (best == -4) goto fail;
        if (best < 0) {
            Py_DECREF(dropped);
            return PyLong_FromLong(STOP_NO_CANDIDATES);
        }
        heap_pop_top(t);
        const uint8_t *key = (const uint8_t *)(t->arena + t->syms[best].piece);
        size_t key_len = t->syms[best].char_len * sizeof(uint32_t);
        uint64_t hash = bpe_hash(key, key_len, &t->made.key);
        if (bpe_bytesmap_get(&t->made, key, key_len, hash)) { /* its string is a piece already: no merge */
            PyObject *piece = piece_str(t, best);
            if (!piece || PyList_Append(dropped, piece) < 0) {
                Py_XDECREF(piece);
                goto fail;
            }
            Py_DECREF(piece);
            drop_sym(t, best);
            continue;
        }
        if (!bpe_bytesmap_add(&t->made, key, key_len, hash)) {
            PyErr_NoMemory();
            goto fail;
        }
        int64_t freq = t->syms[best].freq;
        int32_t runner = clean_top(t);
        if (runner == -4) goto fail;
        int64_t runner_freq = runner >= 0 ? t->syms[runner].freq : 0;
        PyObject *left = piece_str(t, t->syms[best].left), *right = piece_str(t, t->syms[best].right);
        PyObject *runner_left = runner >= 0 ? piece_str(t, t->syms[runner].left) : Py_NewRef(Py_None);
        PyObject *runner_right = runner >= 0 ? piece_str(t, t->syms[runner].right) : Py_NewRef(Py_None);
        Py_ssize_t done = accept_sym(t, best);
        if (done < 0 || flush_pending(t) < 0 || !left || !right || !runner_left || !runner_right) {
            if (!PyErr_Occurred()) PyErr_NoMemory();
            Py_XDECREF(left);
            Py_XDECREF(right);
            Py_XDECREF(runner_left);
            Py_XDECREF(runner_right);
            goto fail;
        }
        PyObject *drops = PyList_AsTuple(dropped);
        Py_DECREF(dropped);
        if (!drops) {
            Py_DECREF(left);
            Py_DECREF(right);
            Py_DECREF(runner_left);
            Py_DECREF(runner_right);
            return NULL;
        }
        return Py_BuildValue("(NNLNNLnN)", left, right, (long long)freq, runner_left, runner_right, (long long)runner_freq, done, drops);
    }
fail:
    Py_DECREF(dropped);
    return NULL;
}

static PyMethodDef trainer_methods[] = {
    {"step", (PyCFunction)trainer_step, METH_NOARGS, "step() -> one merge's event tuple, or 0 when no candidate is left"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject TrainerType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.SpmTrainer",
    .tp_doc = "SpmTrainer(words, scripts, max_len, split_digits, split_by_number, split_by_script, split_by_whitespace, suffix, "
              "allow_whitespace_only, seed): the SentencePiece BPE merge loop (bpe/sentencepiece/trainer.py).",
    .tp_basicsize = sizeof(Trainer),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)trainer_init,
    .tp_dealloc = (destructor)trainer_dealloc,
    .tp_methods = trainer_methods,
};

/* ---------------------------------------------------------------------------------------------
   sentencepiece's encoder (encoder.py Encoder.encode) */

typedef struct {
    int64_t key; /* the piece's score, as SymbolPairComparator orders it */
    uint32_t left, right, size;
} Agenda;

typedef struct {
    uint32_t start, len; /* bytes of the normalized text; len 0: merged into its left neighbour */
    int32_t prev, next;
    uint8_t frozen;
} Symbol;

typedef struct {
    uint32_t start, len;
    int32_t id;
} Out;

typedef struct {
    PyObject_HEAD Norm norm;
    bpe_bytesmap ids; /* piece -> id + 1 in value */
    uint8_t *types;
    int64_t *keys;
    Py_ssize_t n_pieces;
    int32_t unk_id, bos_id, eos_id;
    int byte_fallback;
    int32_t byte_ids[256];
    Buf text; /* the normalized text of the call in progress */
    Symbol *symbols;
    size_t cap_symbols;
    Agenda *agenda;
    size_t n_agenda, cap_agenda;
    bpe_bytesmap unused; /* rev_merge: an UNUSED piece -> the index of its halves in halves */
    uint32_t *halves;    /* 4 a piece: left start, left length, right start, right length */
    size_t n_halves, cap_halves;
    Out *out;
    size_t n_out, cap_out;
} SpmEncoder;

enum { T_NORMAL = 1, T_UNKNOWN = 2, T_CONTROL = 3, T_USER = 4, T_UNUSED = 5, T_BYTE = 6 };

static void spm_encoder_dealloc(SpmEncoder *e) {
    norm_free(&e->norm);
    if (e->ids.table) bpe_bytesmap_free(&e->ids);
    if (e->unused.table) bpe_bytesmap_free(&e->unused);
    free(e->types);
    free(e->keys);
    free(e->text.p);
    free(e->symbols);
    free(e->agenda);
    free(e->halves);
    free(e->out);
    Py_TYPE(e)->tp_free((PyObject *)e);
}

/* SpmEncoder(pieces: [(bytes, id)], types: bytes, keys: [int], charsmap, add_dummy_prefix, remove_extra_whitespaces,
   escape_whitespaces, treat_whitespace_as_suffix, user_defined, unk_id, bos_id, eos_id, byte_fallback, byte_ids, seed) */
static int spm_encoder_init(SpmEncoder *e, PyObject *args, PyObject *kwargs) {
    PyObject *pieces, *keys, *user, *byte_ids;
    Py_buffer types, charsmap;
    int dummy, extra, escape, suffix, fallback, unk_id, bos_id, eos_id;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "Oy*Oy*ppppOiiipOK", &pieces, &types, &keys, &charsmap, &dummy, &extra, &escape, &suffix, &user, &unk_id,
                          &bos_id, &eos_id, &fallback, &byte_ids, &seed))
        return -1;
    int status = -1;
    if (e->types) {
        PyErr_SetString(PyExc_TypeError, "SpmEncoder is set up once");
        goto done;
    }
    if (norm_init(&e->norm, &charsmap, dummy, extra, escape, suffix, user) < 0) goto done;
    e->n_pieces = types.len;
    e->types = malloc((size_t)types.len + 1);
    e->keys = malloc(((size_t)types.len + 1) * sizeof(int64_t));
    bpe_hashkey key;
    bpe_key_init(&key, seed, 0);
    if (!e->types || !e->keys || bpe_bytesmap_init(&e->ids, &key) < 0 || bpe_bytesmap_init(&e->unused, &key) < 0) {
        PyErr_NoMemory();
        goto done;
    }
    memcpy(e->types, types.buf, (size_t)types.len);
    if (!PyList_Check(keys) || PyList_GET_SIZE(keys) != types.len || !PyList_Check(byte_ids) || PyList_GET_SIZE(byte_ids) != 256) {
        PyErr_SetString(PyExc_ValueError, "keys must list one score key a piece, byte_ids 256 ids");
        goto done;
    }
    for (Py_ssize_t i = 0; i < types.len; i++) {
        e->keys[i] = PyLong_AsLongLong(PyList_GET_ITEM(keys, i));
        if (PyErr_Occurred()) goto done;
    }
    for (int b = 0; b < 256; b++) {
        e->byte_ids[b] = (int32_t)PyLong_AsLong(PyList_GET_ITEM(byte_ids, b));
        if (PyErr_Occurred()) goto done;
    }
    PyObject *fast = PySequence_Fast(pieces, "pieces must be a sequence of (bytes, id)");
    if (!fast) goto done;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
        const char *data;
        Py_ssize_t len;
        int id;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, k), "y#i", &data, &len, &id) || id < 0 || id >= types.len) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a piece's id is outside the vocabulary");
            Py_DECREF(fast);
            goto done;
        }
        uint64_t hash = bpe_hash((const uint8_t *)data, (size_t)len, &e->ids.key);
        bpe_entry *entry = bpe_bytesmap_put(&e->ids, (const uint8_t *)data, (size_t)len, hash);
        if (!entry) {
            Py_DECREF(fast);
            PyErr_NoMemory();
            goto done;
        }
        if (!entry->value) entry->value = (size_t)id + 1; /* the first id of a piece listed twice */
    }
    Py_DECREF(fast);
    e->unk_id = unk_id;
    e->bos_id = bos_id;
    e->eos_id = eos_id;
    e->byte_fallback = fallback;
    status = 0;
done:
    PyBuffer_Release(&types);
    PyBuffer_Release(&charsmap);
    return status;
}

static inline int32_t piece_id(const SpmEncoder *e, const uint8_t *p, size_t n) {
    bpe_entry *entry = bpe_bytesmap_get(&e->ids, p, n, bpe_hash(p, n, &e->ids.key));
    return entry ? (int32_t)entry->value - 1 : -1;
}

static inline int mergeable(const SpmEncoder *e, int32_t id) {
    return id >= 0 && (e->types[id] == T_NORMAL || e->types[id] == T_USER || e->types[id] == T_UNUSED);
}

static inline int agenda_better(const Agenda *a, const Agenda *b) { /* higher score, then the leftmost */
    return a->key != b->key ? a->key > b->key : a->left < b->left;
}

static int agenda_push(SpmEncoder *e, Agenda item) {
    if (bpe_grow((void **)&e->agenda, &e->cap_agenda, e->n_agenda + 1, sizeof(Agenda)) < 0) return -1;
    size_t i = e->n_agenda++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!agenda_better(&item, &e->agenda[parent])) break;
        e->agenda[i] = e->agenda[parent];
        i = parent;
    }
    e->agenda[i] = item;
    return 0;
}

static Agenda agenda_pop(SpmEncoder *e) {
    Agenda top = e->agenda[0], last = e->agenda[--e->n_agenda];
    size_t i = 0, n = e->n_agenda;
    if (n) {
        for (;;) {
            size_t child = 2 * i + 1;
            if (child >= n) break;
            if (child + 1 < n && agenda_better(&e->agenda[child + 1], &e->agenda[child])) child++;
            if (!agenda_better(&e->agenda[child], &last)) break;
            e->agenda[i] = e->agenda[child];
            i = child;
        }
        e->agenda[i] = last;
    }
    return top;
}

/* MaybeAddNewSymbolPair: -1 when out of memory */
static int maybe_push(SpmEncoder *e, int32_t left, int32_t right) {
    if (left < 0 || right < 0) return 0;
    const Symbol *l = &e->symbols[left], *r = &e->symbols[right];
    if (l->frozen || r->frozen) return 0;
    const uint8_t *p = e->text.p + l->start;
    size_t size = (size_t)l->len + r->len;
    int32_t id = piece_id(e, p, size);
    if (!mergeable(e, id)) return 0;
    if (agenda_push(e, (Agenda){e->keys[id], (uint32_t)left, (uint32_t)right, (uint32_t)size}) < 0) return -1;
    if (e->types[id] == T_UNUSED) { /* rev_merge[piece] = (left, right): the last push wins */
        uint64_t hash = bpe_hash(p, size, &e->unused.key);
        bpe_entry *entry = bpe_bytesmap_get(&e->unused, p, size, hash);
        if (!entry) {
            if (bpe_grow((void **)&e->halves, &e->cap_halves, e->n_halves + 4, sizeof(uint32_t)) < 0) return -1;
            entry = bpe_bytesmap_add(&e->unused, p, size, hash);
            if (!entry) return -1;
            entry->value = e->n_halves;
            e->n_halves += 4;
        }
        uint32_t *h = e->halves + entry->value;
        h[0] = l->start;
        h[1] = l->len;
        h[2] = r->start;
        h[3] = r->len;
    }
    return 0;
}

static int emit(SpmEncoder *e, uint32_t start, uint32_t len, int32_t id) {
    if (bpe_grow((void **)&e->out, &e->cap_out, e->n_out + 1, sizeof(Out)) < 0) return -1;
    e->out[e->n_out++] = (Out){start, len, id};
    return 0;
}

/* resegment: an UNUSED piece split into the halves that made it, recursively */
static int resegment(SpmEncoder *e, uint32_t start, uint32_t len, int depth) {
    const uint8_t *p = e->text.p + start;
    int32_t id = piece_id(e, p, len);
    if (depth > 100) return emit(e, start, len, id);
    if (id == e->unk_id || !mergeable(e, id)) return emit(e, start, len, e->unk_id);
    if (e->types[id] != T_UNUSED) return emit(e, start, len, id);
    bpe_entry *entry = bpe_bytesmap_get(&e->unused, p, len, bpe_hash(p, len, &e->unused.key));
    if (!entry) return emit(e, start, len, e->unk_id);
    uint32_t h[4];
    memcpy(h, e->halves + entry->value, sizeof(h));
    if (resegment(e, h[0], h[1], depth + 1) < 0) return -1;
    return resegment(e, h[2], h[3], depth + 1);
}

/* SampleEncode: the normalized text in e->text merged into e->out; -1 when out of memory */
static int spm_merge(SpmEncoder *e) {
    size_t n_text = e->text.n, n = 0, pos = 0;
    e->n_out = e->n_agenda = e->n_halves = 0;
    if (e->unused.used) bpe_bytesmap_clear(&e->unused); /* only a model with UNUSED pieces fills it */
    if (n_text >= INT32_MAX) return -1;
    if (bpe_grow((void **)&e->symbols, &e->cap_symbols, n_text + 1, sizeof(Symbol)) < 0) return -1;
    while (pos < n_text) { /* characters, and user-defined pieces whole and frozen */
        size_t k = strings_match(&e->norm.user, e->text.p + pos, n_text - pos);
        int frozen = k > 0;
        if (!k) {
            static const uint8_t lengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4}; /* OneCharLen */
            k = lengths[e->text.p[pos] >> 4];
            if (k > n_text - pos) k = n_text - pos;
        }
        e->symbols[n] = (Symbol){(uint32_t)pos, (uint32_t)k, (int32_t)n - 1, (int32_t)n + 1, (uint8_t)frozen};
        n++;
        pos += k;
    }
    if (!n) return 0;
    e->symbols[n - 1].next = -1;
    for (size_t i = 0; i + 1 < n; i++)
        if (maybe_push(e, (int32_t)i, (int32_t)i + 1) < 0) return -1;
    while (e->n_agenda) {
        Agenda top = agenda_pop(e);
        Symbol *l = &e->symbols[top.left], *r = &e->symbols[top.right];
        if (!l->len || !r->len || l->len + r->len != top.size) continue; /* stale */
        l->len += r->len;
        l->next = r->next;
        if (r->next >= 0) e->symbols[r->next].prev = (int32_t)top.left;
        r->len = 0;
        if (maybe_push(e, l->prev, (int32_t)top.left) < 0 || maybe_push(e, (int32_t)top.left, e->symbols[top.left].next) < 0) return -1;
    }
    for (int32_t i = 0; i != -1; i = e->symbols[i].next)
        if (resegment(e, e->symbols[i].start, e->symbols[i].len, 0) < 0) return -1;
    return 0;
}

/* encode(data: bytes, add_bos, add_eos) -> list of ids */
static PyObject *spm_encoder_encode(SpmEncoder *e, PyObject *args) {
    Py_buffer data;
    int bos = 0, eos = 0;
    if (!PyArg_ParseTuple(args, "y*|pp", &data, &bos, &eos)) return NULL;
    if (!e->types) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_TypeError, "SpmEncoder was not set up");
        return NULL;
    }
    e->text.n = 0;
    int status = norm_run(&e->norm, data.buf, (size_t)data.len, &e->text);
    PyBuffer_Release(&data);
    if (status < 0 || spm_merge(e) < 0) return PyErr_NoMemory();
    /* the ids: count them, then fill a list of that size */
    size_t n = (bos && e->bos_id >= 0) + (eos && e->eos_id >= 0);
    int previous_unknown = 0;
    for (size_t k = 0; k < e->n_out; k++) {
        int32_t id = e->out[k].id;
        int unknown = id == e->unk_id || (id >= 0 && e->types[id] == T_UNKNOWN);
        if (unknown && e->byte_fallback)
            n += e->out[k].len;
        else if (!(unknown && previous_unknown)) /* a run of unknown symbols is one <unk> */
            n++;
        previous_unknown = unknown;
    }
    PyObject *ids = PyList_New((Py_ssize_t)n);
    if (!ids) return NULL;
    Py_ssize_t at = 0;
#define PUT(value)                                     \
    do {                                               \
        PyObject *v_ = PyLong_FromLong(value);         \
        if (!v_) {                                     \
            Py_DECREF(ids);                            \
            return NULL;                               \
        }                                              \
        PyList_SET_ITEM(ids, at++, v_);                \
    } while (0)
    if (bos && e->bos_id >= 0) PUT(e->bos_id);
    previous_unknown = 0;
    for (size_t k = 0; k < e->n_out; k++) {
        int32_t id = e->out[k].id;
        int unknown = id == e->unk_id || (id >= 0 && e->types[id] == T_UNKNOWN);
        if (unknown && e->byte_fallback) {
            for (uint32_t b = 0; b < e->out[k].len; b++) PUT(e->byte_ids[e->text.p[e->out[k].start + b]]);
        } else if (!(unknown && previous_unknown)) {
            PUT(id);
        }
        previous_unknown = unknown;
    }
    if (eos && e->eos_id >= 0) PUT(e->eos_id);
#undef PUT
    return ids;
}

static PyMethodDef spm_encoder_methods[] = {
    {"encode", (PyCFunction)spm_encoder_encode, METH_VARARGS, "encode(data, add_bos=False, add_eos=False) -> list of ids"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject SpmEncoderType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.SpmEncoder",
    .tp_doc = "SpmEncoder(...): sentencepiece's BPE encoder (bpe/sentencepiece/encoder.py).",
    .tp_basicsize = sizeof(SpmEncoder),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)spm_encoder_init,
    .tp_dealloc = (destructor)spm_encoder_dealloc,
    .tp_methods = spm_encoder_methods,
};

/* ---------------------------------------------------------------------------------------------
   HuggingFace's BPE by merge rank (hf.py HFTokenizer._merge) */

typedef struct {
    PyObject_HEAD bpe_bytesmap vocab; /* token -> id + 1 */
    uint64_t *pair_keys;              /* left << 32 | right */
    uint32_t *pair_rank, *pair_new;
    uint8_t *pair_used;
    size_t pair_mask;
    uint32_t *made; /* rank -> the id it makes */
    size_t n_ranks;
    int64_t byte_ids[256];
    int64_t unk_id;
    int fuse_unk, byte_fallback;
    uint64_t seed;
    int64_t *ids;
    uint8_t *alive;
    int32_t *prev, *next;
    uint64_t *heap;
    size_t cap;
} HFBpe;

static void hf_dealloc(HFBpe *h) {
    if (h->vocab.table) bpe_bytesmap_free(&h->vocab);
    free(h->pair_keys);
    free(h->pair_rank);
    free(h->pair_new);
    free(h->pair_used);
    free(h->made);
    free(h->ids);
    free(h->alive);
    free(h->prev);
    free(h->next);
    free(h->heap);
    Py_TYPE(h)->tp_free((PyObject *)h);
}

/* HFBpe(vocab: [(bytes, id)], merges: [(left, right, rank, new)], n_ranks, byte_ids (256, -1 none), unk_id (-1 none),
   fuse_unk, byte_fallback, seed); a pair appears once in merges (Python keeps the last rank of a pair listed twice) */
static int hf_init(HFBpe *h, PyObject *args, PyObject *kwargs) {
    PyObject *vocab, *merges, *byte_ids;
    Py_ssize_t n_ranks;
    long long unk;
    int fuse, fallback;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "OOnOLppK", &vocab, &merges, &n_ranks, &byte_ids, &unk, &fuse, &fallback, &seed)) return -1;
    if (h->vocab.table) {
        PyErr_SetString(PyExc_TypeError, "HFBpe is set up once");
        return -1;
    }
    h->seed = seed;
    h->unk_id = unk;
    h->fuse_unk = fuse;
    h->byte_fallback = fallback;
    bpe_hashkey key;
    bpe_key_init(&key, seed, 0);
    if (bpe_bytesmap_init(&h->vocab, &key) < 0) {
        PyErr_NoMemory();
        return -1;
    }
    if (!PyList_Check(byte_ids) || PyList_GET_SIZE(byte_ids) != 256) {
        PyErr_SetString(PyExc_ValueError, "byte_ids must list 256 ids");
        return -1;
    }
    for (int b = 0; b < 256; b++) {
        h->byte_ids[b] = PyLong_AsLongLong(PyList_GET_ITEM(byte_ids, b));
        if (PyErr_Occurred()) return -1;
    }
    PyObject *fast = PySequence_Fast(vocab, "vocab must be a sequence of (bytes, id)");
    if (!fast) return -1;
    for (Py_ssize_t k = 0; k < PySequence_Fast_GET_SIZE(fast); k++) {
        const char *data;
        Py_ssize_t len;
        unsigned int id;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, k), "y#I", &data, &len, &id)) {
            Py_DECREF(fast);
            return -1;
        }
        bpe_entry *entry = bpe_bytesmap_put(&h->vocab, (const uint8_t *)data, (size_t)len, bpe_hash((const uint8_t *)data, (size_t)len, &h->vocab.key));
        if (!entry) {
            Py_DECREF(fast);
            PyErr_NoMemory();
            return -1;
        }
        entry->value = (size_t)id + 1;
    }
    Py_DECREF(fast);
    fast = PySequence_Fast(merges, "merges must be a sequence of (left, right, rank, new)");
    if (!fast) return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    size_t size = 16;
    while (size < (size_t)n * 2 + 2) size *= 2;
    h->pair_keys = malloc(size * sizeof(uint64_t));
    h->pair_rank = malloc(size * sizeof(uint32_t));
    h->pair_new = malloc(size * sizeof(uint32_t));
    h->pair_used = calloc(size, 1);
    h->made = malloc(((size_t)n_ranks + 1) * sizeof(uint32_t));
    h->n_ranks = (size_t)n_ranks;
    h->pair_mask = size - 1;
    if (!h->pair_keys || !h->pair_rank || !h->pair_new || !h->pair_used || !h->made) {
        Py_DECREF(fast);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned int left, right, rank, made;
        if (!PyArg_ParseTuple(PySequence_Fast_GET_ITEM(fast, k), "IIII", &left, &right, &rank, &made) || rank >= (size_t)n_ranks) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "a merge's rank is outside the merges");
            Py_DECREF(fast);
            return -1;
        }
        uint64_t key = (uint64_t)left << 32 | right;
        size_t i = (size_t)mix(key ^ seed) & h->pair_mask;
        while (h->pair_used[i] && h->pair_keys[i] != key) i = (i + 1) & h->pair_mask;
        h->pair_used[i] = 1;
        h->pair_keys[i] = key;
        h->pair_rank[i] = rank;
        h->pair_new[i] = made;
        h->made[rank] = made;
    }
    Py_DECREF(fast);
    return 0;
}

/* (rank, new id) of the pair, or 0 when it is no merge */
static inline int hf_pair(const HFBpe *h, int64_t left, int64_t right, uint32_t *rank, uint32_t *made) {
    if (left < 0 || right < 0) return 0;
    uint64_t key = (uint64_t)left << 32 | (uint64_t)right;
    size_t i = (size_t)mix(key ^ h->seed) & h->pair_mask;
    while (h->pair_used[i]) {
        if (h->pair_keys[i] == key) {
            *rank = h->pair_rank[i];
            *made = h->pair_new[i];
            return 1;
        }
        i = (i + 1) & h->pair_mask;
    }
    return 0;
}

/* word(data: bytes of one pre-token, valid UTF-8) -> list of ids (BPE.merge_word) */
static PyObject *hf_word(HFBpe *h, PyObject *arg) {
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0) return NULL;
    const uint8_t *s = data.buf;
    size_t n = (size_t)data.len, count = 0;
    if (n >= INT32_MAX / 4 || bpe_grow((void **)&h->ids, &h->cap, n + 1, sizeof(int64_t)) < 0) {
        PyBuffer_Release(&data);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return NULL;
    }
    size_t cap = h->cap;
    h->alive = realloc(h->alive, cap);
    h->prev = realloc(h->prev, cap * sizeof(int32_t));
    h->next = realloc(h->next, cap * sizeof(int32_t));
    h->heap = realloc(h->heap, 3 * cap * sizeof(uint64_t));
    if (!h->alive || !h->prev || !h->next || !h->heap) {
        PyBuffer_Release(&data);
        return PyErr_NoMemory();
    }
    int64_t unk = -1; /* a pending <unk>, or -1 */
    for (size_t pos = 0; pos < n;) {
        uint32_t cp;
        size_t k = utf8_char(s + pos, n - pos, &cp);
        if (!k) k = 1; /* not from Python's str: a byte of its own */
        bpe_entry *entry = bpe_bytesmap_get(&h->vocab, s + pos, k, bpe_hash(s + pos, k, &h->vocab.key));
        if (entry) {
            if (unk >= 0) h->ids[count++] = unk, unk = -1;
            h->ids[count++] = (int64_t)entry->value - 1;
        } else {
            int all = h->byte_fallback;
            for (size_t b = 0; all && b < k; b++) all = h->byte_ids[s[pos + b]] >= 0;
            if (all) { /* subtle: a pending <unk> waits until after these bytes, as tokenizers has it */
                for (size_t b = 0; b < k; b++) h->ids[count++] = h->byte_ids[s[pos + b]];
            } else if (h->unk_id >= 0) {
                if (unk >= 0 && !h->fuse_unk) h->ids[count++] = unk;
                unk = h->unk_id;
            }
        }
        pos += k;
    }
    PyBuffer_Release(&data);
    if (unk >= 0) h->ids[count++] = unk;
    size_t size = 0;
    for (size_t i = 0; i < count; i++) {
        h->alive[i] = 1;
        h->prev[i] = (int32_t)i - 1;
        h->next[i] = i + 1 < count ? (int32_t)i + 1 : -1;
        uint32_t rank, made;
        if (i + 1 < count && hf_pair(h, h->ids[i], h->ids[i + 1], &rank, &made)) bpe_minheap_push(h->heap, &size, (uint64_t)rank << 32 | i);
    }
    while (size) {
        uint64_t top = bpe_minheap_pop(h->heap, &size);
        uint32_t i = (uint32_t)top, rank = (uint32_t)(top >> 32), r, made;
        if (!h->alive[i] || h->next[i] < 0) continue;
        int32_t j = h->next[i];
        if (!hf_pair(h, h->ids[i], h->ids[j], &r, &made) || made != h->made[rank]) continue; /* stale */
        h->ids[i] = made;
        h->alive[j] = 0;
        h->next[i] = h->next[j];
        if (h->next[j] >= 0) h->prev[h->next[j]] = (int32_t)i;
        if (h->prev[i] >= 0 && hf_pair(h, h->ids[h->prev[i]], h->ids[i], &r, &made)) bpe_minheap_push(h->heap, &size, (uint64_t)r << 32 | (uint32_t)h->prev[i]);
        if (h->next[i] >= 0 && hf_pair(h, h->ids[i], h->ids[h->next[i]], &r, &made)) bpe_minheap_push(h->heap, &size, (uint64_t)r << 32 | i);
    }
    size_t kept = 0;
    for (size_t i = 0; i < count; i++) kept += h->alive[i];
    PyObject *out = PyList_New((Py_ssize_t)kept);
    for (size_t i = 0, at = 0; out && i < count; i++) {
        if (!h->alive[i]) continue;
        PyObject *v = PyLong_FromLongLong(h->ids[i]);
        if (!v) {
            Py_CLEAR(out);
            break;
        }
        PyList_SET_ITEM(out, (Py_ssize_t)at++, v);
    }
    return out;
}

static PyMethodDef hf_methods[] = {
    {"word", (PyCFunction)hf_word, METH_O, "word(data: bytes) -> list of ids: one pre-token through BPE.merge_word"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject HFBpeType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.HFBpe",
    .tp_doc = "HFBpe(vocab, merges, n_ranks, byte_ids, unk_id, fuse_unk, byte_fallback, seed): HuggingFace's BPE by merge rank "
              "(bpe/sentencepiece/hf.py).",
    .tp_basicsize = sizeof(HFBpe),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)hf_init,
    .tp_dealloc = (destructor)hf_dealloc,
    .tp_methods = hf_methods,
};

/* ---------------------------------------------------------------------------------------------
   the module */

int bpe_spm_init(PyObject *module) {
    PyTypeObject *types[] = {&NormalizerType, &CorpusType, &TrainerType, &SpmEncoderType, &HFBpeType};
    for (size_t k = 0; k < sizeof(types) / sizeof(types[0]); k++) {
        if (PyType_Ready(types[k]) < 0) return -1;
        const char *name = strrchr(types[k]->tp_name, '.') + 1;
        if (PyModule_AddObjectRef(module, name, (PyObject *)types[k]) < 0) return -1;
    }
    return 0;
}
