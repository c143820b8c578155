/* bpe._core: the compiled core, one extension module built by setup.py.
 *
 * The Python files stay the readable reference and the fallback; each C file
 * here does exactly what its Python twin does, faster, and property tests hold
 * the two to identical results (tests/test_core*.py), also under ASan/UBSan.
 *
 * A new C source: write bpe/c/NAME.c with `int bpe_NAME_init(PyObject *module)`
 * (it adds its types and functions to the module and returns 0, or -1 with an
 * exception set), declare it in core.h, call it from `exec_module` below, and
 * add the file to SOURCES in setup.py. */
#include "core.h"

#ifndef BPE_CORE_SOURCES
#define BPE_CORE_SOURCES "unknown"
#endif

static int exec_module(PyObject *module) {
    /* sha256 of the sources it was built from: bpe/core/ refuses a core older than its sources */
    if (PyModule_AddStringConstant(module, "SOURCES", BPE_CORE_SOURCES) < 0) return -1;
    if (bpe_hash_init(module) < 0) return -1; /* first: the tables' keys ask whether AES is there */
    if (bpe_heap_init(module) < 0) return -1;
    if (bpe_pretokenize_init(module) < 0) return -1;
    if (bpe_encode_init(module) < 0) return -1;
    if (bpe_ranks_init(module) < 0) return -1;
    if (bpe_words_init(module) < 0) return -1;
    if (bpe_spm_init(module) < 0) return -1;
    return 0;
}

static PyModuleDef_Slot slots[] = {
    {Py_mod_exec, exec_module},
    {0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "bpe._core",
    .m_doc = "The compiled core of bpe: exact twins of its Python hot paths (see bpe/core/).",
    .m_size = 0,
    .m_slots = slots,
};

PyMODINIT_FUNC PyInit__core(void) { return PyModuleDef_Init(&module_def); }
