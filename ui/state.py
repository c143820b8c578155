"""Every session-state key the app uses, with its default, declared in one place."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass

import streamlit as st

from bpe.heap import Heap
from bpe.sentencepiece.spec import SentencePieceSpec
from bpe.spec import DEFAULT as DEFAULT_SPEC
from bpe.text.pretokenizers import DEFAULT
from ui.corpus import BYTE_LEVEL, DEFAULT_SOURCE, SOURCES

SP_DEFAULT = SentencePieceSpec()  # spm_train's defaults, the SentencePiece family's switches' (ui.family)

# Each default is taken from its home: the first preset's own settings, the library's TrainSpec defaults.
DEFAULTS: dict[str, object] = {
    "source": DEFAULT_SOURCE,  # a key of ui.corpus.SOURCES
    "pasted": "",
    "pasted_data": None,  # (the pasted text, its bytes): encoded once per text, not on every run (ui.sidebar.pasted_bytes)
    **SOURCES[DEFAULT_SOURCE].sidebar(),  # pretokenizer, special_tokens_text (the sidebar's box: comma-separated), vocab_size
    "family": BYTE_LEVEL,  # the tokenizer family the sidebar trains: ui.family.FAMILIES
    "sp_byte_fallback": SP_DEFAULT.byte_fallback,  # the SentencePiece family's switches (its vocab size and coverage: the preset's)
    "sp_split_digits": SP_DEFAULT.split_digits,
    "sp_split_by_whitespace": SP_DEFAULT.split_by_whitespace,
    "sp_max_piece_length": SP_DEFAULT.max_sentencepiece_length,
    "algorithm": Heap.name,  # the Python heap, whose trace the step page draws in detail (the library's default may be heap_c)
    "tie_break": DEFAULT_SPEC.tie_break,  # a key of bpe.rule.RULES: whose rule breaks ties between pairs with the same count
    "step": 1,  # the merge shown on the step-through page, 1-based
    "playing": False,
    "speed": 1.0,  # merges per second while playing
    "play_from": None,  # (time.time(), step) when Play started or was last moved: where the play clock counts from
    "arrows_seen": None,  # (drawing, total): the step page's drawing and the arrow-key presses it has moved by (ui.play.arrows)
    "sample": "",  # the step page's own sentence; "": a sample of the corpus
    "presenter": False,  # presenter mode: larger type everywhere, the sidebar folded away, a simpler step page
    "present_link": None,  # what the URL's ?present= said or was last made to say: ui.link.presenter
    "link": None,  # (corpus, merge, rule) as the URL last said, applied or written: ui.link
    "trace_seen": None,  # the settings of the last trace this session showed: a new one says it is being built
    "race": None,  # the last race's results, kept per session: ui.views.race.RaceRecord
    "race_asked": None,  # when this session last pressed Start (time.time()): a result finished before it is a replay
    "sp_race": None,  # the last SentencePiece race's results, kept per session: serve.sp_jobs.SpRaceRecord
    "race_budget": 10.0,  # seconds each algorithm may run in the race (initial count included)
    "race_hf": True,  # add HuggingFace tokenizers and rustbpe as references, those installed
    "sweep": None,  # the last scaling sweep: ui.views.race.SweepRecord
    "sweep_source": "stdlib",  # "stdlib" (built-in prose) or "current" (the sidebar's corpus)
    "sweep_merges": 300,
    "sweep_budget": 5.0,  # seconds per algorithm per corpus size
    "speedup": None,  # the last parallel pre-tokenization timing: ui.views.race.SpeedupRecord
    "threshold": 1,  # min_pair_frequency on the threshold explorer
    "threshold_typed": 1,  # the number box beside the threshold slider: ui.views.threshold.slider
    "threshold_box_for": None,  # the slider's t the box was last set for (a box value that comes with another is stale)
    "threshold_options": (),  # what the threshold slider's options were when drawn: ui.views.threshold.restore_slider
    "tok_text": None,  # the tokenize page's text; None: a sample of the corpus
    "tok_ids": True,  # the tokenize page shows each token's id under it (a projector has no hover)
    "tok_k": None,  # merges the tokenize page uses; None: all of them
    "tok_stopped": None,  # the key of the long text's tokenizing this session stopped (the page then shows its first page)
    "quiz_mode": "easier",  # "easier": the words with their counts are shown; "hard": only the pairs
    "quiz_run": None,  # which run (corpus and pre-tokenizer) quiz_merge refers to; another run starts at its first question
    "quiz_merge": 1,  # the merge the quiz asks about, 1-based
    "quiz_answers": None,  # {question id: ui.lessons.quiz.Answer}; replaced on each answer, never changed in place (defaults are shared)
    "vocab_of": "run",  # whose vocabulary the vocabulary page shows: "run" (the sidebar's) or a key of ui.real.ENCODINGS
    "vocab_query": "",
    "vocab_at_most": 0,  # the vocabulary page lists the merged tokens used at most this often  # the vocabulary page's search: tokens containing this
    "vocab_sort": "merge",  # a key of ui.views.vocabulary.SORTS
    "lesson_step": 1,
    "enc_lesson_step": 1,  # the second lesson's screen (how a tokenizer encodes), 1-based
    "enc_quiz": 0,  # the encode quiz's question: an index into its words
    "enc_quiz_answers": None,  # {question id: ui.lessons.quiz.Answer} of the encode quiz; replaced on each answer, never changed in place  # the guided lesson's screen, 1-based
    "tok_ref_source": "gpt2",  # the tokenize page's real tokenizer: "gpt2" (../shared/gpt2) or "upload"
    "tok_upload_ref": None,  # the files uploaded as the real tokenizer: ui.views.tokenize.Reference
    "tok_ref_pretokenizer": DEFAULT.name,  # the pre-tokenizer for uploaded files that do not record one (GPT-2, .tiktoken)
    "tok_merge_query": "",  # the real tokenizer's merges shown: those whose token contains this
    "real_k": None,  # merges of the sidebar's run used on the encode, compare and quirks pages; None: all of them
    "real_n": None,  # the merges of the run real_k was last drawn for: all of them follow a new run's
    "enc_text": "lowest newest",  # the encode page's word or sentence (both words merge in the default textbook run)
    "enc_tokenizer": "run",  # whose encoding it walks: "run" (the sidebar's) or a key of ui.real.ENCODINGS
    "enc_link": None,  # (text, tokenizer) as the URL last said, applied or written: ui.link.follow_encode
    "enc_view": "steps",  # "steps" (the encoder's loop), "ancestry" (one token's merge tree) or "dropout" (BPE-dropout's segmentations)
    "enc_dropout": 0.1,  # BPE-dropout's probability of skipping a merge, on the Encode page
    "enc_dropout_samples": 1000,  # how many times the word is encoded under dropout
    "enc_dropout_seed": 0,  # the seed of those samples: the same seed, the same samples
    "enc_dropout_piece": None,  # the pre-token (bytes) whose segmentations are shown; None: the text's longest
    "enc_pos": 0,  # how far the walk is: an index into the (pre-token, steps done) positions of the text
    "enc_playing": False,
    "enc_speed": 1.0,  # steps per second while playing
    "enc_play_from": None,  # (time.time(), position) when Play started: where its clock counts from
    "enc_arrows_seen": None,  # (drawing, total): the Encode page's drawing and the presses it has moved by (ui.play.arrows)
    "enc_token": None,  # the token whose ancestry is shown (bytes); None: the text's longest token
    "enc_typed": "",  # a token typed for its ancestry
    "cmp_text": None,  # the compare page's text; None: ui.views.compare.SAMPLE
    "cmp_ids": True,  # the compare page shows each token's id under it (a projector has no hover)
    "quirk": "strawberry",  # a key of ui.lessons.quirks.BY_KEY
    "tax_language": "Hindi",  # the token tax language whose tokens are drawn
    "diff_theirs": None,  # the check-your-merges page's list: the uploaded files (ui.views.tokenize.Reference) or "example"
    "diff_result": None,  # (serve.jobs.RunKey, serve.jobs.Checked) of the last check this session saw
    "playlist": None,  # the lecture's playlist this session steps through: a tuple of ui.playlist.Item, or None
    "playlist_at": 1,  # where in it, 1-based
    "playlist_go": None,  # the item a callback asked to open (1-based): ui.playlist.follow opens it
    "playlist_link": None,  # (playlist, at) as the URL last said, applied or written: ui.playlist.follow
    "playlist_draft": (),  # the playlist being built on the Lecture playlist page (ui.playlist.Item)
    "pl_kind": "merge",  # the Lecture playlist page's "Add a view": a key of ui.playlist.KINDS, and its argument
    "pl_number": 1,
    "pl_quirk": "strawberry",
    "pl_text": "strawberry",
    "settings": None,  # written by the sidebar on every run: ui.corpus.Settings, or a sentence saying what to fix
    "watching": {},  # purpose ("trace", "race", ...) -> key of the worker-pool job this session waits for: ui.work
    "failed": {},  # purpose -> the sentence saying why its last run failed, shown until the next run
    "limited": {},  # key of a text box with a limit -> (the text it last took, the sentence refusing a longer one or ""): widget
}


# Every text box's limit, by its session key (state.widget applies it): from a word to a book chapter, what a lecture
# needs. Work on a text up to its limit is a few milliseconds in the page's run, or runs in a worker process (the
# Tokenize page's long texts, training on a paste); the README's serving page lists them.
LIMITS: dict[str, Limit] = {}


def init() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, copy.copy(value))  # subtle: a dict default must not be shared by sessions


# how each kind of widget is given its default: the index of the value among its options, the value itself (default=),
# or, for every other kind (slider, select_slider, number_input, text_input, text_area, toggle), value=
_BY_INDEX = ("selectbox", "radio")
_BY_DEFAULT = ("pills", "segmented_control")


def widget(
    draw: Callable,
    label: str,
    *positional,
    key: str,
    on_change: Callable | None = None,
    args: tuple = (),
    kept: bool = False,
    stale: Callable[[], bool] | None = None,
    limit: Limit | None = None,
    **options,
):
    """Draw a widget that holds the session's value of `key`, and return its value; every keyed widget is drawn so.

        state.widget(st.slider, "Merges used (k)", 0, n, key="tok_k", help="...")
        state.widget(row.selectbox, "Speed", SPEEDS, key="speed", on_change=changed_speed)  # any container's method

    The widget gets three things, each for a reason:
    - its own key, "w_" + key, filled from `key`: Streamlit forgets a widget's state when a run does not
      draw it (a visit to another page), so the value lives in `key`; `kept=True` is for the sidebar's
      widgets, drawn on every run of every page, which hold `key` itself and are kept for the whole session
      (persist_state="session"). subtle: a page switch made by the server (st.switch_page: the Encode page's
      step-page button, the second lesson's last screen, a playlist's Next view) sends no widget values, and
      Streamlit then dropped every keyed one as the new page began: the sidebar went back to the default run;
    - a callback that copies a change back to `key` (`save`), then calls on_change(*args) if given;
      pills and segmented controls never copy None (no choice) back; nor does any widget when stale() says the
      change came with a click on something else (the browser sent the widget's old value along): it is set back;
    - the session's value as its default (index=, default= or value=). subtle: a value reaches the browser
      with the run that writes it; when that run is cut short (a busy server, a student clicking at once)
      the browser never gets it, later runs send the widget with only its default, and the browser shows
      that (the first option, 0, "") and sends it back on the next click. With the session's value as the
      default, a widget the browser has never seen shows the session's value (tests/test_app_widgets.py).
      Streamlit's warning about a default given to a widget whose key is set is off (.streamlit/config.toml).

    A text box given a `limit` says it in its label ("Text to tokenize (up to 100,000 characters)") and takes no
    longer text: a longer one is refused in one sentence under the box, which shows the text it had before
    (the browser is sent it back, so it stops sending the long one with every click). Not the widget's max_chars:
    the browser would cut a paste short without a word, and anyone can send the server a longer value anyway.
    """
    value = st.session_state[key]
    own = key if kept else "w_" + key
    limit = limit or LIMITS.get(key)
    if limit is not None:
        label = f"{label} ({limit.label})"
        refused = st.session_state["limited"].get(key, ("", ""))[1]
        st.session_state["limited"][key] = (value, refused)  # what the box holds now: it was taken
    # subtle: assigning a widget's key makes Streamlit send the value to the browser again,
    # which would overwrite what a user is typing while a timer reruns the page; assign only when it differs
    if not kept and st.session_state.get(own) != value:
        st.session_state[own] = value
    kind = getattr(draw, "__name__", "")
    if kind in _BY_INDEX:
        choices = list(options["options"] if "options" in options else positional[0])
        options["index"] = choices.index(value) if value in choices else 0
    elif kind in _BY_DEFAULT:
        options["default"] = value
    else:
        options["value"] = value

    def changed() -> None:
        if stale is not None and stale():
            st.session_state[own] = st.session_state[key]
            return
        if limit is not None:
            sent, (before, _) = st.session_state[own], st.session_state["limited"][key]
            if len(sent) > limit.chars:
                st.session_state[own] = before  # the box shows the text it had, and the long one is dropped
                st.session_state["limited"][key] = (before, limit.refusal(len(sent)))
                return
            st.session_state["limited"][key] = (sent, "")
        # a click on the pill already chosen sends None (unless required=True): the session keeps its value
        if not kept and not (kind in _BY_DEFAULT and st.session_state[own] is None):
            save(key)
        if on_change is not None:
            on_change(*args)

    if kept:
        options["persist_state"] = "session"  # through a page switch made by the server, too (the docstring says why)
    drawn = draw(label, *positional, key=own, on_change=changed, **options)
    if limit is not None and st.session_state["limited"][key][1]:
        st.warning(st.session_state["limited"][key][1])  # said once, under the box
        st.session_state["limited"][key] = (value, "")
    return drawn


@dataclass(frozen=True)
class Limit:
    """How much a text box takes, and what that is for a class: Limit(100_000, "a book chapter")."""

    chars: int
    what: str  # what fits: "a sentence", "a book chapter"

    @property
    def label(self) -> str:
        return f"up to {self.chars:,} characters"

    def refusal(self, sent: int) -> str:
        """'That text has 15,000,000 characters; this box takes up to 100,000 (a book chapter), so it was not taken.'"""
        return f"That text has {sent:,} characters; this box takes up to {self.chars:,} ({self.what}), so it was not taken."


LIMITS.update(
    {
        "tok_text": Limit(100_000, "a book chapter"),  # the Tokenize page: a page here, longer in a worker (pages/tokenize.py)
        "pasted": Limit(1_000_000, "a short book; upload a file for up to 5 MB"),  # the sidebar's corpus: trained in a worker
        "cmp_text": Limit(1_000, "a paragraph"),  # the Real tokenizers page: four tokenizers, every token drawn (~8 ms a new text)
        "sample": Limit(300, "a sentence or two"),  # the step page's own sentence, at merge k
        "enc_text": Limit(200, "a word or a sentence"),  # the Encode page walks every step of every pre-token
        "enc_typed": Limit(60, "one token"),
        "special_tokens_text": Limit(1_000, "a few special tokens"),
        "vocab_query": Limit(100, "a search"),
        "tok_merge_query": Limit(100, "a search"),
        "pl_text": Limit(60, "a word or a sentence"),  # a playlist's Encode item: ui.playlist.MAX_TEXT
    }
)


def save(key: str) -> None:
    st.session_state[key] = st.session_state["w_" + key]
