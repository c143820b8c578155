/* Words: the unique pre-tokens of a counts file and their counts, read straight from its columns.
 *
 * A counts file (bpe/data/counts_file.py) is two Arrow columns: the tokens (one buffer of bytes and the offsets
 * where each begins) and their counts. Made into a dict, 400,000 tokens cost 0.13 s of bytes objects and
 * ints that the compiled heap then reads back and frees; here they are copied once into flat arrays, a batch
 * at a time, refused at the first repeated token (a file's rows must be different tokens), and the heap
 * (heap.c) and the not-text check read the arrays. counts_file.py wraps it as a read-only Mapping, so every
 * other reader (the Python trainers where the core is absent, tests) sees a dict's items in the file's order.
 *
 * Not here: reading Parquet (pyarrow does), the counts file's settings, training. */
#include "core.h"
#include "encode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "structmember.h"

/* make room for `more` words: the arrays, and a table at most half full (rehashed from the stored hashes) */
static int room_for(bpe_WordsObject *w, size_t more) {
    size_t need = w->n + more;
    if (need > UINT32_MAX - 1) {
        PyErr_SetString(PyExc_OverflowError, "more than 2^32 pre-tokens");
        return -1;
    }
    if (need + 1 > w->cap) { /* the three grow alike from one capacity, so they stay one size */
        size_t c1 = w->cap, c2 = w->cap, c3 = w->cap;
        if (bpe_grow((void **)&w->count, &c1, need + 1, sizeof(int64_t)) < 0 ||
            bpe_grow((void **)&w->hash, &c2, need + 1, sizeof(uint64_t)) < 0 ||
            bpe_grow((void **)&w->start, &c3, need + 1, sizeof(uint64_t)) < 0) /* start[n]: where the next begins */
            return -1;
        w->cap = c1;
    }
    if (w->slots != NULL && need * 2 <= w->mask + 1) return 0;
    size_t size = w->mask + 1 ? (w->mask + 1) * 2 : 2048;
    while (need * 2 > size) size *= 2;
    uint32_t *slots = calloc(size, sizeof(uint32_t));
    if (slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    for (size_t k = 0; k < w->n; k++) {
        size_t i = w->hash[k] & (size - 1);
        while (slots[i]) i = (i + 1) & (size - 1);
        slots[i] = (uint32_t)k + 1;
    }
    free(w->slots);
    w->slots = slots;
    w->mask = size - 1;
    return 0;
}

/* the offset of row i of an Arrow offsets buffer, int32 or int64 (wide); memcpy: the buffer need not be aligned */
static inline int64_t offset_at(const Py_buffer *offsets, int wide, Py_ssize_t i) {
    if (wide) {
        int64_t x;
        memcpy(&x, (const char *)offsets->buf + 8 * i, 8);
        return x;
    }
    int32_t x;
    memcpy(&x, (const char *)offsets->buf + 4 * i, 4);
    return x;
}

/* add(data, offsets, counts, wide) -> -1, or the row of this batch whose token was added already.
 * data: the tokens' bytes; offsets: n + 1 int32s (int64s if wide), where each token begins in data (native
 * byte order, as Arrow keeps them); counts: n int64s. A row with a count below 1 or offsets outside data is a ValueError (the file is
 * corrupt); on a repeat the rows before it stay added (the caller refuses the file). */
static PyObject *words_add(bpe_WordsObject *w, PyObject *args) {
    Py_buffer data, offsets, counts;
    int wide;
    if (w->start == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Words was not initialised");
        return NULL;
    }
    if (!PyArg_ParseTuple(args, "y*y*y*p", &data, &offsets, &counts, &wide)) return NULL;
    PyObject *result = NULL;
    Py_ssize_t rows = counts.len / 8;
    if (counts.len % 8 || offsets.len != (rows + 1) * (wide ? 8 : 4)) {
        PyErr_SetString(PyExc_ValueError, "counts must be int64, one per token, with one offset more than tokens");
        goto done;
    }
    int64_t begin = offset_at(&offsets, wide, 0), end = offset_at(&offsets, wide, rows);
    if (begin < 0 || end < begin || end > data.len) {
        PyErr_SetString(PyExc_ValueError, "the token offsets point outside the tokens' bytes");
        goto done;
    }
    for (Py_ssize_t i = 0; i < rows; i++) {
        if (offset_at(&offsets, wide, i + 1) < offset_at(&offsets, wide, i)) {
            PyErr_SetString(PyExc_ValueError, "the token offsets go backwards");
            goto done;
        }
        int64_t count;
        memcpy(&count, (const char *)counts.buf + 8 * i, 8);
        if (count < 1) {
            PyErr_SetString(PyExc_ValueError, "a count below 1");
            goto done;
        }
    }
    if (room_for(w, (size_t)rows) < 0) goto done;
    size_t bytes = (size_t)(end - begin);
    if (bpe_grow((void **)&w->data, &w->cap_data, w->n_data + bytes + 1, 1) < 0) goto done;
    const uint8_t *src = data.buf;
    for (Py_ssize_t i = 0; i < rows; i++) {
        const uint8_t *p = src + offset_at(&offsets, wide, i);
        size_t n = (size_t)(offset_at(&offsets, wide, i + 1) - offset_at(&offsets, wide, i));
        uint64_t hash = bpe_hash(p, n, &w->key);
        size_t slot = hash & w->mask, probes = 1;
        for (uint32_t k; (k = w->slots[slot]) != 0; slot = (slot + 1) & w->mask, probes++) {
            k--;
            if (w->hash[k] == hash && w->start[k + 1] - w->start[k] == n && memcmp(w->data + w->start[k], p, n) == 0) {
                result = PyLong_FromSsize_t(i);
                goto done;
            }
        }
        if (probes > w->longest) w->longest = probes;
        memcpy(w->data + w->n_data, p, n);
        w->n_data += n;
        w->slots[slot] = (uint32_t)w->n + 1;
        w->hash[w->n] = hash;
        memcpy(&w->count[w->n], (const char *)counts.buf + 8 * i, 8);
        w->start[++w->n] = w->n_data;
    }
    result = PyLong_FromLong(-1);
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    PyBuffer_Release(&counts);
    return result;
}

/* sums() -> (bytes, NUL bytes, bytes not valid UTF-8), each token's times its count, as
 * pretokenize.not_text adds them up; None when a sum passes 2^64 (not_text then adds Python's ints) */
static PyObject *words_sums(bpe_WordsObject *w, PyObject *unused) {
    uint64_t total = 0, nul = 0, invalid = 0;
    for (size_t k = 0; k < w->n; k++) {
        const uint8_t *p = w->data + w->start[k];
        size_t n = w->start[k + 1] - w->start[k], zeros = 0, ascii = 1;
        for (size_t i = 0; i < n; i++) {
            zeros += p[i] == 0;
            ascii &= p[i] < 0x80;
        }
        size_t bad = ascii ? 0 : bpe_invalid_utf8(p, n);
        uint64_t c = (uint64_t)w->count[k], x;
        if (__builtin_mul_overflow(c, (uint64_t)n, &x) || __builtin_add_overflow(total, x, &total)) Py_RETURN_NONE;
        if (__builtin_mul_overflow(c, (uint64_t)zeros, &x) || __builtin_add_overflow(nul, x, &nul)) Py_RETURN_NONE;
        if (__builtin_mul_overflow(c, (uint64_t)bad, &x) || __builtin_add_overflow(invalid, x, &invalid)) Py_RETURN_NONE;
    }
    return Py_BuildValue("(KKK)", (unsigned long long)total, (unsigned long long)nul, (unsigned long long)invalid);
}

/* to_dict() -> {token: count}, in the order added */
static PyObject *words_to_dict(bpe_WordsObject *w, PyObject *unused) {
    PyObject *d = PyDict_New();
    if (d == NULL) return NULL;
    for (size_t k = 0; k < w->n; k++) {
        PyObject *token = PyBytes_FromStringAndSize((const char *)w->data + w->start[k], (Py_ssize_t)(w->start[k + 1] - w->start[k]));
        PyObject *count = PyLong_FromLongLong(w->count[k]);
        int failed = token == NULL || count == NULL || PyDict_SetItem(d, token, count) < 0;
        Py_XDECREF(token);
        Py_XDECREF(count);
        if (failed) {
            Py_DECREF(d);
            return NULL;
        }
    }
    return d;
}

static Py_ssize_t words_len(bpe_WordsObject *w) { return (Py_ssize_t)w->n; }

static int words_init(bpe_WordsObject *w, PyObject *args, PyObject *kwds) {
    static char *names[] = {"seed", NULL};
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "K", names, &seed)) return -1;
    if (w->start != NULL) {
        PyErr_SetString(PyExc_RuntimeError, "Words is initialised once");
        return -1;
    }
    bpe_key_init(&w->key, seed, 0);
    if (room_for(w, 0) < 0) return -1;
    w->start[0] = 0;
    return 0;
}

static void words_dealloc(bpe_WordsObject *w) {
    free(w->data);
    free(w->start);
    free(w->count);
    free(w->hash);
    free(w->slots);
    Py_TYPE(w)->tp_free((PyObject *)w);
}

static PyMethodDef words_methods[] = {
    {"add", (PyCFunction)words_add, METH_VARARGS, "add(data, offsets, counts, wide): one batch of a counts file; -1, or the row of a repeated token"},
    {"sums", (PyCFunction)words_sums, METH_NOARGS, "(bytes, NUL bytes, bytes not UTF-8), each token's times its count; None past 2^64"},
    {"to_dict", (PyCFunction)words_to_dict, METH_NOARGS, "{token: count} in the order added"},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods words_sequence = {.sq_length = (lenfunc)words_len};

static PyMemberDef words_members[] = {
    {"longest_probe", T_PYSSIZET, offsetof(bpe_WordsObject, longest), READONLY, "the most table slots one token's lookup has read"},
    {NULL, 0, 0, 0, NULL},
};

PyTypeObject bpe_WordsType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.Words",
    .tp_doc = "Words(seed): unique pre-tokens and their counts, added from a counts file's columns (counts_file.py).",
    .tp_basicsize = sizeof(bpe_WordsObject),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)words_init,
    .tp_dealloc = (destructor)words_dealloc,
    .tp_methods = words_methods,
    .tp_members = words_members,
    .tp_as_sequence = &words_sequence,
};

int bpe_words_init(PyObject *module) {
    if (PyType_Ready(&bpe_WordsType) < 0) return -1;
    return PyModule_AddObjectRef(module, "Words", (PyObject *)&bpe_WordsType);
}
