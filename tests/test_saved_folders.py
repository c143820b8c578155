"""A tokenizer folder is replaced as a whole: a later save is what loads, and a save that fails never leaves a mix.

save() writes every file under a temporary name beside the old ones, renames them, and renames a
manifest (each file's size and sha256) last; loading follows the manifest and refuses a folder whose
files are not the ones it lists. Faults are injected (a full disk at fsync, a rename that fails), and
for real on a small tmpfs where this machine lets a test mount one.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bpe import Tokenizer, atomic, pretokenize, train
from bpe.data.corpora import stdlib_prose
from bpe.files import formats

TEXT = "low low low lower lower widest widest newest newest newest the cat sat on the mat " * 3
ROOT = Path(__file__).resolve().parents[1]


def ours(special: str, merges: int = 10) -> Tokenizer:
    """A tokenizer in this tool's layout: it saves tokenizer.bpe.json too."""
    return Tokenizer.from_training(train(pretokenize(TEXT, special_tokens=[special]), merges, special_tokens=[special]))


def another_tools(special: str) -> Tokenizer:
    """A tokenizer whose ids are another tool's (special token first): the plain JSON cannot hold it, so it is not written."""
    tok = ours("<|x|>")
    vocab = {0: special.encode()} | {i + 1: token for i, token in tok.vocab.items() if token != b"<|x|>"}
    return Tokenizer(vocab, tok.merges, [special])


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(atomic.TMP_SUFFIX))


# ---------------------------------------------------------------------------
# a later save is what loads


def test_a_later_save_of_another_tokenizer_is_what_loads_not_the_earlier_plain_json(tmp_path):
    a, b = ours("<|a|>"), another_tools("<|b|>")
    a.save(tmp_path)
    assert (tmp_path / "tokenizer.bpe.json").is_file()
    b.save(tmp_path)  # it writes no tokenizer.bpe.json: the earlier one, which loading preferred, must not answer
    loaded = Tokenizer.load(tmp_path)
    assert loaded.special_tokens == ("<|b|>",) and loaded.vocab == b.vocab
    assert not (tmp_path / "tokenizer.bpe.json").exists()
    for name in ("tokenizer.json", "vocab.json", "merges.txt"):
        assert Tokenizer.load(tmp_path / name).special_tokens == ("<|b|>",)


def test_an_earlier_file_left_beside_a_later_save_is_refused_by_name(tmp_path):
    a, b = ours("<|a|>"), another_tools("<|b|>")
    a.save(tmp_path)
    kept = (tmp_path / "tokenizer.bpe.json").read_bytes()
    b.save(tmp_path)
    (tmp_path / "tokenizer.bpe.json").write_bytes(kept)  # say the removal failed, or a copy came back
    assert Tokenizer.load(tmp_path).special_tokens == ("<|b|>",)  # the manifest does not list it: never loaded
    with pytest.raises(ValueError, match="tokenizer.bpe.json: not a file of the tokenizer saved last in .*a later save replaced it"):
        Tokenizer.load(tmp_path / "tokenizer.bpe.json")


def test_a_folder_of_another_tools_files_without_a_manifest_loads_as_before(tmp_path):
    a = ours("<|a|>")
    a.save(tmp_path)
    (tmp_path / formats.MANIFEST).unlink()
    assert Tokenizer.load(tmp_path).vocab == a.vocab and Tokenizer.load(tmp_path).counts == a.counts


def test_a_file_changed_since_the_save_is_refused_with_what_to_do(tmp_path):
    ours("<|a|>").save(tmp_path)
    path = tmp_path / "tokenizer.json"
    path.write_text(path.read_text().replace("<|a|>", "<|z|>"))
    for where in (tmp_path, path, tmp_path / "vocab.json"):
        with pytest.raises(
            ValueError, match=r"tokenizer.json is not the file saved with the others .* delete tokenizer.manifest.json\)\.$"
        ):
            Tokenizer.load(where)
    (tmp_path / formats.MANIFEST).unlink()  # the way out the sentence gives
    assert Tokenizer.load(path).special_tokens == ("<|z|>",)


@pytest.mark.parametrize(
    "manifest",
    [
        '{"format": "bpe-workbench-folder", "version": 1, "files": {"../../etc/passwd": {"bytes": 1, "sha256": "' + "0" * 64 + '"}}}',
        '{"format": "bpe-workbench-folder", "version": 1, "files": {}}',
        '{"format": "bpe-workbench-folder", "version": 9, "files": {"vocab.json": {}}}',
        "[1, 2]",
        "{not json",
    ],
)
def test_a_bad_manifest_is_one_sentence_and_reads_no_other_path(tmp_path, manifest):
    ours("<|a|>").save(tmp_path)
    (tmp_path / formats.MANIFEST).write_text(manifest)
    with pytest.raises(ValueError, match=f"^{tmp_path / formats.MANIFEST}: "):
        Tokenizer.load(tmp_path)
    ours("<|b|>").save(tmp_path)  # a save replaces it
    assert Tokenizer.load(tmp_path).special_tokens == ("<|b|>",)


# ---------------------------------------------------------------------------
# faults while saving: the old tokenizer, or a folder that says it is unfinished


def failing(after: int, error: int, real):
    """A stand-in for an os function that works `after` times, then raises OSError(error)."""
    calls = []

    def call(*args):
        calls.append(args)
        if len(calls) > after:
            raise OSError(error, os.strerror(error))
        return real(*args)

    return call


def test_a_full_disk_while_saving_keeps_the_old_tokenizer_whole(tmp_path, monkeypatch):
    a, b = ours("<|a|>"), ours("<|b|>", merges=20)
    a.save(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    monkeypatch.setattr(os, "fsync", failing(2, errno.ENOSPC, os.fsync))  # the third file does not fit
    with pytest.raises(atomic.OutputError, match=r"^Cannot write .*/\S+: the disk is full\.$") as caught:
        b.save(tmp_path)
    assert Path(str(caught.value).split()[2].rstrip(":")).parent == tmp_path  # it names the file
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before  # every old file as it was, no temporary left
    assert Tokenizer.load(tmp_path).special_tokens == ("<|a|>",)


@pytest.mark.parametrize("renamed", [0, 1, 3, 4])
def test_a_save_cut_short_between_renames_is_refused_never_loaded_as_a_mix(tmp_path, monkeypatch, renamed):
    a, b = ours("<|a|>"), ours("<|b|>", merges=20)
    a.save(tmp_path)
    monkeypatch.setattr(os, "replace", failing(renamed, errno.EIO, os.replace))
    with pytest.raises(atomic.OutputError, match="^Cannot write "):
        b.save(tmp_path)
    monkeypatch.undo()
    assert not leftovers(tmp_path)
    if renamed == 0:  # nothing renamed: the old tokenizer, whole
        assert Tokenizer.load(tmp_path).special_tokens == ("<|a|>",)
    else:  # some files new, the manifest old: refused, whichever file is asked for
        for where in [tmp_path, *sorted(p for p in tmp_path.iterdir() if p.name != formats.MANIFEST)]:
            with pytest.raises(ValueError, match="a save into this folder did not finish"):
                Tokenizer.load(where)
    b.save(tmp_path)  # saving again mends it
    assert Tokenizer.load(tmp_path).special_tokens == ("<|b|>",)


def test_an_unwritable_folder_is_refused_before_anything_is_written(tmp_path):
    (tmp_path / "file").write_text("x")
    for out in (tmp_path / "file", tmp_path / "file" / "sub"):
        with pytest.raises(atomic.OutputError, match=f"^Cannot write (to )?{out}: .*is a file, not a folder"):
            ours("<|a|>").save(out)
    assert (tmp_path / "file").read_text() == "x"


# ---------------------------------------------------------------------------
# a real full disk: `bpe train` into a folder on a small tmpfs that holds an earlier, smaller tokenizer


def test_bpe_train_on_a_full_disk_leaves_the_earlier_tokenizer(tmp_path):
    if os.geteuid() != 0 or not shutil.which("unshare"):
        pytest.skip("mounting a tmpfs needs root and unshare")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(stdlib_prose(300_000))
    disk = tmp_path / "disk"
    disk.mkdir()
    bpe = f"{sys.executable} -m bpe"
    script = f"""
set -u
mount -t tmpfs -o size=96k tmpfs {disk} || exit 77
{bpe} train {corpus} --vocab-size 300 --out {disk}/T > /dev/null 2>&1 || exit 78
{bpe} train {corpus} --vocab-size 3000 --out {disk}/T > {tmp_path}/out.txt 2> {tmp_path}/err.txt
echo $? > {tmp_path}/code.txt
{bpe} encode {disk}/T --text "the cat" > {tmp_path}/ids.txt 2>&1
ls -a {disk}/T > {tmp_path}/ls.txt
cp -r {disk}/T {tmp_path}/T
"""
    done = subprocess.run(["unshare", "-m", "sh", "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    if done.returncode in (77, 78) or not (tmp_path / "code.txt").exists():
        pytest.skip(f"no tmpfs here ({done.stderr.strip()[:120]})")
    error = (tmp_path / "err.txt").read_text().splitlines()[-1]  # after the phase lines a pipe gets
    assert (tmp_path / "code.txt").read_text().strip() == "2"
    assert error.startswith(f"error: Cannot write {disk}/T/") and error.endswith(": the disk is full.")
    assert not [n for n in (tmp_path / "ls.txt").read_text().split() if n.endswith(atomic.TMP_SUFFIX)]
    old = Tokenizer.load(tmp_path / "T")
    assert len(old.merges) == 300 - 256  # the earlier tokenizer, whole
    assert [int(i) for i in (tmp_path / "ids.txt").read_text().split()] == old.encode("the cat")
