"""SentencePiece's BPE trainer in Python, exactly as sentencepiece 0.2.3 trains `--model_type=bpe`.

The same pieces, scores and types in the same order as `spm_train` (trainer_interface.cc, bpe_model_trainer.cc),
written to be read beside them. A run has four phases:

**1. Lines** (`read_lines`, `select`). Each input file is read with getline on '\\n' ('\\r' stays in the line).
A line is dropped, silently, when it is empty, when it is longer than `max_sentence_length` *bytes* (4192), or
when it holds U+2585 '▅' (the character the trainer uses for <unk>). With `input_sentence_size` N only the first
N lines that are kept are read.

**2. Characters** (`prepare`). Each line is normalized (normalizer.py). Then every occurrence of a meta piece's
text -- <unk>, <s>, </s>, <pad> when it has an id, the control and user-defined symbols, the 256 <0xNN> with
byte_fallback -- is cut out and leaves a boundary (U+001F), as is `pretokenization_delimiter`. Lines that became
empty are dropped. The code points are counted and sorted (the `required_chars` first, then by count descending,
then by code point); characters are kept in that order until the share of all characters kept so far -- computed
*before* adding the next one, in float32 as the C++ does -- reaches `character_coverage`. Every character not kept
becomes <unk> ('▅') and splits what is around it, like the boundaries. With `split_by_whitespace` each line is cut
into words, each starting at its '▁' (or ending at it with `treat_whitespace_as_suffix`), and equal words are
counted: the corpus is a list of (word, count), sorted by count descending, then by bytes.

**3. Merges** (`Trainer.merges`). Every adjacent pair of symbols whose concatenation would be a *valid* piece
(`why_invalid`: at most `max_sentencepiece_length` code points, no '▅', no space, '▁' only first (last with
`treat_whitespace_as_suffix`), one Unicode script -- Hiragana, Katakana and 'ー' count as Han, a combining mark
takes the script before it, digits are Common so 'F1' cannot form while '1.' can --, no digit in a longer piece
with `split_digits`) is a candidate, and its frequency counts every occurrence, overlapping ones too ('aaa' holds
(a, a) twice). The loop takes the best candidate by (frequency descending, length in code points ascending, UTF-8
bytes ascending), replaces its occurrences left to right without overlap ('aaa' -> 'aa' 'a'), and updates the
frequencies of the pairs around each occurrence: the two old neighbours' pairs lose it, the two new ones gain it.
The best is taken from a lazy max-heap whose entries are checked when they reach the top, as in heap.py.

- subtle: a candidate is never forgotten. A pair that an earlier merge made and a later one took apart keeps its
  entry at frequency 0, and once every pair with a positive frequency is taken, such pairs are merged, best
  first by the same rule (so a small corpus fills any vocabulary with pieces that never occur: 'abab' makes
  (ab, a) while merging (a, b), then loses it when (ab, ab) is merged, and (ab, a) still becomes 'aba').
- subtle: sentencepiece also drops a chosen pair whose string is already a piece, without counting it as a merge
  ('aaa' could be 'aa'+'a' or 'a'+'aa', its comment says). Merging left to right without overlap keeps two pairs
  of one string from both existing, so this never happened on any corpus we tried; the guard is kept, as is.

**4. Pieces** (`Trainer.model`). The meta pieces sit at their ids with score 0 (unk 0, bos 1, eos 2 by default;
then the control symbols, the user-defined symbols and the 256 byte pieces at the lowest free ids). The other
ids are filled, in order, by the merged pieces in merge order and then the kept characters by count descending,
then code point; the k-th of these has score -k. The number of merges is `vocab_size` minus the meta pieces
minus the characters. With `hard_vocab_limit` a run that cannot make that many (too small a corpus, or too few
valid pairs) is an error that says the largest vocab_size that works; without it the vocabulary is smaller.

    model = train(["corpus.txt"], SentencePieceSpec(vocab_size=1000, byte_fallback=True))
    trainer = Trainer(prepare(select(read_lines(["corpus.txt"]), spec), spec), spec)
    for merge in trainer.merges():   # one PieceMerge per merge: the pair, its frequency, the runner-up
        ...
    model = trainer.model()

What this does not do: the unigram, word and char trainers, `auto_character_coverage` (new in 0.2.3), the
sampling of `input_sentence_size` (spec.py says why), tsv input, or threads (sentencepiece's threads only split
the first count; the result does not depend on them).
- subtle: the heap orders its entries by (frequency, length, string) and nothing else, so two different pairs
  tie only if they make the same string, which (above) does not happen: the order of equal entries, which in
  sentencepiece follows a hash map of pointers, never decides anything. Here the entry pushed first would win.
"""

from __future__ import annotations

import heapq
import re
import struct
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..events import DETAIL_CAP
from .model import BPE, BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED, Piece, SentencePieceModel, byte_piece
from .normalizer import SPACE, Normalizer, valid_codepoint
from .scripts import script
from .spec import SentencePieceSpec

UNK_CHAR = "\u2585"  # ▅: every character outside the coverage becomes it (trainer_interface.cc kUNKChar)
UNK_BYTES = UNK_CHAR.encode()
BOUNDARY = "\x1f"  # where a meta piece or the pretokenization delimiter was (kPretokenizationBoundaryChar)
ANY = "(any)"  # a character that matches every script: a digit without split_by_number

# why a pair is not a candidate, as the step page says it
TOO_LONG = "longer than max_sentencepiece_length"
TWO_SCRIPTS = "two scripts"
DIGIT = "a digit (split_digits)"
SPACE_INSIDE = "▁ inside"
UNKNOWN_CHAR = "a character outside the coverage"
NOT_TEXT = "a control character SentencePiece never joins"


# ---------------------------------------------------------------------------
# 1. lines


def read_lines(paths: Iterable[str | Path]) -> Iterator[bytes]:
    """Every line of every file, in order, as std::getline reads them: split on b'\\n', '\\r' kept, no line after a last '\\n'."""
    for path in paths:
        try:
            data = Path(path).read_bytes()
        except OSError as error:
            raise ValueError(f"Cannot read {path}: {error.strerror or error}.") from None
        lines = data.split(b"\n")
        if lines[-1] == b"":
            lines.pop()
        yield from lines


@dataclass(frozen=True)
class Lines:
    """The lines a run trains on, and how many were dropped and why (`lines` is empty when the core read them)."""

    lines: tuple[bytes, ...]
    empty: int = 0
    too_long: int = 0  # over max_sentence_length bytes
    reserved: int = 0  # held U+2585
    read: int | None = None  # how many lines were kept, when the core read them (trainer_c.prepare_files)

    @property
    def kept(self) -> int:
        return len(self.lines) if self.read is None else self.read


def select(lines: Iterable[bytes | str], spec: SentencePieceSpec) -> Lines:
    """LoadSentences' filter: drop empty lines, lines over max_sentence_length bytes and lines holding '▅'; stop at input_sentence_size.

    [b'ab', b'', b'x' * 5000, 'a▅'] -> Lines((b'ab',), empty=1, too_long=1, reserved=1)
    """
    lines = [line.encode("utf-8", "surrogatepass") if isinstance(line, str) else line for line in lines]
    if spec.input_sentence_size:  # stop at the N-th line kept: the lines after it are not looked at
        kept, at = [], 0
        while at < len(lines) and len(kept) < spec.input_sentence_size:
            line = lines[at]
            if line and len(line) <= spec.max_sentence_length and UNK_BYTES not in line:
                kept.append(line)
            at += 1
        lines = lines[:at]
    else:
        kept = [line for line in lines if line and len(line) <= spec.max_sentence_length and UNK_BYTES not in line]
    empty = lines.count(b"")
    too_long = sum(len(line) > spec.max_sentence_length for line in lines)
    reserved = len(lines) - len(kept) - empty - too_long
    return Lines(tuple(kept), empty, too_long, reserved)


# ---------------------------------------------------------------------------
# 2. meta pieces and characters


def meta_pieces(spec: SentencePieceSpec) -> dict[int, tuple[str, int]]:
    """InitMetaPieces: id -> (piece, type) for <unk>, <s>, </s>, <pad>, the control and user-defined symbols and the byte pieces.

    SentencePieceSpec() -> {0: ('<unk>', UNKNOWN), 1: ('<s>', CONTROL), 2: ('</s>', CONTROL)}
    """
    meta: dict[int, tuple[str, int]] = {}
    has_unk = False
    for name in ("unk", "bos", "eos", "pad"):
        piece_id, piece = getattr(spec, f"{name}_id"), getattr(spec, f"{name}_piece")
        if piece_id < 0:
            continue
        if piece_id >= spec.vocab_size:
            raise ValueError(f"{name}_id {piece_id} is outside a vocabulary of {spec.vocab_size} pieces.")
        if piece_id in meta:
            raise ValueError(f"{name}_id {piece_id} is already the id of {meta[piece_id][0]}.")
        if has_unk and piece == spec.unk_piece:
            raise ValueError(f"{piece} is defined twice.")
        has_unk = has_unk or piece == spec.unk_piece
        meta[piece_id] = (piece, UNKNOWN if piece == spec.unk_piece else CONTROL)
    if not spec.byte_fallback and not has_unk:
        raise ValueError(f"{spec.unk_piece} must have an id (unk_id) unless byte_fallback is on.")
    seen: set[str] = set()
    free = 0

    def insert(piece: str, kind: int) -> None:
        nonlocal free
        if piece in seen:
            raise ValueError(f"{piece} is already defined: duplicated symbols are not allowed.")
        seen.add(piece)
        if piece == spec.unk_piece:
            raise ValueError(f"{spec.unk_piece} must not be a control or user-defined symbol.")
        for name in ("bos", "eos", "pad"):  # <s> as a user-defined symbol changes <s>'s type, not its id
            if piece == getattr(spec, f"{name}_piece") and getattr(spec, f"{name}_id") >= 0:
                meta[getattr(spec, f"{name}_id")] = (piece, kind)
                return
        while free in meta:
            free += 1
        meta[free] = (piece, kind)

    for piece in spec.control_symbols:
        insert(piece, CONTROL)
    for piece in spec.user_defined_symbols:
        insert(piece, USER_DEFINED)
    if spec.byte_fallback:
        for b in range(256):
            insert(byte_piece(b), BYTE)
    return meta


def float32(x: float) -> float:
    """x rounded to the nearest float32, as `const float coverage = ...` rounds it: 0.9995 -> 0.999499976634979."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def split_into_words(text: str, treat_whitespace_as_suffix: bool = False, allow_whitespace_only_pieces: bool = False) -> list[str]:
    """model_interface.cc SplitIntoWords: '▁a▁b' -> ['▁a', '▁b']; as suffix 'a▁b▁' -> ['a▁', 'b▁'].

    subtle: a run of '▁' stays with the word after it ('▁▁a' -> ['▁', '▁a']) unless whitespace-only pieces are
    allowed, when the run is one word ('▁▁', 'a' as suffix ...).
    """
    words: list[str] = []
    in_ws = False
    if treat_whitespace_as_suffix:
        if text:
            words.append("")
        for i, ch in enumerate(text):
            is_ws = ch == SPACE
            if is_ws:
                in_ws = True
            elif in_ws:
                if allow_whitespace_only_pieces:
                    words.append("")
                in_ws = False
            words[-1] += ch
            if i + 1 < len(text) and is_ws and not allow_whitespace_only_pieces:
                words.append("")
    else:
        for i, ch in enumerate(text):
            is_ws = ch == SPACE
            if i == 0 or (is_ws and (not in_ws or not allow_whitespace_only_pieces)):
                words.append("")
                in_ws = True
            if in_ws and not is_ws:
                in_ws = False
            words[-1] += ch
    return words


@dataclass(frozen=True)
class Corpus:
    """What the merge loop starts from: the words (or whole lines) with their counts, and the characters kept.

    required: the kept characters with their counts, in the order they become pieces (count descending, then
    code point). dropped: the characters that fell outside the coverage (they became <unk>), most frequent first.
    """

    words: tuple[tuple[str, int], ...]  # empty when `compiled` holds them
    required: tuple[tuple[str, int], ...]
    dropped: tuple[tuple[str, int], ...]
    characters: int  # all characters counted (boundaries too), the denominator of the coverage
    coverage: float  # the share of them the kept characters cover
    lines: Lines = field(default_factory=lambda: Lines(()))
    compiled: object = field(default=None, compare=False, repr=False)  # the core's SpmCorpus (trainer_c.py), which holds the words
    split: bool = True  # split_by_whitespace: words, not whole lines

    def all_words(self) -> tuple[tuple[str, int], ...]:
        """The words with their counts in sentencepiece's order, wherever they are held (the core keeps them unsorted)."""
        if self.compiled is None:
            return self.words
        words = self.compiled.words()
        return tuple(sorted(words, key=lambda wc: (-wc[1], wc[0])) if self.split else words)


def prepare(lines: Lines, spec: SentencePieceSpec) -> Corpus:
    """Phase 2: normalize, cut at meta pieces, choose the characters by coverage, replace the rest by '▅', split into words."""
    meta = meta_pieces(spec)
    normalizer = Normalizer(spec.normalizer_spec(), treat_whitespace_as_suffix=spec.treat_whitespace_as_suffix)
    # the PrefixMatcher's GlobalReplace: at each position the longest meta piece that starts there
    cut = re.compile("|".join(re.escape(p) for p in sorted({p for p, _ in meta.values()}, key=len, reverse=True)))
    sentences: list[str] = []
    for line in lines.lines:
        text = cut.sub(BOUNDARY, normalizer.normalize_bytes(line).decode("utf-8"))
        if spec.pretokenization_delimiter:
            text = text.replace(spec.pretokenization_delimiter, BOUNDARY)
        if text:
            sentences.append(text)
    # count the characters, and keep the frequent ones
    counts: Counter[str] = Counter()
    for text in sentences:
        counts.update(text)
    required, dropped, total, covered = choose_characters(counts, spec, len(meta))
    # every other character becomes <unk>
    kept = dict(required)
    unknown = {ord(c): UNK_CHAR for c in counts if c not in kept}
    unknown[0] = UNK_CHAR
    sentences = [text.translate(unknown) for text in sentences]
    if spec.split_by_whitespace:
        words: Counter[str] = Counter()
        for text in sentences:
            words.update(split_into_words(text, spec.treat_whitespace_as_suffix, spec.allow_whitespace_only_pieces))
        corpus = sorted(words.items(), key=lambda wc: (-wc[1], wc[0]))
    else:
        corpus = [(text, 1) for text in sentences]
    return Corpus(words=tuple(corpus), required=required, dropped=dropped, characters=total, coverage=covered / total, lines=lines)


def choose_characters(counts: Mapping[str, int], spec: SentencePieceSpec, n_meta: int) -> tuple[tuple, tuple, int, int]:
    """The characters kept by the coverage: (required, dropped, characters counted, characters covered).

    Counted without NUL (the corpus "must be encoded in utf-8"); the required_chars first, then by count
    descending, then code point; kept until the share covered, in float32, reaches character_coverage.
    """
    counts = {c: n for c, n in counts.items() if c != "\0"}
    total = sum(counts.values())
    if total == 0:
        raise ValueError("Nothing to train on: every line was empty, too long, held U+2585 or normalized to nothing.")
    asked = {c for c in spec.required_chars if c != "\0"}
    for c in asked:
        if not valid_codepoint(ord(c)):
            raise ValueError(f"required_chars holds {c!r}, which is not a character.")
    order = sorted(asked | set(counts), key=lambda c: (c not in asked, -counts.get(c, 0), c))
    required: dict[str, int] = {}
    covered, goal = 0, float32(spec.character_coverage)
    for c in order:
        if float32(covered / total) >= goal:
            break
        covered += counts.get(c, 0)
        if c != BOUNDARY:
            required[c] = counts.get(c, 0)
    if UNK_CHAR in required:
        raise ValueError("required_chars must not hold U+2585, the character that stands for <unk>.")
    if len(required) + n_meta > spec.vocab_size:
        raise ValueError(
            f"vocab_size {spec.vocab_size:,} is smaller than the {len(required):,} characters the coverage keeps plus the "
            f"{n_meta:,} meta pieces: raise vocab_size or lower character_coverage."
        )
    dropped = sorted(((c, n) for c, n in counts.items() if c not in required and c != BOUNDARY), key=lambda cn: (-cn[1], cn[0]))
    return tuple(sorted(required.items(), key=lambda cn: (-cn[1], cn[0]))), tuple(dropped), total, covered


# ---------------------------------------------------------------------------
# 3. the validity rule


def is_decimal(c: int) -> bool:
    """trainer_interface.cc is_unicode_decimal_number: ASCII and fullwidth digits only."""
    return 0x30 <= c <= 0x39 or 0xFF10 <= c <= 0xFF19


def why_invalid(piece: str, spec: SentencePieceSpec) -> str | None:
    """None if piece may be made (IsValidSentencePiece), else why not, as the step page says it.

    'ab' -> None; 'F1' -> 'two scripts'; 'a▁b' -> '▁ inside'; 'カナ漢' -> None (Katakana counts as Han).
    """
    n = len(piece)
    if n == 0 or n > spec.max_sentencepiece_length:
        return TOO_LONG
    previous = ANY
    all_whitespace = all(ch == SPACE for ch in piece)
    for pos, ch in enumerate(piece):
        c = ord(ch)
        if ch == UNK_CHAR:
            return UNKNOWN_CHAR
        if c == 0 or ch == BOUNDARY or c == 0x20 or not valid_codepoint(c):
            return NOT_TEXT
        if ch == SPACE:
            if spec.allow_whitespace_only_pieces and all_whitespace:
                continue
            last = pos == n - 1
            if spec.treat_whitespace_as_suffix:
                if (spec.split_by_whitespace and not last) or (not spec.split_by_whitespace and not last and pos == 0):
                    return SPACE_INSIDE
            elif (spec.split_by_whitespace and pos > 0) or (not spec.split_by_whitespace and pos > 0 and last):
                return SPACE_INSIDE
            continue
        name = script(c)
        if name in ("Hiragana", "Katakana") or c == 0x30FC:  # ー, the Katakana long vowel mark, is Common in the table
            name = "Han"
        elif name == "Inherited":
            name = previous
        if not spec.split_by_number and is_decimal(c):
            name = ANY
        if spec.split_digits and is_decimal(c) and n > 1:
            return DIGIT
        if spec.split_by_unicode_script and name != ANY and previous != ANY and previous != name:
            return TWO_SCRIPTS
        previous = name
    return None


# ---------------------------------------------------------------------------
# 4. the merge loop


class Symbol:
    """A character or a pair of symbols (bpe_model_trainer.h Symbol): its string, frequency and where it occurs.

    positions: (sentence, left index, right index) of every occurrence ever added, stale ones included (checked
    when used). stale: the frequency went down since the last heap entry was pushed (needs_recomputation).
    """

    __slots__ = ("piece", "left", "right", "char_len", "freq", "positions", "active", "pending", "stale", "unk")

    def __init__(self, piece: str, left: Symbol | None = None, right: Symbol | None = None) -> None:
        self.piece = piece
        self.left, self.right = left, right
        self.char_len = left.char_len + right.char_len if left is not None and right is not None else 1
        self.freq = 0
        self.positions: list[tuple[int, int, int]] = []
        self.active = True
        self.pending = False
        self.stale = True
        self.unk = piece == UNK_CHAR

    def __repr__(self) -> str:
        return f"Symbol({self.piece!r}, freq={self.freq})"


@dataclass(frozen=True, slots=True)
class PieceMerge:
    """One merge of a SentencePiece run, as the step page shows it.

    rank 0 is the first merge; id is the piece's id in the model. frequency 0 means a pair no longer in the
    corpus (see the module docstring). dropped: candidates chosen just before this one and dropped because their
    string was already a piece.
    """

    rank: int
    left: str
    right: str
    id: int
    frequency: int
    runner_up: tuple[str, str] | None
    runner_up_frequency: int
    occurrences: int  # places rewritten (in distinct words, each counted once per place)
    dropped: tuple[str, ...] = ()
    detail: MergeDetail | None = field(default=None, compare=False)

    @property
    def piece(self) -> str:
        return self.left + self.right

    @property
    def tie(self) -> bool:
        return self.runner_up is not None and self.runner_up_frequency == self.frequency


@dataclass(frozen=True, slots=True)
class MergeDetail:
    """What the step page shows beside a merge (only made with detail=True): the candidates and the pairs refused.

    top: the best candidates before the merge, (left, right, frequency), best first.
    refused: the adjacent pairs that would rank among those top candidates but are not candidates, (left, right,
    frequency, why), most frequent first, then by their strings (DetailCounts keeps their frequencies merge to merge).
    """

    top: tuple[tuple[str, str, int], ...]
    refused: tuple[tuple[str, str, int, str], ...]


UNSEEN = object()  # a pair not looked at yet (DetailCounts.why)


class DetailCounts:
    """The frequencies of the adjacent pairs that may not be made (and why), for MergeDetail.refused: counted once, then kept.

    At each merge every word is compared with how it stood at the last one (a list comparison, in C) and only the
    words a merge rewrote are counted again, so the detail of a merge costs what the merge changed, not the corpus
    (a recount of 2 MB of text took 0.2 s a merge).
    """

    def __init__(self, spec: SentencePieceSpec, symbols: list[list[Symbol | None]], weights: list[int]) -> None:
        self.spec, self.symbols, self.weights = spec, symbols, weights
        self.counts: dict[tuple[str, str], int] = {}  # (left, right) -> frequency, refused pairs only
        self.why: dict[tuple[str, str], str | None] = {}  # (left, right) -> why it is refused, None for a candidate
        self.seen = [row[:] for row in symbols]
        for sid, row in enumerate(symbols):
            self._count(row, weights[sid])

    def _count(self, row: list[Symbol | None], weight: int) -> None:
        kept = [s for s in row if s is not None]
        counts, why = self.counts, self.why
        for a, b in zip(kept, kept[1:]):
            key = (a.piece, b.piece)
            reason = why.get(key, UNSEEN)
            if reason is UNSEEN:
                reason = why[key] = UNKNOWN_CHAR if a.unk or b.unk else why_invalid(a.piece + b.piece, self.spec)
            if reason is not None:
                n = counts.get(key, 0) + weight
                if n:
                    counts[key] = n
                else:
                    del counts[key]

    def refused(self, floor: int) -> tuple[tuple[str, str, int, str], ...]:
        """The refused pairs at least `floor` frequent now, most frequent first (then by their strings), at most DETAIL_CAP."""
        for sid, row in enumerate(self.symbols):
            if row != self.seen[sid]:  # rewritten by a merge since the last look: count it again
                self._count(self.seen[sid], -self.weights[sid])
                self._count(row, self.weights[sid])
                self.seen[sid] = row[:]
        found = sorted(((n, key) for key, n in self.counts.items() if n >= floor), key=lambda nk: (-nk[0], nk[1]))
        return tuple((a, b, n, self.why[(a, b)]) for n, (a, b) in found[:DETAIL_CAP])


class Trainer:
    """bpe_model_trainer.cc's Trainer over a prepared corpus: merges() yields one PieceMerge per merge, model() the result.

    Trainer(prepare(select(read_lines(paths), spec), spec), spec)
    """

    def __init__(self, corpus: Corpus, spec: SentencePieceSpec) -> None:
        self.spec = spec
        self.corpus = corpus
        self.meta = meta_pieces(spec)
        self.merged: list[tuple[str, int]] = []  # (piece, frequency) in merge order
        self.stop_reason = ""
        self._cache: dict[object, Symbol] = {}  # a character -> its symbol; (left, right) -> their pair's symbol
        self._invalid: dict[tuple[Symbol, Symbol], str] = {}  # pairs that may not be made (not cached by the C++)
        self._heap: list[tuple[int, int, str, int, Symbol]] = []
        self._pushes = 0
        self._pending: list[Symbol] = []
        self._shown: DetailCounts | None = None  # the refused pairs' frequencies, kept from merge to merge (detail only)
        words = corpus.all_words()
        self.words = [word for word, _ in words]
        self.weights = [count for _, count in words]
        # phase 1: each word as a list of symbols, one per character; None marks a place merged into its left neighbour
        self.symbols: list[list[Symbol | None]] = [[self._char(c) for c in word] for word in self.words]
        # phase 2: count every adjacent pair once, in word order, then make the valid ones candidates
        stats: dict[tuple[Symbol, Symbol], list] = {}
        for sid, row in enumerate(self.symbols):
            weight = self.weights[sid]
            for i in range(1, len(row)):
                left, right = row[i - 1], row[i]
                if left.unk or right.unk:
                    continue
                entry = stats.get((left, right))
                if entry is None:
                    entry = stats[(left, right)] = [0, []]
                entry[0] += weight
                entry[1].append((sid, i - 1, i))
        for (left, right), (freq, positions) in stats.items():
            symbol = self._pair(left, right)
            if symbol is not None:
                symbol.freq += freq
                symbol.positions.extend(positions)
                self._queue(symbol)
        self._flush()

    # -- symbols -------------------------------------------------------------
    def _char(self, c: str) -> Symbol:
        """GetCharSymbol: the one symbol of character c."""
        symbol = self._cache.get(c)
        if symbol is None:
            symbol = self._cache[c] = Symbol(c)
        return symbol

    def _pair(self, left: Symbol | None, right: Symbol | None) -> Symbol | None:
        """GetPairSymbol: the one symbol of the pair, made when first asked; None if the pair may not be made."""
        if left is None or right is None or left.unk or right.unk:
            return None
        key = (left, right)
        symbol = self._cache.get(key)
        if symbol is not None:
            return symbol
        if key in self._invalid or why_invalid(left.piece + right.piece, self.spec) is not None:
            self._invalid[key] = ""
            return None
        symbol = self._cache[key] = Symbol(left.piece + right.piece, left, right)
        return symbol

    # -- the heap ------------------------------------------------------------
    def _push(self, symbol: Symbol) -> None:
        """An entry with the symbol's frequency now: (frequency desc, length asc, string asc), then push order."""
        self._pushes += 1
        heapq.heappush(self._heap, (-symbol.freq, symbol.char_len, symbol.piece, self._pushes, symbol))

    def _queue(self, symbol: Symbol) -> None:
        """Remember a symbol whose frequency went up: it gets a new heap entry once the merge is done."""
        if not symbol.pending:
            symbol.pending = True
            self._pending.append(symbol)

    def _flush(self) -> None:
        """Push an entry for each symbol queued, with its frequency after the whole merge."""
        for symbol in self._pending:
            symbol.pending = False
            if symbol.active:
                self._recompute(symbol)
                self._push(symbol)
        self._pending.clear()

    @staticmethod
    def _recompute(symbol: Symbol) -> None:
        """ComputeFreq: the frequency is kept up to date, so only forget the places of a pair that occurs no more."""
        if symbol.stale:
            if symbol.freq == 0:
                symbol.positions = []
            symbol.stale = False

    def _clean_top(self) -> Symbol | None:
        """Pop entries until the top one is current; return its symbol (left on the heap), or None if the heap is empty.

        An entry is dropped when its symbol was merged (inactive) or when a newer entry holds its frequency; a
        symbol whose frequency went down is pushed again with the frequency it has now.
        """
        heap = self._heap
        while heap:
            freq, _, _, _, symbol = heap[0]
            if not symbol.active:
                heapq.heappop(heap)
            elif symbol.stale:
                heapq.heappop(heap)
                self._recompute(symbol)
                self._push(symbol)
            elif -freq != symbol.freq:
                heapq.heappop(heap)
            else:
                return symbol
        return None

    def _drop(self, symbol: Symbol) -> None:
        """Take a symbol out of the game: forget it in the cache, so that it is never chosen again."""
        if self._cache.get((symbol.left, symbol.right)) is symbol:
            del self._cache[(symbol.left, symbol.right)]
        symbol.active = False
        symbol.positions = []

    # -- merging -------------------------------------------------------------
    def _next(self, row: list[Symbol | None], i: int) -> int:
        for j in range(i + 1, len(row)):
            if row[j] is not None:
                return j
        return -1

    def _previous(self, row: list[Symbol | None], i: int) -> int:
        for j in range(i - 1, -1, -1):
            if row[j] is not None:
                return j
        return -1

    def _lose(self, sid: int, left: int, right: int, best: Symbol) -> None:
        """ResetFreq: the pair at (left, right) loses this occurrence (unless it is the pair being merged)."""
        if left == -1 or right == -1:
            return
        row = self.symbols[sid]
        symbol = self._pair(row[left], row[right])
        if symbol is not None and symbol is not best:
            symbol.freq -= self.weights[sid]
            symbol.stale = True

    def _gain(self, sid: int, left: int, right: int) -> None:
        """AddNewPair: the pair at (left, right) gains this occurrence."""
        if left == -1 or right == -1:
            return
        row = self.symbols[sid]
        symbol = self._pair(row[left], row[right])
        if symbol is not None:
            symbol.positions.append((sid, left, right))
            symbol.freq += self.weights[sid]
            self._queue(symbol)

    def _accept(self, best: Symbol) -> int:
        """AcceptSymbol: rewrite every place the pair still occurs, left to right; return how many places."""
        done = 0
        for sid, left, right in best.positions:
            row = self.symbols[sid]
            # a place listed earlier may have changed since: skip it unless it still holds the pair
            if row[left] is not best.left or row[right] is not best.right:
                continue
            after, before = self._next(row, right), self._previous(row, left)
            # the pairs with the old neighbours lose the place ...
            self._lose(sid, before, left, best)
            self._lose(sid, right, after, best)
            # ... the two symbols become one ...
            row[left], row[right] = best, None
            # ... and the pairs with the new symbol gain it
            self._gain(sid, before, left)
            self._gain(sid, left, after)
            done += 1
        self._drop(best)
        return done

    def merges(self, detail: bool = False) -> Iterator[PieceMerge]:
        """Yield one PieceMerge per merge until the vocabulary is full or no candidate is left (stop_reason says which)."""
        ids = iter(i for i in range(self.spec.vocab_size) if i not in self.meta)
        max_merges = max(0, self.spec.vocab_size - len(self.meta) - len(self.corpus.required))
        made = {piece for piece, _ in self.merged}
        dropped: list[str] = []
        while len(self.merged) < max_merges:
            shown = self._detail() if detail else None
            # choose: the best current entry
            best = self._clean_top()
            if best is None:
                self.stop_reason = "no candidates left"
                return
            heapq.heappop(self._heap)
            # a string that is already a piece is dropped: it is no merge
            if best.piece in made:
                dropped.append(best.piece)
                self._drop(best)
                continue
            made.add(best.piece)
            self.merged.append((best.piece, best.freq))
            runner = self._clean_top()
            event = PieceMerge(
                rank=len(self.merged) - 1,
                left=best.left.piece,
                right=best.right.piece,
                id=next(ids),
                frequency=best.freq,
                runner_up=(runner.left.piece, runner.right.piece) if runner else None,
                runner_up_frequency=runner.freq if runner else 0,
                occurrences=0,
                dropped=tuple(dropped),
                detail=shown,
            )
            dropped = []
            # merge it everywhere, then give every pair whose frequency went up a new entry
            occurrences = self._accept(best)
            self._flush()
            yield event if not occurrences else _with(event, occurrences)
        self.stop_reason = "vocab_size"

    # -- detail --------------------------------------------------------------
    def _detail(self) -> MergeDetail:
        """The top candidates (the best of the symbols the heap holds) and the pairs refused, as frequent as the last of them."""
        live = {id(symbol): symbol for _, _, _, _, symbol in self._heap if symbol.active and symbol.freq >= 0}
        ranked = heapq.nsmallest(DETAIL_CAP, live.values(), key=lambda s: (-s.freq, s.char_len, s.piece))
        top = tuple((s.left.piece, s.right.piece, s.freq) for s in ranked)
        floor = ranked[-1].freq if len(ranked) == DETAIL_CAP else 1  # a refused pair shown would rank among the top
        if self._shown is None:
            self._shown = DetailCounts(self.spec, self.symbols, self.weights)
        # subtle: frequency-0 candidates aside, a pair that no longer occurs is no news (floor at least 1)
        return MergeDetail(top, self._shown.refused(max(floor, 1)))

    # -- the model -----------------------------------------------------------
    def pieces(self) -> list[Piece]:
        """The final pieces in id order (Serialize): meta pieces at their ids, the rest filled by merges then characters."""
        final = [piece for piece, _ in self.merged] + [c for c, _ in self.corpus.required]
        pieces: list[Piece] = []
        rest = iter(final)
        placed = 0
        for i in range(self.spec.vocab_size):
            if i in self.meta:
                if len(pieces) != i:
                    raise ValueError(
                        f"The vocabulary has too few pieces to reach id {i} of {self.meta[i][0]}: lower its id or set hard_vocab_limit."
                    )
                piece, kind = self.meta[i]
                pieces.append(Piece(piece, 0.0, kind))
            elif placed < len(final):
                pieces.append(Piece(next(rest), -float(placed), NORMAL))
                placed += 1
        seen: set[str] = set()
        for p in pieces:
            if p.piece in seen:
                raise ValueError(f"{p.piece} is already defined: a piece the trainer made is also a meta piece.")
            seen.add(p.piece)
        if self.spec.hard_vocab_limit and len(pieces) != self.spec.vocab_size:
            raise ValueError(
                f"Vocabulary size too high ({self.spec.vocab_size:,}): this corpus and these settings make at most "
                f"{len(pieces):,} pieces. Set vocab_size to at most {len(pieces):,}, or hard_vocab_limit to false."
            )
        return pieces

    def model(self) -> SentencePieceModel:
        """The trained model; call it after merges() has run to its end."""
        pieces = self.pieces()
        return SentencePieceModel(tuple(pieces), self.spec.normalizer_spec(), trainer_fields(self.spec, len(pieces)))


def _with(event: PieceMerge, occurrences: int) -> PieceMerge:
    return PieceMerge(
        event.rank,
        event.left,
        event.right,
        event.id,
        event.frequency,
        event.runner_up,
        event.runner_up_frequency,
        occurrences,
        event.dropped,
        event.detail,
    )


def trainer_fields(spec: SentencePieceSpec, pieces: int) -> dict[str, object]:
    """The TrainerSpec a model of this spec records: model_type, vocab_size (the pieces made) and every setting not at its default."""
    fields: dict[str, object] = {"model_type": BPE, "vocab_size": pieces if not spec.hard_vocab_limit else spec.vocab_size}
    default = SentencePieceSpec()
    for name in SentencePieceSpec.__dataclass_fields__:
        if name in ("vocab_size", "normalization_rule_name", "add_dummy_prefix", "remove_extra_whitespaces"):
            continue  # the normalizer's settings go to the NormalizerSpec
        value = getattr(spec, name)
        if value != getattr(default, name):
            fields[name] = value
    return fields


# ---------------------------------------------------------------------------


def strip_line_end(sentence: str | bytes) -> str | bytes:
    """'text\r\n' -> 'text': what sentencepiece's Python sentence_iterator does to each sentence."""
    return sentence.rstrip("\r\n") if isinstance(sentence, str) else sentence.rstrip(b"\r\n")
