"""The step page's Play clock: which merge Play has reached, as a pure value with the time passed in.

Play advances by the clock, not by counting timer ticks: the merge shown is the
merge where Play started (or was last moved) plus the elapsed time × speed, so
"4 merge/s" is 4 merges a second however late the browser's timer fires. Every
method takes `now` (seconds, any clock) and returns a new PlayClock and the merge
to show; nothing in it reads the time or Streamlit's state, so it is tested with
made-up times (tests/test_play.py). The pages (pages/step.py, pages/encode.py) keep
the fields in their session state; `controls` draws the row of buttons both share.

    clock = PlayClock(n=100, speed=2.0)
    clock, k = clock.toggled(True, step=10, now=0.0)   # Play at merge 10
    clock.reached(now=3.0)                              # 16: six merges in three seconds
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace

import streamlit as st

SPEEDS = (0.5, 1.0, 2.0, 4.0)  # what Play offers, per second: merges on the step page, steps on the Encode page


@dataclass(frozen=True)
class PlayClock:
    n: int  # merges there are: the clock never goes past the last one
    playing: bool = False
    speed: float = 1.0  # merges per second
    started: float | None = None  # when Play started or the merge shown was last moved (None: not yet)
    first: int = 1  # the merge shown at `started`

    def clamp(self, k: int) -> int:
        return min(max(1, k), self.n)

    def restarted(self, step: int, now: float) -> PlayClock:
        """Count from now and from the merge shown (a click moved it, or the page came back)."""
        return replace(self, started=now, first=step)

    def reached(self, now: float) -> int:
        """Where Play has got to: the merge it started from plus elapsed time × speed.

        subtle: +0.5 rounds to the nearest tick, so a timer that fires a little early still advances.
        """
        if self.started is None:
            return self.clamp(self.first)
        return self.clamp(self.first + int((now - self.started) * self.speed + 0.5))

    def ticked(self, step: int, now: float) -> tuple[PlayClock, int]:
        """A timer tick (or any run of the playing view): the merge to show now; at the last one Play stops."""
        clock = self
        if clock.playing:
            if clock.started is None:
                clock = clock.restarted(step, now)
            step = clock.reached(now)
        step = clock.clamp(step)
        if clock.playing and step >= clock.n:
            clock = replace(clock, playing=False)  # the end: stop the clock
        return clock, step

    def toggled(self, playing: bool, step: int, now: float) -> tuple[PlayClock, int]:
        """Play or Pause, as the button clicked said: the same click delivered twice changes nothing more.

        Pause stops at the merge the clock has reached, even if the page is behind;
        Play at the last merge starts again from the first.
        """
        if playing == self.playing:
            return self, step
        if not playing:
            _, step = self.ticked(step, now)
        if playing and step >= self.n:
            step = 1
        return replace(self, playing=playing).restarted(step, now), step

    def with_speed(self, speed: float, step: int, now: float) -> PlayClock:
        """A new speed, counted from now and from the merge shown."""
        return replace(self, speed=speed).restarted(step, now)


# ---------------------------------------------------------------------------
# a page's Play state in its session


@dataclass(frozen=True)
class Player:
    """One page's Play clock kept in its session: the page's callbacks for `controls`, and the tick of its fragment.

    keys is the prefix of the session keys {keys}playing, {keys}speed and {keys}play_from ((time.time(), step)
    when Play started or was last moved, or None); the position is step 1..n, kept at session key `at` as
    step - offset (the step page keeps merge k as k: offset 0; the Encode page its 0-based position: offset 1).
    """

    keys: str
    at: str
    n: int
    offset: int = 0

    @property
    def step(self) -> int:
        """The step shown, 1..n."""
        return min(max(1, st.session_state[self.at] + self.offset), self.n)

    def clock(self) -> PlayClock:
        started, first = st.session_state[f"{self.keys}play_from"] or (None, self.step)
        return PlayClock(self.n, st.session_state[f"{self.keys}playing"], st.session_state[f"{self.keys}speed"], started, first)

    def keep(self, played: PlayClock, step: int) -> None:
        st.session_state[f"{self.keys}playing"], st.session_state[self.at] = played.playing, step - self.offset
        st.session_state[f"{self.keys}play_from"] = None if played.started is None else (played.started, played.first)

    def restart(self) -> None:
        """Play counts steps from now and from the step shown (after a jump, and on a whole-page run while playing)."""
        self.keep(self.clock().restarted(self.step, time.time()), self.step)

    def go(self, delta: int) -> None:
        """Previous (-1) or Next (+1)."""
        st.session_state[self.at] = min(max(1, self.step + delta), self.n) - self.offset
        self.restart()

    def set_playing(self, playing: bool) -> None:
        """Play or Pause, as the button clicked said (PlayClock.toggled)."""
        self.keep(*self.clock().toggled(playing, self.step, time.time()))

    def changed_speed(self) -> None:
        self.keep(self.clock().with_speed(st.session_state[f"{self.keys}speed"], self.step, time.time()), self.step)

    def tick(self) -> int:
        """The step the clock says now (the fragment's run: by a timer while playing, a click or a key otherwise), after
        the arrow keys pressed since the last run (`arrows`), kept; returns it."""
        counted, move = pressed(self.keys)
        if counted is not None:
            st.session_state[f"{self.keys}arrows_seen"] = counted
        if move:
            self.go(move)
        played, step = self.clock().ticked(self.step, time.time())
        self.keep(played, step)
        return step

    @property
    def timer(self) -> tuple[bool, float]:
        """(playing, speed): what the page's fragment timer is set up for; when it changes, the whole page must rerun."""
        return st.session_state[f"{self.keys}playing"], st.session_state[f"{self.keys}speed"]


# ---------------------------------------------------------------------------
# the row of controls


def controls(
    keys: str,
    unit: str,
    *,
    first: bool,
    last: bool,
    go: Callable[[int], None],
    set_playing: Callable[[bool], None],
    on_speed: Callable[[], None],
    between: Callable | None = None,
):
    """Previous, Next, (between), Play or Pause, the speed: the row the Encode page draws in its fragment; returns it.

    keys is the page's prefix of session and widget keys: "" on the step page (playing, speed, the buttons previous,
    next, play, pause), "enc_" on the Encode page (enc_playing, enc_speed, enc_previous...); unit names what Play
    advances ("4 merge/s"). go(±1), set_playing(bool) and on_speed() (after the speed changed) are the page's
    callbacks; between(row) draws what goes after Next. The row wraps on a narrow screen instead of cutting labels off.
    The step page draws the two halves apart (steps in its fragment, play outside it: pages/step.py says why).
    """
    row = st.container(horizontal=True, vertical_alignment="center", gap="medium")
    steps(row, keys, first=first, last=last, go=go, between=between)
    play(row, keys, unit, set_playing=set_playing, on_speed=on_speed)
    return row


def steps(row, keys: str, *, first: bool, last: bool, go: Callable[[int], None], between: Callable | None = None) -> None:
    """Previous and Next (← and → on the keyboard, each press counted: `arrows`), then between(row): what a click moves by one."""
    row.button("Previous", on_click=go, args=(-1,), disabled=first, shortcut="Left", key=f"{keys}previous")
    row.button("Next", on_click=go, args=(+1,), disabled=last, shortcut="Right", key=f"{keys}next", type="primary")
    arrows(row, keys)
    if between is not None:
        between(row)


def play(row, keys: str, unit: str, *, set_playing: Callable[[bool], None], on_speed: Callable[[], None]) -> None:
    """Play or Pause, and the speed."""
    from ui import state

    # Play and Pause are buttons, not a toggle: a click is an event, never an old value sent back.
    # subtle: two buttons (keys "play" and "pause") that each say what they do, not one that flips:
    # a click landing while the playing fragment reruns could be delivered twice, and a flip twice
    # is no Pause at all (seen in the browser test); a second "pause" is harmless.
    if st.session_state[f"{keys}playing"]:
        row.button("Pause", on_click=set_playing, args=(False,), key=f"{keys}pause", icon=":material/pause:")
    else:
        row.button("Play", on_click=set_playing, args=(True,), key=f"{keys}play", icon=":material/play_arrow:")
    state.widget(
        row.selectbox,
        "Speed",
        SPEEDS,
        key=f"{keys}speed",
        on_change=on_speed,
        format_func=lambda s: f"{s:g} {unit}/s",
        label_visibility="collapsed",
        width=175,
    )


# ---------------------------------------------------------------------------
# the arrow keys, every press counted
#
# subtle: a button's shortcut is a click, and clicks that reach the server while a run is under way are merged into
# one (Streamlit keeps a button's last value, True, not how many times it was pressed): ten → presses with no gap
# moved 2-6 merges. So the page counts the presses itself: a script with no view of its own (an st.components.v2
# component) takes ← and → before Streamlit's shortcut does, and sends a running total of the presses; runs merged
# together then carry the latest total, and the page moves by what it had not yet seen. The total is sent with the
# drawing it counts for (an id the page hands the script): a browser sends back the last value it sent, and a new
# session (a reconnect) or the other page must not take another's presses. The buttons keep their shortcut: it
# answers where the script is not drawn.

ARROWS_JS = """
export default function (component) {
  const { data, setStateValue } = component;
  const arrows = window.__bpeArrows || (window.__bpeArrows = { total: 0, send: null, listening: false });
  const drawing = data.drawing, base = arrows.total;  // this drawing's presses are counted from here
  const send = () => setStateValue('moves', { drawing, base, total: arrows.total });
  arrows.send = send;
  if (!arrows.listening) {
    arrows.listening = true;
    window.addEventListener('keydown', event => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      const target = event.target instanceof Element ? event.target : null;  // a box, a slider or a list takes its own arrows
      const own = target && (target.isContentEditable || target.closest('input, textarea, select, [role=slider], [role=radiogroup], [role=tablist], [role=listbox], [role=combobox], [role=menu]'));
      if (!step || !arrows.send || own || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      event.preventDefault();
      event.stopImmediatePropagation();  // counted here, not clicked by the button's shortcut too
      arrows.total += step;
      arrows.send();
    }, true);
  }
  return () => { if (arrows.send === send) arrows.send = null; };
}
"""


@st.cache_resource(show_spinner=False)
def _arrows_component():
    """Registered once per server (a component's name must be unique in an app)."""
    return st.components.v2.component("bpe_arrow_keys", js=ARROWS_JS)


def arrows(row, keys: str) -> None:
    """Count ← and → presses in the browser; Player.tick moves by them (none is lost however fast they come)."""
    seen = st.session_state[f"{keys}arrows_seen"]
    if seen is None:  # this session's drawing of the page: the presses it counts are its own
        seen = st.session_state[f"{keys}arrows_seen"] = (uuid.uuid4().hex, None)
    # a no-op callback declares the state 'moves' (and a new total reruns the fragment): the moves are taken by
    # Player.tick, in the run's body, so that the slider's callback, run before it, can tell its value is stale
    _arrows_component()(key=f"{keys}arrows", data={"drawing": seen[0]}, on_moves_change=lambda: None, width=1, height=1)


def pressed(keys: str) -> tuple[tuple[str, int] | None, int]:
    """(this drawing's presses counted so far, as (drawing, total)), and how far they move that the page has not moved yet;
    (None, 0) when there are none, or the browser sent another drawing's (another session's, the other page's)."""
    moves = (st.session_state.get(f"{keys}arrows") or {}).get("moves")
    seen = st.session_state[f"{keys}arrows_seen"]
    if not moves or seen is None or moves.get("drawing") != seen[0]:
        return None, 0
    done = moves["base"] if seen[1] is None else seen[1]  # the first total seen counts from where the drawing began
    return (seen[0], moves["total"]), moves["total"] - done
