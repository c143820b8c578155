"""Encoding step by step (Tokenizer.encode_steps), token ancestry (Tokenizer.ancestry) and vocabulary statistics.

For every tokenizer the project trains or loads -- our own run, GPT-2 (../shared/gpt2), cl100k_base and
o200k_base (../shared/tiktoken; skipped without them) -- the steps must end in encode()'s tokens.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, pretokenize, train
from bpe.lab.threshold import replay, sample_of
from bpe.lab.vocabulary import BYTE, MERGE, SPECIAL, compression_curve, length_histogram, rarely_used, token_rows, zipf, zipf_slope
from bpe.text.pretokenize import sequence_of_text

SPECIAL_TOKEN = "<|endoftext|>"
TEXT = (
    "low low low low low lower lower widest widest widest newest newest newest newest newest newest\n"
    "It's the newest; they'll lower it.  Numbers 12345 and 3.14 too. aaaa aaa strawberry\n"
    "naïve café — 日本語 🙂 low\tlower\n\n"
)
HELD_OUT = "the lowest newest widest; we lower it 999 times, naïvely. SolidGoldMagikarp"
PIECES = st.sampled_from(["low", " lower", "est", "new", "aaaa", " the", "9.11", "Strawberry", "\n\n", "  ", "日本", "🙂", "é", "'ll", "x"])
TEXTS = st.lists(PIECES, max_size=12).map("".join) | st.text(max_size=30)


def ours(pretokenizer: str = "gpt2", num_merges: int = 80) -> Tokenizer:
    corpus = pretokenize(TEXT, pretokenizer=pretokenizer, special_tokens=[SPECIAL_TOKEN])
    return Tokenizer.from_training(train(corpus, num_merges, special_tokens=[SPECIAL_TOKEN]), pretokenizer)


OURS = {pattern: ours(pattern) for pattern in ("gpt2", "o200k", "none")}


@pytest.fixture(scope="module")
def every_tokenizer(gpt2, openai_tokenizers) -> dict[str, Tokenizer]:
    """Ours, GPT-2's and OpenAI's (the test that uses it skips without ../shared)."""
    return {**{f"ours-{p}": t for p, t in OURS.items()}, "gpt2": Tokenizer.load(gpt2), **openai_tokenizers}


def check_steps(tok: Tokenizer, piece: bytes, k: int | None = None) -> None:
    steps = tok.encode_steps(piece, k)
    assert steps[0].parts == tuple(bytes([b]) for b in piece) and steps[0].rank is None
    assert steps[-1].parts == tok.bpe(piece, k)  # exactly encode's tokens
    ranks = [step.rank for step in steps[1:]]
    assert ranks == sorted(set(ranks))  # strictly increasing within a piece
    for before, step in zip(steps, steps[1:]):
        assert b"".join(step.parts) == piece
        assert len(step.pair_ranks) == len(before.parts) - 1
        assert step.rank == min(r for r in step.pair_ranks if r is not None)  # the lowest rank present wins
        assert step.at and all(step.pair_ranks[i] == step.rank for i in step.at)
        assert len(step.parts) == len(before.parts) - len(step.at)
        assert tok.merges[step.rank] == (before.parts[step.at[0]], before.parts[step.at[0] + 1])
        assert step.count == tok.counts[step.rank]
    if len(steps[-1].parts) > 1:  # the end: no pair left is a merge (within k)
        limit = len(tok.merges) if k is None else k
        assert all(tok.ranks.get(pair, limit) >= limit for pair in zip(steps[-1].parts, steps[-1].parts[1:]))


# ---------------------------------------------------------------------------
# worked examples


def test_lower_is_encoded_by_rank_one_step_at_a_time():
    tok = Tokenizer.from_merges([(b"e", b"r"), (b"l", b"o"), (b"lo", b"w")])
    steps = tok.encode_steps("lower")
    assert [(s.parts, s.rank, s.pair_ranks) for s in steps] == [
        ((b"l", b"o", b"w", b"e", b"r"), None, ()),
        ((b"l", b"o", b"w", b"er"), 0, (1, None, None, 0)),  # e+r is rank 0: it goes first, though it comes last
        ((b"lo", b"w", b"er"), 1, (1, None, None)),
        ((b"low", b"er"), 2, (2, None)),
    ]


def test_one_step_merges_every_place_a_rank_occurs_left_to_right():
    tok = Tokenizer.from_merges([(b"a", b"a")])
    (start, step) = tok.encode_steps(b"aaaaa")
    assert (step.parts, step.at, step.pair_ranks) == ((b"aa", b"aa", b"a"), (0, 2), (0, 0, 0, 0))


def test_k_limits_the_merges_and_pairs_beyond_k_show_as_none():
    tok = Tokenizer.from_merges([(b"l", b"o"), (b"lo", b"w")])
    steps = tok.encode_steps("low", k=1)
    assert [s.parts for s in steps] == [(b"l", b"o", b"w"), (b"lo", b"w")]
    assert tok.encode_steps("low", k=0)[-1].parts == (b"l", b"o", b"w")


def test_a_run_carries_each_merges_count_into_its_step():
    tok = OURS["gpt2"]
    step = tok.encode_steps(" lower")[1]
    assert step.count == tok.counts[step.rank] and step.count >= 2


def test_pre_tokens_keep_special_tokens_whole_and_they_are_one_step():
    tok = OURS["gpt2"]
    assert tok.pre_tokens(f"hi you{SPECIAL_TOKEN}x") == [b"hi", b" you", SPECIAL_TOKEN.encode(), b"x"]
    assert [s.parts for s in tok.encode_steps(SPECIAL_TOKEN)] == [(SPECIAL_TOKEN.encode(),)]


def test_a_byte_the_vocabulary_lacks_is_one_sentence():
    tok = Tokenizer({i: bytes([i]) for i in range(128)}, [])
    with pytest.raises(ValueError, match="lacks, so it cannot be encoded"):
        tok.encode_steps("é")


@settings(max_examples=150, deadline=None)
@given(text=TEXTS, pretokenizer=st.sampled_from(list(OURS)), k=st.one_of(st.none(), st.integers(0, 90)))
def test_our_runs_steps_end_in_encodes_tokens(text, pretokenizer, k):
    tok = OURS[pretokenizer]
    tokens = []
    assert tok.pre_tokens(text) == [p.encode("utf-8", "surrogateescape") for p in sequence_of_text(text, pretokenizer)]
    for piece in tok.pre_tokens(text):
        check_steps(tok, piece, k)
        tokens += tok.encode_steps(piece, k)[-1].parts
    assert tokens == tok.pieces(text, k)


@settings(max_examples=60, deadline=None)
@given(text=TEXTS, k=st.one_of(st.none(), st.integers(0, 5000)))
def test_real_tokenizers_steps_end_in_encodes_tokens(every_tokenizer, text, k):
    for name, tok in every_tokenizer.items():
        tokens = []
        for piece in tok.pre_tokens(text):
            if piece.decode("utf-8", "replace") not in tok.special_tokens:
                check_steps(tok, piece, k)
            tokens += tok.encode_steps(piece, k)[-1].parts
        assert tokens == tok.pieces(text, k), name


@pytest.fixture(scope="module")
def saved_formats(tmp_path_factory) -> dict[str, Tokenizer]:
    """Our run written in every format and read back: HuggingFace tokenizer.json, GPT-2 files, this tool's JSON."""
    folder = tmp_path_factory.mktemp("formats")
    OURS["gpt2"].save(folder)
    return {name: Tokenizer.load(folder / name) for name in ("tokenizer.json", "vocab.json", "tokenizer.bpe.json")}


@settings(max_examples=60, deadline=None)
@given(text=TEXTS)
def test_steps_are_the_same_from_every_file_format(saved_formats, text):
    tok = OURS["gpt2"]
    for name, loaded in saved_formats.items():
        for piece in tok.pre_tokens(text):
            mine, theirs = tok.encode_steps(piece), loaded.encode_steps(piece)
            assert [(s.parts, s.rank, s.pair_ranks) for s in mine] == [(s.parts, s.rank, s.pair_ranks) for s in theirs], name
            if name == "tokenizer.bpe.json":  # the only format that keeps each merge's count
                assert [s.count for s in mine] == [s.count for s in theirs]


# ---------------------------------------------------------------------------
# ancestry


def check_tree(tok: Tokenizer, node) -> None:
    if node.rank is None:
        assert node.parts == () and (len(node.token) == 1 or node.token.decode() in tok.special_tokens)
        return
    left, right = node.parts
    assert (left.token, right.token) == tok.merges[node.rank] and left.token + right.token == node.token
    assert node.count == tok.counts[node.rank]
    for part in node.parts:
        assert part.rank is None or part.rank < node.rank  # a token is made from tokens made before it
        check_tree(tok, part)


def test_ancestry_of_low_goes_down_to_bytes_with_ranks_and_counts():
    tok = OURS["gpt2"]
    tree = tok.ancestry(" lower")
    check_tree(tok, tree)
    assert b"".join(n.token for n in tree.nodes() if n.rank is None) == b" lower"
    assert tree.count is not None and tree.depth >= 2
    assert tok.ancestry(tok.ids[b" lower"]) == tree == tok.ancestry(b" lower")


@pytest.mark.parametrize("bad", ["zzzz-not-a-token", 10**9, b""])
def test_ancestry_of_what_is_not_a_token_is_one_sentence(bad):
    with pytest.raises(ValueError, match="not (a token of this vocabulary|in the vocabulary)"):
        OURS["gpt2"].ancestry(bad)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_real_tokens_ancestry_rebuilds_it(every_tokenizer, data):
    for tok in every_tokenizer.values():
        i = data.draw(st.sampled_from(sorted(tok.vocab)))
        tree = tok.ancestry(i)
        check_tree(tok, tree)
        assert tree.token == tok.vocab[i]


# ---------------------------------------------------------------------------
# vocabulary statistics


def held_out_usage(tok: Tokenizer, k: int | None = None) -> dict[bytes, int]:
    return dict(tok.token_counts(pretokenize(HELD_OUT, pretokenizer=tok.pretokenizer).counts, k))


@pytest.mark.parametrize("k", [0, 10, 80])
def test_token_rows_list_every_token_at_k_with_its_uses(k):
    tok = OURS["gpt2"]
    rows = token_rows(tok, held_out_usage(tok, k), k)
    assert [r.kind for r in rows].count(BYTE) == 256 and [r.kind for r in rows].count(MERGE) == min(k, len(tok.merges))
    assert [r.kind for r in rows].count(SPECIAL) == 1
    assert sum(r.uses for r in rows) == len(tok.encode(HELD_OUT, k))
    for row in rows:
        assert tok.vocab[row.id] == row.token
        if row.kind == MERGE:
            assert b"".join(tok.merges[row.rank]) == row.token and row.made == tok.counts[row.rank]
    assert sum(length_histogram(rows).values()) == len(rows) - 1


def test_rarely_used_are_made_tokens_the_held_out_text_never_needs():
    tok = OURS["gpt2"]
    rows = token_rows(tok, held_out_usage(tok))
    unused = rarely_used(rows)
    assert unused and all(r.kind == MERGE and r.uses == 0 for r in unused)
    assert [r.made for r in unused] == sorted((r.made for r in unused), reverse=True)
    used_text = tok.pieces(HELD_OUT)
    assert not any(r.token in used_text for r in unused)


def test_zipf_is_the_uses_most_first_and_its_slope_is_fitted():
    assert zipf({b"a": 1, b"b": 5, b"c": 0, b"d": 2}) == [5, 2, 1]
    assert zipf_slope([12, 6, 4, 3]) == pytest.approx(-1.0)
    assert zipf_slope([3]) is None


def test_compression_curve_matches_encoding_with_each_prefix():
    tok = OURS["gpt2"]
    curve = compression_curve(replay(tok, sample_of(HELD_OUT)), n_special=1, points=12)
    assert curve[0].k == 0 and curve[-1].k == len(tok.merges)
    for point in curve:
        assert point.vocab_size == 256 + point.k + 1
        assert point.bytes_per_token == pytest.approx(len(HELD_OUT.encode()) / len(tok.encode(HELD_OUT, point.k)))
