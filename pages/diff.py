"""Check your own BPE: upload the merges your trainer made, and see where and why they part from the reference.

The sidebar's run is the reference (its corpus, pre-tokenizer, special tokens,
tie-break rule and vocab size). The check -- reading the file, training the
reference and the known mistakes -- runs in the server's worker pool, shared by
sessions that check the same list on the same run; this page draws its progress,
then the diagnosis (bpe.lab.diagnose).
"""

import streamlit as st

from bpe.files.merges_file import EXPECTED
from serve import jobs
from serve.jobs import RunKey
from ui import corpus as corpora
from ui import link, runs, sidebar, work
from ui.render import plain
from ui.views import diff as diff_views
from ui.views import step as step_views
from ui.views.tokenize import uploaded

EXAMPLE_LABEL = "the example: a student's trainer that breaks ties toward the smaller pair (min where the rule takes max)"

settings = sidebar.current()
presenter = st.session_state["presenter"]  # a projector's first screen is for the verdict and the two lists
st.title("Check your own BPE")
if not presenter:
    st.caption(
        "Your trainer's merges against the reference trained on the same corpus with the same settings: the first merge "
        "where they part, both pairs with their counts there, and the mistake that makes your list."
    )


def take_upload() -> None:
    """One file: merges.txt alone holds the merges, so GPT-2's vocab.json is not needed (a new upload replaces the last)."""
    file = st.session_state["diff_files"]
    st.session_state["diff_theirs"] = uploaded([file] if file is not None else [])


def take_example() -> None:
    st.session_state["diff_theirs"] = "example"


c1, c2 = st.columns([3, 1.4], vertical_alignment="bottom")
c1.file_uploader("Your merges: merges.txt, Python pairs, or a tokenizer file", key="diff_files", on_change=take_upload, help=EXPECTED)
c2.button("Try a student's list with a tie mistake", on_click=take_example, width="stretch")
listed = ", ".join(settings.special_tokens) or "none"
st.caption(
    f"The reference is the sidebar's run: {settings.corpus.name}, pre-tokenizer {settings.pretokenizer.name}, special tokens {listed}, "
    f"tie-break rule {settings.tie_break}, {settings.num_merges:,} merges. Set them to the ones you trained with."
)

theirs = st.session_state["diff_theirs"]
if theirs is None:
    st.info("Upload the merges your trainer made on the sidebar's corpus, or try the example.")
    st.stop()
if theirs == "example":
    files, label, digest = (), EXAMPLE_LABEL, f"example:{jobs.EXAMPLE}"
else:
    files, label, digest = theirs.files, theirs.label, theirs.digest
    size = sum(len(data) for _, data in files)
    if size > corpora.MAX_UPLOAD_BYTES:
        st.error(
            plain(
                f"{label} is {size / 1e6:.1f} MB; the app takes up to {corpora.MAX_UPLOAD_BYTES / 1e6:.0f} MB. Check bigger lists with bpe diff."
            )
        )
        st.stop()
key = RunKey("check", settings.key, settings.spec, settings.num_merges, (digest,))


def stop() -> None:
    """This session's Stop: it no longer waits for the check (which ends unless another session waits for it too)."""
    work.let_go("check")
    st.session_state["diff_theirs"] = None


def progress(status) -> None:
    report = status.progress or jobs.Checking("Waiting for a worker…", 0.0)
    bar, button = st.columns([5, 1], vertical_alignment="bottom")
    bar.progress(min(max(report.share, 0.0), 1.0), text=work.waiting(status, "This check") or report.doing)
    button.button("Stop", key="diff_stop", on_click=stop, width="stretch")


kept = st.session_state["diff_result"]
if kept is not None and kept[0] == key:
    checked = kept[1]
else:
    small = len(settings.corpus.data) <= runs.INLINE_BYTES and sum(len(d) for _, d in files) <= runs.INLINE_BYTES
    args = (files, label, settings.corpus.data, settings.spec, settings.num_merges)
    status = work.ask("check", key, jobs.check_merges, *args, lane="long", inline=small)
    if not status.ended:
        status = work.pool().wait(key, runs.WAIT_S)
    if status.state == "failed":
        st.error(plain(status.error))
        st.stop()
    if status.state != "done":
        work.follow(key, progress, every=runs.POLL_S)
        st.stop()
    checked = status.result
    st.session_state["diff_result"] = (key, checked)

d = checked.diagnosis
st.html(diff_views.verdict(checked))
k = d.first_difference + 1 if d.first_difference is not None else None

left, right = st.columns([1, 1], gap="medium")
with left:
    st.html(f"<h3>Your merges and the reference's</h3>{diff_views.lists(checked)}")
    st.caption(f"Yours: {label}.")
with right:
    if d.event is not None:
        st.html(step_views.pair_table(d.event, k, yours=d.theirs, yours_count=d.theirs_count))
        href = link.href(k, settings)
        if href:
            st.markdown(f"[Open merge {k:,} on the step page]({href})")

st.html(diff_views.cause(d))
if d.fix:
    st.success(plain(f"Fix: {d.fix}"))
if d.tried:
    st.html(f"<h3>Each known mistake, trained until it parts from your list</h3>{diff_views.tried(d)}")
    skipped = diff_views.untried(d)
    st.caption(
        "A mistake in breaking ties has the reference's counts, so it follows the reference until it breaks a tie another "
        "way; a mistake in counting is trained on its own. The one that makes the most of your list past the first "
        "difference is named (a tie rule only if it makes all of it); when it makes only part, each other one is tried "
        "with it, two mistakes at once. When none does, none is named."
        + (f" Not trained, since one already makes all of your list: {', '.join(skipped)}." if skipped else "")
    )
