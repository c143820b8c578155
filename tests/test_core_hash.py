"""The core's tables hash with a key in every block (bpe/c/hash.h), so keys made to collide do not, under any seed.

The reviewer's repro (issue 37): the hash before mixed the seed in once, then each 8-byte block as
h = (h ^ w) * K; h ^= h >> 29, so flipping a block's top bit changed the state by a constant that the
next block could cancel, whatever the seed. Keys built that way (checked here to share one value under
the old hash for every seed) hash apart now, and the tables that hold them keep their lookups short:
a counts file of such tokens (Words) and pre-tokens counted by the counter. SipHash-1-3, the hash of
long keys, is held to a reference written from the paper, whose SipHash-2-4 vector it also gives.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpe.core import core, missing

needs_core = pytest.mark.skipif(core is None, reason=f"the compiled core is absent: {missing}")
MASK = 2**64 - 1
SEEDS = [0, 1, 0x5EED, 2**64 - 1]


def old_hash(data: bytes, seed: int) -> int:
    """The core's hash before the keyed one (bpe_hash in bpe/c/encode.h, commit 42ed6e3)."""
    n, p = len(data), 0
    h = seed ^ (n * 0x9E3779B97F4A7C15 & MASK)
    while n > 8:
        h = (h ^ int.from_bytes(data[p : p + 8], "little")) * 0xBF58476D1CE4E5B9 & MASK
        h ^= h >> 29
        p, n = p + 8, n - 8
    h = (h ^ int.from_bytes(data[p:], "little")) * 0x94D049BB133111EB & MASK
    h ^= h >> 32
    h = h * 0xD6E8FEB86659FD93 & MASK
    h ^= h >> 32
    return h or 1


def colliding(count: int, blocks: int, rng: random.Random) -> list[bytes]:
    """count keys of `blocks` 8-byte blocks with one old_hash under every seed: block j's top bit flipped (bit j of
    the variant's number) leaves the state differing by DELTA, which block j + 1 cancels; the last block cancels the rest."""
    delta = 1 << 63 | 1 << 34  # (x ^ 2**63) * K = x * K ^ 2**63 for odd K, then h ^= h >> 29
    base = [rng.getrandbits(64) for _ in range(blocks)]
    keys = []
    for variant in range(count):
        words, carried = [], 0
        for j in range(blocks - 1):
            flip = variant >> j & 1
            words.append(base[j] ^ carried ^ (flip << 63))
            carried = delta if flip else 0
        words.append(base[-1] ^ carried)
        keys.append(b"".join(w.to_bytes(8, "little") for w in words))
    return keys


def siphash(c: int, d: int, k0: int, k1: int, data: bytes) -> int:
    """SipHash-c-d as Aumasson and Bernstein's paper defines it."""

    def rotl(x: int, b: int) -> int:
        return (x << b | x >> (64 - b)) & MASK

    v = [k0 ^ 0x736F6D6570736575, k1 ^ 0x646F72616E646F6D, k0 ^ 0x6C7967656E657261, k1 ^ 0x7465646279746573]

    def rounds(times: int) -> None:
        for _ in range(times):
            v[0] = (v[0] + v[1]) & MASK
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & MASK
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & MASK
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & MASK
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    tail = len(data) % 8
    words = [int.from_bytes(data[i : i + 8], "little") for i in range(0, len(data) - tail, 8)]
    words.append(int.from_bytes(data[len(data) - tail :], "little") | (len(data) & 0xFF) << 56)
    for m in words:
        v[3] ^= m
        rounds(c)
        v[0] ^= m
    v[2] ^= 0xFF
    rounds(d)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def test_the_reference_siphash_gives_the_papers_vector():
    key = bytes(range(16))
    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:], "little")
    assert siphash(2, 4, k0, k1, bytes(range(15))) == 0xA129CA6149BE45E5  # the paper's appendix A


@needs_core
@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=80), k0=st.integers(0, MASK), k1=st.integers(0, MASK))
def test_siphash13_is_the_papers(data, k0, k1):
    assert core.siphash13(data, k0, k1) == siphash(1, 3, k0, k1, data)


def test_the_repro_collides_under_the_old_hash_for_every_seed():
    keys = colliding(1000, 16, random.Random(37))
    assert len(set(keys)) == 1000
    for seed in SEEDS:
        assert len({old_hash(key, seed) for key in keys}) == 1


@needs_core
@pytest.mark.parametrize("siphash_only", [False, True])
@pytest.mark.parametrize("blocks", [2, 3, 16])
def test_keys_that_collided_hash_apart_under_every_seed(blocks, siphash_only):
    keys = colliding(min(1000, 2 ** (blocks - 1)), blocks, random.Random(blocks))
    for seed in SEEDS:
        hashes = [core.keyed_hash(key, seed, siphash=siphash_only) for key in keys]
        assert len(set(hashes)) == len(keys)
        assert len({h & 0xFFFF for h in hashes}) > 0.9 * len(keys) * (1 - len(keys) / 2**17)  # apart in a table's slots too


@needs_core
@pytest.mark.parametrize("siphash_only", [False, True])
def test_short_keys_that_differ_in_top_bits_hash_apart(siphash_only):
    """Keys of up to 15 bytes (one block): every variant of the top bits of 12 bytes, and lengths that pad with NULs."""
    base = bytes(random.Random(5).getrandbits(7) for _ in range(12))
    keys = [bytes(b ^ (0x80 if v >> i & 1 else 0) for i, b in enumerate(base)) for v in range(4096)]
    keys += [b"a" + b"\0" * n for n in range(15)] + [b"\0" * n for n in range(16)]
    for seed in SEEDS:
        assert len({core.keyed_hash(key, seed, siphash=siphash_only) for key in keys}) == len(keys)


@needs_core
def test_the_seed_changes_every_hash():
    keys = [bytes([i]) * n for i in range(50) for n in (1, 7, 15, 16, 40)]
    for key in keys:
        assert len({core.keyed_hash(key, seed) for seed in SEEDS}) == len(SEEDS)


# ---------------------------------------------------------------------------
# the tables that hold such keys


@needs_core
def test_a_counts_file_of_colliding_tokens_keeps_its_lookups_short():
    """Words holds a counts file's tokens: 20,000 that had one hash read as many slots each as it took (n^2 in all)."""
    tokens = colliding(20_000, 18, random.Random(1))
    words = core.Words(0x5EED)
    data = b"".join(tokens)
    offsets = b"".join((i * 144).to_bytes(4, "little") for i in range(len(tokens) + 1))
    counts = b"".join((1).to_bytes(8, "little") for _ in tokens)
    assert words.add(data, offsets, counts, False) == -1
    assert len(words) == 20_000
    assert words.longest_probe < 40


@needs_core
def test_colliding_pre_tokens_keep_the_counters_lookups_short():
    counter = core.PreTokenCounter(core.KINDS["none"], 0x5EED)  # each document one pre-token
    tokens = colliding(5000, 16, random.Random(2))
    for token in tokens + tokens[:100]:
        counter.add(token)
    assert len(counter) == 5000 and counter.counts()[tokens[0]] == 2
    assert counter.longest_probe < 40
