"""tiktoken's interface, with tiktoken's meanings: what a `tiktoken.Encoding` has, on our Tokenizer.

What it does: the methods and attributes of tiktoken 0.14's Encoding that the CS336 interface
lacks, as a mixin of `Tokenizer` (tokenizer.py), which supplies vocab, ids, special_tokens,
pretokenizer and encode(): encode_ordinary, the batches, encode_to_numpy, the single-token calls,
decode_with_offsets, n_vocab, eot_token and the rest, and what real code reads although tiktoken
keeps it private (`_mergeable_ranks`, which transformers' tiktoken conversion reads;
`_special_tokens`, `_pat_str`, `_encode_bytes`). tiktoken's own test suite runs against it
(tests/test_tiktoken_suite.py), and encodings.py has tiktoken's module functions (get_encoding).

    enc = Tokenizer.from_openai("cl100k_base")
    enc.encode("hello <|endoftext|>", allowed_special="all")  # [15339, 220, 100257]
    enc.decode_with_offsets(enc.encode("hi there"))           # ('hi there', [0, 2])

Special tokens follow tiktoken for OpenAI's encodings: text that spells one is refused with
tiktoken's own ValueError unless `allowed_special` allows it; encode_ordinary encodes it as text.

Not here: encoding itself (tokenizer.py, encoder.py) or finding OpenAI's files (files/openai.py).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import cached_property

from ..text.pretokenizers import ENCODING, find_specials

END_OF_TEXT = "<|endoftext|>"  # the end-of-text token of GPT-2 and OpenAI's encodings (tiktoken's eot_token)


class TiktokenInterface:
    """tiktoken's Encoding, on a Tokenizer (a mixin)."""

    # -- encoding -------------------------------------------------------------
    def encode_ordinary(self, text: str | bytes, k: int | None = None) -> list[int]:
        """The ids of text with every special token's text encoded as plain text (tiktoken's encode_ordinary).

        Bytes with invalid UTF-8 at the end are encoded as tiktoken's _encode_bytes does.
        """
        return self.encode(text, k, allowed_special=(), disallowed_special=())

    def _encode_bytes(self, data: bytes) -> list[int]:
        """tiktoken's Encoding._encode_bytes: encode_ordinary of bytes, invalid UTF-8 included."""
        return self.encode_ordinary(bytes(data))

    def encode_batch(
        self,
        texts: Sequence[str | bytes],
        *,
        num_threads: int = 8,
        allowed_special: str | Collection[str] | None = None,
        disallowed_special: str | Collection[str] = "all",
    ) -> list[list[int]]:
        """encode() of each text, in order, on num_threads threads (as tiktoken's encode_batch)."""
        return _batch_runs(lambda run: self._encode_run(run, allowed_special, disallowed_special), texts, num_threads)

    def encode_ordinary_batch(self, texts: Sequence[str | bytes], *, num_threads: int = 8) -> list[list[int]]:
        """encode_ordinary() of each text, in order, on num_threads threads (as tiktoken's encode_ordinary_batch)."""
        return _batch_runs(lambda run: self._encode_run(run, (), ()), texts, num_threads)

    def encode_to_numpy(self, text: str | bytes, **options):
        """encode() as a NumPy array of uint32 (tiktoken's encode_to_numpy): made by the compiled core where it encodes."""
        import numpy as np

        if isinstance(text, str) and set(options) <= {"allowed_special", "disallowed_special"}:
            allowed_special = options.get("allowed_special")
            allowed = self.allowed_special if allowed_special is None else self._allowed(allowed_special)
            self._refuse(text, allowed, options.get("disallowed_special", "all"))
            ids = self._encode_compiled(text, len(self.merges), allowed, as_array=4)
            if ids is not None:
                return np.frombuffer(ids, dtype=np.uint32)
        return np.array(self.encode(text, **options), dtype=np.uint32)

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the token whose text (or bytes) this is, special tokens included; KeyError if it is none."""
        data = text_or_bytes.encode(ENCODING) if isinstance(text_or_bytes, str) else bytes(text_or_bytes)
        return self.ids[data]

    # -- decoding -------------------------------------------------------------
    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token, special tokens included; KeyError if it is none (tiktoken's)."""
        return self.vocab[token]

    def decode_tokens_bytes(self, tokens: Iterable[int]) -> list[bytes]:
        """Each token's bytes: [31373, 995] -> [b'hello', b' world'] with GPT-2."""
        return [self.decode_single_token_bytes(t) for t in tokens]

    def decode_with_offsets(self, tokens: Sequence[int]) -> tuple[str, list[int]]:
        """The text, and where each token starts in it (an index of a character), as tiktoken's decode_with_offsets.

        A token that starts inside a character (its first byte continues a UTF-8
        sequence) starts at that character. Raises ValueError, as tiktoken does,
        when the tokens do not decode to valid UTF-8.
        """
        token_bytes = self.decode_tokens_bytes(tokens)
        return b"".join(token_bytes).decode(ENCODING, "strict"), token_offsets(token_bytes)

    def decode_batch(self, batch: Sequence[Sequence[int]], *, errors: str = "replace", num_threads: int = 8) -> list[str]:
        return _batch(lambda ids: self.decode(ids, errors), batch, num_threads)

    def decode_bytes_batch(self, batch: Sequence[Sequence[int]], *, num_threads: int = 8) -> list[bytes]:
        return _batch(self.decode_bytes, batch, num_threads)

    # -- what tiktoken's Encoding says about itself ------------------------------
    @property
    def special_tokens_set(self) -> set[str]:
        return set(self.special_tokens)

    @property
    def eot_token(self) -> int:
        """The id of <|endoftext|>; KeyError if this tokenizer has none (as tiktoken)."""
        if END_OF_TEXT not in self.special_tokens:
            raise KeyError(END_OF_TEXT)
        return self.ids[END_OF_TEXT.encode(ENCODING)]

    @property
    def max_token_value(self) -> int:
        return max(self.vocab)

    @property
    def n_vocab(self) -> int:
        """max_token_value + 1, as tiktoken counts it (a vocabulary with gaps counts them)."""
        return self.max_token_value + 1

    def is_special_token(self, token: int) -> bool:
        return token in self.vocab and self.vocab[token] in self._special_bytes

    def token_byte_values(self) -> list[bytes]:
        """Every token's bytes but the special tokens', sorted (tiktoken's)."""
        return sorted(t for t in set(self.vocab.values()) if t not in self._special_bytes)

    @cached_property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Each token's bytes -> its id, special tokens left out: tiktoken's ranks (transformers' conversion reads them)."""
        return {token: i for i, token in sorted(self.vocab.items()) if token not in self._special_bytes and self.ids[token] == i}

    @property
    def _special_tokens(self) -> dict[str, int]:
        """Each special token -> its id (tiktoken's)."""
        return {token: self.ids[token.encode(ENCODING)] for token in self.special_tokens}

    @property
    def _pat_str(self) -> str:
        """The regex tiktoken would split with to give these pre-tokens (PreTokenizer.tiktoken_regex)."""
        return self.pretokenizer.tiktoken_regex()

    # -- special tokens in text, as tiktoken takes them ---------------------------
    def _allowed(self, allowed_special: str | Collection[str]) -> frozenset[str]:
        if allowed_special == "all":
            return frozenset(self.special_tokens)
        if isinstance(allowed_special, str) or not all(isinstance(t, str) for t in allowed_special):
            raise ValueError(f'allowed_special is "all" or a set of special tokens, not {allowed_special!r}.')
        unknown = sorted(set(allowed_special) - set(self.special_tokens))
        if unknown:
            raise ValueError(
                f"{unknown[0]!r} is not a special token of this tokenizer ({', '.join(self.special_tokens) or 'it has none'})."
            )
        return frozenset(allowed_special)

    def _refuse(self, text: str, allowed: frozenset[str], disallowed_special: str | Collection[str]) -> None:
        """Raise ValueError, as tiktoken does, where text spells a disallowed special token."""
        if disallowed_special == "all":
            disallowed = set(self.special_tokens) - allowed
        elif isinstance(disallowed_special, str):
            raise ValueError(f'disallowed_special is "all" or a set of special tokens, not {disallowed_special!r}.')
        else:
            disallowed = set(disallowed_special)
        found = next(find_specials(text, disallowed), None) if disallowed else None
        if found is not None:
            token = found[1]
            raise ValueError(
                f"Encountered text corresponding to disallowed special token {token!r}.\n"
                "If you want this text to be encoded as a special token, "
                f"pass it to `allowed_special`, e.g. `allowed_special={{{token!r}, ...}}`.\n"
                f"If you want this text to be encoded as normal text, disable the check for this token "
                f"by passing `disallowed_special=(enc.special_tokens_set - {{{token!r}}})`.\n"
                "To disable this check for all special tokens, pass `disallowed_special=()`.\n"
            )


def token_offsets(token_bytes: Iterable[bytes]) -> list[int]:
    """Where each token starts in the text the tokens decode to, in characters (tiktoken's decode_with_offsets).

    A token whose first byte continues a character starts at that character:
    [b'a', b'\xf0\x9f', b'\x99\x82'] ('a🙂', the emoji in two tokens) -> [0, 1, 1].
    """
    text_len, offsets = 0, []
    for token in token_bytes:
        offsets.append(max(0, text_len - (0x80 <= token[0] < 0xC0)))
        text_len += sum(1 for c in token if not 0x80 <= c < 0xC0)
    return offsets


def _batch(encode, texts, num_threads: int) -> list:
    """[encode(t) for t in texts] on num_threads threads, in order; the first error in that order is raised."""
    return _batch_runs(lambda run: [encode(t) for t in run], texts, num_threads)


def _batch_runs(encode_run, texts, num_threads: int) -> list:
    """encode_run(run) of runs of texts on num_threads threads, joined in order; the first error in that order is raised.

    The texts go to the threads in runs (four a thread), not one task each: a task costs the pool ~30 µs, more than
    encoding a line in the core, which encodes a whole run in one call (Tokenizer._encode_run) without the GIL.
    """
    texts = list(texts)
    if num_threads <= 1 or len(texts) <= 1:
        return encode_run(texts)
    size = -(-len(texts) // (4 * num_threads))
    runs = [texts[i : i + size] for i in range(0, len(texts), size)]
    with ThreadPoolExecutor(min(num_threads, len(runs))) as pool:
        return [ids for run in pool.map(encode_run, runs) for ids in run]
