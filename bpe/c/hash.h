/* The keyed hash of the core's tables of byte strings (bytesmap.c, encode.c's cache, ranks.c, words.c,
   pretokenize.c's counter): a function of the bytes and of a key that Python draws per process
   (pretokenize_c.SEED, os.urandom), so that text made to collide in one run does not in the next.

   Keyed in every block, not only at the start: the hash before this one mixed the seed in once and then
   each 8-byte block with a multiply, so flipping a block's top bit changed the state by a constant
   whatever the seed, the next block could cancel it, and a key of B blocks had 2^(B-1) variants with one
   hash under every seed (issue 37: a 5 MB rank file of such tokens took 10.5 s to load). Here:

   - a key of at most 15 bytes (nearly every pre-token, and every key the encoder looks up per pre-token)
     is one 16-byte block, its bytes zero-padded and its length in the last byte, put through four rounds
     of AES with five secret round keys (AES-NI: ~2 ns, a throughput the encoder can afford per pre-token);
     two different blocks give two unrelated outputs, as far as anyone without the keys can tell, since four
     keyed AES rounds leave no differential of useful probability (at least 25 active S-boxes);
   - a longer key, and any key where the processor has no AES instructions, goes through SipHash-1-3
     (Aumasson and Bernstein's keyed PRF, with one compression round: Python's own str hash since 3.11 and
     Rust's default hasher), whose key enters every block's rounds.

   The 64-bit seed is stretched into the keys with splitmix64, so guessing them means guessing the seed.
   Each table keeps one bpe_hashkey and hashes every key of it with bpe_hash (or bpe_hash_block, the same value
   for a key already held as its block), so the one table never mixes the two functions for one key. */
#ifndef BPE_HASH_H
#define BPE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if (defined(__x86_64__) || defined(_M_X64)) && defined(__AES__)
#include <wmmintrin.h>
#define BPE_HASH_AES 1
#else
#define BPE_HASH_AES 0
#endif

#if defined(__GNUC__)
#define BPE_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define BPE_ALWAYS_INLINE inline
#endif

#define BPE_BLOCK_MAX 15 /* the longest key hashed as one block (the 16th byte holds its length) */

typedef struct {
    uint64_t sip[2];    /* SipHash's key */
    uint64_t aes[5][2]; /* the AES whitening key and four round keys */
    int use_aes;        /* the processor has AES-NI (and the core was built for it): short keys take the AES rounds */
} bpe_hashkey;

/* set once when the module is loaded (bpe_hash_init, bytesmap.c): 1 where the processor has AES-NI and the core was built to use it */
extern int bpe_hash_aes;

/* the key a table hashes with, stretched from a 64-bit seed; force_sip: SipHash for every key (tests compare the two) */
void bpe_key_init(bpe_hashkey *key, uint64_t seed, int force_sip);

#define BPE_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define BPE_SIPROUND                                                                                                           \
    do {                                                                                                                       \
        v0 += v1;                                                                                                              \
        v1 = BPE_ROTL(v1, 13);                                                                                                 \
        v1 ^= v0;                                                                                                              \
        v0 = BPE_ROTL(v0, 32);                                                                                                 \
        v2 += v3;                                                                                                              \
        v3 = BPE_ROTL(v3, 16);                                                                                                 \
        v3 ^= v2;                                                                                                              \
        v0 += v3;                                                                                                              \
        v3 = BPE_ROTL(v3, 21);                                                                                                 \
        v3 ^= v0;                                                                                                              \
        v2 += v1;                                                                                                              \
        v1 = BPE_ROTL(v1, 17);                                                                                                 \
        v1 ^= v2;                                                                                                              \
        v2 = BPE_ROTL(v2, 32);                                                                                                 \
    } while (0)

/* SipHash-1-3 of p[0:n] (little-endian words, as the reference implementation reads them) */
static inline uint64_t bpe_siphash13(const uint8_t *p, size_t n, const bpe_hashkey *key) {
    uint64_t v0 = key->sip[0] ^ 0x736f6d6570736575ULL, v1 = key->sip[1] ^ 0x646f72616e646f6dULL;
    uint64_t v2 = key->sip[0] ^ 0x6c7967656e657261ULL, v3 = key->sip[1] ^ 0x7465646279746573ULL;
    uint64_t last = (uint64_t)n << 56, m;
    for (; n >= 8; p += 8, n -= 8) {
        memcpy(&m, p, 8); /* subtle: memcpy, not a cast: the bytes need not be aligned */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        m = __builtin_bswap64(m);
#endif
        v3 ^= m;
        BPE_SIPROUND;
        v0 ^= m;
    }
    for (size_t i = 0; i < n; i++) last |= (uint64_t)p[i] << (8 * i);
    v3 ^= last;
    BPE_SIPROUND;
    v0 ^= last;
    v2 ^= 0xff;
    BPE_SIPROUND;
    BPE_SIPROUND;
    BPE_SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

/* A key of at most 15 bytes as its block: w0 = bytes 0-7, w1 = bytes 8-14, zero-padded, and the length in w1's
   top byte (little-endian: the block is the bytes in memory order). */
static inline void bpe_block_of(const uint8_t *p, size_t n, uint64_t *w0, uint64_t *w1) {
    uint8_t block[16] = {0};
    memcpy(block, p, n);
    block[15] = (uint8_t)n;
    memcpy(w0, block, 8);
    memcpy(w1, block + 8, 8);
}

#if BPE_HASH_AES
/* the AES round keys in registers, for a loop that hashes many blocks (bpe_fill_spans) */
typedef struct {
    __m128i round[5];
} bpe_aes_keys;

static BPE_ALWAYS_INLINE bpe_aes_keys bpe_aes_keys_of(const bpe_hashkey *key) {
    bpe_aes_keys k;
    for (int r = 0; r < 5; r++) k.round[r] = _mm_loadu_si128((const __m128i *)key->aes[r]);
    return k;
}

/* bpe_hash_block where key->use_aes, of the block in a register (bytes 0-7 are w0) */
static BPE_ALWAYS_INLINE uint64_t bpe_aes_vector(__m128i block, const bpe_aes_keys *k) {
    __m128i x = _mm_xor_si128(block, k->round[0]);
    x = _mm_aesenc_si128(x, k->round[1]);
    x = _mm_aesenc_si128(x, k->round[2]);
    x = _mm_aesenc_si128(x, k->round[3]);
    x = _mm_aesenc_si128(x, k->round[4]);
    uint64_t h = (uint64_t)_mm_cvtsi128_si64(x);
    return h ? h : 1;
}

/* bpe_hash_block where key->use_aes */
static BPE_ALWAYS_INLINE uint64_t bpe_aes_block(uint64_t w0, uint64_t w1, const bpe_aes_keys *k) {
    __m128i x = _mm_xor_si128(_mm_set_epi64x((long long)w1, (long long)w0), k->round[0]);
    x = _mm_aesenc_si128(x, k->round[1]);
    x = _mm_aesenc_si128(x, k->round[2]);
    x = _mm_aesenc_si128(x, k->round[3]);
    x = _mm_aesenc_si128(x, k->round[4]);
    uint64_t h = (uint64_t)_mm_cvtsi128_si64(x);
    return h ? h : 1;
}
#endif

/* the hash of a key of at most 15 bytes, given as its block (bpe_block_of); never 0 */
static BPE_ALWAYS_INLINE uint64_t bpe_hash_block(uint64_t w0, uint64_t w1, const bpe_hashkey *key) {
#if BPE_HASH_AES
    if (key->use_aes) {
        bpe_aes_keys k = bpe_aes_keys_of(key);
        return bpe_aes_block(w0, w1, &k);
    }
#endif
    uint64_t h;
    uint8_t block[16];
    memcpy(block, &w0, 8);
    memcpy(block + 8, &w1, 8);
    h = bpe_siphash13(block, 16, key);
    return h ? h : 1;
}

/* The keyed hash of p[0:n], never 0 (a table may mark an empty slot with 0). */
static inline uint64_t bpe_hash(const uint8_t *p, size_t n, const bpe_hashkey *key) {
    if (n <= BPE_BLOCK_MAX) {
        uint64_t w0, w1;
        bpe_block_of(p, n, &w0, &w1);
        return bpe_hash_block(w0, w1, key);
    }
    uint64_t h = bpe_siphash13(p, n, key);
    return h ? h : 1;
}

#endif
