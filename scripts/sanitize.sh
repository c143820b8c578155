#!/usr/bin/env bash
# The compiled core under AddressSanitizer and UndefinedBehaviorSanitizer: builds a sanitized copy of bpe._core in a
# temporary folder (the checkout's own build is left alone) and runs the equality property tests against it
# (BPE_CORE names the copy), with libasan preloaded into Python. Any report aborts the run and fails it. .ci/run calls it.
# Usage: bash scripts/sanitize.sh [pytest options]    (BPE_HEAP_C_EXAMPLES: hypothesis examples per property, default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
# each C file's equality tests: a new C source adds its test file here
tests=(tests/test_heap_c.py tests/test_continued.py tests/test_core_words.py tests/test_core_encoder.py tests/test_core_pretokenize.py tests/test_core_ranks.py tests/test_core_hash.py tests/test_core_sentencepiece.py)
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
BPE_SANITIZE=1 BPE_CORE_REQUIRED=1 .venv/bin/python setup.py --quiet build_ext --build-lib "$build/lib" --build-temp "$build/temp" >/dev/null
core=$(find "$build/lib" -name '_core*.so' | head -1)
asan=$(gcc -print-file-name=libasan.so)
if [ -z "$core" ] || [ ! -f "$asan" ]; then
  echo "sanitize.sh: no sanitized build (core: '${core}', libasan: '${asan}')" >&2
  exit 1
fi
# detect_leaks=0: CPython itself frees little at exit, so LeakSanitizer would report the interpreter, not us
# (tests/test_heap_c.py checks that a trainer gives back what it took); PYTHONMALLOC=malloc puts Python's own
# small objects where ASan sees them too
export LD_PRELOAD="$asan" BPE_CORE="$core" PYTHONMALLOC=malloc BPE_HEAP_C_EXAMPLES="${BPE_HEAP_C_EXAMPLES:-300}"
export ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1:check_initialization_order=1"
export UBSAN_OPTIONS="halt_on_error=1:abort_on_error=1:print_stacktrace=1"
.venv/bin/python -c "import bpe.core as c, sys; sys.exit(0 if c.core is not None and c.core.__file__ == '$core' else f'the sanitized core was not loaded: {c.missing}')"
# --capture=sys: a report is written straight to file descriptor 2, and the abort would lose what pytest captured there
timeout 900 .venv/bin/python -m pytest -q -p no:cacheprovider --capture=sys -x "${tests[@]}" "$@"
echo "sanitize.sh: the compiled core passed its equality tests under AddressSanitizer and UBSan"
