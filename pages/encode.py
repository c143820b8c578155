"""Encode, step by step: the encoder's loop on a word or sentence, and any token's merge tree down to bytes.

The loop, for each pre-token: list the adjacent pairs, look up each one's merge
number, merge the lowest everywhere it occurs, repeat. The walk through a text
(every pre-token's steps) is built once per text and tokenizer and shared by
every session; Next / Previous / Play only move this session's position in it.
For the run trained in the sidebar each merge number links to the step page at
that merge, with the count the pair had when training made it.
"""

from dataclasses import dataclass

import streamlit as st

from bpe import Tokenizer
from ui import encoding, link, real, sidebar, state
from ui.play import Player, controls
from ui.render import plain, show
from ui.views import code
from ui.views import encode as encode_views

MAX_CHARS = state.LIMITS["enc_text"].chars  # a word or a sentence: the walk shows every step of every pre-token
CHOICES = {"run": "Trained here", "gpt2": "GPT-2", "cl100k": "GPT-4 (cl100k)", "o200k": "GPT-4o (o200k)"}
CHOICES |= {key: m.label for key, m in real.OPEN_MODELS.items()}  # Llama 2, Mistral (SentencePiece), Llama 3
LABELS = {"run": "the run trained here", "gpt2": "GPT-2", "cl100k": "GPT-4", "o200k": "GPT-4o"}
LABELS |= {key: m.label for key, m in real.OPEN_MODELS.items()}

# presenter mode: a projector's first screen is for the text's ids and the step (the teacher says what the page is)
if not st.session_state["presenter"]:
    st.title("Encode, step by step")
# the tree needs the room, and so does presenter mode (the teacher says this; the step's own sentence must fit 720 px)
if st.session_state["enc_view"] != "ancestry" and not st.session_state["presenter"]:
    st.caption(
        "How a trained tokenizer splits text: in each pre-token it merges the pair with the lowest merge number (learned first), "
        "everywhere at once, and repeats. Not the most frequent pair in your text, and not left to right."
    )
settings = sidebar.current()


def restart() -> None:
    st.session_state.update(enc_pos=0, enc_playing=False, enc_play_from=None, enc_token=None)


if link.follow_encode(CHOICES, MAX_CHARS):  # ?text=…&tokenizer=…, before the widgets draw
    restart()
c1, c2, c3 = st.columns([5, 4, 3], vertical_alignment="bottom")
# presenter mode: the boxes say what they hold, and the 720 px keep the text's ids and the step's sentence
labels = "collapsed" if st.session_state["presenter"] else "visible"
text = state.widget(
    c1.text_input, "A word or a sentence", key="enc_text", on_change=restart, live="500ms", label_visibility=labels
)  # follows the typing
which = state.widget(
    c2.selectbox, "Tokenizer", list(CHOICES), format_func=CHOICES.get, key="enc_tokenizer", on_change=restart, label_visibility=labels
)

if which == "run":
    with c3:
        tok, k = real.run_and_k(settings)
    counts, n_merges = tok.counts, len(tok.merges)
    run_key = (settings.key, settings.pretokenizer, settings.special_tokens, settings.num_merges, settings.tie_break, k)

    def link_of(rank: int) -> str | None:
        return link.href(rank + 1, settings) if rank < k else None
else:
    found = real.get(which)
    if found.tokenizer is None:
        st.info(found.error + " The Real tokenizers page takes an upload.")
        st.stop()
    tok, k, counts, run_key = found.tokenizer, len(found.tokenizer.merges), None, (which,)
    n_merges = k

    def link_of(rank: int) -> str | None:
        return None


label = LABELS[which]
link.show_encode(text, which, k, n_merges)
if getattr(tok, "family", "") == "sentencepiece" and st.session_state["enc_view"] != "ancestry" and not st.session_state["presenter"]:
    st.caption(
        f"{label} is SentencePiece BPE: no regex pre-tokenizer, so the text is one piece of characters, a ▁ put first and one "
        "for each space; a character not in its vocabulary falls back to its UTF-8 bytes (<0xNN>). Its merges apply by number "
        "as here, and it writes every digit alone."
    )
if not text:
    st.info("Type a word or a sentence above.")
    st.stop()


@dataclass(frozen=True)
class Walk:
    """A text's walk through the encoder: its pieces, each one's steps, and every (piece, steps done) position in order."""

    pieces: tuple[encoding.Piece, ...]
    steps: tuple[tuple[encoding.Step, ...], ...]
    positions: tuple[tuple[int, int], ...]
    starts: tuple[tuple[bytes, ...], ...]  # what each piece's encoding starts from: its bytes (a SentencePiece one's characters)

    def parts(self, i: int, done: int) -> tuple[bytes, ...]:
        """Piece i after `done` of its steps."""
        piece, steps = self.pieces[i], self.steps[i]
        if piece.special or piece.whole:
            return (piece.data,)
        if done == 0 or not steps:
            return self.starts[i]
        return steps[done - 1].parts


@st.cache_resource(max_entries=128, show_spinner=False)
def walk(text: str, run_key: tuple, k: int, _tok: Tokenizer) -> Walk | str:
    """The walk of text, built once and shared; or the sentence saying why the text cannot be encoded."""
    try:
        pieces = encoding.pieces(_tok, text, k)
        steps = tuple(() if p.special or p.whole else tuple(encoding.steps(_tok, p.data, k)) for p in pieces)
        starts = tuple((p.data,) if p.special or p.whole else encoding.start(_tok, p.data, k) for p in pieces)
    except ValueError as e:
        return str(e)
    positions = tuple((i, done) for i, s in enumerate(steps) for done in range(len(s) + 1))
    return Walk(tuple(pieces), steps, positions, starts)


w = walk(text, run_key, k, tok)
if isinstance(w, str):
    st.error(w)
    st.stop()
if not w.pieces:
    st.info(f"{label.capitalize()}'s pre-tokenizer keeps nothing of this text (the whitespace pre-tokenizer drops spaces).")
    st.stop()
last = len(w.positions) - 1
tokens = [t for i in range(len(w.pieces)) for t in w.parts(i, len(w.steps[i]))]


def pick_token(token: bytes) -> None:
    st.session_state["enc_token"] = token
    st.session_state["enc_view"] = "ancestry"
    st.session_state["enc_playing"] = False


def picked() -> None:
    token = st.session_state["enc_pick"]
    if token is not None:
        pick_token(token)


def token_pills() -> None:
    """The text's different tokens as buttons, each with its id: a click opens that token's ancestry."""
    options = list(dict.fromkeys(tokens))
    chosen = st.session_state["enc_token"]
    st.session_state["enc_pick"] = chosen if chosen in options else None
    # not state.widget: written on every run (so every run sends it), and None (no token chosen) is a value here
    different = f"{len(options):,} different" if len(options) < len(tokens) else f"{len(tokens):,}"
    st.pills(
        f"The text's {different} token{'s' if len(options) != 1 else ''}, each with its id: click one",
        options,
        default=st.session_state["enc_pick"],
        format_func=lambda t: f"{plain(show(t))} · id {tok.ids.get(t, '?')}",  # the id on the projector, not on hover
        key="enc_pick",
        wrap=True,  # in a column Streamlit's default is one row that scrolls sideways, most tokens out of sight
        # presenter mode keeps the tree on the first screen: the pills say "id" themselves
        label_visibility="collapsed" if st.session_state["presenter"] else "visible",
        on_change=picked,
    )


# the view switch and, beside it (under it when the row is full), in the steps' view, every token of the text with its
# id, in order: on a projector's first screen (issues 28.12, 36.5)
top = st.container(horizontal=True, vertical_alignment="center", gap="medium")
view = state.widget(
    top.segmented_control,
    "View",
    ["steps", "ancestry", "dropout"],
    format_func={"steps": "The steps", "ancestry": "A token's ancestry", "dropout": "Dropout"}.get,
    key="enc_view",
    required=True,  # a click on the view shown keeps it
    label_visibility="collapsed",
)


# ---------------------------------------------------------------------------
# the encoder's steps, played like the step page


player = Player("enc_", "enc_pos", last + 1, offset=1)  # Play's clock in this session; the walk's position 0-based at enc_pos


def step_text(i: int, done: int) -> str:
    piece, steps = w.pieces[i], w.steps[i]
    if piece.special:
        return f"{show(piece.data)} is a special token: it is cut out before pre-tokenizing and kept whole, never merged."
    if piece.whole:
        return (
            f"{show(piece.data)} is itself a token of {label}, so it is taken whole, with no merge (HuggingFace's ignore_merges): "
            "the vocabulary is looked up before the merges."
        )
    if done < len(steps):
        return encode_views.explain(steps[done], counts, label)
    if not steps:
        return "No pair of these bytes is a merge" + (f" among the first {k:,}" if which == "run" else "") + ": its bytes are its tokens."
    return (
        f"No pair left is a merge{f' among the first {k:,}' if which == 'run' else ''}: {show(piece.data)} encodes as "
        f"{len(steps[-1].parts)} token{'s' if len(steps[-1].parts) != 1 else ''} after {len(steps)} step{'s' if len(steps) != 1 else ''}."
    )


def step_code(steps, done: int) -> str:
    """Tokenizer.encode_steps with the lines of step `done` lit: the lowest merge number found, and what merging it made."""
    if done >= len(steps):
        return code.encode_code(None, None)
    step = steps[done]
    a, b = step.pair
    places = sum(1 for r in step.ranks if r == step.rank)
    made = f"{show(a + b)}, in {places} place{'s' if places != 1 else ''}"
    return code.encode_code(f"{encode_views.number(step.rank)}, {show(a)} + {show(b)}", made)


timer = player.timer  # what the fragment's timer is set up for
if timer[0]:
    player.restart()


@st.fragment(run_every=1 / timer[1] if timer[0] else None)
def walker() -> None:
    pos = player.tick() - 1
    i, done = w.positions[pos]
    row = controls(
        "enc_", "step", first=pos <= 0, last=pos >= last, go=player.go, set_playing=player.set_playing, on_speed=player.changed_speed
    )
    steps = w.steps[i]
    row.markdown(f"step **{min(done + 1, len(steps))}** of {len(steps)}" if steps else "no merge applies")

    if len(w.pieces) > 1:  # the whole text: where this pre-token is, and what the others became
        current = [w.parts(j, len(w.steps[j]) if j < i else (done if j == i else 0)) for j in range(len(w.pieces))]
        st.html(encode_views.overview(w.pieces, current, i))
    piece = w.pieces[i]
    if len(w.pieces) > 1:  # one pre-token is the text itself, already in the box above
        st.html(f"<h3>Pre-token {i + 1} of {len(w.pieces)}: <span class='pill'>{encode_views.escape(show(piece.data))}</span></h3>")
    if not piece.special and not piece.whole:
        unit = "characters" if getattr(tok, "family", "") == "sentencepiece" else "bytes"
        st.html(encode_views.step_rows(piece.data, steps, done, link_of, counts, w.starts[i], unit))
    legend = "#N between two tokens: their merge number (1 = learned first), ·: not a merge" + (
        "; ×N: how often the pair occurred when training merged it" if which == "run" else ""
    )
    st.html(
        f"<p class='caption' style='color:#111'>{encode_views.escape(step_text(i, done))}</p><p class='caption'>{encode_views.escape(legend)}.</p>"
    )
    if not piece.special and not piece.whole and getattr(tok, "family", "") != "sentencepiece":  # the byte-level encoder's code
        code_box = st.expander("The code of this step, from the library's own source", key="enc_code", on_change="rerun")
        if code_box.open:  # the line that chose it, lit; sent only while open
            code_box.html(step_code(steps, done))
    if which == "run" and done < len(steps) and steps[done].rank < settings.num_merges:
        merge = steps[done].rank + 1
        if st.button(f"See merge {merge:,} on the step page", key="enc_to_step", icon=":material/footprint:"):
            st.session_state["step"] = merge
            st.session_state["enc_playing"] = False
            st.switch_page("pages/step.py")
    if player.timer != timer:
        st.rerun()


# ---------------------------------------------------------------------------
# a token's ancestry


def typed() -> None:
    value = st.session_state["enc_typed"]
    if value:
        pick_token(value.replace("␣", " ").replace("↵", "\n").encode("utf-8", "surrogateescape"))


def ancestry() -> None:
    token = st.session_state["enc_token"]
    if token is None:
        token = max(tokens, key=len)
    left, right = st.columns([3, 2], vertical_alignment="top")
    with left:
        token_pills()
    state.widget(right.text_input, "Or type a token (␣ is a space)", key="enc_typed", on_change=typed, placeholder="e.g. ␣the")
    node = encoding.ancestry(tok, token, k)
    if node is None:
        try:
            parts = tok.pieces(token.decode("utf-8", "surrogateescape"), k)
        except ValueError as e:
            st.error(str(e))
            return
        pieces = "  ·  ".join(show(p) for p in parts)
        st.warning(plain(f"{show(token)} is not one token of {label}: it encodes as {len(parts)} tokens, {pieces}. Pick one of those."))
        return
    st.html(encode_views.tree(node, link_of))
    legend = "#N: the merge that made the token (1 = learned first); dashed: a byte"
    if which == "run":
        legend += "; ×N: how often its pair occurred when it was merged. Click a number to open that merge on the step page"
    st.html(
        f"<p class='caption' style='color:#111'>{encode_views.escape(encode_views.tree_sentence(node, label))}</p><p class='caption'>{encode_views.escape(legend)}.</p>"
    )


# ---------------------------------------------------------------------------
# BPE-dropout: a word's other segmentations

DROPOUT_BYTES = 32  # a word's bytes at most: 1,000 samples of it in the page's thread stay ~50 ms (then cached for every session)


@st.cache_resource(max_entries=256, show_spinner=False)
def sampled(word: bytes, p: float, samples: int, seed: int, run_key: tuple, k: int, _tok: Tokenizer) -> list:
    """A word's segmentations under dropout p, sampled once per (word, p, samples, seed, tokenizer) and shared."""
    return _tok.segmentations(word, p, samples, seed, k)


def dropout() -> None:
    words = list(dict.fromkeys(piece.data for piece in w.pieces if not piece.special))
    if not words:
        st.info("The text is special tokens only: they are never merged, so dropout has nothing to skip.")
        return
    if st.session_state["enc_dropout_piece"] not in words:
        st.session_state["enc_dropout_piece"] = max(words, key=len)  # the longest: the most merges to skip
    c1, c2, c3, c4 = st.columns([4, 3, 2, 2], vertical_alignment="bottom")
    word = state.widget(c1.selectbox, "Pre-token", words, format_func=lambda t: plain(show(t)), key="enc_dropout_piece")
    p = state.widget(
        c2.slider, "Skip probability p", 0.0, 1.0, step=0.05, key="enc_dropout", help="each merge, each time it is about to be made"
    )
    samples = state.widget(c3.selectbox, "Samples", [100, 1000], format_func=lambda n: f"{n:,}", key="enc_dropout_samples")
    seed = state.widget(c4.number_input, "Seed", min_value=0, max_value=2**31 - 1, step=1, key="enc_dropout_seed")
    if len(word) > DROPOUT_BYTES:
        st.info(f"{plain(show(word))} is {len(word)} bytes long: the dropout view takes a pre-token of at most {DROPOUT_BYTES} bytes.")
        return
    found = sampled(word, float(p), int(samples), int(seed), run_key, k, tok)
    plain_parts = tuple(
        tok.vocab[i] for i in tok.encode(word.decode("utf-8", "surrogateescape"), k, allowed_special=(), disallowed_special=())
    )
    st.html(
        f"<p class='caption' style='color:#111'>{encode_views.escape(encode_views.dropout_sentence(word, p, samples, found, plain_parts))}</p>"
    )
    st.html(encode_views.dropout_rows(found, samples, plain_parts))
    st.html(
        "<p class='caption'>Each row: a segmentation, the share of the samples that gave it, and how many. The same seed gives the "
        "same samples; p = 0 is the encoder's steps, p = 1 leaves the bytes. A model trained on such samples sees a word split "
        "several ways, and learns its pieces too (BPE-dropout, Provilkov et al. 2020).</p>"
    )


if view == "ancestry":
    ancestry()
elif view == "dropout":
    dropout()
else:
    top.html(encode_views.token_ids(tokens, [tok.ids.get(t) for t in tokens]))
    walker()
