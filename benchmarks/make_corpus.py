"""Build a large corpus of real text, offline, for benchmarking the BPE trainer.

    python benchmarks/make_corpus.py --mb 50 --out benchmarks/data/corpus50.txt

What it does: list the text already on a Debian machine with Python, namely
the prose (docstrings and comments, via `bpe/data/corpora.py`) of the standard
library and of the running interpreter's site-packages, the standard library's
``*.txt``/``*.rst``, ``/usr/share/common-licenses``, ``copyright``,
``changelog*``/``NEWS*``/``README*``/``*.txt``/``*.md``/``*.rst`` under
``/usr/share/doc`` and the man pages under ``/usr/share/man`` (gunzipped; roff
requests and escapes stripped roughly, the words of ``.SH``/``.B``/``.BR``...
kept). The files are shuffled (ordered by a seeded hash of their path, so
installing a package inserts its files without reordering the rest) and read
in that order until the requested size is reached, so a small corpus is a mix
of every source too. Each file is one document; documents are separated by an
``<|endoftext|>`` line. If every file has been read and the text is still
short, the documents are repeated, each round in a new seeded shuffle, and the
output says how much was unique. It prints what it took from each source.

Rules that keep the text varied: a document is cut to 0.25 MB at a line end; a
document whose last 64 KiB equal an earlier one's is a copy and is skipped
(e.g. linux-libc-dev and linux-perf ship one changelog with a different first
line); each group (a man-page family such as all ``gcloud_*`` pages, a
``/usr/share/doc`` package, a top-level Python package) gives at most
``--group-cap-mb`` MB, so 16,000 generated ``gcloud`` pages cannot fill it.

What it does not do: use the network or third-party modules, or guarantee the
same bytes on another machine: the output is a function of the installed
files (packages added to the venv change it) and of ``--seed``.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import importlib.util
import itertools
import os
import random
import re
import site
import sys
import sysconfig
import time
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
MB = 1_000_000
DOC_CAP = MB // 4
FINGERPRINT_TAIL = 64 * 1024
DEFAULT_SEED = 0
DOC_DIR = Path("/usr/share/doc")
MAN_DIR = Path("/usr/share/man")
LICENSE_DIR = Path("/usr/share/common-licenses")
TEXT_SUFFIXES = (".txt", ".md", ".rst")
BINARY_SUFFIXES = frozenset(
    [".html", ".htm", ".pdf", ".png", ".jpg", ".gif", ".svg", ".css", ".js", ".json", ".xml", ".ps", ".dvi", ".tar", ".zip", ".bz2", ".xz"]
)
MAN_PAGE = re.compile(r"[^.].*\.\d\w*(?:\.gz)?")
SOURCES = (
    "stdlib-prose",
    "stdlib-text",
    "licenses",
    "doc-copyright",
    "doc-changelog",
    "doc-readme-text",
    "man",
    "site-packages-prose",
)  # report order


def import_corpora() -> ModuleType:
    """Load bpe/data/corpora.py by path: stdlib only, and bpe/__init__.py may import more."""
    spec = importlib.util.spec_from_file_location("bpe_corpora", ROOT / "bpe" / "data" / "corpora.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


corpora = import_corpora()
SEPARATOR = corpora.SEPARATOR.encode()


@dataclass(frozen=True)
class Candidate:
    source: str  # where it comes from, for the report
    group: str  # what shares one --group-cap-mb budget
    path: Path


# ---------------------------------------------------------------- finding files


def find_candidates() -> list[Candidate]:
    """Every file of every source, in a fixed order (sources, then sorted paths)."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    return [
        *list_python("stdlib-prose", [stdlib]),
        *list_files("stdlib-text", stdlib, is_stdlib_text, lambda path: "stdlib-text"),
        *list_files("licenses", LICENSE_DIR, lambda name: True, lambda path: "licenses"),
        *list_doc_files(),
        *list_files("man", MAN_DIR, lambda name: bool(MAN_PAGE.fullmatch(name)), name_man_family),
        *list_python("site-packages-prose", find_site_packages()),
    ]


def list_files(
    source: str,
    root: Path,
    keep: Callable[[str], bool],
    name_group: Callable[[Path], str],
    skip_dirs: frozenset[str] = corpora.SKIP_DIRS,
) -> list[Candidate]:
    """Regular files (not symlinks) under ``root`` whose name passes ``keep``, sorted."""
    paths = []
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [name for name in subdirs if name not in skip_dirs]
        for name in files:
            path = Path(directory, name)
            if keep(name) and not path.is_symlink() and path.is_file():
                paths.append(path)
    return [Candidate(source, name_group(path), path) for path in sorted(paths)]


def list_doc_files() -> list[Candidate]:
    """copyright, changelogs/NEWS, READMEs and text files under /usr/share/doc."""
    found = list_files(
        "doc", DOC_DIR, lambda name: classify_doc(name) is not None, lambda path: "doc:" + path.relative_to(DOC_DIR).parts[0], frozenset()
    )
    return [Candidate(str(classify_doc(c.path.name)), c.group, c.path) for c in found]


def list_python(source: str, roots: Iterable[Path]) -> list[Candidate]:
    """The .py files under each root (test directories skipped), each file once."""
    found: list[Candidate] = []
    seen: set[Path] = set()
    for root in roots:
        for path in corpora.find_python_files(root):
            real = path.resolve()
            if real not in seen:
                seen.add(real)
                package = path.relative_to(root).parts[0].removesuffix(".py")
                found.append(Candidate(source, f"{source}:{package}", path))
    return found


def find_site_packages() -> list[Path]:
    """The running interpreter's site-packages directories that exist, each once."""
    paths = sysconfig.get_paths()
    names = [*site.getsitepackages(), site.getusersitepackages(), paths["purelib"], paths["platlib"]]
    roots: list[Path] = []
    for name in names:
        root = Path(name).resolve()
        if root.is_dir() and root not in roots:
            roots.append(root)
    return roots


def is_stdlib_text(name: str) -> bool:
    return name.endswith((".txt", ".rst")) and "Grammar" not in name


def classify_doc(name: str) -> str | None:
    """The source name of a /usr/share/doc file, or None to leave it out."""
    base = name.lower().removesuffix(".gz")
    suffix = os.path.splitext(base)[1]
    if suffix in BINARY_SUFFIXES:
        return None
    if base.startswith("copyright"):
        return "doc-copyright"
    if base.startswith(("changelog", "news")):
        return "doc-changelog"
    if base.startswith("readme") or suffix in TEXT_SUFFIXES:
        return "doc-readme-text"
    return None


def name_man_family(path: Path) -> str:
    """ "man:gcloud" for gcloud_compute_instances_create.1.gz, "man:git" for git-add.1.gz."""
    return "man:" + re.split(r"[-_.]", path.name, maxsplit=1)[0]


# ---------------------------------------------------------------- reading text


def load(candidate: Candidate) -> str:
    """The cleaned text of one candidate ("" if unreadable or binary)."""
    if candidate.path.suffix == ".py":
        return corpora.extract_prose(corpora.read_python(candidate.path))
    text = read_text(candidate.path)
    if candidate.source == "man":
        text = strip_roff(text)
    return tidy(text)


def read_text(path: Path) -> str:
    """A file's text, gunzipped if needed; UTF-8, else Latin-1; "" if binary."""
    try:
        data = path.read_bytes()
        if path.name.endswith(".gz"):
            data = gzip.decompress(data)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return ""
    if b"\0" in data:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def tidy(text: str) -> str:
    """Control characters out, trailing spaces off, at most one blank line in a row."""
    text = corpora.clean_text(text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


_ROFF_ESCAPE = re.compile(
    r"""
    \\"[^\n]*                                      # comment
  | \\[fFgmMnk*$](?:\[[^\]\n]*\]|\(..|.)            # font, register, string, colour
  | \\s(?:[+-]?\d\d?|\(\d\d|\[[^\]\n]*\]|'[^'\n]*') # size
  | \\[hvwlLoDbxXNZRAB]'[^'\n]*'                   # motions, widths, lines
  | \\\((?P<short>..)                              # \(em
  | \\\[(?P<long>[^\]\n]*)\]                       # \[em]
  | \\(?P<single>.)                                # \- \e \& \  ...
    """,
    re.VERBOSE,
)
_SPECIAL = {
    "em": "\u2014",
    "en": "\u2013",
    "hy": "-",
    "mi": "-",
    "bu": "\u2022",
    "co": "\u00a9",
    "rg": "\u00ae",
    "tm": "\u2122",
    "aq": "'",
    "dq": '"',
    "lq": "\u201c",
    "rq": "\u201d",
    "oq": "\u2018",
    "cq": "\u2019",
    "ga": "`",
    "aa": "\u00b4",
    "ti": "~",
    "ha": "^",
    "rs": "\\",
    "pl": "+",
    "mu": "\u00d7",
    "de": "\u00b0",
    "sc": "\u00a7",
    "->": "\u2192",
    "<-": "\u2190",
    "<=": "\u2264",
    ">=": "\u2265",
    "if": "\u221e",
    "Fo": "\u00ab",
    "Fc": "\u00bb",
    "fo": "\u2039",
    "fc": "\u203a",
    "at": "@",
    "sl": "/",
}
_SINGLE = {"-": "-", "e": "\\", "\\": "\\", " ": " ", "~": " ", "0": " ", "t": "\t"}
_SILENT = set("&|^%c:/,){}dpruz!")
_TEXT_MACROS = frozenset(["SH", "SS", "B", "I", "SM", "SB", "Sh", "Ss", "Nd", "Dl"])
_ALTERNATING_MACROS = frozenset(["BR", "BI", "IB", "IR", "RB", "RI"])
_DEFINITION = re.compile(r"[.']\s*(?:de|de1|am|ig)\b")
_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"|(\S+)')


def strip_roff(text: str) -> str:
    """Roughly the words of a man page: requests dropped, escapes resolved."""
    lines: list[str] = []
    in_definition = False
    for line in text.split("\n"):
        if in_definition:
            in_definition = line.strip() != ".."
            continue
        if line.startswith((".", "'")):
            if _DEFINITION.match(line):
                in_definition = True
            else:
                lines.append(expand_request(line))
        else:
            lines.append(unescape_roff(line))
    return "\n".join(lines)


def expand_request(line: str) -> str:
    """The text a request line shows: its words for headings and fonts, else a break."""
    request, _, rest = line[1:].strip().partition(" ")
    if request in _TEXT_MACROS or request in _ALTERNATING_MACROS:
        words = [quoted.replace('""', '"') or plain for quoted, plain in _ARGUMENT.findall(rest)]
        joiner = "" if request in _ALTERNATING_MACROS else " "
        return unescape_roff(joiner.join(words))
    return ""  # comments, layout and unknown requests; a paragraph request becomes a blank line


def unescape_roff(line: str) -> str:
    return _ROFF_ESCAPE.sub(replace_escape, line)


def replace_escape(match: re.Match[str]) -> str:
    name = match.group("short") or match.group("long")
    if name is not None:
        return _SPECIAL.get(name, "")
    single = match.group("single")
    if single is None or single in _SILENT:
        return ""
    return _SINGLE.get(single, single)


# ---------------------------------------------------------------- building


@dataclass
class Tally:
    listed: Counter[str]
    read: Counter[str]
    kept: Counter[str]
    kept_bytes: Counter[str]
    skipped: Counter[str]


def collect(candidates: list[Candidate], target: int, group_cap: int) -> tuple[list[bytes], Tally]:
    """Read candidates in order until the documents fill ``target`` bytes (or run out)."""
    tally = Tally(Counter(c.source for c in candidates), Counter(), Counter(), Counter(), Counter())
    documents: list[bytes] = []
    group_bytes: Counter[str] = Counter()
    fingerprints: set[bytes] = set()
    size = 0
    for candidate in candidates:
        if size >= target:
            break
        if group_bytes[candidate.group] >= group_cap:
            tally.skipped["group over cap (not read)"] += 1
            continue
        tally.read[candidate.source] += 1
        data = load(candidate).encode("utf-8", "replace")
        if not cut_at_line(data, DOC_CAP):
            tally.skipped["empty or binary"] += 1
            continue
        fingerprint = hashlib.sha1(data[-FINGERPRINT_TAIL:]).digest()
        if fingerprint in fingerprints:
            tally.skipped["copy of an earlier document"] += 1
            continue
        fingerprints.add(fingerprint)
        data = cut_at_line(data, DOC_CAP)
        documents.append(data)
        group_bytes[candidate.group] += len(data)
        size += len(data) + len(SEPARATOR)
        tally.kept[candidate.source] += 1
        tally.kept_bytes[candidate.source] += len(data)
    return documents, tally


def shuffle_stably(candidates: list[Candidate], seed: int) -> list[Candidate]:
    """A seeded shuffle by hashed path: adding a file does not reorder the others."""
    return sorted(candidates, key=lambda c: hashlib.sha1(f"{seed}:{c.path}".encode()).digest())


def cut_at_line(data: bytes, limit: int) -> bytes:
    """``data`` if it fits in ``limit`` bytes, else its longest prefix ending at a line end."""
    if len(data) <= limit:
        return data
    end = data.rfind(b"\n", 0, limit)
    return data[:end] if end > 0 else b""


def repeat_shuffled(documents: list[bytes], rng: random.Random) -> Iterator[bytes]:
    """The documents again and again, each round in a new shuffled order."""
    while documents:
        order = documents[:]
        rng.shuffle(order)
        yield from order


def write_corpus(out: Path, documents: list[bytes], target: int, rng: random.Random) -> tuple[int, int]:
    """Write up to ``target`` bytes; return (bytes written, of which unique)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    written = unique = 0
    stream = itertools.chain(documents, repeat_shuffled(documents, rng))
    with out.open("wb") as handle:
        for index, document in enumerate(stream):
            separator = SEPARATOR if written else b""
            room = target - written - len(separator)
            piece = cut_at_line(document, room) if room > 0 else b""
            if not piece:
                break
            handle.write(separator + piece)
            written += len(separator) + len(piece)
            if index < len(documents):
                unique = written
            if len(piece) < len(document):
                break
    return written, unique


def report(tally: Tally, group_cap: int) -> None:
    print(f"{'source':<22}{'files':>8}{'read':>8}{'kept':>8}{'MB kept':>10}")
    for source in SOURCES:
        print(f"{source:<22}{tally.listed[source]:>8}{tally.read[source]:>8}{tally.kept[source]:>8}{tally.kept_bytes[source] / MB:>10.2f}")
    for reason, count in sorted(tally.skipped.items()):
        print(f"skipped: {count} files, {reason}" + (f" ({group_cap / MB:g} MB)" if "cap" in reason else ""))


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, required=True, help="size of the corpus in MB (10^6 bytes)")
    parser.add_argument("--out", type=Path, help="output file (default benchmarks/data/corpus<MB>.txt)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="shuffle seed (default 0)")
    parser.add_argument(
        "--group-cap-mb", type=float, default=2.0, help="most MB one man-page family / doc package / Python package may give (default 2)"
    )
    args = parser.parse_args(argv)
    if args.mb <= 0 or args.group_cap_mb <= 0:
        parser.error("--mb and --group-cap-mb must be positive")
    args.out = args.out or ROOT / "benchmarks" / "data" / f"corpus{args.mb:g}.txt"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    start = time.perf_counter()
    target, group_cap = int(args.mb * MB), int(args.group_cap_mb * MB)
    rng = random.Random(args.seed)
    candidates = shuffle_stably(find_candidates(), args.seed)
    print(f"make_corpus: {len(candidates)} files found; target {target / MB:g} MB, seed {args.seed}")
    documents, tally = collect(candidates, target, group_cap)
    if not documents:
        print("no text found in any source", file=sys.stderr)
        return 1
    report(tally, group_cap)
    written, unique = write_corpus(args.out, documents, target, rng)
    if written > unique:
        print(
            f"all sources read: only {unique / MB:.2f} MB unique; repeated {len(documents)} documents "
            f"in shuffled rounds to reach {written / MB:.2f} MB"
        )
    else:
        print(f"unique real text: {unique / MB:.2f} MB in {len(documents)} documents, no repetition")
    print(f"wrote {args.out} ({written / MB:.2f} MB) in {time.perf_counter() - start:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
