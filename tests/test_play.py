"""The step page's Play clock (ui/play.py), with made-up times: no browser, no sleeping."""

from __future__ import annotations

import pytest
import streamlit
from hypothesis import given, settings
from hypothesis import strategies as st

from ui import play
from ui.play import PlayClock


def test_play_advances_by_elapsed_time_times_speed():
    clock, k = PlayClock(n=100, speed=2.0).toggled(True, step=10, now=50.0)
    assert (clock.playing, k) == (True, 10)
    assert [clock.reached(50.0 + t) for t in (0.0, 0.5, 1.0, 3.0)] == [10, 11, 12, 16]


def test_a_timer_that_fires_a_little_early_still_advances():
    clock, _ = PlayClock(n=100, speed=4.0).toggled(True, step=1, now=0.0)
    assert clock.ticked(1, now=0.24)[1] == 2  # 0.96 of a merge rounds to one


def test_a_late_timer_catches_up_instead_of_counting_ticks():
    clock, _ = PlayClock(n=100, speed=1.0).toggled(True, step=5, now=0.0)
    assert clock.ticked(5, now=7.0)[1] == 12  # one tick, seven seconds late: seven merges on


def test_play_stops_at_the_last_merge():
    clock, _ = PlayClock(n=20, speed=4.0).toggled(True, step=18, now=0.0)
    clock, k = clock.ticked(18, now=100.0)
    assert (k, clock.playing) == (20, False)


def test_play_at_the_last_merge_starts_again_from_the_first():
    clock, k = PlayClock(n=20).toggled(True, step=20, now=3.0)
    assert (clock.playing, k, clock.first, clock.started) == (True, 1, 1, 3.0)


def test_pause_stops_where_the_clock_has_got_even_if_the_page_is_behind():
    clock, _ = PlayClock(n=100, speed=2.0).toggled(True, step=1, now=0.0)
    clock, k = clock.toggled(False, step=3, now=5.0)  # the page last drew merge 3; the clock is at 11
    assert (clock.playing, k) == (False, 11)
    assert clock.ticked(k, now=60.0)[1] == 11  # paused: time passing moves nothing


def test_the_same_click_delivered_twice_changes_nothing_more():
    once, k1 = PlayClock(n=100).toggled(True, step=7, now=1.0)
    twice, k2 = once.toggled(True, step=k1, now=2.0)
    assert (twice, k2) == (once, k1)
    paused, k3 = twice.toggled(False, step=k2, now=4.0)
    assert paused.toggled(False, step=k3, now=9.0) == (paused, k3)


def test_a_new_speed_counts_from_now_and_the_merge_shown():
    clock, _ = PlayClock(n=100, speed=1.0).toggled(True, step=1, now=0.0)
    faster = clock.with_speed(4.0, step=clock.reached(10.0), now=10.0)  # ten merges at 1/s, then 4/s
    assert faster.speed == 4.0 and faster.reached(12.0) == 11 + 8


@settings(max_examples=200, deadline=None)
@given(
    n=st.integers(1, 5000),
    speed=st.sampled_from([0.5, 1.0, 2.0, 4.0]),
    start=st.integers(1, 5000),
    times=st.lists(st.floats(0, 1e4, allow_nan=False), max_size=20),
)
def test_the_merge_shown_is_always_a_merge_and_never_goes_back_while_playing(n, speed, start, times):
    clock, k = PlayClock(n=n, speed=speed).toggled(True, step=min(start, n), now=0.0)
    for now in sorted(times):
        clock, later = clock.ticked(k, now)
        assert 1 <= later <= n and later >= k
        k = later


# ---------------------------------------------------------------------------
# the arrow keys: the browser counts the presses, the page moves by those it has not moved by yet


@settings(deadline=None, max_examples=200)
@given(presses=st.lists(st.sampled_from([1, -1]), max_size=40), delivered=st.lists(st.booleans(), max_size=40))
def test_arrow_presses_merged_into_fewer_runs_move_by_every_press(presses, delivered):
    # ten → with no gap arrive as fewer runs (Streamlit merges what comes while a run is under way): each run carries the
    # browser's running total, and the page ends where every press puts it (within the merges there are: the
    # presses here stay inside 1..100 from 50)
    session = {"step": 50, "playing": False, "speed": 1.0, "play_from": None, "arrows_seen": ("d", None), "arrows": None}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(streamlit, "session_state", session)
        player = play.Player("", "step", 100)
        total = 3  # presses counted on another page before this one was drawn
        for press, runs in zip(presses, delivered + [True] * len(presses)):
            total += press
            session["arrows"] = {"moves": {"drawing": "d", "base": 3, "total": total}}
            if runs:  # this press's run happened (else a later one carries it)
                player.tick()
        player.tick()
    assert session["step"] == 50 + sum(presses)


def test_another_drawings_presses_move_nothing(monkeypatch):
    # a browser sends back the last value it sent: after a reconnect (a new session) or from the other page, a total
    # counted for another drawing is not this page's to move by
    session = {"step": 5, "playing": False, "speed": 1.0, "play_from": None, "arrows_seen": ("new", None), "arrows": None}
    monkeypatch.setattr(streamlit, "session_state", session)
    session["arrows"] = {"moves": {"drawing": "old", "base": 0, "total": 9}}
    play.Player("", "step", 100).tick()
    assert session["step"] == 5 and play.pressed("") == (None, 0)
    session["arrows"] = {"moves": {"drawing": "new", "base": 9, "total": 11}}  # two presses on this drawing
    play.Player("", "step", 100).tick()
    assert session["step"] == 7 and session["arrows_seen"] == ("new", 11)
