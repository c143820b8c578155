"""Reading a tiktoken rank file with the compiled core (bpe/c/ranks.c) gives what the Python parser gives, or leaves it to it.

core.load_ranks either returns exactly the Python path's tokens, ranks and merges
(load._parse_tiktoken: each line checked, each token split by load._rank_merge), or None,
and then the Python parser reads the file or says in one sentence what is wrong: on OpenAI's
own files, on rank files of ours, and on such files mutated (lines swapped or dropped, other
whitespace, base64 that only a lenient decoder reads, tokens and ranks twice). Skipped where
the compiled core is not built (bpe/core/ says why).
"""

from __future__ import annotations

import base64
import os
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, pretokenize, train
from bpe.core import core, missing
from bpe.files import load
from bpe.text.pretokenize_c import SEED

needs_core = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {missing}")
TEXT = "the lowest lower newest widest, it's 12 naïve cafés — 日本 🙂\n\tindented line\n" * 8


def rank_file(tok: Tokenizer) -> str:
    return "".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in tok.vocab.items())


@pytest.fixture(scope="module")
def ours() -> str:
    return rank_file(Tokenizer.from_training(train(pretokenize(TEXT), 400)))


def python_parse(text: str):
    """(tokens, ranks, merges) by the Python parser, in the order load_ranks gives them; or the sentence it raises."""
    try:
        taken, merges = load._parse_tiktoken(text, "f.tiktoken")
    except ValueError as e:
        return str(e)
    return list(taken.values()), list(taken), merges


def compiled_parse(text: str):
    found = core.load_ranks(text, SEED)
    return None if found is None else (found[0], found[1], found[2])


@needs_core
def test_our_rank_files_are_read_as_the_python_parser_reads_them(ours):
    assert compiled_parse(ours) == python_parse(ours)


@needs_core
def test_openai_cl100k_gives_the_python_parsers_merges(tiktoken_files):
    text = (tiktoken_files / "cl100k_base.tiktoken").read_text()
    tokens, ranks, merges = compiled_parse(text)
    assert (tokens, ranks, merges) == python_parse(text)


@needs_core
def test_openai_o200k_splits_each_token_as_the_python_path(tiktoken_files):
    """All of o200k by the Python path takes seconds: a sample of its tokens, each split by load._rank_merge."""
    text = (tiktoken_files / "o200k_base.tiktoken").read_text()
    tokens, ranks, merges = compiled_parse(text)
    assert ranks == list(range(len(ranks))) and len(merges) == len(tokens) - 256
    table = dict(zip(tokens, ranks))
    for rank in random.Random(0).sample(range(256, len(tokens)), 3000):
        assert tuple(load._rank_merge(tokens[rank], table, rank)) == merges[rank - 256], rank


MUTATIONS = st.lists(
    st.tuples(
        st.sampled_from(["swap", "drop", "tab", "crlf", "spaces", "lenient", "unpadded", "twice", "rank twice", "letter", "big"]),
        st.integers(0, 10_000),
    ),
    min_size=1,
    max_size=3,
)


def mutate(text: str, mutations) -> str:
    lines = text.splitlines()
    for kind, at in mutations:
        i = at % len(lines)
        token, rank = (lines[i].split() + ["", ""])[:2]
        if kind == "swap":
            j = (at // 7) % len(lines)
            other, other_rank = (lines[j].split() + ["", ""])[:2]
            lines[i], lines[j] = f"{token} {other_rank}", f"{other} {rank}"
        elif kind == "drop":
            del lines[i]
        elif kind == "tab":
            lines[i] = f"{token}\t{rank}"
        elif kind == "crlf":
            lines[i] += "\r"
        elif kind == "spaces":
            lines[i] = f" {token}  {rank} "
        elif kind == "lenient" and token.endswith("=="):  # bits that only a lenient decoder drops: QR== for QQ==
            lines[i] = f"{token[:-3]}{'ABCDEFGHIJKLMNOP'[(at % 15) + 1]}== {rank}"
        elif kind == "unpadded":
            lines[i] = f"{token.rstrip('=')} {rank}"
        elif kind == "twice":
            lines.append(f"{token} {len(lines) + 5}")
        elif kind == "rank twice":
            lines.append(f"{base64.b64encode(b'zz' + str(at).encode()).decode()} {rank}")
        elif kind == "letter":
            lines[i] = f"{token} {rank}x"
        elif kind == "big":
            lines[i] = f"{token} {2**32 + at}"
    return "\n".join(lines) + "\n"


@needs_core
@settings(max_examples=150, deadline=None)
@given(mutations=MUTATIONS)
def test_a_mutated_file_is_read_the_same_or_left_to_the_python_parser(ours, mutations):
    text = mutate(ours, mutations)
    compiled = compiled_parse(text)
    assert compiled is None or compiled == python_parse(text)
    if all(kind in ("swap", "drop") for kind, _ in mutations) and not isinstance(python_parse(text), str):
        assert compiled is not None  # still the plain form, and valid: read by the core
    loaded = python_parse(text) if compiled is None else compiled
    via_load = None
    try:
        via_load = load.parse_tiktoken(text, "f.tiktoken")
    except ValueError as e:
        assert str(e) == loaded  # the one sentence the Python parser says
    if via_load is not None:
        assert (list(via_load.vocab.values()), list(via_load.vocab), via_load.merges) == loaded


@needs_core
def test_a_long_token_is_split_without_quadratic_work():
    """A 20,000-byte token of one repeated byte: a heap, not a rescan per join (load._rank_merge's own test)."""
    tokens = [bytes([b]) for b in range(256)] + [b"a" * 2**k for k in range(1, 15)]
    text = "".join(f"{base64.b64encode(t).decode()} {i}\n" for i, t in enumerate(tokens))
    assert compiled_parse(text) == python_parse(text)


# ---------------------------------------------------------------------------
# the merges of OpenAI's files, kept on disk between loads


def loads(monkeypatch) -> list[bool]:
    """Record, for each load_ranks call, whether it took the merges from the cache (it hands back nothing to keep then)."""
    taken: list[bool] = []
    real = core.load_ranks

    def spy(text, seed, cached=None):
        found = real(text, seed, cached)
        taken.append(found is not None and found[3] is None)
        return found

    monkeypatch.setattr(core, "load_ranks", spy)
    return taken


@needs_core
def test_openai_merges_are_kept_and_read_back(tiktoken_files, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CACHE", str(tmp_path))
    taken = loads(monkeypatch)
    path = tiktoken_files / "cl100k_base.tiktoken"
    first, second = Tokenizer.load(path), Tokenizer.load(path)
    assert taken == [False, True] and first.merges == second.merges and first.vocab == second.vocab
    (kept,) = tmp_path.glob("merges-*.bin")
    digest = next(sha for sha, known in load.OPENAI_ENCODINGS.items() if known[0] == "cl100k_base")
    assert kept.name == f"merges-{digest}.bin" and kept.stat().st_size == 32 + 8 * len(first.merges)  # signed
    assert mode(kept) == mode(tmp_path / load.KEY_FILE) == 0o600  # the key only this user may read


@needs_core
@pytest.mark.parametrize("damage", ["flip", "cut", "other file's"])
def test_a_damaged_cache_is_not_used_and_is_written_again(tiktoken_files, tmp_path, monkeypatch, damage):
    monkeypatch.setenv("BPE_CACHE", str(tmp_path))
    path = tiktoken_files / "cl100k_base.tiktoken"
    expected = Tokenizer.load(path).merges
    (kept,) = tmp_path.glob("merges-*.bin")
    data = bytearray(kept.read_bytes())
    if damage == "flip":
        data[32 + 8 * 5000] ^= 1  # merge 5000's left part: another token, whose bytes do not make it
    elif damage == "cut":
        data = data[:-8]
    else:
        data[32:48] = data[40:48] + data[32:40]  # two merges' parts swapped: each pair is still two tokens
    kept.write_bytes(bytes(data))
    taken = loads(monkeypatch)
    assert Tokenizer.load(path).merges == expected and taken == [False]
    assert Tokenizer.load(path).merges == expected and taken == [False, True]  # written again, and used


@needs_core
def test_no_cache_when_off_or_unwritable_and_none_for_other_files(tiktoken_files, ours, tmp_path, monkeypatch):
    monkeypatch.setenv("BPE_CACHE", "off")
    Tokenizer.load(tiktoken_files / "cl100k_base.tiktoken")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("BPE_CACHE", str(blocked / "cache"))  # cannot be made (even by root, who may write anywhere)
    assert len(Tokenizer.load(tiktoken_files / "cl100k_base.tiktoken").merges) == 100_000  # loads, keeps nothing
    monkeypatch.setenv("BPE_CACHE", str(tmp_path / "cache"))
    (tmp_path / "ours.tiktoken").write_text(ours)
    Tokenizer.load(tmp_path / "ours.tiktoken")  # not one of OpenAI's: never kept (an upload must not fill a disk)
    assert blocked.read_text() == "not a folder" and not (tmp_path / "cache").exists()


def mode(path) -> int:
    return path.stat().st_mode & 0o777


def resplit(text: str) -> tuple[bytes, int]:
    """The kept form of cl100k's merges with every token that can be split otherwise into two lower-ranked tokens
    split so (the reviewer's poisoned cache: each pair still makes its token of two tokens ranked below it), and
    how many merges that changed."""
    tokens, ranks, merges, _ = core.load_ranks(text, SEED)
    place = {token: k for k, token in enumerate(tokens)}
    rank_of = dict(zip(tokens, ranks))
    pairs, changed = bytearray(), 0
    for left, right in merges:
        token = left + right
        for cut in range(1, len(token)):
            other = token[:cut], token[cut:]
            if other != (left, right) and all(rank_of.get(part, 1 << 40) < rank_of[token] for part in other):
                left, right, changed = *other, changed + 1
                break
        pairs += place[left].to_bytes(4, "little") + place[right].to_bytes(4, "little")
    return bytes(pairs), changed


@needs_core
def test_merges_split_otherwise_are_never_read_back(tiktoken_files, tmp_path, monkeypatch):
    """The core's check cannot tell another split of a token into two lower-ranked tokens from tiktoken's; the
    signature can: the poisoned file is not used but recovered again (the reviewer's: 3,000 words in 4,910 ids, not 3,001)."""
    monkeypatch.setenv("BPE_CACHE", str(tmp_path))
    path = tiktoken_files / "cl100k_base.tiktoken"
    text = path.read_text()
    expected = Tokenizer.load(path)
    (kept,) = tmp_path.glob("merges-*.bin")
    poisoned, changed = resplit(text)
    assert changed > 1000 and core.load_ranks(text, SEED, poisoned)[3] is None  # passes the core's own check
    for data in (poisoned, kept.read_bytes()[:32] + poisoned):  # unsigned, or under the true merges' signature
        kept.write_bytes(data)
        taken = loads(monkeypatch)
        loaded = Tokenizer.load(path)
        assert taken == [False] and loaded.merges == expected.merges
        words = " ".join(f"the{i % 7} newest lowest" for i in range(1000))
        assert loaded.encode(words) == expected.encode(words)
        assert kept.read_bytes()[32:] != poisoned  # kept anew


@needs_core
@pytest.mark.parametrize("whose", ["nobody's file", "a file others may write", "a folder others may enter", "a key others may read"])
def test_merges_kept_where_another_user_could_write_are_never_read(tiktoken_files, tmp_path, monkeypatch, whose):
    """The rules of serve/disk.py: a folder only this user may enter, a file only this user may write, and here a key only this user may read."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("BPE_CACHE", str(cache))
    path = tiktoken_files / "cl100k_base.tiktoken"
    expected = Tokenizer.load(path).merges
    (kept,) = cache.glob("merges-*.bin")
    if whose == "nobody's file":
        if os.geteuid() != 0:
            pytest.skip("only root can give a file to another user")
        os.chown(kept, 65534, 65534)  # nobody
    elif whose == "a file others may write":
        kept.chmod(0o666)
    elif whose == "a folder others may enter":
        cache.chmod(0o777)
    else:
        (cache / load.KEY_FILE).chmod(0o644)
    before = kept.stat().st_mtime_ns
    taken = loads(monkeypatch)
    assert Tokenizer.load(path).merges == expected and taken == [False]
    if whose == "a folder others may enter":
        assert kept.stat().st_mtime_ns == before  # nothing written there either
    else:  # kept anew, this user's
        assert kept.stat().st_uid == os.getuid() and mode(kept) == mode(cache / load.KEY_FILE) == 0o600
        assert Tokenizer.load(path).merges == expected and taken == [False, True]
