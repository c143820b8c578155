"""The step page's Play clock: which merge Play has reached, as a pure value with the time passed in.

Play advances by the clock, not by counting timer ticks: the merge shown is the
merge where Play started (or was last moved) plus the elapsed time × speed, so
"4 merge/s" is 4 merges a second however late the browser's timer fires. Every
method takes `now` (seconds, any clock) and returns a new PlayClock and the merge
to show; nothing here reads the time or Streamlit's state, so it is tested with
made-up times (tests/test_play.py). The page (pages/step.py) keeps the fields in
its session state and draws the buttons.

    clock = PlayClock(n=100, speed=2.0)
    clock, k = clock.toggled(True, step=10, now=0.0)   # Play at merge 10
    clock.reached(now=3.0)                              # 16: six merges in three seconds
"""

from __future__ import annotations

from dataclasses import dataclass, replace


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
