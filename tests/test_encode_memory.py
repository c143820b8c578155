"""encode_iterable streams a 50 MB file in flat memory; encode() of the whole text would not.

Measured in a fresh process with its peak resident set size (VmHWM in
/proc/self/status; ru_maxrss would also count the forked test runner): the
peak after loading, after streaming 4 MB, then after streaming 50 MB. Keeping
the ids of 50 MB alone would take over 100 MB; streaming adds almost nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bpe import Tokenizer, pretokenize, train
from bpe.data.corpora import stdlib_prose

ROOT = Path(__file__).resolve().parents[1]

MEASURE = """
import json, sys
sys.path.insert(0, {root!r})
from bpe import Tokenizer

def peak_mb():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:")) / 1024

tok = Tokenizer.load({tokenizer!r})
counts, peaks = [], [peak_mb()]
for path in ({small!r}, {big!r}):
    with open(path, encoding="utf-8") as f:
        counts.append(sum(1 for _ in tok.encode_iterable(f)))
    peaks.append(peak_mb())
print(json.dumps({{"counts": counts, "peaks": peaks}}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads the peak memory from Linux's /proc")
def test_encode_iterable_on_a_50_mb_file_keeps_memory_flat(tmp_path):
    prose = stdlib_prose(2_000_000)
    tok = Tokenizer.from_training(train(pretokenize(prose, special_tokens=["<|endoftext|>"]), 500, special_tokens=["<|endoftext|>"]))
    tok.save(tmp_path / "tok")
    block = (prose + "\n").encode("utf-8")
    small, big = tmp_path / "4mb.txt", tmp_path / "50mb.txt"
    small.write_bytes(block * 2)
    big.write_bytes(block * 25)
    script = MEASURE.format(root=str(ROOT), tokenizer=str(tmp_path / "tok"), small=str(small), big=str(big))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600, check=True)
    figures = json.loads(done.stdout)
    (n_small, n_big), (loaded, after_small, after_big) = figures["counts"], figures["peaks"]
    print(f"peak RSS: {loaded:.0f} MB loaded, {after_small:.0f} MB after 4 MB, {after_big:.0f} MB after 50 MB; {n_big:,} ids")
    assert n_big > 12 * n_small  # the whole file was encoded...
    assert after_big - after_small < 15  # ...and ten times the text added under 15 MB to the peak
    assert after_big - loaded < 60
