"""The sidebar's tokenizer family: byte-level BPE (GPT-2's) or SentencePiece's BPE (Llama 2's), and the latter's options.

The two families train on the same corpus and differ in everything else: byte-level BPE starts from 256 bytes,
cuts the text with a regex and breaks ties by its rule; SentencePiece starts from the characters the coverage
keeps, cuts words at '▁', refuses pairs that mix scripts (and more), and breaks ties by the shorter piece
(bpe/sentencepiece/trainer.py). The sidebar shows the chosen family's options only; the other family's stay in
the session (its widgets keep their state while hidden) for when the class switches back.

Each SentencePiece option here is spm_train's flag of the same name (`SentencePieceSpec`), with its default:

    spec_of_session()   # SentencePieceSpec(vocab_size=34, character_coverage=0.9995, ...) for the textbook preset

Not here: what the step page draws for a SentencePiece run (ui/sp_step.py), or the trainer (bpe/sentencepiece/).
"""

from __future__ import annotations

import streamlit as st

from bpe.sentencepiece.spec import SentencePieceSpec
from ui import state
from ui.corpus import BYTE_LEVEL, SENTENCEPIECE, Settings
from ui.pages import byte_level_only

FAMILIES = {BYTE_LEVEL: "Byte-level (GPT-2)", SENTENCEPIECE: "SentencePiece (Llama 2)"}

# the sidebar's SentencePiece options: session key -> the SentencePieceSpec field it sets (vocab size and coverage
# come with the preset, ui.corpus.Source.sidebar; the switches keep spm_train's defaults until changed)
FIELDS = {
    "sp_vocab_size": "vocab_size",
    "sp_coverage": "character_coverage",
    "sp_byte_fallback": "byte_fallback",
    "sp_split_digits": "split_digits",
    "sp_split_by_whitespace": "split_by_whitespace",
    "sp_max_piece_length": "max_sentencepiece_length",
}

HELP = {
    "family": "**Byte-level** BPE (GPT-2, GPT-4, Llama 3): 256 bytes, a regex pre-tokenizer, ties by a rule. "
    "**SentencePiece** BPE (Llama 2, Mistral, Gemma): characters, '▁' for a space, one script per piece, ties to the "
    "shorter piece. The step page and the race train the family chosen; the other pages train byte-level runs.",
    "sp_vocab_size": "Every piece: the meta pieces (<unk>, <s>, </s>), the 256 byte pieces with byte fallback, the characters "
    "the coverage keeps, then merges (spm_train --vocab_size).",
    "sp_coverage": "The share of the corpus's characters kept, most frequent first; the rarest become <unk> "
    "(--character_coverage, 0.98 to 1).",
    "sp_byte_fallback": "256 pieces <0x00>…<0xFF>: a character outside the vocabulary is encoded as its UTF-8 bytes, never "
    "<unk> (--byte_fallback; Llama 2 has it).",
    "sp_split_digits": "Every digit a piece of its own: 2024 is 2 0 2 4 (--split_digits; Llama 2 has it).",
    "sp_split_by_whitespace": "Words are cut at each '▁', so no piece crosses a space (--split_by_whitespace). Off, a line is "
    "one unit and '▁' may sit only at a piece's start.",
    "sp_max_piece_length": "The longest piece, in characters (--max_sentencepiece_length).",
}


def options() -> None:
    """Draw the SentencePiece family's options (in the sidebar, under the corpus)."""
    state.widget(
        st.number_input, "Vocab size", key="sp_vocab_size", kept=True, min_value=1, max_value=1_000_000, step=1, help=HELP["sp_vocab_size"]
    )
    state.widget(
        st.number_input,
        "Character coverage",
        key="sp_coverage",
        kept=True,
        min_value=0.98,
        max_value=1.0,
        step=0.0005,
        format="%.4f",
        help=HELP["sp_coverage"],
    )
    state.widget(st.toggle, "Byte fallback", key="sp_byte_fallback", kept=True, help=HELP["sp_byte_fallback"])
    state.widget(st.toggle, "Split digits", key="sp_split_digits", kept=True, help=HELP["sp_split_digits"])
    state.widget(st.toggle, "Split by whitespace", key="sp_split_by_whitespace", kept=True, help=HELP["sp_split_by_whitespace"])
    state.widget(
        st.number_input,
        "Max piece length",
        key="sp_max_piece_length",
        kept=True,
        min_value=1,
        max_value=512,
        step=1,
        help=HELP["sp_max_piece_length"],
    )


def spec_of_session() -> SentencePieceSpec:
    """The SentencePieceSpec the sidebar's options make; a ValueError in one sentence when one is out of range."""
    settings = {field: st.session_state[key] for key, field in FIELDS.items()}
    settings["vocab_size"] = int(settings["vocab_size"])
    settings["max_sentencepiece_length"] = int(settings["max_sentencepiece_length"])
    return SentencePieceSpec(**settings)


def caption(spec: SentencePieceSpec) -> str:
    """What the vocab size is made of, as the sidebar says it under the options."""
    meta = 3 + (256 if spec.byte_fallback else 0)
    return (
        f"{spec.vocab_size:,} = {meta:,} meta pieces{' (256 of them bytes)' if spec.byte_fallback else ''} + the characters the "
        "coverage keeps + merges"
    )


def note(url_path: str) -> None:
    """On a page that trains byte-level runs only, while the sidebar's family is SentencePiece: one line saying which run it shows."""
    settings = st.session_state["settings"]
    if not isinstance(settings, Settings) or settings.family != SENTENCEPIECE or not byte_level_only(url_path):
        return
    st.info(
        f"This page trains byte-level BPE, so it shows the byte-level run of this corpus (the {settings.pretokenizer.name} "
        f"pre-tokenizer, {settings.num_merges:,} merges). The SentencePiece run is on Step through and the Algorithm race."
    )
