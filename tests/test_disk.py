"""serve/disk.py: what a server builds for every class is kept between starts, safely, and never read stale.

A "start" here is a fresh call after clearing what the process remembers; the entries are real files.
"""

from __future__ import annotations

import os
import pickle

import pytest

from bpe.spec import TrainSpec
from serve import disk, jobs


@pytest.fixture
def cache(tmp_path, monkeypatch):
    folder = tmp_path / "cache"
    monkeypatch.setenv("BPE_CACHE", str(folder))
    return folder


def made(value):
    calls = []

    def make():
        calls.append(1)
        return value

    return make, calls


def test_a_value_kept_at_one_start_is_read_at_the_next(cache):
    make, calls = made({"merges": [(b"a", b"b")]})
    assert disk.kept("trace", ("k", 1), make) == {"merges": [(b"a", b"b")]}
    assert disk.kept("trace", ("k", 1), make) == {"merges": [(b"a", b"b")]}
    assert calls == [1]  # made once
    assert oct(cache.stat().st_mode & 0o777) == "0o700"
    [entry] = cache.iterdir()
    assert entry.name.startswith("trace-") and oct(entry.stat().st_mode & 0o777) == "0o600"
    assert disk.kept("trace", ("k", 2), make) and calls == [1, 1]  # another key: made


def test_bytes_are_kept_as_they_are(cache):
    make, calls = made(b"docstrings\x00\xff")
    assert disk.kept_bytes("stdlib", 2, make) == disk.kept_bytes("stdlib", 2, make) == b"docstrings\x00\xff"
    assert calls == [1]
    assert next(cache.iterdir()).read_bytes() == b"docstrings\x00\xff"  # raw bytes: nothing to unpickle


def test_other_code_is_another_entry(cache, monkeypatch):
    make, calls = made([1, 2, 3])
    disk.kept("trace", "k", make)
    monkeypatch.setattr(disk, "code", lambda: "the trainer changed")
    disk.kept("trace", "k", make)
    assert calls == [1, 1]


def test_a_folder_others_may_enter_is_never_read(cache):
    make, calls = made([1])
    disk.kept("trace", "k", make)
    cache.chmod(0o755)
    assert disk.folder() is None
    assert disk.load("trace", "k") is None
    disk.kept("trace", "k", make)
    assert calls == [1, 1]


def test_a_file_others_may_write_is_never_unpickled(cache):
    disk.kept("trace", "k", lambda: [1])
    entry = next(cache.iterdir())
    entry.write_bytes(pickle.dumps(["planted"]))
    entry.chmod(0o666)
    assert disk.load("trace", "k") is None


def test_a_link_in_the_folder_is_never_followed(cache, tmp_path):
    disk.kept("trace", "k", lambda: [1])
    entry = next(cache.iterdir())
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_bytes(pickle.dumps(["planted"]))
    entry.unlink()
    entry.symlink_to(elsewhere)
    assert disk.load("trace", "k") is None


@pytest.mark.parametrize("damage", [b"", b"\x80\x05not a pickle", pickle.dumps([1])[:-3]])
def test_a_damaged_entry_is_made_again(cache, damage):
    disk.kept("trace", "k", lambda: [1])
    next(cache.iterdir()).write_bytes(damage)
    make, calls = made([1])
    assert disk.kept("trace", "k", make) == [1] and calls == [1]


def test_off_keeps_nothing(monkeypatch, tmp_path):
    monkeypatch.setenv("BPE_CACHE", "off")
    make, calls = made([1])
    disk.kept("trace", "k", make)
    disk.kept("trace", "k", make)
    assert calls == [1, 1] and disk.folder() is None


def test_the_folder_is_trimmed_least_recently_used_first(cache, monkeypatch):
    monkeypatch.setattr(disk, "MAX_BYTES", 2500)
    for i in range(3):
        disk.kept_bytes("big", i, lambda: b"x" * 1000)
        os.utime(disk.path_of("big", i), (i, i))  # 0 used longest ago
    disk.kept_bytes("big", 3, lambda: b"x" * 1000)
    assert disk.load("big", 0) is None and not disk.path_of("big", 0).exists()
    assert disk.path_of("big", 3).exists()


def test_a_trace_is_kept_unless_its_time_ran_out(cache, monkeypatch):
    data = b"low low low lower lower widest newest newest " * 50
    spec = TrainSpec(pretokenizer="whitespace")
    first = jobs.trace(data, spec, 10, 30.0, report=lambda p: None)
    monkeypatch.setattr(jobs, "pretokenize_for", lambda *a: pytest.fail("traced again"))
    again = jobs.trace(data, spec, 10, 30.0, report=lambda p: None)
    assert again.events == first.events and again.stop_reason == first.stop_reason
    monkeypatch.undo()
    monkeypatch.setenv("BPE_CACHE", str(cache))
    cut = jobs.trace(data, spec, 10, 0.0, report=lambda p: None)  # no time at all: cut by the budget
    assert cut.stop_reason.startswith("time")
    assert disk.load("trace", jobs.trace_kept(jobs.digest(data), spec, 10, 0.0)) is None  # how far it got depends on the machine
