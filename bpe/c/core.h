/* bpe._core: what the C files of the compiled core share.
 *
 * Each file adds its types and functions to the one module through an init
 * function declared here and called from module.c. */
#ifndef BPE_CORE_H
#define BPE_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

int bpe_heap_init(PyObject *module); /* heap.c: the heap trainer (bpe/heap.py), type Heap */
int bpe_pretokenize_init(PyObject *module); /* pretokenize.c: the named pre-tokenizers (pretokenize_c.py), type PreTokenCounter */
int bpe_encode_init(PyObject *module);     /* encode.c: Tokenizer.encode's merging by rank (encode_c.py), type Encoder */
int bpe_ranks_init(PyObject *module);      /* ranks.c: reading a tiktoken rank file (load.parse_tiktoken) */

#endif
