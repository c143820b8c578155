"""OpenAI's encodings, as tiktoken defines them: their files, pre-tokenizers and special tokens, and finding the files.

Every encoding tiktoken knows is here (tiktoken_ext/openai_public.py), with the
models that use it (tiktoken/model.py), so that `Tokenizer.from_openai("cl100k_base")`
or `Tokenizer.from_openai("gpt-4o")` gives the encoding tiktoken would:

    gpt2, r50k_base   GPT-2's 50,257 tokens (r50k_base.tiktoken, or GPT-2's encoder.json + vocab.bpe: the same ranks)
    p50k_base         Codex: r50k plus 24 runs of spaces;  p50k_edit the same with three fill-in-the-middle tokens
    cl100k_base       GPT-4, GPT-3.5;  o200k_base GPT-4o, o1, o3, GPT-5;  o200k_harmony gpt-oss (1,100 more special tokens)

A file is found, in this order: in a folder given (`folder=`), beside a checkout of
this project (its ../shared/tiktoken and ../shared/gpt2; an installed package has
no checkout), in tiktoken's own cache (TIKTOKEN_CACHE_DIR, each file under the sha1
of its URL, where tiktoken itself would find it), or downloaded from OpenAI's URL
when the machine is online (into that cache; BPE_DOWNLOAD=0 turns downloading off).
Every file is checked against the sha256 tiktoken checks, wherever it comes from.

Not here: reading the files (load.py) or encoding (tokenizer.py); the app's
background downloads and per-server cache (ui/real.py).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

ENCODINGS_URL = "https://openaipublic.blob.core.windows.net/encodings/"
GPT2_URL = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"


def _shared() -> Path | None:
    """The fixtures beside a checkout of this project (../shared); None where the package is installed, not checked out."""
    checkout = Path(__file__).resolve().parents[2]  # bpe/files/openai.py -> the checkout, or site-packages when installed
    return checkout.parent / "shared" if (checkout / "pyproject.toml").is_file() and (checkout / "bpe").is_dir() else None


SHARED = _shared()
DOWNLOAD_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class File:
    name: str  # as OpenAI's URL names it
    url: str
    sha256: str  # what tiktoken checks
    shared: str  # the folder of ../shared that holds it in a checkout


@dataclass(frozen=True)
class Encoding:
    name: str  # tiktoken's: "cl100k_base"
    pretokenizer: str  # the name of this library's pre-tokenizer (text/pretokenizers.py) that encodes as its pat_str
    files: tuple[File, ...]  # one .tiktoken rank file, or GPT-2's encoder.json and vocab.bpe
    special_tokens: dict[str, int]  # text -> id (a rank file does not record them)
    base: str = ""  # the encoding whose files and ranks it shares ("o200k_base" for o200k_harmony)


def _ranks(name: str, sha256: str) -> tuple[File, ...]:
    return (File(f"{name}.tiktoken", f"{ENCODINGS_URL}{name}.tiktoken", sha256, "tiktoken"),)


ENDOFTEXT, FIM_PREFIX, FIM_MIDDLE, FIM_SUFFIX, ENDOFPROMPT = (
    "<|endoftext|>",
    "<|fim_prefix|>",
    "<|fim_middle|>",
    "<|fim_suffix|>",
    "<|endofprompt|>",
)
GPT2_FILES = (
    File("encoder.json", GPT2_URL + "encoder.json", "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783", "gpt2"),
    File("vocab.bpe", GPT2_URL + "vocab.bpe", "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5", "gpt2"),
)
R50K = _ranks("r50k_base", "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930")
P50K = _ranks("p50k_base", "94b5ca7dff4d00767bc256fdd1b27e5b17361d7b8a5f968547f9f23eb70d2069")
O200K = _ranks("o200k_base", "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d")
HARMONY = {
    "<|startoftext|>": 199998,
    ENDOFTEXT: 199999,
    "<|reserved_200000|>": 200000,
    "<|reserved_200001|>": 200001,
    "<|return|>": 200002,
    "<|constrain|>": 200003,
    "<|reserved_200004|>": 200004,
    "<|channel|>": 200005,
    "<|start|>": 200006,
    "<|end|>": 200007,
    "<|message|>": 200008,
    "<|reserved_200009|>": 200009,
    "<|reserved_200010|>": 200010,
    "<|reserved_200011|>": 200011,
    "<|call|>": 200012,
} | {f"<|reserved_{i}|>": i for i in range(200013, 201088)}

ENCODINGS: dict[str, Encoding] = {
    e.name: e
    for e in (
        Encoding("gpt2", "gpt2", GPT2_FILES, {ENDOFTEXT: 50256}),
        Encoding("r50k_base", "gpt2", R50K, {ENDOFTEXT: 50256}),
        Encoding("p50k_base", "gpt2", P50K, {ENDOFTEXT: 50256}),
        Encoding("p50k_edit", "gpt2", P50K, {ENDOFTEXT: 50256, FIM_PREFIX: 50281, FIM_MIDDLE: 50282, FIM_SUFFIX: 50283}, "p50k_base"),
        Encoding(
            "cl100k_base",
            "cl100k",
            _ranks("cl100k_base", "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
            {ENDOFTEXT: 100257, FIM_PREFIX: 100258, FIM_MIDDLE: 100259, FIM_SUFFIX: 100260, ENDOFPROMPT: 100276},
        ),
        Encoding("o200k_base", "o200k", O200K, {ENDOFTEXT: 199999, ENDOFPROMPT: 200018}),
        Encoding("o200k_harmony", "o200k", O200K, {ENDOFPROMPT: 200018} | HARMONY, "o200k_base"),
    )
}

# A rank file, known by its sha256, is the base encoding that ships it (p50k_edit's and o200k_harmony's
# special tokens need the name: load.py gives such a file p50k_base's and o200k_base's).
RANK_FILES: dict[str, Encoding] = {e.files[0].sha256: e for e in ENCODINGS.values() if not e.base and e.files[0].name.endswith(".tiktoken")}

# tiktoken/model.py: a model's name -> its encoding (exact names first, then prefixes)
MODEL_TO_ENCODING: dict[str, str] = {
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4-mini": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4o": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5-turbo": "cl100k_base",
    "gpt-3.5": "cl100k_base",
    "gpt-35-turbo": "cl100k_base",
    "davinci-002": "cl100k_base",
    "babbage-002": "cl100k_base",
    "text-embedding-ada-002": "cl100k_base",
    "text-embedding-3-small": "cl100k_base",
    "text-embedding-3-large": "cl100k_base",
    "text-davinci-003": "p50k_base",
    "text-davinci-002": "p50k_base",
    "text-davinci-001": "r50k_base",
    "text-curie-001": "r50k_base",
    "text-babbage-001": "r50k_base",
    "text-ada-001": "r50k_base",
    "davinci": "r50k_base",
    "curie": "r50k_base",
    "babbage": "r50k_base",
    "ada": "r50k_base",
    "code-davinci-002": "p50k_base",
    "code-davinci-001": "p50k_base",
    "code-cushman-002": "p50k_base",
    "code-cushman-001": "p50k_base",
    "davinci-codex": "p50k_base",
    "cushman-codex": "p50k_base",
    "text-davinci-edit-001": "p50k_edit",
    "code-davinci-edit-001": "p50k_edit",
    "text-similarity-davinci-001": "r50k_base",
    "text-similarity-curie-001": "r50k_base",
    "text-similarity-babbage-001": "r50k_base",
    "text-similarity-ada-001": "r50k_base",
    "text-search-davinci-doc-001": "r50k_base",
    "text-search-curie-doc-001": "r50k_base",
    "text-search-babbage-doc-001": "r50k_base",
    "text-search-ada-doc-001": "r50k_base",
    "code-search-babbage-code-001": "r50k_base",
    "code-search-ada-code-001": "r50k_base",
    "gpt2": "gpt2",
    "gpt-2": "gpt2",
}
MODEL_PREFIX_TO_ENCODING: dict[str, str] = {
    "o1-": "o200k_base",
    "o3-": "o200k_base",
    "o4-mini-": "o200k_base",
    "gpt-5": "o200k_base",
    "gpt-4.5-": "o200k_base",
    "gpt-4.1-": "o200k_base",
    "chatgpt-4o-": "o200k_base",
    "gpt-4o-": "o200k_base",
    "gpt-4-": "cl100k_base",
    "gpt-3.5-turbo-": "cl100k_base",
    "gpt-35-turbo-": "cl100k_base",
    "gpt-oss-": "o200k_harmony",
    "ft:gpt-4o": "o200k_base",
    "ft:gpt-4": "cl100k_base",
    "ft:gpt-3.5-turbo": "cl100k_base",
    "ft:davinci-002": "cl100k_base",
    "ft:babbage-002": "cl100k_base",
}


def encoding_of(name: str) -> Encoding:
    """An encoding by its name ('cl100k_base') or a model's ('gpt-4o', 'gpt-4-0314'); ValueError with the choices otherwise."""
    if name in ENCODINGS:
        return ENCODINGS[name]
    if name in MODEL_TO_ENCODING:
        return ENCODINGS[MODEL_TO_ENCODING[name]]
    for prefix, encoding in MODEL_PREFIX_TO_ENCODING.items():
        if name.startswith(prefix):
            return ENCODINGS[encoding]
    raise ValueError(
        f"{name!r} is neither an OpenAI encoding ({', '.join(ENCODINGS)}) nor a model this library knows (such as gpt-4o or gpt-4)."
    )


# ---------------------------------------------------------------------------
# finding the files


def cache_dir() -> Path | None:
    """tiktoken's cache folder, as tiktoken.load.read_file_cached finds it (None: caching turned off)."""
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return Path(os.environ[variable]) if os.environ[variable] else None
    return Path(tempfile.gettempdir()) / "data-gym-cache"


def cached_path(file: File) -> Path | None:
    """Where tiktoken keeps a file: its cache folder, under the sha1 of its URL."""
    folder = cache_dir()
    return None if folder is None else folder / hashlib.sha1(file.url.encode()).hexdigest()


def checked(file: File, data: bytes) -> str | None:
    """None when data is OpenAI's file (its sha256), else why not."""
    return None if hashlib.sha256(data).hexdigest() == file.sha256 else f"{file.name}: not OpenAI's file (its sha256 differs)"


def store(file: File, data: bytes) -> str | None:
    """Put a file into tiktoken's cache if it is exactly OpenAI's; None when done, else why not."""
    problem = checked(file, data)
    if problem:
        return problem
    path = cached_path(file)
    if path is None:
        return "tiktoken's cache is turned off (TIKTOKEN_CACHE_DIR is empty)"
    from ..atomic import OutputError, write_bytes

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes(path, data)
    except (OSError, OutputError) as e:
        return f"could not write to tiktoken's cache ({getattr(e, 'strerror', None) or e})"
    return None


def local(file: File, folder: str | os.PathLike | None = None) -> tuple[bytes, str] | None:
    """A file's bytes and where they came from, from this machine: the folder given, ../shared, tiktoken's cache; None if absent.

    A file found but not OpenAI's (its sha256 differs) is passed over.
    """
    places = [Path(folder) / file.name] if folder is not None else []
    if SHARED is not None:
        places.append(SHARED / file.shared / file.name)
    cached = cached_path(file)
    if cached is not None:
        places.append(cached)
    for path in places:
        if path.is_file():
            data = path.read_bytes()
            if checked(file, data) is None:
                return data, str(path.parent) if path != cached else "tiktoken's cache"
    return None


def download(file: File) -> bytes:
    """Fetch a file from OpenAI's URL, check it, and keep it in tiktoken's cache; ValueError saying why when it cannot."""
    import urllib.request  # here: importing it (with http, ssl, email) takes ~20 ms that no other use of bpe needs

    try:
        with urllib.request.urlopen(file.url, timeout=DOWNLOAD_TIMEOUT_S) as response:
            data = response.read()
    except OSError as e:
        raise ValueError(
            f"{file.name} could not be downloaded from {file.url} ({getattr(e, 'reason', None) or e}); offline, put OpenAI's "
            f"file in a folder and pass folder=FOLDER, or in tiktoken's cache ({_cache_said()})."
        ) from None
    problem = checked(file, data)
    if problem:
        raise ValueError(problem + ".")
    store(file, data)  # a cache that cannot be written only costs the next download
    return data


def files_of(encoding: Encoding, folder: str | os.PathLike | None = None, *, download_missing: bool = True) -> dict[str, bytes]:
    """The encoding's files (name -> bytes), found on this machine or downloaded; ValueError saying where it looked.

    r50k_base's rank file is also rebuilt, byte for byte (its sha256 checked), from GPT-2's encoder.json
    where that is on this machine: they hold the same ranks.
    """
    found = {}
    download_missing = download_missing and os.environ.get("BPE_DOWNLOAD", "1") != "0"
    for file in encoding.files:
        here = local(file, folder)
        if here is None and file == R50K[0]:
            here = _r50k_from_gpt2(folder)
        if here is not None:
            found[file.name] = here[0]
        elif download_missing:
            found[file.name] = download(file)
        else:
            looked = [str(folder)] if folder is not None else []
            looked += [str(SHARED / file.shared)] if SHARED is not None else []
            looked.append(f"tiktoken's cache ({cache_dir()})")
            raise ValueError(
                f"{encoding.name} needs OpenAI's {file.name}, which is not in {', '.join(looked)}, and downloading is off; "
                f"put the file in a folder and pass folder=FOLDER, or in tiktoken's cache ({_cache_said()})."
            )
    return found


def _cache_said() -> str:
    """Where tiktoken's cache is and how to move it, for a sentence."""
    return f"{cache_dir()}; TIKTOKEN_CACHE_DIR=FOLDER moves it" if cache_dir() is not None else "TIKTOKEN_CACHE_DIR=FOLDER turns it on"


def _r50k_from_gpt2(folder: str | os.PathLike | None) -> tuple[bytes, str] | None:
    """r50k_base.tiktoken made from GPT-2's encoder.json (a token's id is its rank), if that is here; it must be OpenAI's, byte for byte."""
    import base64
    import json

    from ..text.gpt2_bytes import from_unicode

    here = local(GPT2_FILES[0], folder)
    if here is None:
        return None
    table = json.loads(here[0])
    rows = sorted((i, from_unicode(token)) for token, i in table.items() if i < 50256)
    data = b"".join(base64.b64encode(token) + b" " + str(i).encode() + b"\n" for i, token in rows)
    return (data, here[1] + " (GPT-2's encoder.json)") if checked(R50K[0], data) is None else None
