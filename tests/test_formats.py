"""The format registry: a new tokenizer format is one `register` call, and then every reader and writer knows it.

A toy format (one merge per line, its two tokens in hex) is registered here, in the test, and nowhere
else: it is found in a folder, read from one file, uploaded (in the library and on the Tokenize & export
page), written by save(), offered as a download, and written by `bpe train`.
"""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout

import pytest
from conftest import open_app

from bpe import Tokenizer
from bpe.cli import main
from bpe.files import formats, load

TEXT = "low low low lower lower widest widest newest newest newest"
TOY = "merges.toy"


def toy_text(loaded: load.Loaded) -> dict[str, str]:
    if loaded.vocab is not None:
        return {}  # it cannot hold another tool's ids
    return {TOY: "".join(f"{a.hex()} {b.hex()}\n" for a, b in loaded.merges)}


def toy_read(texts: dict[str, str]) -> load.Loaded:
    ((name, text),) = texts.items()
    merges = []
    for n, line in enumerate(text.splitlines(), start=1):
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{name}: line {n} should be two tokens in hex.")
        merges.append((bytes.fromhex(parts[0]), bytes.fromhex(parts[1])))
    return load.Loaded(merges, format="toy")


@pytest.fixture
def toy():
    fmt = formats.register(
        formats.Format(
            "toy",
            "toy files",
            "a toy tokenizer",
            TOY,
            find=lambda names, chosen: [(n,) for n in names if n == TOY or (chosen and n.endswith(".toy"))],
            read=toy_read,
            write=toy_text,
            sniff=lambda probe: probe.document is None and probe.text.startswith("toy:"),
            records_pretokenizer=False,
            help={TOY: "the toy format: one merge per line, in hex"},
        )
    )
    yield fmt
    del formats.FORMATS["toy"]


def trained() -> Tokenizer:
    from bpe import pretokenize, train

    return Tokenizer.from_training(train(pretokenize(TEXT, pretokenizer="gpt2"), 8))


def test_a_registered_format_is_found_in_a_folder_and_read_from_a_file(toy, tmp_path):
    tok = trained()
    (tmp_path / TOY).write_text(toy_text(load.Loaded(tok.merges))[TOY])
    for path in (tmp_path, tmp_path / TOY):
        loaded = Tokenizer.load(path, pretokenizer="whitespace")
        assert loaded.merges == tok.merges and loaded.pretokenizer.spelled == "whitespace"  # it records no pattern: the one asked for
        assert loaded.encode(TEXT) != []
    assert formats.read(tmp_path).format == "toy"


def test_a_registered_format_is_uploaded(toy, tmp_path):
    tok = trained()
    text = toy_text(load.Loaded(tok.merges))[TOY].encode()
    assert formats.read_uploads({"mine.toy": text}).merges == tok.merges
    assert toy.label in formats.label("toy") and "merges.toy" in formats.upload_hint()


def test_a_registered_format_is_written_by_save_and_by_bpe_train(toy, tmp_path):
    tok = trained()
    assert TOY in tok.files()
    paths = tok.save(tmp_path / "saved")
    assert (tmp_path / "saved" / TOY) in paths
    corpus = tmp_path / "corpus.txt"
    corpus.write_text(TEXT)
    with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
        assert main(["train", str(corpus), "--vocab-size", "264", "--out", str(tmp_path / "cli")]) == 0
    assert toy_read({TOY: (tmp_path / "cli" / TOY).read_text()}).merges == tok.merges


def test_a_registered_format_is_uploaded_and_downloaded_on_the_tokenize_page(toy):
    tok = trained()
    at = open_app("pages/tokenize.py", source="textbook")
    assert TOY in [d.label for d in at.get("download_button")]
    at.radio(key="w_tok_ref_source").set_value("upload").run()
    assert TOY in at.file_uploader(key="tok_upload").label  # the uploader's label lists every format's files
    data = toy_text(load.Loaded(tok.merges))[TOY].encode()
    at.file_uploader(key="tok_upload").set_value([("mine.toy", data, "text/plain")]).run()
    assert not at.exception and not at.error
    assert any(c.value.startswith("toy files: ") for c in at.caption)  # the caption names the format from its entry
