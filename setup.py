"""Builds the compiled core, `bpe._core` (C through the CPython API), beside the pure-Python package.

pyproject.toml holds everything else; this file exists for `ext_modules`. The core is optional:
where it cannot be built (no C compiler, no Python headers), `pip install .` still installs the
pure-Python package and says in one sentence why the core is absent; the trainers then run in
Python (`python -m bpe.core` says which ran and why). From a checkout, `bash scripts/setup.sh`
builds it in place (`python setup.py build_ext --inplace`) and rebuilds it when a source changes.

A new C source: add its file to SOURCES here and its init call to bpe/c/module.c.
BPE_SANITIZE=1 builds with AddressSanitizer and UBSan (scripts/sanitize.sh, run by .ci/run).
BPE_CORE_IN_PLACE=1 leaves the core out: scripts/setup.sh installs the checkout editable that way, and builds the
core in place itself.
"""

from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = Path(__file__).resolve().parent
SOURCES = [
    "bpe/c/module.c",  # the module: calls each file's init
    "bpe/c/heap.c",  # the heap trainer (bpe/heap.py), wrapped by bpe/heap_c.py
    "bpe/c/pretokenize.c",  # the named pre-tokenizers (bpe/text/pretokenize_c.py)
    "bpe/c/bytesmap.c",  # a hash map of byte strings, for pretokenize.c and encode.c
    "bpe/c/encode.c",  # Tokenizer.encode's merging by rank (bpe/tokenizer/encode_c.py)
    "bpe/c/ranks.c",  # reading a tiktoken rank file fast (bpe/files/load.py)
    "bpe/c/words.c",  # a counts file's tokens and counts, read from its columns (bpe/data/counts_file.py)
    "bpe/c/spm.c",  # the SentencePiece family: normalizer, trainer, encoders (bpe/sentencepiece/)
]
HEADERS = ["bpe/c/core.h", "bpe/c/encode.h", "bpe/c/hash.h", "bpe/c/minheap.h", "bpe/c/unicode_classes.h"]


def sources_digest() -> str:
    """bpe.core.sources_digest, read from its file: the package itself is not importable while it is being built."""
    spec = importlib.util.spec_from_file_location("bpe_core_digest", HERE / "bpe" / "core" / "__init__.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.sources_digest(HERE / "bpe" / "c")


def compile_args() -> tuple[list[str], list[str]]:
    if sys.platform == "win32":
        return ["/O2"], []
    args = ["-O2", "-std=c11", "-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
    if platform.machine().lower() in ("x86_64", "amd64"):
        # the AES instructions for the tables' hash (bpe/c/hash.h), used only where the processor has them (checked when
        # the module loads): the compiler never emits them by itself, so the module still runs on a processor without
        args.append("-maes")
    if os.environ.get("BPE_SANITIZE") == "1":
        # -fno-wrapv: Python builds with -fwrapv, which makes signed overflow defined, and UBSan would not report it
        flags = ["-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer", "-fno-wrapv", "-g", "-O1"]
        return [*args, *flags], flags
    return args, []


class OptionalBuildExt(build_ext):
    """build_ext that warns instead of failing: without the core every trainer still runs, in Python."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # no compiler at all: setuptools fails before build_extension
            self.absent(error)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as error:  # a compiler or header error
            self.absent(error)

    def absent(self, error: Exception) -> None:
        if os.environ.get("BPE_CORE_REQUIRED") == "1":  # scripts/sanitize.sh and the CI build must not fall back quietly
            raise error
        reason = str(error).strip().splitlines()[-1] if str(error).strip() else type(error).__name__
        print(
            f"bpe: the compiled core (bpe._core) was not built ({reason}), so the trainers run in Python: "
            "install a C compiler and the Python headers (Debian: apt-get install gcc python3-dev) and reinstall to build it.",
            file=sys.stderr,
        )


compile_flags, link_flags = compile_args()
setup(
    ext_modules=[]
    if os.environ.get("BPE_CORE_IN_PLACE") == "1"
    else [
        Extension(
            "bpe._core",
            sources=SOURCES,
            depends=HEADERS,
            define_macros=[("BPE_CORE_SOURCES", f'"{sources_digest()}"')],
            extra_compile_args=compile_flags,
            extra_link_args=link_flags,
        )
    ],
    cmdclass={"build_ext": OptionalBuildExt},
)
