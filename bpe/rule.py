"""The two operations every trainer shares: choose the next pair, merge it in a word.

Written once so that the four trainers cannot disagree on them.

Choosing: the pair with the highest count wins. Among pairs with the same
count a *tie-break rule* decides, and three tools use three rules:

- ``cs336``: the pair whose bytes are greater, compared as (bytes of left,
  bytes of right) -- Stanford CS336's reference ``train_bpe`` (the default).
- ``huggingface``: the smaller pair of ids in HuggingFace ``tokenizers``' own
  numbering -- special tokens, then the 256 bytes in the order of their GPT-2
  characters ('!' first, 'Ā' = byte 0 after 'ÿ'), then the merges in order.
- ``rustbpe``: the smaller pair of ids in this tool's numbering -- bytes 0-255,
  then the merges in order (karpathy's rustbpe, used by nanochat).

subtle: HuggingFace numbers special tokens first, which shifts every id alike
and so changes no choice -- unless a special token is a single byte character
('!', 'Ā'): it then takes that byte's place. This rule assumes none is.

A rule is one key per token (`Rule.token_key`); among equal counts the pair
whose (key of left, key of right) is smaller wins, and the ids break the last
ties so that the order is total. The same tuple (`order`) sorts the scans of
the naive, positions and parent-set trainers and *is* the heap trainer's entry,
so all four choose alike under every rule. `explain_tie` says, for a set of
tied pairs, which one each rule takes and why -- for pages that show a tie.

Not here: counting pairs (trainer.py) or the merge loop itself.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from .renamed import renamed
from .text.gpt2_bytes import byte_to_char

Pair = tuple[int, int]


# ---------------------------------------------------------------------------
# the three rules


def descending(token: bytes) -> tuple[int, ...]:
    """A key that sorts bytes in *descending* order: the smaller key, the greater bytes.

    b'a' > b'' and b'ab' > b'a', so their keys come out in the opposite order:
    (158, 256) < (256,) and (158, 157, 256) < (158, 256).
    subtle: the end marker 256 is above every inverted byte, so a prefix sorts
    after the longer token, which is what descending order needs.
    """
    return tuple(255 - x for x in token) + (256,)


@cache
def hf_byte_order() -> tuple[int, ...]:
    """hf_byte_order()[b]: byte b's place among the 256 bytes in HuggingFace's numbering.

    HuggingFace's byte-level trainer numbers its alphabet by the code point of
    each byte's GPT-2 character: '!' (byte 33) is 0, ... 'ÿ' (byte 255) is 187,
    'Ā' (byte 0) is 188. Its ids are this plus the number of special tokens.
    """
    table = byte_to_char()
    by_char = sorted(range(256), key=lambda b: ord(table[b]))
    order = [0] * 256
    for place, b in enumerate(by_char):
        order[b] = place
    return tuple(order)


def _bytes_key(token_id: int, token: bytes) -> tuple[int, ...]:
    return descending(token)


def _hf_key(token_id: int, token: bytes) -> int:
    # merges come after the bytes in both numberings, in the same order
    return hf_byte_order()[token_id] if token_id < 256 else token_id


def _id_key(token_id: int, token: bytes) -> int:
    return token_id


@dataclass(frozen=True)
class Rule:
    """How ties between pairs with the same count are broken."""

    name: str
    tool: str  # who breaks ties this way
    prefers: str  # the winner, in a phrase
    token_key: Callable[[int, bytes], object]  # (token id, its bytes) -> key; the smaller key wins a tie
    reuses_tokens: bool = False  # a merge whose bytes are already a token gets that token's id (HuggingFace)


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule("cs336", "Stanford CS336's reference train_bpe", "the greater (left bytes, right bytes)", _bytes_key),
        Rule(
            "huggingface",
            "HuggingFace tokenizers' BpeTrainer (byte-level)",
            "the smaller pair of its ids (special tokens, bytes in GPT-2 character order, merges)",
            _hf_key,
            reuses_tokens=True,
        ),
        Rule("rustbpe", "karpathy's rustbpe (nanochat)", "the smaller pair of ids (bytes 0-255, then merges)", _id_key),
    )
}
TIE_BREAKS = tuple(RULES)
DEFAULT_RULE = "cs336"  # the tie-break rule a setting means when it names none: the one default, used everywhere


def rule_for(name: str) -> Rule:
    """The rule called name, or a ValueError that lists the names."""
    if name not in RULES:
        raise ValueError(f"Unknown tie-break rule {name!r}; choose one of {', '.join(RULES)}.")
    return RULES[name]


# ---------------------------------------------------------------------------
# choosing: one order for scans and heaps


def order(pair: Pair, count: int, keys: Sequence[object]) -> tuple:
    """The sort key of a pair under a rule: the smaller, the sooner it is merged.

    keys[i] is the rule's token_key of token i. The tuple is also the heap
    trainer's entry, so popping the heap and sorting a scan agree:
    (-count, key of left, key of right, left id, right id).
    """
    a, b = pair
    return (-count, keys[a], keys[b], a, b)


heap_entry = order  # the heap stores exactly this tuple


def entry_pair(entry: tuple) -> Pair:
    return (entry[3], entry[4])


def best_two(pair_counts: Mapping[Pair, int], keys: Sequence[object]) -> tuple[Pair, Pair | None]:
    """The winning pair and the runner-up, by a scan over all pairs.

    The max count is found at C speed first; the Python-level key only runs on
    the pairs that tie for it (and for second place).
    """
    counts = pair_counts.values()
    top = max(counts)
    tied = [p for p, c in pair_counts.items() if c == top]
    if len(tied) >= 2:
        first, second = heapq.nsmallest(2, tied, key=lambda p: order(p, top, keys))
        return first, second
    second = max((c for c in counts if c < top), default=0)
    if second == 0:
        return tied[0], None
    runners = [p for p, c in pair_counts.items() if c == second]
    return tied[0], min(runners, key=lambda p: order(p, second, keys))


def top_pairs(pair_counts: Mapping[Pair, int], keys: Sequence[object], n: int) -> list[tuple[Pair, int]]:
    """The n best pairs in rule order, for display.

    The n-th highest count is found first (cheap comparisons of ints), so the
    Python-level key only sorts the pairs that can make the list.
    """
    if not pair_counts or n <= 0:
        return []
    cutoff = heapq.nlargest(n, pair_counts.values())[-1]
    candidates = [(p, c) for p, c in pair_counts.items() if c >= cutoff]
    candidates.sort(key=lambda item: order(item[0], item[1], keys))
    return candidates[:n]


# ---------------------------------------------------------------------------
# merging


def merge_word(word: Sequence[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every non-overlapping occurrence of pair, left to right.

    [1, 2, 3, 1, 2], (1, 2) -> 256 gives [256, 3, 256]
    [97, 97, 97],    (97, 97) -> 256 gives [256, 97]    (left to right, no overlap)
    """
    a, b = pair
    out: list[int] = []
    i, n = 0, len(word)
    while i < n:
        if word[i] == a and i + 1 < n and word[i + 1] == b:
            out.append(new_id)
            i += 2
        else:
            out.append(word[i])
            i += 1
    return out


# ---------------------------------------------------------------------------
# explaining a tie, for pages


@dataclass(frozen=True)
class TieChoice:
    """What one rule does with a set of tied pairs."""

    rule: str
    pair: tuple[bytes, bytes]  # the pair it merges
    reason: str  # one sentence


@renamed(special_tokens="n_special")
def explain_tie(
    pairs: Sequence[tuple[bytes, bytes]], merges: Sequence[tuple[bytes, bytes]] = (), n_special: int = 0
) -> tuple[TieChoice, ...]:
    """Which of several pairs with the same count each rule merges, and why.

    pairs: the tied pairs, as bytes; merges: the merges made before this one
    (they give the merged tokens their ids); n_special: how many special tokens there are
    (HuggingFace numbers them first, which shifts the ids it shows, not the order;
    special_tokens=, its old name, is still accepted).

    [(b'e', b's'), (b's', b't')] -> cs336 takes s+t (b's' > b'e'); huggingface
    takes e+s (ids (68, 82) < (82, 83)); rustbpe takes e+s ((101, 115) < (115, 116)).
    """
    if len(pairs) < 2:
        raise ValueError("A tie needs at least two pairs.")
    vocab = [bytes([i]) for i in range(256)] + [a + b for a, b in merges]
    ids: dict[bytes, int] = {}
    for i, token in enumerate(vocab):
        ids.setdefault(token, i)
    missing = [t for pair in pairs for t in pair if t not in ids]
    if missing:
        raise ValueError(f"{missing[0]!r} is neither a byte nor made by one of the given merges.")
    as_ids = [(ids[a], ids[b]) for a, b in pairs]
    choices = []
    for rule in RULES.values():
        keys = {i: rule.token_key(i, vocab[i]) for pair in as_ids for i in pair}
        ranked = sorted(as_ids, key=lambda p: order(p, 0, keys))
        win, runner = ranked[0], ranked[1]
        shown = [(vocab[win[0]], vocab[win[1]]), (vocab[runner[0]], vocab[runner[1]])]
        choices.append(TieChoice(rule.name, shown[0], _reason(rule, win, runner, shown, len(pairs), n_special)))
    return tuple(choices)


def _reason(rule: Rule, win: Pair, runner: Pair, shown: list[tuple[bytes, bytes]], n: int, n_special: int) -> str:
    others = "the other pair" if n == 2 else f"the next best of the {n} tied pairs"
    if rule.name == "cs336":
        left_decides = shown[0][0] != shown[1][0]
        side = "left tokens" if left_decides else "right tokens (the left ones are equal)"
        a, b = (shown[0][0], shown[1][0]) if left_decides else (shown[0][1], shown[1][1])
        return f"{rule.tool} takes the greater bytes: comparing the {side}, {show_token(a)} > {show_token(b)} ({others} is {show_pair(shown[1])})."
    if rule.name == "huggingface":
        hf = [tuple(_hf_id(i, n_special) for i in p) for p in (win, runner)]
        return (
            f"{rule.tool} takes the smaller pair of its ids: {hf[0]} < {hf[1]} for {show_pair(shown[1])}; "
            "it numbers the bytes by their GPT-2 character, so its byte ids are not the byte values."
        )
    return f"{rule.tool} takes the smaller pair of ids: {win} < {runner} for {show_pair(shown[1])}."


def _hf_id(token_id: int, special_tokens: int) -> int:
    return special_tokens + _hf_key(token_id, b"")


# repr's escape of a byte that is not UTF-8 (surrogateescape's U+DC80..U+DCFF), or an escaped backslash
_ESCAPE = re.compile(r"\\(\\|udc[89a-f][0-9a-f])")


def show_token(token: bytes) -> str:
    r"""A token as Python shows text, each byte that is not UTF-8 escaped once: b' a' -> ' a', b'\xc3' -> '\xc3'.

    subtle: repr(token.decode("utf-8", "backslashreplace")) escapes the escape's
    backslash again, and shows '\\xc3'; surrogateescape keeps the byte, and its
    repr '\udcc3' becomes '\xc3', as repr(b'\xc3') writes it.
    """
    text = repr(token.decode("utf-8", "surrogateescape"))
    return _ESCAPE.sub(lambda m: m.group(0) if m.group(1) == "\\" else "\\x" + m.group(1)[3:], text)


def show_pair(pair: tuple[bytes, bytes]) -> str:
    return f"{show_token(pair[0])} + {show_token(pair[1])}"
