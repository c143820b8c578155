"""python -m bpe.core: one sentence, whether the compiled core is built here, and if not why.

subtle: bpe.core is a package, not a module, for this file's sake: the package bpe imports bpe.core as it
starts (the trainers ask whether the core is here), and runpy warns when a module it is asked to run as
__main__ was imported already; a package's __main__ never is.
"""

from . import describe

print(describe())
