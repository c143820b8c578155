"""Build a corpus of real text in many scripts, offline, for the SentencePiece benchmarks.

    python benchmarks/make_mixed_corpus.py --mb 12 --out benchmarks/data/mixed12.txt

make_corpus.py's text is English (docstrings, man pages), and a SentencePiece run on it says little about a
1,000-character alphabet. A Debian machine holds real text in many languages and scripts: the translations of
its programs, gettext catalogues (`*.mo` under /usr/share/locale, vim's ...), ~4,000 files in ~100 languages.
Each catalogue's translated messages are read (stdlib `gettext`), one message a line (a message's own lines
joined with spaces, cut at a word near 1,000 characters: sentencepiece skips lines over 4,192 bytes), and a
third of the corpus is English prose from the standard library's docstrings, so the mix is a multilingual web
page's rather than a dictionary's. Lines are ordered by a seeded shuffle; the output says how many lines,
characters and distinct characters it holds, and which scripts lead.

What it does not do: use the network, or promise the same bytes on another machine (the output follows the
installed catalogues and --seed).
"""

from __future__ import annotations

import argparse
import gettext
import random
import sys
import unicodedata
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bpe.data.corpora import stdlib_prose  # noqa: E402

ROOTS = (Path("/usr/share/locale"), Path("/usr/share/vim"), Path("/usr/lib/locale"), Path("/usr/share"))
MAX_LINE = 1000  # characters


def catalogues() -> list[Path]:
    """Every .mo file under the usual roots, once, sorted."""
    found: set[Path] = set()
    for root in ROOTS:
        if root.is_dir():
            found.update(p.resolve() for p in root.rglob("*.mo"))
    return sorted(found)


def messages(path: Path) -> list[str]:
    """The translated messages of one catalogue, each on one line (its own line breaks made spaces)."""
    try:
        with path.open("rb") as f:
            catalogue = gettext.GNUTranslations(f)
    except (OSError, UnicodeDecodeError, ValueError, KeyError, IndexError, AssertionError, LookupError):
        return []
    out = []
    for key, value in catalogue._catalog.items():  # subtle: the only public way to list a catalogue is this attribute
        if not key or not isinstance(value, str):
            continue
        line = " ".join(value.split())
        if len(line) >= 2:
            out.append(cut(line))
    return out


def cut(line: str) -> str:
    """A line of at most MAX_LINE characters, cut at a space where there is one."""
    if len(line) <= MAX_LINE:
        return line
    at = line.rfind(" ", 0, MAX_LINE)
    return line[: at if at > 0 else MAX_LINE]


def english() -> list[str]:
    """English prose: the standard library's docstrings, one paragraph a line."""
    out = []
    for paragraph in stdlib_prose(6_000_000).split("\n\n"):
        line = " ".join(paragraph.split())
        if len(line) >= 20:
            out.append(cut(line))
    return out


def script_of(c: str) -> str:
    name = unicodedata.name(c, "")
    return name.split(" ")[0] if name else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mb", type=float, default=12.0, help="size of the corpus in MB (10^6 bytes of UTF-8)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    target = int(args.mb * 1_000_000)
    rng = random.Random(args.seed)
    translated: list[str] = []
    files = catalogues()
    for path in files:
        translated.extend(messages(path))
    translated = list(dict.fromkeys(translated))  # a message many catalogues share once
    rng.shuffle(translated)
    prose = english()
    rng.shuffle(prose)
    lines: list[str] = []
    size = 0
    t = p = 0
    while size < target and (t < len(translated) or p < len(prose)):
        take_prose = p < len(prose) and (t >= len(translated) or rng.random() < 1 / 3)
        line = prose[p] if take_prose else translated[t]
        p, t = (p + 1, t) if take_prose else (p, t + 1)
        lines.append(line)
        size += len(line.encode()) + 1
    if size < target:
        print(f"only {size / 1e6:.1f} MB of text here; writing it all", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    args.out.write_text(text, encoding="utf-8")
    chars = Counter(text)
    scripts = Counter()
    for c, n in chars.items():
        scripts[script_of(c)] += n
    print(f"{args.out}: {size / 1e6:.1f} MB, {len(lines):,} lines from {len(files):,} catalogues and the standard library's docstrings")
    print(
        f"{len(text):,} characters, {len(chars):,} distinct; leading scripts: "
        + ", ".join(f"{s} {n / len(text):.0%}" for s, n in scripts.most_common(12))
    )


if __name__ == "__main__":
    main()
