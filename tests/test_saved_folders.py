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


def test_a_file_changed_since_the_save_is_read_as_it_is_now_with_a_note_naming_it(tmp_path):
    ours("<|a|>").save(tmp_path)
    path = tmp_path / "tokenizer.json"
    path.write_text(path.read_text().replace("<|a|>", "<|z|>"))  # an edit by hand
    with pytest.warns(
        formats.FolderChanged, match=r": tokenizer.json changed since this tool saved the folder; tokenizer.json is read as it is now\.$"
    ):
        assert Tokenizer.load(path).special_tokens == ("<|z|>",)
    for where, read in (
        (tmp_path, "tokenizer.bpe.json, unchanged, is"),
        (tmp_path / "vocab.json", "vocab.json and merges.txt, unchanged, are"),
    ):
        with pytest.warns(
            formats.FolderChanged, match=f"^{tmp_path}: tokenizer.json changed since this tool saved the folder; {read} what loads\\.$"
        ):
            assert Tokenizer.load(where).special_tokens == ("<|a|>",)


def test_a_file_another_tool_removed_is_named_and_the_rest_loads(tmp_path):
    ours("<|a|>").save(tmp_path)
    (tmp_path / "tokenizer.bpe.json").unlink()
    with pytest.warns(
        formats.FolderChanged, match="tokenizer.bpe.json was removed since this tool saved the folder; tokenizer.json, unchanged"
    ):
        loaded = Tokenizer.load(tmp_path)
    assert loaded.special_tokens == ("<|a|>",) and not any(loaded.counts)  # HuggingFace's file: no counts


def test_an_unchanged_folder_says_nothing(tmp_path, recwarn):
    ours("<|a|>").save(tmp_path)
    for where in (tmp_path, tmp_path / "tokenizer.json", tmp_path / "merges.txt"):
        Tokenizer.load(where)
    assert not [w for w in recwarn if w.category is formats.FolderChanged]


def test_transformers_save_pretrained_into_our_folder_then_our_load(tmp_path, monkeypatch):
    # the routine HuggingFace step: load our folder, set model_max_length, save it back into the same folder
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    transformers = pytest.importorskip("transformers")
    tok = ours("<|endoftext|>", merges=20)
    tok.save(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    hf = transformers.AutoTokenizer.from_pretrained(str(tmp_path))
    hf.model_max_length = 1024
    hf.save_pretrained(str(tmp_path))
    changed = sorted(name for name, data in before.items() if (tmp_path / name).read_bytes() != data)
    assert "tokenizer.json" in changed and formats.MANIFEST not in changed  # transformers rewrote files of ours
    text = "the newest cat sat lower<|endoftext|>"
    for where in (tmp_path, tmp_path / "tokenizer.json", tmp_path / "vocab.json", tmp_path / "tokenizer.tiktoken"):
        with pytest.warns(formats.FolderChanged, match=f"^{tmp_path}: {' and '.join(changed)} changed since this tool saved the folder; "):
            loaded = Tokenizer.load(where)
        assert loaded.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all"), where
    assert transformers.AutoTokenizer.from_pretrained(str(tmp_path)).model_max_length == 1024
    shown = subprocess.run(
        [sys.executable, "-m", "bpe", "encode", str(tmp_path), "--text", "the newest cat"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert shown.returncode == 0 and [int(i) for i in shown.stdout.split()] == tok.encode("the newest cat"), shown.stderr
    assert (
        shown.stderr
        == f"note: {tmp_path}: {' and '.join(changed)} changed since this tool saved the folder; tokenizer.bpe.json, unchanged, is what loads.\n"
    )
    tok.save(tmp_path)  # a save of ours makes the folder ours again
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


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


# a save renames the manifest that says it is under way, then its 8 files (ours writes every format), then the finished manifest
RENAMES = 10
CONFIGS = ("tokenizer_config.json", "special_tokens_map.json")  # transformers' files, no tokenizer on their own


@pytest.mark.parametrize("renamed", range(RENAMES))
def test_a_save_cut_short_between_renames_loads_the_old_or_the_new_whole_or_is_refused(tmp_path, monkeypatch, renamed):
    a, b = ours("<|a|>"), ours("<|b|>", merges=20)
    a.save(tmp_path)
    monkeypatch.setattr(os, "replace", failing(renamed, errno.EIO, os.replace))
    with pytest.raises(atomic.OutputError, match="^Cannot write "):
        b.save(tmp_path)
    monkeypatch.undo()
    assert not leftovers(tmp_path)
    wheres = [tmp_path, *sorted(p for p in tmp_path.iterdir() if p.name not in (formats.MANIFEST, *CONFIGS))]
    if renamed <= 1:  # nothing renamed, or only the manifest saying a save is under way: the old tokenizer, whole
        assert {Tokenizer.load(where).special_tokens for where in wheres} == {("<|a|>",)}
    elif renamed == RENAMES - 1:  # every file renamed, the manifest not yet finished: the new tokenizer, whole
        assert {Tokenizer.load(where).special_tokens for where in wheres} == {("<|b|>",)}
    else:  # some files new, some old: refused, whichever file is asked for
        for where in wheres:
            with pytest.raises(
                ValueError,
                match=r"a save into this folder did not finish \(\S+ is from it, \S+ is from the one before\); it holds files of two",
            ):
                Tokenizer.load(where)
        for config in CONFIGS:
            with pytest.raises(ValueError, match="a save into this folder did not finish"):
                Tokenizer.load(tmp_path / config)
    b.save(tmp_path)  # saving again mends it
    assert Tokenizer.load(tmp_path).special_tokens == ("<|b|>",)


def test_a_save_cut_short_and_then_edited_is_still_refused(tmp_path, monkeypatch):
    ours("<|a|>").save(tmp_path)
    monkeypatch.setattr(os, "replace", failing(3, errno.EIO, os.replace))
    with pytest.raises(atomic.OutputError):
        ours("<|b|>", merges=20).save(tmp_path)
    monkeypatch.undo()
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")  # another tool's change on top: still a save that did not finish
    with pytest.raises(ValueError, match="a save into this folder did not finish"):
        Tokenizer.load(tmp_path / "merges.txt")


def test_a_first_save_cut_short_in_a_new_folder_is_refused_not_empty(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", failing(3, errno.EIO, os.replace))
    with pytest.raises(atomic.OutputError):
        ours("<|a|>").save(tmp_path / "new")
    monkeypatch.undo()
    with pytest.raises(ValueError, match=r"did not finish \(\S+ is from it, \S+ is missing\)"):
        Tokenizer.load(tmp_path / "new")


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
