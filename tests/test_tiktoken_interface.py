"""tiktoken's interface on our Tokenizer, each behaviour compared with tiktoken itself on OpenAI's real files.

Our side is Tokenizer.from_openai(...) (files from ../shared, never downloaded here); tiktoken's
side reads the same files through its cache (see ../shared/tiktoken/README.md). r50k_base's rank
file is rebuilt from GPT-2's encoder.json, byte for byte (its sha256 is checked), so tiktoken can
have it offline too. Skipped without ../shared.
"""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe import Tokenizer, pretokenize, train
from bpe.files import openai

tiktoken = pytest.importorskip("tiktoken")
NAMES = ("r50k_base", "cl100k_base", "o200k_base")
SAMPLES = [
    "hello world",
    "Hello, World! It's 2024-06-01: 3.14159 and 1,000,000.",
    "  leading and trailing   spaces\n\n\ttabs\r\n",
    "我非常渴望与人工智能一起工作",
    "நடிகர் சூர்யா",
    " Ġ除",
    "naïve café — 🙂 👩\u200d💻 ünïcödé",
    "def f(x):\n    return x ** 2  # squares\n",
    "",
]


@pytest.fixture(scope="module")
def pairs(tiktoken_files, gpt2, tmp_path_factory):
    """(ours, tiktoken's) for r50k_base, cl100k_base and o200k_base; tiktoken reads the same files from a cache of its own."""
    cache = tmp_path_factory.mktemp("tiktoken-cache")
    ours = {name: Tokenizer.from_openai(name, download=False) for name in NAMES}
    for name in NAMES:  # r50k_base's file is rebuilt from GPT-2's (test_r50k_base_is_rebuilt_from_gpt2s_files_byte_for_byte)
        file = openai.ENCODINGS[name].files[0]
        data = openai.files_of(openai.ENCODINGS[name], download_missing=False)[file.name]
        (cache / hashlib.sha1(file.url.encode()).hexdigest()).write_bytes(data)
    before = os.environ.get("TIKTOKEN_CACHE_DIR")
    os.environ["TIKTOKEN_CACHE_DIR"] = str(cache)
    try:
        theirs = {name: tiktoken.get_encoding(name) for name in NAMES} | {"o200k_harmony": tiktoken.get_encoding("o200k_harmony")}
    finally:
        if before is None:
            os.environ.pop("TIKTOKEN_CACHE_DIR", None)
        else:
            os.environ["TIKTOKEN_CACHE_DIR"] = before
    return {name: (ours[name], theirs[name]) for name in NAMES} | {
        "o200k_harmony": (Tokenizer.from_openai("o200k_harmony", download=False), theirs["o200k_harmony"])
    }


def each(pairs, names=NAMES):
    return [pairs[name] for name in names]


def token_bytes(encoding, token: int) -> bytes | str:
    try:
        return encoding.decode_single_token_bytes(token)
    except KeyError:
        return "KeyError"


def outcome(call):
    """What a call gives: its value, or the type and message of what it raised."""
    try:
        return call()
    except (ValueError, KeyError) as e:
        return type(e).__name__, str(e)


# ---------------------------------------------------------------------------
# special tokens


def test_encode_refuses_the_text_of_a_special_token_by_default_with_tiktokens_sentence(pairs):
    for ours, theirs in each(pairs):
        for text in ("hello <|endoftext|>", "<|endoftext|>"):
            assert outcome(lambda e=ours, t=text: e.encode(t)) == outcome(lambda e=theirs, t=text: e.encode(t))
            assert outcome(lambda e=ours, t=text: e.encode(t))[0] == "ValueError"


@pytest.mark.parametrize(
    "allowed, disallowed",
    [
        ("all", "all"),
        ("all", ()),
        (set(), ()),
        (set(), "all"),
        ({"<|fim_prefix|>"}, ()),
        ({"<|endoftext|>"}, ()),
        ({"<|fim_middle|>"}, ()),
        ({"<|endoftext|>"}, "all"),
        (set(), {"<|endoftext|>"}),
        (set(), {"<|fim_prefix|>"}),
        ({"<|fim_prefix|>"}, {"<|endoftext|>"}),
    ],
)
def test_allowed_special_and_disallowed_special_mean_what_they_mean_in_tiktoken(pairs, allowed, disallowed):
    ours, theirs = pairs["cl100k_base"]
    for text in ("<|endoftext|> hello <|fim_prefix|>", "<|endoftext|> hello <|fim_prefix|> there <|fim_middle|>", "no special"):
        mine = outcome(lambda t=text: ours.encode(t, allowed_special=allowed, disallowed_special=disallowed))
        assert mine == outcome(lambda t=text: theirs.encode(t, allowed_special=allowed, disallowed_special=disallowed)), text


def test_encode_ordinary_encodes_special_token_text_as_plain_text(pairs):
    for ours, theirs in each(pairs):
        assert ours.encode_ordinary("hello <|endoftext|>") == theirs.encode_ordinary("hello <|endoftext|>")
        assert ours.eot_token not in ours.encode_ordinary("<|endoftext|>")


@settings(max_examples=40, deadline=None)
@given(text=st.lists(st.sampled_from(list("ab <|>endoftx\n") + ["<|endoftext|>", "<|fim_prefix|>"]), max_size=20).map("".join))
def test_encode_ordinary_is_encode_with_nothing_disallowed(pairs, text):
    ours, theirs = pairs["cl100k_base"]
    assert ours.encode_ordinary(text) == ours.encode(text, disallowed_special=()) == theirs.encode_ordinary(text)
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")


def test_a_cs336_tokenizer_encodes_its_own_special_tokens_as_special_by_default():
    # CS336's Tokenizer(vocab, merges, special_tokens): the tokens a user lists are special; tiktoken's refusal is
    # for OpenAI's encodings, whose special tokens a user did not choose
    text = "low lower<|endoftext|>newest"
    tok = Tokenizer.from_training(train(pretokenize(text, special_tokens=["<|endoftext|>"]), 5, special_tokens=["<|endoftext|>"]))
    assert tok.ids[b"<|endoftext|>"] in tok.encode(text)
    assert tok.ids[b"<|endoftext|>"] not in tok.encode_ordinary(text)
    with pytest.raises(ValueError, match="disallowed special token '<\\|endoftext\\|>'"):
        tok.encode(text, allowed_special=set())
    strict = Tokenizer(tok.vocab, tok.merges, ["<|endoftext|>"], allowed_special=())  # tiktoken's default, by choice
    with pytest.raises(ValueError, match="disallowed special token"):
        strict.encode(text)


def test_openais_own_rank_files_loaded_by_path_follow_tiktoken_too(tiktoken_files, pairs):
    tok = Tokenizer.load(tiktoken_files / "cl100k_base.tiktoken")
    assert tok.name == "cl100k_base"
    with pytest.raises(ValueError, match="disallowed special token"):
        tok.encode("hello <|endoftext|>")
    assert tok.encode("hello <|endoftext|>", allowed_special="all") == pairs["cl100k_base"][1].encode(
        "hello <|endoftext|>", allowed_special="all"
    )


def test_o200k_harmony_has_its_special_tokens_at_tiktokens_ids(pairs):
    ours, theirs = pairs["o200k_harmony"]
    text = "<|start|>user<|message|>Hi<|end|><|reserved_200500|>"
    assert ours.encode(text, allowed_special="all") == theirs.encode(text, allowed_special="all")
    assert ours.special_tokens_set == theirs.special_tokens_set and ours.n_vocab == theirs.n_vocab == 201088
    assert ours.encode("<|endofprompt|><|reserved_200018|>", allowed_special="all") == [200018, 200018]  # one id, two names


# ---------------------------------------------------------------------------
# batches, offsets, single tokens, what an encoding says about itself


def test_encode_batch_and_encode_ordinary_batch_keep_the_order(pairs):
    for ours, theirs in each(pairs):
        batch = SAMPLES + ["hello <|endoftext|>"]
        assert ours.encode_batch(batch, allowed_special="all") == theirs.encode_batch(batch, allowed_special="all")
        assert ours.encode_ordinary_batch(batch, num_threads=2) == theirs.encode_ordinary_batch(batch, num_threads=2)
        assert ours.decode_batch(ours.encode_ordinary_batch(batch)) == batch


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("n", [0, 1, 2, 5, 33, 200])
def test_a_batch_of_any_size_on_any_threads_is_each_text_in_order(pairs, threads, n):
    ours, theirs = pairs["cl100k_base"]
    batch = [f"{i} {SAMPLES[i % len(SAMPLES)]}" for i in range(n)]  # each text its own: a reordering would show
    assert ours.encode_ordinary_batch(batch, num_threads=threads) == [theirs.encode_ordinary(t) for t in batch]
    assert ours.encode_ordinary_batch(tuple(batch), num_threads=threads) == [theirs.encode_ordinary(t) for t in batch]


def test_the_first_text_in_order_that_cannot_be_encoded_is_the_error(pairs):
    ours, _ = pairs["cl100k_base"]
    batch = ["fine"] * 50 + ["a <|endofprompt|> at 50"] + ["fine"] * 20 + ["<|endoftext|> at 71"] + ["fine"] * 30
    with pytest.raises(ValueError, match="endofprompt"):  # the run after it holds the other: its error is not the one
        ours.encode_batch(batch, num_threads=4)


def test_decode_with_offsets_gives_where_each_token_starts_as_tiktoken(pairs):
    for ours, theirs in each(pairs):
        for text in [*SAMPLES, "hello world<|endoftext|> green cow"]:
            ids = theirs.encode(text, allowed_special="all")
            assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids), text


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=30))
def test_decode_with_offsets_of_any_text(pairs, text):
    ours, theirs = pairs["o200k_base"]
    ids = ours.encode_ordinary(text)
    assert ours.decode_with_offsets(ids) == theirs.decode_with_offsets(ids)


def test_decode_with_offsets_refuses_tokens_that_are_not_utf8_as_tiktoken(pairs):
    ours, theirs = pairs["cl100k_base"]
    ids = ours.encode("🙂")[:1]  # the emoji's first bytes only
    assert outcome(lambda: ours.decode_with_offsets(ids)) == outcome(lambda: theirs.decode_with_offsets(ids))
    assert outcome(lambda: ours.decode_with_offsets(ids))[0] == "UnicodeDecodeError"  # a ValueError


def test_single_tokens_round_trip_and_what_each_encoding_says_about_itself(pairs):
    for ours, theirs in each(pairs):
        assert (ours.name, ours.n_vocab, ours.max_token_value, ours.eot_token) == (
            theirs.name,
            theirs.n_vocab,
            theirs.max_token_value,
            theirs.eot_token,
        )
        assert ours.special_tokens_set == theirs.special_tokens_set
        assert ours.token_byte_values() == theirs.token_byte_values()
        for token in [*range(0, ours.n_vocab, 997), *range(ours.n_vocab - 30, ours.n_vocab + 2)]:
            data = token_bytes(theirs, token)
            assert token_bytes(ours, token) == data  # bytes, or KeyError for an id that is no token
            if isinstance(data, bytes):
                assert ours.encode_single_token(data) == theirs.encode_single_token(data) == token
                assert ours.is_special_token(token) == theirs.is_special_token(token)
        assert list(ours.encode_to_numpy("hello world")) == list(theirs.encode_to_numpy("hello world"))
        assert ours.decode(ours.encode("🙂")[:1], errors="ignore") == theirs.decode(theirs.encode("🙂")[:1], errors="ignore")


# ---------------------------------------------------------------------------
# text that is not clean UTF-8


def test_a_surrogate_pair_is_its_character_and_a_lone_surrogate_is_the_replacement_character(pairs):
    for ours, theirs in each(pairs):
        for text in ("\ud83d\udc4d", "\ud83d", "a\udfffb", "x\ud83d\udc4d\ud800 y", "\ud83d\udc80"):
            assert ours.encode(text) == theirs.encode(text), repr(text)
            assert ours.encode_ordinary(text) == theirs.encode_ordinary(text)


def test_an_invalid_byte_held_as_a_surrogate_escape_stays_that_byte_where_tiktoken_replaces_it(pairs):
    # a deliberate difference: U+DC80..U+DCFF is how Python's surrogateescape holds an invalid byte read from a
    # file; our encode keeps the byte (decode_bytes gives it back), tiktoken makes it U+FFFD
    ours, theirs = pairs["cl100k_base"]
    text = b"caf\xe9 au lait".decode("utf-8", "surrogateescape")
    assert ours.decode_bytes(ours.encode(text)) == b"caf\xe9 au lait"
    assert theirs.decode_bytes(theirs.encode(text)) == "caf\ufffd au lait".encode()


@pytest.mark.parametrize(
    "data",
    [
        b" \xec\x8b\xa4\xed",
        b"\x80",
        b"\x80" * 9,
        b"hello \xe4\xb8",
        b"hello   \n\n\xf0\x9f",
        b"it's\t\xff",
        b"1234\xc3",
        b"<|endoftext|>\xe2",
    ],
)
def test_bytes_with_invalid_utf8_at_the_end_encode_as_tiktokens_encode_bytes(pairs, data):
    for ours, theirs in each(pairs):
        assert ours.encode_ordinary(data) == theirs._encode_bytes(data), data
        assert ours.decode_bytes(ours.encode_ordinary(data)) == data


@settings(max_examples=60, deadline=None)
@given(
    text=st.text(max_size=20), tail=st.binary(min_size=1, max_size=4).filter(lambda b: b.decode("utf-8", "replace") == "\ufffd" * len(b))
)
def test_any_text_cut_short_by_invalid_bytes_as_tiktoken(pairs, text, tail):
    ours, theirs = pairs["cl100k_base"]
    data = text.encode() + tail
    assert ours.encode_ordinary(data) == theirs._encode_bytes(data)


def test_invalid_bytes_followed_by_text_are_kept_byte_by_byte_as_training_counted_them(pairs):
    # tiktoken's _encode_bytes merges everything after the first invalid byte as one piece; for a dataset
    # with one bad byte early in a document that is one piece of the whole rest: ours pre-tokenizes it
    ours, _ = pairs["cl100k_base"]
    data = b"caf\xe9 au lait, s'il vous pla\xeet"
    assert ours.encode(data) == ours.encode(data.decode("utf-8", "surrogateescape"))
    assert ours.decode_bytes(ours.encode(data)) == data


# ---------------------------------------------------------------------------
# finding OpenAI's encodings


def test_from_openai_takes_an_encoding_or_a_models_name_as_tiktoken(pairs):
    for model in ("gpt-4o", "gpt-4", "gpt-3.5-turbo-0301", "text-davinci-001", "gpt-4o-2024-05-13", "o1", "gpt2"):
        assert openai.encoding_of(model).name == tiktoken.encoding_name_for_model(model)
    assert Tokenizer.from_openai("gpt-4o", download=False) is pairs["o200k_base"][0]  # loaded once per process
    with pytest.raises(ValueError, match="'gpt-9' is neither an OpenAI encoding .* nor a model"):
        Tokenizer.from_openai("gpt-9")


def test_every_openai_encoding_and_model_is_known_as_tiktoken_defines_it(monkeypatch):
    """tiktoken's own constructors, their file loaders stubbed to say which file and hash they ask for."""
    import tiktoken.model
    import tiktoken_ext.openai_public as public

    asked = []

    def ranks(path, expected_hash=None):
        asked.append((path, expected_hash))
        return {bytes([b]): b for b in range(256)}

    monkeypatch.setattr(public, "load_tiktoken_bpe", ranks)
    monkeypatch.setattr(public, "data_gym_to_mergeable_bpe_ranks", lambda **files: ranks(files["vocab_bpe_file"], files["vocab_bpe_hash"]))
    assert set(public.ENCODING_CONSTRUCTORS) == set(openai.ENCODINGS)
    for name, make in public.ENCODING_CONSTRUCTORS.items():
        asked.clear()
        spec, ours = make(), openai.ENCODINGS[name]
        assert spec["special_tokens"] == ours.special_tokens, name
        url, sha = asked[0]
        assert any(f.url == url and f.sha256 == sha for f in ours.files), name
        expected = {"gpt2": "gpt2", "cl100k_base": "cl100k", "o200k_base": "o200k", "o200k_harmony": "o200k"}.get(name, "gpt2")
        assert ours.pretokenizer == expected  # r50k_pat_str and GPT-2's regex spell one pre-tokenizer (the ids agree above)
    assert openai.MODEL_TO_ENCODING == tiktoken.model.MODEL_TO_ENCODING
    assert openai.MODEL_PREFIX_TO_ENCODING == tiktoken.model.MODEL_PREFIX_TO_ENCODING


def test_from_openai_finds_the_files_in_tiktokens_cache_and_says_where_it_looked(tiktoken_files, tmp_path, monkeypatch):
    monkeypatch.setattr(openai, "SHARED", tmp_path / "no-shared")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "cache"))
    encoding = openai.ENCODINGS["cl100k_base"]
    with pytest.raises(ValueError, match="cl100k_base needs OpenAI's cl100k_base.tiktoken, which is not in .* and downloading is off"):
        openai.files_of(encoding, download_missing=False)
    (tmp_path / "cache").mkdir()
    assert openai.store(encoding.files[0], b"not the file") == "cl100k_base.tiktoken: not OpenAI's file (its sha256 differs)"
    assert openai.store(encoding.files[0], (tiktoken_files / "cl100k_base.tiktoken").read_bytes()) is None
    assert openai.local(encoding.files[0]) == ((tiktoken_files / "cl100k_base.tiktoken").read_bytes(), "tiktoken's cache")


def test_r50k_base_is_rebuilt_from_gpt2s_files_byte_for_byte(gpt2, pairs):
    data = openai.files_of(openai.ENCODINGS["r50k_base"], download_missing=False)["r50k_base.tiktoken"]
    assert hashlib.sha256(data).hexdigest() == openai.ENCODINGS["r50k_base"].files[0].sha256
    gpt2_ours = Tokenizer.from_openai("gpt2", download=False)
    for text in SAMPLES:
        assert gpt2_ours.encode(text) == pairs["r50k_base"][0].encode(text) == pairs["r50k_base"][1].encode(text)
