"""Every session-state key the app uses, with its default, declared in one place."""

from __future__ import annotations

import copy
from collections.abc import Callable

import streamlit as st

DEFAULTS: dict[str, object] = {
    "source": "textbook",  # a key of ui.corpus.SOURCES
    "pasted": "",
    "pattern": "whitespace",
    "specials": "<|endoftext|>",
    "vocab_size": 256 + 12 + 1,
    "algorithm": "heap",
    "tie_break": "cs336",  # a key of bpe.rule.RULES: whose rule breaks ties between pairs with the same count
    "step": 1,  # the merge shown on the step-through page, 1-based
    "playing": False,
    "speed": 1.0,  # merges per second while playing
    "play_from": None,  # (time.time(), step) when Play started or was last moved: where the play clock counts from
    "sample": "",  # the step page's own sentence; "": a sample of the corpus
    "presenter": False,  # presenter mode: larger type everywhere, the sidebar folded away, a simpler step page
    "present_link": None,  # what the URL's ?present= said or was last made to say: ui.link.presenter
    "link": None,  # (corpus, merge, rule) as the URL last said, applied or written: ui.link
    "trace_seen": None,  # the settings of the last trace this session showed: a new one says it is being built
    "race": None,  # the last race's results, kept per session: ui.views.race.RaceRecord
    "race_budget": 10.0,  # seconds each algorithm may run in the race (initial count included)
    "race_hf": True,  # add HuggingFace tokenizers and rustbpe as references, those installed
    "sweep": None,  # the last scaling sweep: ui.views.race.SweepRecord
    "sweep_source": "stdlib",  # "stdlib" (built-in prose) or "current" (the sidebar's corpus)
    "sweep_merges": 300,
    "sweep_budget": 5.0,  # seconds per algorithm per corpus size
    "speedup": None,  # the last parallel pre-tokenization timing: ui.views.race.SpeedupRecord
    "threshold": 1,  # min_pair_frequency on the threshold explorer
    "threshold_typed": 1,  # the number box beside the threshold slider: ui.views.threshold.slider
    "threshold_options": (),  # what the threshold slider's options were when drawn: ui.views.threshold.restore_slider
    "tok_text": None,  # the tokenize page's text; None: a sample of the corpus
    "tok_k": None,  # merges the tokenize page uses; None: all of them
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
    "tok_ref_pattern": "gpt2",  # the pre-tokenizer for uploaded files that do not record one (GPT-2, .tiktoken)
    "tok_merge_query": "",  # the real tokenizer's merges shown: those whose token contains this
    "real_k": None,  # merges of the sidebar's run used on the encode, compare and quirks pages; None: all of them
    "real_n": None,  # the merges of the run real_k was last drawn for: all of them follow a new run's
    "enc_text": "lowest newest",  # the encode page's word or sentence (both words merge in the default textbook run)
    "enc_tokenizer": "run",  # whose encoding it walks: "run" (the sidebar's) or a key of ui.real.ENCODINGS
    "enc_link": None,  # (text, tokenizer) as the URL last said, applied or written: ui.link.follow_encode
    "enc_view": "steps",  # "steps" (the encoder's loop) or "ancestry" (one token's merge tree)
    "enc_pos": 0,  # how far the walk is: an index into the (pre-token, steps done) positions of the text
    "enc_playing": False,
    "enc_speed": 1.0,  # steps per second while playing
    "enc_play_from": None,  # (time.time(), position) when Play started: where its clock counts from
    "enc_token": None,  # the token whose ancestry is shown (bytes); None: the text's longest token
    "enc_typed": "",  # a token typed for its ancestry
    "cmp_text": None,  # the compare page's text; None: ui.views.compare.SAMPLE
    "quirk": "strawberry",  # a key of ui.lessons.quirks.BY_KEY
    "tax_language": "Hindi",  # the token tax language whose tokens are drawn
    "settings": None,  # written by the sidebar on every run: ui.sidebar.Settings, or a sentence saying what to fix
    "watching": {},  # purpose ("trace", "race", ...) -> key of the worker-pool job this session waits for: ui.work
    "failed": {},  # purpose -> the sentence saying why its last run failed, shown until the next run
}


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
    **options,
):
    """Draw a widget that holds the session's value of `key`, and return its value; every keyed widget is drawn so.

        state.widget(st.slider, "Merges used (k)", 0, n, key="tok_k", help="...")
        state.widget(row.selectbox, "Speed", SPEEDS, key="speed", on_change=changed_speed)  # any container's method

    The widget gets three things, each for a reason:
    - its own key, "w_" + key, filled from `key`: Streamlit forgets a widget's state when a run does not
      draw it (a visit to another page), so the value lives in `key`; `kept=True` is for the sidebar's
      widgets, drawn on every run of every page, which hold `key` itself;
    - a callback that copies a change back to `key` (`save`), then calls on_change(*args) if given;
      pills and segmented controls never copy None (no choice) back; nor does any widget when stale() says the
      change came with a click on something else (the browser sent the widget's old value along): it is set back;
    - the session's value as its default (index=, default= or value=). subtle: a value reaches the browser
      with the run that writes it; when that run is cut short (a busy server, a student clicking at once)
      the browser never gets it, later runs send the widget with only its default, and the browser shows
      that (the first option, 0, "") and sends it back on the next click. With the session's value as the
      default, a widget the browser has never seen shows the session's value (tests/test_app_widgets.py).
      Streamlit's warning about a default given to a widget whose key is set is off (.streamlit/config.toml).
    """
    value = st.session_state[key]
    own = key if kept else "w_" + key
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
        # a click on the pill already chosen sends None (unless required=True): the session keeps its value
        if not kept and not (kind in _BY_DEFAULT and st.session_state[own] is None):
            save(key)
        if on_change is not None:
            on_change(*args)

    return draw(label, *positional, key=own, on_change=changed, **options)


def save(key: str) -> None:
    st.session_state[key] = st.session_state["w_" + key]
