"""The race page's parallel pre-tokenization demo: one size in both places, and why 2 workers can show 1.00×."""

from __future__ import annotations

from bpe.lab import sweep as sweeps
from serve.jobs import SpeedupRecord
from ui.views import race as views


def record(seconds: list[float], load: float) -> SpeedupRecord:
    points = tuple(sweeps.SpeedupPoint(i + 1, s, 1000) for i, s in enumerate(seconds))
    return SpeedupRecord(25_974_962, points, "finished", load=load)


def test_the_size_announced_before_the_timing_is_the_size_it_times(tmp_path):
    data = b"stdlib prose " * 153_698  # 1,998,074 bytes, as the stdlib corpus here: 13 copies
    written = sweeps.write_repeated(tmp_path / "corpus.txt", data, sweeps.SPEEDUP_BYTES)
    assert views.speedup_bytes(data) == written
    assert views.megabytes(written) == "26.0 MB"  # the info box and the chart's title both say this


def test_a_busy_two_core_server_says_why_two_workers_are_no_faster():
    note = views.speedup_note(record([0.83, 0.83], load=1.9), cores=2)
    assert "this machine has 2 cores and its load average was 1.9" in note and "about 0.1 cores free" in note
    assert "best speed-up was 1.00×" in note and "1.76× with 2 workers on an idle 2-core machine" in note


def test_a_real_speed_up_needs_no_excuse():
    assert views.speedup_note(record([6.22, 3.53], load=0.9), cores=2) is None


def test_one_core_says_there_is_nothing_to_share():
    assert "one core" in views.speedup_note(record([1.0], load=0.5), cores=1)
