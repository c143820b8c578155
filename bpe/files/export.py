"""Saving a tokenizer in the formats other tools load (load.py reads them back).

The formats, each derived from the merges (the vocab is never stored on its own), or from a SentencePiece model:

- GPT-2: vocab.json maps each token, written through the byte-to-unicode table,
  to its id; merges.txt lists the merges in order, one 'left right' per line.
  Special tokens are stored as their own text. The pre-tokenizer is not recorded.
- HuggingFace tokenizer.json: a byte-level BPE model that `tokenizers.Tokenizer.from_file`
  loads and that encodes exactly as we do (see `PreTokenizer.hf` for the pre-tokenizers).
- The SentencePiece family: tokenizer.model (SentencePiece's own file, when the tokenizer
  came from one or from training) and tokenizer.json (as transformers converts it).
- Plain JSON (tokenizer.bpe.json): this tool's own, the only one that also records
  each merge's count when it was made:
  {"format": "bpe-workbench", "version": 1, "pattern": "gpt2", "special_tokens": [...],
   "merges": [{"left": "6c", "right": "6f", "count": 7}, ...]}   (bytes as hex)

Ids follow this tool's layout: the 256 bytes in byte order, one id per merge in
order, then the special tokens -- unless a `vocab` is given (a tokenizer loaded
from another tool keeps its own ids), which vocab.json and tokenizer.json then
write as they are; the plain format cannot hold other ids and is left out.

Not here: which files each format is, or writing them all at once (formats.py);
reading files (load.py); encoding (tokenizer.py).
"""

from __future__ import annotations

import hashlib
import json
from binascii import b2a_base64
from collections.abc import Sequence
from json.encoder import encode_basestring

from ..text.pretokenizers import DEFAULT, PreTokenizer
from .load import FORMAT, TIKTOKEN_SPEC, VERSION, Loaded

Vocab = dict[int, bytes]
Merges = list[tuple[bytes, bytes]]


# ---------------------------------------------------------------------------
# GPT-2: vocab.json + merges.txt


def gpt2_vocab_json(t: Loaded) -> str:
    return json_table(t.gpt2_vocab)


def gpt2_merges_txt(t: Loaded) -> str:
    lines = ["#version: 0.2"] + [f"{a} {b}" for a, b in t.gpt2_merges]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------
# HuggingFace tokenizer.json


def hf_tokenizer_json(t: Loaded) -> str:
    """A tokenizer.json for `tokenizers.Tokenizer.from_file`: byte-level BPE, the special tokens as added tokens."""
    table = t.gpt2_vocab
    added = [
        {
            "id": table[token],
            "content": token,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for token in t.special_tokens
    ]
    document = {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": t.pretokenizer.hf(),
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            "ignore_merges": t.ignore_merges,
            "vocab": _VOCAB,
            "merges": _MERGES,
        },
    }
    # the two long parts are written by json_table and json_pairs, at the depth (2) where they sit; they are
    # the document's last two values, so the last stand-ins are theirs (a special token could hold the same text)
    text, _, end = json.dumps(document, ensure_ascii=False, indent=1).rpartition(json.dumps(_MERGES))
    text, _, middle = text.rpartition(json.dumps(_VOCAB))
    return text + json_table(table, 2) + middle + json_pairs(t.gpt2_merges, 2) + end


_VOCAB, _MERGES = "\x00vocab\x00", "\x00merges\x00"  # stand-ins for model.vocab and model.merges


# ---------------------------------------------------------------------------
# the SentencePiece family


def sentencepiece_model(t: Loaded) -> bytes | None:
    """The .model file of a tokenizer of the family that came from one (or from training); None for one from a tokenizer.json."""
    from ..sentencepiece.model_file import model_bytes

    model = getattr(t.sentencepiece, "model", None)
    return None if model is None else model_bytes(model)


def sentencepiece_json(t: Loaded) -> str:
    """The tokenizer.json of a tokenizer of the family: as transformers converts its .model, or the file it was read from."""
    from ..sentencepiece.hf import tokenizer_json

    model = getattr(t.sentencepiece, "model", None)
    document = tokenizer_json(model) if model is not None else t.sentencepiece.config
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"


def sentencepiece_config_files(t: Loaded) -> dict[str, str]:
    """transformers' two config files for a tokenizer of the family: <s>, </s> and <unk> in their roles, where it has them."""
    encoder = t.sentencepiece
    model = getattr(encoder, "model", None)
    if model is not None:
        ids, names = encoder.ids, {"bos_token": model.bos_piece, "eos_token": model.eos_piece, "unk_token": model.unk_piece}
    else:
        ids, names = {a.content: a.id for a in encoder.added}, {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"}
    roles = {role: piece for role, piece in names.items() if piece in t.special_tokens}
    vocab = {ids[token]: token.encode("utf-8") for token in t.special_tokens}
    return hf_config_files(vocab, t.special_tokens, roles)


END_OF_TEXT = "<|endoftext|>"


def hf_config_files(vocab: Vocab, special_tokens: Sequence[str] = (), roles: dict[str, str] | None = None) -> dict[str, str]:
    """tokenizer_config.json and special_tokens_map.json, so that transformers.AutoTokenizer knows its special tokens.

    The end of text (<|endoftext|>, else the first special token) is the eos, bos, unk and pad
    token, as GPT-2's own files make it (pad too, so that batches can be padded), unless `roles`
    names them (the SentencePiece family's: <s>, </s>, <unk>); no token is added to what
    encode gives, and decoding does not touch the spaces around punctuation.
    """
    ids = {token: i for i, token in sorted(vocab.items(), reverse=True)}
    eot = END_OF_TEXT if END_OF_TEXT in special_tokens else (special_tokens[0] if special_tokens else None)
    if roles is None:
        roles = {role: eot for role in ("bos_token", "eos_token", "unk_token", "pad_token")} if eot is not None else {}
    added = {
        str(ids[t.encode("utf-8")]): {
            "content": t,
            "lstrip": False,
            "normalized": False,
            "rstrip": False,
            "single_word": False,
            "special": True,
        }
        for t in special_tokens
    }
    config = {
        "tokenizer_class": "PreTrainedTokenizerFast",
        **roles,
        "add_bos_token": False,
        "add_eos_token": False,
        "clean_up_tokenization_spaces": False,
        "added_tokens_decoder": added,
    }
    return {
        "tokenizer_config.json": json.dumps(config, ensure_ascii=False, indent=2) + "\n",
        "special_tokens_map.json": json.dumps(roles, ensure_ascii=False, indent=2) + "\n",
    }


# ---------------------------------------------------------------------------
# tiktoken: a rank file, and the rest of tiktoken.Encoding's arguments


TIKTOKEN_RANKS, TIKTOKEN_JSON = "tokenizer.tiktoken", "tokenizer.tiktoken.json"
TIKTOKEN_PYTHON = (
    "import json, tiktoken, tiktoken.load\n"
    f'spec = json.load(open("{TIKTOKEN_JSON}"))\n'
    f'enc = tiktoken.Encoding(**spec["encoding"], mergeable_ranks=tiktoken.load.load_tiktoken_bpe("{TIKTOKEN_RANKS}", spec["sha256"]))\n'
)


def tiktoken_files(
    merges: Merges, special_tokens: Sequence[str], pretokenizer: PreTokenizer, vocab: Vocab, name: str = ""
) -> dict[str, str]:
    """tokenizer.tiktoken (each token's bytes in base64 and its rank, which is its id) and tokenizer.tiktoken.json; {} when the ids cannot be ranks.

    tiktoken merges the pair whose token has the lowest rank, so a token's id must be
    its rank: the ids of the merges' tokens must grow with the merges, and no two merges
    may make the same bytes. This tool's own layout always can; another tool's ids
    usually can (GPT-2's, HuggingFace's). TIKTOKEN_PYTHON builds the tiktoken.Encoding.
    """
    ids = {token: i for i, token in sorted(vocab.items(), reverse=True)}
    specials = {t.encode("utf-8") for t in special_tokens}
    made = [a + b for a, b in merges]
    made_ids = [ids.get(t) for t in made]
    if len(set(made)) != len(made) or None in made_ids or any(b <= a for a, b in zip(made_ids, made_ids[1:])):
        return {}
    ranks = {bytes([b]): ids.get(bytes([b])) for b in range(256)} | dict(zip(made, made_ids))
    if None in ranks.values() or any(t not in ranks and t not in specials for t in ids) or specials & set(ranks):
        return {}
    text = "".join([f"{b2a_base64(t, newline=False).decode()} {r}\n" for t, r in sorted(ranks.items(), key=lambda item: item[1])])
    encoding = {
        "name": name or "bpe-workbench",
        "pat_str": pretokenizer.tiktoken_regex(),
        "special_tokens": {t: ids[t.encode("utf-8")] for t in special_tokens},
    }
    spec = {
        "format": TIKTOKEN_SPEC,
        "version": 1,
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
        "pattern": pretokenizer.spelled,  # subtle: the file format's key for the pre-tokenizer
        "encoding": encoding,
    }
    return {TIKTOKEN_RANKS: text, TIKTOKEN_JSON: json.dumps(spec, ensure_ascii=False, indent=1) + "\n"}


# ---------------------------------------------------------------------------
# plain JSON, with counts


def plain_json(
    merges: Merges, special_tokens: Sequence[str] = (), pretokenizer: PreTokenizer = DEFAULT, counts: Sequence[int | None] | None = None
) -> str:
    counts = list(counts) if counts is not None else [None] * len(merges)
    if len(counts) != len(merges):
        raise ValueError(f"Got {len(counts)} counts for {len(merges)} merges.")
    # each row is json.dumps({"left": .., "right": .., "count": .., "token": ..}, ensure_ascii=False), written out (10x sooner)
    rows = [
        f'{{"left": "{a.hex()}", "right": "{b.hex()}", "count": {"null" if c is None else int(c)}, '
        f'"token": {encode_basestring((a + b).decode("utf-8", "backslashreplace"))}}}'
        for (a, b), c in zip(merges, counts)
    ]
    head = json.dumps(
        {"format": FORMAT, "version": VERSION, "pattern": pretokenizer.spelled, "special_tokens": list(special_tokens)}, ensure_ascii=False
    )
    # one merge per line: readable, and diffs of two runs line up
    return head[:-1] + ', "merges": [\n' + ",\n".join(rows) + "\n]}\n"


# ---------------------------------------------------------------------------
# the long parts of the JSON files, written as json.dumps(..., ensure_ascii=False, indent=1) writes them
# (its indented output is made in Python, a call per value; this is 5x sooner)


def json_table(table: dict[str, int], depth: int = 0) -> str:
    """{'a': 0, 'Ġt': 256} -> '{\\n "a": 0,\\n "Ġt": 256\\n}', for a table nested `depth` levels deep."""
    if not table:
        return "{}"
    inner = " " * (depth + 1)
    rows = ",\n".join(f"{inner}{encode_basestring(key)}: {int(value)}" for key, value in table.items())
    return "{\n" + rows + "\n" + " " * depth + "}"


def json_pairs(pairs: Sequence[tuple[str, str]], depth: int = 0) -> str:
    """A list of pairs of strings, each pair a list over four lines, as indent=1 writes them."""
    if not pairs:
        return "[]"
    outer, inner = " " * (depth + 1), " " * (depth + 2)
    rows = ",\n".join(f"{outer}[\n{inner}{encode_basestring(a)},\n{inner}{encode_basestring(b)}\n{outer}]" for a, b in pairs)
    return "[\n" + rows + "\n" + " " * depth + "]"
