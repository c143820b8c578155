"""SentencePiece's family of BPE: trained, read, written and encoded exactly as sentencepiece 0.2.3 does.

The second tokenizer family beside the byte-level one (GPT-2's). What makes it another family: the units are
Unicode characters after normalization, not bytes; there is no regex pre-tokenizer, only '▁' (U+2581) for a
space and a '▁' put in front of the text; a piece may not mix scripts; a character the vocabulary lacks becomes
<unk>, or its UTF-8 bytes as <0xNN> pieces with byte fallback; and the encoder merges by the pieces' scores.
Llama 1 and 2, Mistral 7B and Gemma are of this family.

Files, in reading order:

- normalizer.py  the character map (nmt_nfkc) and the whitespace rules: text -> what the trainer and encoder see
- scripts.py     sentencepiece's Unicode script table (script_table.py is generated from its source)
- spec.py        SentencePieceSpec: spm_train's options as one frozen value
- trainer.py     the trainer, phase by phase, one PieceMerge event a merge (training.py: in one call, compiled where built)
- model.py       SentencePieceModel: pieces (string, score, type) and the specs
- model_file.py  .model files (ModelProto) read and written by hand
- encoder.py     encoding and decoding as sentencepiece does from a .model (merges by score)
- hf.py          the same family as HuggingFace holds it: tokenizer.json read, encoded as `tokenizers` does, written

    from bpe.sentencepiece import SentencePieceSpec, train, write_model
    model = train(["corpus.txt"], SentencePieceSpec(vocab_size=8000, byte_fallback=True))
    write_model(model, "tokenizer.model")   # sentencepiece.SentencePieceProcessor(model_file=...) loads it
    Encoder(model).encode("Hello world")    # the ids sentencepiece gives
    HFTokenizer.load("llama2/tokenizer.json").encode("Hello world")   # the ids HuggingFace tokenizers gives

Loading as any tokenizer: bpe.Tokenizer.load (the format registry, bpe/files/formats.py) reads a .model or a
tokenizer.json of this family and gives a SentencePieceTokenizer (bpe/tokenizer/sentencepiece_tokenizer.py: it
saves through the registry, so it sits in the room above files/), with the byte-level Tokenizer's interface.
"""

from __future__ import annotations

import importlib

# name -> the module that defines it: imported when first asked for, so that `bpe train --sentencepiece` and a
# benchmark's fresh process load only what they use (the encoders and HuggingFace's side are ~40 ms of imports)
_HOME = {
    **dict.fromkeys(("BYTE", "CONTROL", "NORMAL", "UNKNOWN", "UNUSED", "USER_DEFINED", "Piece", "SentencePieceModel"), "model"),
    **dict.fromkeys(("ModelFileError", "model_bytes", "parse_model", "read_model", "write_model"), "model_file"),
    **dict.fromkeys(("Normalizer", "NormalizerSpec", "nmt_nfkc"), "normalizer"),
    "charsmap_of": "model_file",
    "SentencePieceSpec": "spec",
    **dict.fromkeys(
        ("Corpus", "Lines", "MergeDetail", "PieceMerge", "Trainer", "prepare", "read_lines", "select", "why_invalid"), "trainer"
    ),
    **dict.fromkeys(("CompiledTrainer", "prepare_compiled"), "trainer_c"),
    "train": "training",
    **dict.fromkeys(("Encoder", "EncodeStep"), "encoder"),
    **dict.fromkeys(("HFTokenizer", "TokenizerJsonError", "tokenizer_json", "write_tokenizer_json"), "hf"),
}


def __getattr__(name: str):
    if name not in _HOME:
        raise AttributeError(f"module 'bpe.sentencepiece' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_HOME))


__all__ = [
    "BYTE",
    "CONTROL",
    "NORMAL",
    "UNKNOWN",
    "UNUSED",
    "USER_DEFINED",
    "CompiledTrainer",
    "Corpus",
    "EncodeStep",
    "Encoder",
    "HFTokenizer",
    "TokenizerJsonError",
    "tokenizer_json",
    "write_tokenizer_json",
    "Lines",
    "MergeDetail",
    "ModelFileError",
    "Normalizer",
    "NormalizerSpec",
    "Piece",
    "PieceMerge",
    "SentencePieceModel",
    "SentencePieceSpec",
    "Trainer",
    "charsmap_of",
    "model_bytes",
    "nmt_nfkc",
    "parse_model",
    "prepare_compiled",
    "prepare",
    "read_lines",
    "read_model",
    "select",
    "train",
    "why_invalid",
    "write_model",
]
