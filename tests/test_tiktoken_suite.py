"""tiktoken's own test suite, run against our Tokenizer.

tests/tiktoken_suite/tests is openai/tiktoken 0.14.0's tests/ (MIT, its LICENSE beside it), copied unchanged;
tests/tiktoken_suite/adapter/tiktoken is `import tiktoken` answered by this library's own module functions
(bpe.get_encoding, bpe.Encoding, ...: nothing emulated). It runs in a process of its own, so that `import
tiktoken` there is bpe and here the real one. Only the tests that need p50k_base's file, which is not on this
machine (../shared has GPT-2's, cl100k_base's and o200k_base's), may skip, and they say why.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent / "tiktoken_suite"
ROOT = SUITE.parents[1]
EXAMPLES = 10  # hypothesis examples per property test (tiktoken's default is 100)


def test_tiktokens_own_tests_pass_against_our_tokenizer(tiktoken_files, gpt2, tmp_path):
    report = tmp_path / "report.xml"
    env = os.environ | {
        "PYTHONPATH": os.pathsep.join([str(SUITE / "adapter"), str(ROOT)]),
        "TIKTOKEN_MAX_EXAMPLES": str(EXAMPLES),
        "TIKTOKEN_CACHE_DIR": str(tmp_path / "empty-cache"),  # nothing but ../shared: never a download
        "BPE_DOWNLOAD": "0",
    }
    command = [sys.executable, "-m", "pytest", "-c", str(SUITE / "pytest.ini"), "--rootdir", str(SUITE), str(SUITE / "tests")]
    done = subprocess.run([*command, "-q", f"--junitxml={report}"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    cases = ElementTree.parse(report).getroot().iter("testcase")
    outcomes = {}
    for case in cases:
        name = f"{case.get('classname').rsplit('.', 1)[-1]}::{case.get('name')}"
        kinds = [child.tag for child in case if child.tag in ("failure", "error", "skipped")]
        outcomes[name] = (kinds[0] if kinds else "passed", next((c.get("message", "") for c in case if c.tag in kinds), ""))
    failed = {name: why for name, (kind, why) in outcomes.items() if kind in ("failure", "error")}
    assert not failed, done.stdout[-3000:]
    skipped = {name: why for name, (kind, why) in outcomes.items() if kind == "skipped"}
    assert all("p50k_base needs OpenAI's p50k_base.tiktoken" in why for why in skipped.values()), skipped
    # they load p50k_base (encoding_for_model loads the encoding it names, as tiktoken's does: text-davinci-003 is p50k)
    needs_p50k = {"test_encoding::test_basic_encode", "test_encoding::test_simple", "test_simple_public::test_simple"}
    assert set(skipped) <= needs_p50k | {"test_misc::test_encoding_for_model", "test_simple_public::test_encoding_for_model"}
    passed = [name for name, (kind, _) in outcomes.items() if kind == "passed"]
    assert len(passed) >= 26 and done.returncode == 0, done.stdout[-3000:]
    for name in ("test_encoding::test_encode_bytes", "test_encoding::test_encode_surrogate_pairs", "test_encoding::test_special_token"):
        assert name in passed
    assert any(name.startswith("test_offsets::test_basic_offsets") for name in passed)


def test_the_copied_suite_is_not_collected_by_ours():
    # its files import `tiktoken`, which in this process is the real one
    from conftest import collect_ignore

    assert "tiktoken_suite" in collect_ignore


@pytest.mark.parametrize("name", ["test_encoding.py", "test_offsets.py", "test_misc.py", "test_simple_public.py", "test_pickle.py"])
def test_the_copied_tests_are_tiktokens_own(name):
    text = (SUITE / "tests" / name).read_text()
    assert "bpe" not in text  # unchanged: they know nothing of this library
