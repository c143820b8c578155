/* Pre-tokenizing GPT-2's, GPT-4's (cl100k) and GPT-4o's (o200k) regexes at compiled speed, exactly.

   Each scanner below is one of pretokenize.PATTERNS written out by hand: it returns where the
   regex's match starting at a position ends, trying the alternatives in order and backtracking
   exactly as the `regex` module does (the comments say how each backtrack resolves). The
   character classes come from `regex` itself (unicode_classes.h, written by
   bpe/text/unicode_classes.py), so a character is a letter here exactly when \p{L} matches it there.
   tests/test_core_pretokenize.py holds the two to the same pre-tokens on text over all of
   Unicode, invalid UTF-8 and real corpora.

   Not here: any other regex (Python runs it), merging (encode.c). */
#include "encode.h"

#include <stdlib.h>
#include <string.h>

#include "structmember.h"
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define BPE_SSE2 1
#else
#define BPE_SSE2 0
#endif

#include "unicode_classes.h"

#define L BPE_CLASS_L
#define N BPE_CLASS_N
#define S BPE_CLASS_S
#define U BPE_CLASS_U
#define W BPE_CLASS_W
#define NL BPE_CLASS_NL
#define N_CODE_POINTS 0x110000

static uint8_t classes[N_CODE_POINTS]; /* class bits of each code point, filled from the runs once */
static uint8_t folded[0x180];          /* the contraction letter a code point matches case-insensitively, or 0 */
/* 1 when the ASCII classes are the ones the fast paths below assume (letters [A-Za-z], \p{Lu} [A-Z], \p{Ll} [a-z],
   digits [0-9], \s [\t\n\v\f\r ], newlines [\r\n]): true of every Unicode version, and checked, so a table that said
   otherwise would only make the scanners slower, never different */
static int ascii_fast;

static void fill_tables(void) {
    size_t runs = sizeof(bpe_class_runs) / sizeof(bpe_class_runs[0]);
    for (size_t r = 0; r < runs; r++) {
        unsigned int end = r + 1 < runs ? bpe_class_runs[r + 1][0] : N_CODE_POINTS;
        memset(classes + bpe_class_runs[r][0], (int)bpe_class_runs[r][1], end - bpe_class_runs[r][0]);
    }
    for (size_t f = 0; f < sizeof(bpe_folded_letters) / sizeof(bpe_folded_letters[0]); f++)
        if (bpe_folded_letters[f][0] < sizeof(folded)) folded[bpe_folded_letters[f][0]] = (uint8_t)bpe_folded_letters[f][1];
    ascii_fast = 1;
    for (int b = 0; b < 0x80; b++) {
        int upper = b >= 'A' && b <= 'Z', lower = b >= 'a' && b <= 'z', digit = b >= '0' && b <= '9';
        int white = (b >= '\t' && b <= '\r') || b == ' ', newline = b == '\r' || b == '\n';
        uint8_t want = (uint8_t)((upper || lower ? BPE_CLASS_L : 0) | (digit ? BPE_CLASS_N : 0) | (upper ? BPE_CLASS_U : 0) | (lower ? BPE_CLASS_W : 0) |
                                 (white ? BPE_CLASS_S : 0) | (newline ? BPE_CLASS_NL : 0));
        if ((classes[b] & (BPE_CLASS_L | BPE_CLASS_N | BPE_CLASS_U | BPE_CLASS_W | BPE_CLASS_S | BPE_CLASS_NL)) != want) ascii_fast = 0;
    }
}

/* The character at s[i] (i < n): its class bits, code point and length in bytes. A byte that does
   not begin a valid UTF-8 sequence -- as Python's strict decoder judges: no overlong forms, no
   surrogates, nothing past U+10FFFF, nothing cut short -- is one character of no class, the lone
   surrogate surrogateescape makes of it. */
#if defined(__GNUC__)
#define HOT_INLINE inline __attribute__((always_inline))
#define NOINLINE __attribute__((noinline))
#else
#define HOT_INLINE inline
#define NOINLINE
#endif

static HOT_INLINE uint8_t char_at(const uint8_t *s, size_t i, size_t n, uint32_t *cp, size_t *len) {
    uint8_t b = s[i];
    size_t left = n - i;
    if (b < 0x80) {
        *cp = b;
        *len = 1;
        return classes[b];
    }
    if (b >= 0xC2 && b <= 0xDF) {
        if (left >= 2 && (s[i + 1] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x1F) << 6) | (s[i + 1] & 0x3F);
            *len = 2;
            return classes[*cp];
        }
    } else if (b >= 0xE0 && b <= 0xEF) {
        uint8_t lo = b == 0xE0 ? 0xA0 : 0x80, hi = b == 0xED ? 0x9F : 0xBF;
        if (left >= 3 && s[i + 1] >= lo && s[i + 1] <= hi && (s[i + 2] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x0F) << 12) | ((uint32_t)(s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F);
            *len = 3;
            return classes[*cp];
        }
    } else if (b >= 0xF0 && b <= 0xF4) {
        uint8_t lo = b == 0xF0 ? 0x90 : 0x80, hi = b == 0xF4 ? 0x8F : 0xBF;
        if (left >= 4 && s[i + 1] >= lo && s[i + 1] <= hi && (s[i + 2] & 0xC0) == 0x80 && (s[i + 3] & 0xC0) == 0x80) {
            *cp = ((uint32_t)(b & 0x07) << 18) | ((uint32_t)(s[i + 1] & 0x3F) << 12) | ((uint32_t)(s[i + 2] & 0x3F) << 6) |
                  (s[i + 3] & 0x3F);
            *len = 4;
            return classes[*cp];
        }
    }
    *cp = 0xDC00 + b;
    *len = 1;
    return 0;
}

size_t bpe_invalid_utf8(const uint8_t *s, size_t n) {
    size_t bad = 0, len;
    uint32_t cp;
    for (size_t i = 0; i < n; i += len) {
        char_at(s, i, n, &cp, &len);
        bad += len == 1 && s[i] >= 0x80; /* one byte of 0x80 and above alone: not valid UTF-8 */
    }
    return bad;
}

static HOT_INLINE uint8_t class_at(const uint8_t *s, size_t i, size_t n, size_t *len) {
    uint32_t cp;
    return char_at(s, i, n, &cp, len);
}

/* the end of the run of characters from i that have one of the bits in mask */
static inline size_t run_in(const uint8_t *s, size_t i, size_t n, uint8_t mask) {
    while (i < n) {
        size_t len;
        if (!(class_at(s, i, n, &len) & mask)) break;
        i += len;
    }
    return i;
}

/* the same, at most `most` characters */
static inline size_t run_in_max(const uint8_t *s, size_t i, size_t n, uint8_t mask, int most) {
    for (int k = 0; k < most && i < n; k++) {
        size_t len;
        if (!(class_at(s, i, n, &len) & mask)) break;
        i += len;
    }
    return i;
}

/* the end of the run of characters from i that have none of the bits in mask */
static inline size_t run_out(const uint8_t *s, size_t i, size_t n, uint8_t mask) {
    while (i < n) {
        size_t len;
        if (class_at(s, i, n, &len) & mask) break;
        i += len;
    }
    return i;
}

/* ---- ASCII fast paths: runs of [A-Za-z], [a-z] or [A-Z], 16 bytes at a time (prose is nearly all ASCII) ---- */

enum { ASCII_LETTERS, ASCII_LOWER, ASCII_UPPER };

static HOT_INLINE int ascii_in(uint8_t b, int set) {
    if (set == ASCII_LETTERS) return (uint8_t)((b | 0x20) - 'a') < 26;
    return (uint8_t)(b - (set == ASCII_LOWER ? 'a' : 'A')) < 26;
}

/* The end of the run of bytes in the set from j (a byte of 0x80 and above is in none: the run stops there). SSE2
   classes 16 bytes at once: b (| 0x20 for either case) + (0x80 - 'a') lands in [-128, -103] exactly for the 26
   letters, as signed bytes, and every other byte elsewhere (those of 0xE1 and above wrap round to small numbers). */
static HOT_INLINE size_t ascii_run(const uint8_t *s, size_t j, size_t n, int set) {
#if BPE_SSE2 && (defined(__GNUC__) || defined(__clang__))
    const __m128i fold = _mm_set1_epi8(set == ASCII_LETTERS ? 0x20 : 0);
    const __m128i shift = _mm_set1_epi8((char)(0x80 - (set == ASCII_UPPER ? 'A' : 'a')));
    const __m128i limit = _mm_set1_epi8((char)(-128 + 26));
    while (j + 16 <= n) {
        __m128i x = _mm_add_epi8(_mm_or_si128(_mm_loadu_si128((const __m128i *)(s + j)), fold), shift);
        unsigned in = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(x, limit));
        if (in != 0xFFFF) return j + (size_t)__builtin_ctz(~in);
        j += 16;
    }
#endif
    while (j < n && ascii_in(s[j], set)) j++;
    return j;
}

/* \p{L}+ from j (a letter): the ASCII letters fast, then, if a byte of 0x80 and above stopped them, the rest of the
   run character by character (it may hold more ASCII letters: run_in takes every letter) */
static HOT_INLINE size_t letter_run(const uint8_t *s, size_t j, size_t n) {
    j = ascii_run(s, j, n, ASCII_LETTERS);
    return j < n && s[j] >= 0x80 ? run_in(s, j, n, L) : j;
}

/* [\r\n]* (cl100k) or [\r\n/]* (o200k) */
static inline size_t run_newlines(const uint8_t *s, size_t i, size_t n, int slash) {
    while (i < n && (s[i] == '\r' || s[i] == '\n' || (slash && s[i] == '/'))) i++;
    return i;
}

/* Whitespace at i (a character in \s), the regexes' last alternatives:
   cl100k, o200k: \s*[\r\n]+ | \s+(?!\S) | \s+      gpt2: \s+(?!\S) | \s+
   \s*[\r\n]+: \s* takes the whole run and gives characters back until [\r\n]+ can match, so the
   match ends just after the run's last \r or \n. \s+(?!\S): the whole run at the end of the text;
   before anything else, all but its last character, if that leaves one. Otherwise \s+: the run. */
static inline size_t whitespace(const uint8_t *s, size_t i, size_t n, int newlines) {
    size_t p = i, last = i, after_newline = 0;
    while (p < n) {
        size_t len;
        uint8_t k = class_at(s, p, n, &len);
        if (!(k & S)) break;
        if (k & NL) after_newline = p + len;
        last = p;
        p += len;
    }
    if (newlines && after_newline) return after_newline;
    if (p == n) return n;
    if (last > i) return last;
    return p;
}

/* (?i:'s|'t|'re|'ve|'m|'ll|'d) at i (s[i] is '): its end, or 0. Case-insensitive as regex is:
   'S and 'ſ (U+017F) too. */
static size_t contraction(const uint8_t *s, size_t i, size_t n) {
    uint32_t cp;
    size_t len, j = i + 1;
    if (j >= n) return 0;
    char_at(s, j, n, &cp, &len);
    uint8_t first = cp < sizeof(folded) ? folded[cp] : 0;
    if (first == 's' || first == 't' || first == 'm' || first == 'd') return j + len;
    if (first != 'r' && first != 'v' && first != 'l') return 0;
    j += len;
    if (j >= n) return 0;
    char_at(s, j, n, &cp, &len);
    uint8_t second = cp < sizeof(folded) ? folded[cp] : 0;
    if (((first == 'r' || first == 'v') && second == 'e') || (first == 'l' && second == 'l')) return j + len;
    return 0;
}

static inline size_t optional_contraction(const uint8_t *s, size_t i, size_t n) {
    if (i < n && s[i] == '\'') {
        size_t end = contraction(s, i, n);
        if (end) return end;
    }
    return i;
}

/* gpt2: '(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
static NOINLINE size_t gpt2_general(const uint8_t *s, size_t i, size_t n) {
    if (s[i] == '\'' && i + 1 < n) {
        uint8_t c = s[i + 1];
        if (c == 's' || c == 'd' || c == 'm' || c == 't') return i + 2;
        if (i + 2 < n) {
            uint8_t d = s[i + 2];
            if ((c == 'l' && d == 'l') || (c == 'v' && d == 'e') || (c == 'r' && d == 'e')) return i + 3;
        }
    }
    size_t len;
    size_t j = i;
    uint8_t k = class_at(s, i, n, &len);
    if (s[i] == ' ' && i + 1 < n) { /* ' ?' takes the space when a letter, number or other follows */
        uint8_t next = class_at(s, i + 1, n, &len);
        if (!(next & S)) {
            j = i + 1;
            k = next;
        }
    }
    if (k & L) return letter_run(s, j, n);
    if (k & N) return run_in(s, j, n, N);
    if (!(k & S)) return run_out(s, j, n, L | N | S);
    return whitespace(s, i, n, 0);
}

/* cl100k: (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+ */
static NOINLINE size_t cl100k_general(const uint8_t *s, size_t i, size_t n) {
    if (s[i] == '\'') {
        size_t end = contraction(s, i, n);
        if (end) return end;
    }
    size_t len0, len1 = 0;
    uint8_t k0 = class_at(s, i, n, &len0), k1 = 0;
    if (k0 & L) return letter_run(s, i, n);
    size_t i1 = i + len0;
    if (i1 < n) k1 = class_at(s, i1, n, &len1);
    if (!(k0 & (L | N | NL)) && i1 < n && (k1 & L)) return letter_run(s, i1, n); /* one character of any other kind, then letters */
    if (k0 & N) return run_in_max(s, i, n, N, 3);
    if (s[i] == ' ' && i1 < n && !(k1 & (L | N | S))) return run_newlines(s, run_out(s, i1, n, L | N | S), n, 0);
    if (!(k0 & (L | N | S))) return run_newlines(s, run_out(s, i, n, L | N | S), n, 0);
    return whitespace(s, i, n, 1);
}

/* o200k, with U = [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}], W = [\p{Ll}\p{Lm}\p{Lo}\p{M}], P = [^\r\n\p{L}\p{N}],
   C = (?i:'s|'t|'re|'ve|'m|'ll|'d):  P?U*W+C? | P?U+W*C? | \p{N}{1,3} | ' ?[^\s\p{L}\p{N}]+[\r\n/]*' | \s*[\r\n]+ | \s+(?!\S) | \s+ */
static NOINLINE size_t o200k_general(const uint8_t *s, size_t i, size_t n) {
    size_t len0;
    uint8_t k0 = class_at(s, i, n, &len0);
    /* P? is greedy: with the character at i as P first, then without (a mark is both P and U, W) */
    size_t starts[2];
    int n_starts = 0;
    if (!(k0 & (L | N | NL)) && i + len0 < n) starts[n_starts++] = i + len0;
    starts[n_starts++] = i;
    for (int t = 0; t < n_starts; t++) { /* P?U*W+C? */
        size_t p = starts[t], after_w = 0, len;
        while (p < n) { /* U* takes its whole run, noting where its last W (Lm, Lo, M) ends */
            uint8_t k = class_at(s, p, n, &len);
            if (!(k & U)) break;
            if (k & W) after_w = p + len;
            p += len;
        }
        if (p < n && (class_at(s, p, n, &len) & W)) return optional_contraction(s, run_in(s, p, n, W), n);
        /* else U* gives characters back until W+ can take one: the run's last W, alone (what follows it is not W) */
        if (after_w) return optional_contraction(s, after_w, n);
    }
    for (int t = 0; t < n_starts; t++) { /* P?U+W*C? */
        size_t u = run_in(s, starts[t], n, U);
        if (u > starts[t]) return optional_contraction(s, run_in(s, u, n, W), n);
    }
    if (k0 & N) return run_in_max(s, i, n, N, 3);
    if (s[i] == ' ' && i + 1 < n) {
        size_t len;
        if (!(class_at(s, i + 1, n, &len) & (L | N | S))) return run_newlines(s, run_out(s, i + 1, n, L | N | S), n, 1);
    }
    if (!(k0 & (L | N | S))) return run_newlines(s, run_out(s, i, n, L | N | S), n, 1);
    return whitespace(s, i, n, 1);
}

/* ---- the scanners: ASCII first ----

   Each scanner below decides the pre-tokens that start with an ASCII character followed by an ASCII character (or
   the end), the bulk of prose and code, with the few tests its regex makes there, and hands everything else to its
   general twin above, which follows the regex character by character. subtle: the fast paths decide only on what
   they have seen to be ASCII; a run that stops at a byte of 0x80 or above goes on in the general helpers (letter_run,
   other_run, run_in), which take any character, and an ASCII start followed by any other byte goes to the general
   scanner, since that character (a letter, a mark, a digit of another script...) can change which alternative
   matches. tests/test_core_pretokenize.py holds them to the regexes. */

/* [^\s\p{L}\p{N}]+ from j (such a character) */
static HOT_INLINE size_t other_run(const uint8_t *s, size_t j, size_t n) {
    while (j < n && s[j] < 0x80 && !(classes[s[j]] & (L | N | S))) j++;
    return j < n && s[j] >= 0x80 ? run_out(s, j, n, L | N | S) : j;
}

/* \p{N}+ from j (a digit) */
static HOT_INLINE size_t digit_run(const uint8_t *s, size_t j, size_t n) {
    while (j < n && (uint8_t)(s[j] - '0') < 10) j++;
    return j < n && s[j] >= 0x80 ? run_in(s, j, n, N) : j;
}

/* \p{N}{1,3} from i (an ASCII digit): its end, or 0 where a byte of 0x80 and above (a digit of another script?)
   follows fewer than three */
static HOT_INLINE size_t three_digits(const uint8_t *s, size_t i, size_t n) {
    size_t j = i + 1, stop = n - i > 3 ? i + 3 : n;
    while (j < stop && (uint8_t)(s[j] - '0') < 10) j++;
    return j == i + 3 || j >= n || s[j] < 0x80 ? j : 0;
}

/* whitespace(s, i, n, newlines) where s[i] is ASCII whitespace: the run's ASCII characters a byte at a time */
static HOT_INLINE size_t ascii_whitespace(const uint8_t *s, size_t i, size_t n, int newlines) {
    size_t p = i, after_newline = 0;
    while (p < n && s[p] < 0x80 && (classes[s[p]] & S)) {
        if (classes[s[p]] & NL) after_newline = p + 1;
        p++;
    }
    if (p < n && s[p] >= 0x80) return whitespace(s, i, n, newlines); /* more whitespace, perhaps */
    if (newlines && after_newline) return after_newline;
    if (p == n || p == i + 1) return p;
    return p - 1; /* \s+(?!\S): all but the last, before something else */
}

static HOT_INLINE size_t next_gpt2(const uint8_t *s, size_t i, size_t n) {
    uint8_t c = s[i], k = classes[c];
    if (c >= 0x80 || c == '\'') return gpt2_general(s, i, n);
    if (k & L) return letter_run(s, i, n);
    size_t i1 = i + 1;
    if (i1 < n && s[i1] >= 0x80) return gpt2_general(s, i, n);
    uint8_t k1 = i1 < n ? classes[s[i1]] : S; /* the end: as if a space followed */
    if (c == ' ' && !(k1 & S)) return k1 & L ? letter_run(s, i1, n) : k1 & N ? digit_run(s, i1, n) : other_run(s, i1, n);
    if (k & N) return digit_run(s, i, n);
    if (!(k & S)) return other_run(s, i, n);
    return ascii_whitespace(s, i, n, 0);
}

static HOT_INLINE size_t next_cl100k(const uint8_t *s, size_t i, size_t n) {
    uint8_t c = s[i], k = classes[c];
    if (c >= 0x80 || c == '\'') return cl100k_general(s, i, n);
    if (k & L) return letter_run(s, i, n);
    size_t i1 = i + 1;
    if (i1 < n && s[i1] >= 0x80) return cl100k_general(s, i, n);
    uint8_t k1 = i1 < n ? classes[s[i1]] : 0;
    if (!(k & (N | NL)) && (k1 & L)) return letter_run(s, i1, n); /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    if (k & N) {
        size_t end = three_digits(s, i, n);
        return end ? end : cl100k_general(s, i, n);
    }
    if (c == ' ' && i1 < n && !(k1 & (L | N | S))) return run_newlines(s, other_run(s, i1, n), n, 0);
    if (!(k & S)) return run_newlines(s, other_run(s, i, n), n, 0);
    return ascii_whitespace(s, i, n, 1);
}

static HOT_INLINE size_t next_o200k(const uint8_t *s, size_t i, size_t n) {
    uint8_t c = s[i], k = classes[c];
    if (c >= 0x80) return o200k_general(s, i, n);
    size_t i1 = i + 1;
    /* P?U*W+C? and P?U+W*C? over ASCII: [A-Z]* then [a-z]*, at least one letter (P: not a letter, digit, \r or \n) */
    size_t j = !(k & (L | N | NL)) && i1 < n ? i1 : i;
    if (j < n && ascii_in(s[j], ASCII_LETTERS)) {
        size_t upper = ascii_run(s, j, n, ASCII_UPPER), lower = ascii_run(s, upper, n, ASCII_LOWER);
        /* subtle: only where an ASCII byte ended both runs: past it, a mark or a letter of another script may go on
           with either run, or make the regex backtrack otherwise */
        if (lower >= n || s[lower] < 0x80) return optional_contraction(s, lower, n);
        return o200k_general(s, i, n);
    }
    if (i1 < n && s[i1] >= 0x80) return o200k_general(s, i, n);
    uint8_t k1 = i1 < n ? classes[s[i1]] : 0;
    if (k & N) {
        size_t end = three_digits(s, i, n);
        return end ? end : o200k_general(s, i, n);
    }
    if (c == ' ' && i1 < n && !(k1 & (L | N | S))) return run_newlines(s, other_run(s, i1, n), n, 1);
    if (!(k & S)) return run_newlines(s, other_run(s, i, n), n, 1);
    return ascii_whitespace(s, i, n, 1);
}

int bpe_next_pretoken(int kind, const uint8_t *s, size_t n, size_t *pos, size_t *start, size_t *end) {
    size_t i = *pos;
    switch (kind) {
    case BPE_KIND_NONE: /* the whole text, when there is one */
        if (i >= n) return 0;
        *start = i;
        *end = *pos = n;
        return 1;
    case BPE_KIND_WHITESPACE: /* \S+ */
        i = run_in(s, i, n, S);
        if (i >= n) {
            *pos = n;
            return 0;
        }
        *start = i;
        *end = *pos = run_out(s, i, n, S);
        return 1;
    default:
        if (i >= n) return 0;
        *start = i;
        if (!ascii_fast)
            *end = kind == BPE_KIND_GPT2 ? gpt2_general(s, i, n) : kind == BPE_KIND_CL100K ? cl100k_general(s, i, n) : o200k_general(s, i, n);
        else
            *end = kind == BPE_KIND_GPT2 ? next_gpt2(s, i, n) : kind == BPE_KIND_CL100K ? next_cl100k(s, i, n) : next_o200k(s, i, n);
        *pos = *end;
        return 1;
    }
}

/* ---------------------------------------------------------------------------------------------
   special tokens */

/* the first place of token in s[0:n], or NULL: linear, like str.find, however repetitive the text */
static const uint8_t *search(const uint8_t *s, size_t n, const uint8_t *token, size_t len) {
#ifdef _WIN32
    for (size_t i = 0; len <= n && i <= n - len; i++)
        if (memcmp(s + i, token, len) == 0) return s + i;
    return NULL;
#else
    return memmem(s, n, token, len);
#endif
}

/* The first place at or after pos where a token of group g (those with one first byte) is, and the longest of them
   there (*which), or SIZE_MAX. Where that byte is rare, as '<' is in prose, from one place of it to the next (memchr
   reads 32 bytes at a time; memmem's two-way search ~1 byte per instruction), each place compared with every token of
   the group: one pass over the text for all of them (cl100k's five special tokens begin with '<'). A place whose next
   byte is no token's second costs a compare per token; subtle: one where it is may cost a token's length, and a text
   dense with those would make this quadratic in the tokens' length, so past a budget of them -- 16, and one more per
   64 bytes and the group's tokens' bytes passed, so that the compares stay within the bytes passed -- memmem takes
   over, token by token. */
static size_t find_group(const bpe_specials *sp, Py_ssize_t g, const uint8_t *s, size_t n, size_t pos, Py_ssize_t *which) {
    const Py_ssize_t *members = sp->members + sp->group_at[g];
    Py_ssize_t k = sp->group_at[g + 1] - sp->group_at[g];
    uint8_t first = sp->data[members[0]][0];
    for (size_t from = pos, missed = 0; from < n;) {
        if (missed > 16 + (from - pos) / (sp->group_bytes[g] + 64)) {
            size_t best = SIZE_MAX;
            for (Py_ssize_t j = 0; j < k; j++) { /* a tie keeps the earlier, longer token */
                const uint8_t *at = search(s + from, n - from, sp->data[members[j]], sp->len[members[j]]);
                if (at && (size_t)(at - s) < best) {
                    best = (size_t)(at - s);
                    *which = members[j];
                }
            }
            return best;
        }
        const uint8_t *at = memchr(s + from, first, n - from);
        if (!at) return SIZE_MAX;
        size_t i = (size_t)(at - s);
        for (Py_ssize_t j = 0; j < k; j++) {
            const uint8_t *token = sp->data[members[j]];
            size_t len = sp->len[members[j]];
            if (len > n - i || (len > 1 && at[1] != token[1])) continue;
            if (len <= 2 || memcmp(at + 2, token + 2, len - 2) == 0) {
                *which = members[j];
                return i;
            }
            missed++;
        }
        from = i + 1;
    }
    return SIZE_MAX;
}

int bpe_specials_init(bpe_specials *sp, PyObject *tokens) {
    memset(sp, 0, sizeof(*sp));
    if (!tokens || tokens == Py_None) return 0;
    PyObject *seq = PySequence_Fast(tokens, "special tokens must be a sequence of bytes");
    if (!seq) return -1;
    Py_ssize_t count = PySequence_Fast_GET_SIZE(seq);
    sp->owner = seq;
    sp->count = count;
    if (!count) return 0;
    sp->data = PyMem_Calloc((size_t)count, sizeof(*sp->data));
    sp->len = PyMem_Calloc((size_t)count, sizeof(*sp->len));
    sp->index = PyMem_Calloc((size_t)count, sizeof(*sp->index));
    sp->members = PyMem_Calloc((size_t)count, sizeof(*sp->members));
    sp->group_at = PyMem_Calloc((size_t)count + 1, sizeof(*sp->group_at));
    sp->group_bytes = PyMem_Calloc((size_t)count, sizeof(*sp->group_bytes));
    sp->found = PyMem_Calloc((size_t)count, sizeof(*sp->found));
    sp->found_which = PyMem_Calloc((size_t)count, sizeof(*sp->found_which));
    if (!sp->data || !sp->len || !sp->index || !sp->members || !sp->group_at || !sp->group_bytes || !sp->found || !sp->found_which) {
        PyErr_NoMemory();
        bpe_specials_free(sp);
        return -1;
    }
    for (Py_ssize_t t = 0; t < count; t++) {
        PyObject *token = PySequence_Fast_GET_ITEM(seq, t);
        if (!PyBytes_Check(token) || PyBytes_GET_SIZE(token) == 0) {
            PyErr_SetString(PyExc_TypeError, "special tokens must be non-empty bytes");
            bpe_specials_free(sp);
            return -1;
        }
        /* insertion sort, longest first; equal lengths keep their order (two equal-length tokens never match at one place) */
        size_t len = (size_t)PyBytes_GET_SIZE(token);
        Py_ssize_t at = t;
        while (at > 0 && sp->len[at - 1] < len) {
            sp->data[at] = sp->data[at - 1];
            sp->len[at] = sp->len[at - 1];
            sp->index[at] = sp->index[at - 1];
            at--;
        }
        sp->data[at] = (const uint8_t *)PyBytes_AS_STRING(token);
        sp->len[at] = len;
        sp->index[at] = t;
    }
    /* grouped by first byte, each group longest first (the order above): a group begins at its longest token */
    Py_ssize_t placed = 0;
    for (Py_ssize_t t = 0; t < count; t++) {
        int grouped = 0;
        for (Py_ssize_t j = 0; j < placed && !grouped; j++) grouped = sp->data[sp->members[j]][0] == sp->data[t][0];
        if (grouped) continue;
        for (Py_ssize_t u = t; u < count; u++)
            if (sp->data[u][0] == sp->data[t][0]) {
                sp->members[placed++] = u;
                sp->group_bytes[sp->groups] += sp->len[u];
            }
        sp->group_at[++sp->groups] = placed;
    }
    return 0;
}

void bpe_specials_free(bpe_specials *sp) {
    PyMem_Free(sp->data);
    PyMem_Free(sp->len);
    PyMem_Free(sp->index);
    PyMem_Free(sp->members);
    PyMem_Free(sp->group_at);
    PyMem_Free(sp->group_bytes);
    PyMem_Free(sp->found);
    PyMem_Free(sp->found_which);
    Py_CLEAR(sp->owner);
    memset(sp, 0, sizeof(*sp));
}

void bpe_specials_reset(bpe_specials *sp, const uint8_t *s, size_t n) {
    for (Py_ssize_t g = 0; g < sp->groups; g++) sp->found[g] = find_group(sp, g, s, n, 0, &sp->found_which[g]);
}

int bpe_specials_next(bpe_specials *sp, const uint8_t *s, size_t n, size_t pos, size_t *start, Py_ssize_t *which) {
    size_t best = SIZE_MAX;
    Py_ssize_t chosen = -1;
    for (Py_ssize_t g = 0; g < sp->groups; g++) {
        if (sp->found[g] < pos) sp->found[g] = find_group(sp, g, s, n, pos, &sp->found_which[g]); /* passed over: look again */
        if (sp->found[g] < best) { /* two groups never meet at one place: their first bytes differ */
            best = sp->found[g];
            chosen = sp->found_which[g];
        }
    }
    if (chosen < 0) return 0;
    *start = best;
    *which = chosen;
    return 1;
}

/* ---------------------------------------------------------------------------------------------
   Python: pre-tokens in order, and counting them */

static int check_kind(int kind) {
    if (kind < 0 || kind >= BPE_KINDS) {
        PyErr_Format(PyExc_ValueError, "unknown pre-tokenizer kind %d", kind);
        return -1;
    }
    return 0;
}

/* pretokens(data, kind, special_tokens=()) -> list of bytes: the pre-tokens in order, each special token kept whole */
static PyObject *pretokens(PyObject *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "kind", "special_tokens", NULL};
    Py_buffer buffer;
    int kind;
    PyObject *tokens = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*i|O", names, &buffer, &kind, &tokens)) return NULL;
    bpe_specials sp;
    PyObject *out = NULL;
    bpe_span *spans = NULL;
    if (check_kind(kind) < 0 || bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    out = PyList_New(0);
    if (!out) goto done;
    const uint8_t *s = buffer.buf;
    size_t n = (size_t)buffer.len, pos = 0;
    static char no_table[64]; /* the keys are made and their "slots" asked for, all here: nothing is looked up */
    bpe_hashkey key;
    bpe_key_init(&key, 0, 0);
    bpe_chunk_table t = {s + n, &key, no_table, 0, 0};
    spans = PyMem_Malloc(BPE_CHUNK_ROOM * sizeof(bpe_span));
    if (!spans) {
        Py_CLEAR(out);
        PyErr_NoMemory();
        goto done;
    }
    bpe_specials_reset(&sp, s, n);
    while (pos <= n) {
        size_t cut = n;
        Py_ssize_t which = -1;
        if (bpe_specials_next(&sp, s, n, pos, &cut, &which) == 0) cut = n;
        /* the chunked scanner the encoder and the counter use (the blocks of 64 bytes, and the scanners above) */
        while (pos < cut) {
            size_t at = 0;
            size_t got = bpe_fill_spans(kind, s + pos, cut - pos, &at, spans, &t);
            for (size_t k = 0; k < got; k++) {
                PyObject *piece = PyBytes_FromStringAndSize((const char *)spans[k].p, (Py_ssize_t)spans[k].len);
                if (!piece || PyList_Append(out, piece) < 0) {
                    Py_XDECREF(piece);
                    Py_CLEAR(out);
                    goto done;
                }
                Py_DECREF(piece);
            }
            pos += at;
        }
        if (which < 0) break;
        PyObject *special = PyBytes_FromStringAndSize((const char *)s + cut, (Py_ssize_t)sp.len[which]);
        if (!special || PyList_Append(out, special) < 0) {
            Py_XDECREF(special);
            Py_CLEAR(out);
            goto done;
        }
        Py_DECREF(special);
        pos = cut + sp.len[which];
    }
done:
    PyMem_Free(spans);
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
    return out;
}

/* ---------------------------------------------------------------------------------------------
   pre-tokens a chunk at a time, keyed for a table (the counter below, encode.c's cache)

   Counting and encoding both look each pre-token up in a table of megabytes, at random: they wait on
   memory. So the scanner runs ahead by a chunk: it finds BPE_CHUNK pre-tokens (or a few more), makes each
   one's block and hash, and asks for its table slot (a prefetch); the consumer then finds the slots
   already on their way. One loop per scanner, so that each is inlined into its own. */

/* A key of at most BPE_BLOCK_MAX bytes as its block (bpe_block_of): k0 = bytes 0-7, k1 = bytes 8-14, zero-padded, its
   length in k1's top byte. Two unaligned loads where the text goes on for 16 bytes (limit is its end), masked to the
   key's length; else copied. */
static HOT_INLINE void key_words(const uint8_t *s, size_t len, const uint8_t *limit, uint64_t *k0, uint64_t *k1) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (limit - s >= 16) {
        uint64_t w0, w1;
        memcpy(&w0, s, 8);
        memcpy(&w1, s + 8, 8);
        if (len < 8) { /* the first len bytes are the low ones */
            *k0 = w0 & ((1ULL << (8 * len)) - 1);
            *k1 = (uint64_t)len << 56;
        } else {
            *k0 = w0;
            *k1 = (w1 & ((1ULL << (8 * (len - 8))) - 1)) | (uint64_t)len << 56;
        }
        return;
    }
#endif
    bpe_block_of(s, len, k0, k1);
}

#if BPE_SSE2 && (defined(__GNUC__) || defined(__clang__))
#define BPE_MASKS 1
/* ---- the mask scanner: 64 bytes of ASCII at a time ----

   A pre-token of prose is ~4 bytes, and deciding each in turn (next_gpt2 and its twins) means a branch on what kind
   it is, which the processor guesses wrong about one time in three. Here the starts of all the pre-tokens in 64
   bytes are found together, as the bits of one word: each class of byte is a 64-bit mask (16 bytes per SSE2
   instruction), and each regex's alternatives become shifts, ands and an addition over the masks (block_starts).
   A block begins where a pre-token begins (the last start of the block before), so nothing before it matters: a
   match depends only on the text from where it starts. What a block cannot decide -- a whitespace run or a
   contraction that reaches its end, or a byte of 0x80 and above -- is left to the next block, or to the scanners
   above, which take over for one pre-token where a block decides none. */

typedef struct {
    uint64_t high, letter, upper, lower, digit, space, white, newline, quote, slash;
} ascii_masks;

static HOT_INLINE uint64_t bits16(__m128i x) { return (uint64_t)(unsigned)_mm_movemask_epi8(x); }

/* the bytes of v from lo to hi: v + (0x80 - lo) is below -128 + (hi - lo + 1) as a signed byte exactly for those
   (a byte of 0x80 and above may land there too: callers keep only the bytes before the first of those) */
static HOT_INLINE __m128i in_range(__m128i v, char lo, char hi) {
    return _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8((char)(0x80 - lo))), _mm_set1_epi8((char)(-128 + (hi - lo + 1))));
}

/* the classes of p[0:64], bit i for p[i]: ASCII's letters, digits and \s as regex has them (fill_tables checks it) */
static HOT_INLINE ascii_masks classify(const uint8_t *p, int kind) {
    ascii_masks m = {0};
    for (int q = 0; q < 4; q++) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + 16 * q));
        int at = 16 * q;
        m.high |= bits16(v) << at;
        if (kind == BPE_KIND_O200K) {
            m.upper |= bits16(in_range(v, 'A', 'Z')) << at;
            m.lower |= bits16(in_range(v, 'a', 'z')) << at;
            m.slash |= bits16(_mm_cmpeq_epi8(v, _mm_set1_epi8('/'))) << at;
        } else {
            m.letter |= bits16(in_range(_mm_or_si128(v, _mm_set1_epi8(0x20)), 'a', 'z')) << at;
        }
        m.digit |= bits16(in_range(v, '0', '9')) << at;
        __m128i space = _mm_cmpeq_epi8(v, _mm_set1_epi8(' '));
        m.space |= bits16(space) << at;
        m.white |= bits16(_mm_or_si128(space, in_range(v, '\t', '\r'))) << at;
        if (kind != BPE_KIND_GPT2)
            m.newline |= bits16(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\r')))) << at;
        m.quote |= bits16(_mm_cmpeq_epi8(v, _mm_set1_epi8('\''))) << at;
    }
    if (kind == BPE_KIND_O200K) m.letter = m.upper | m.lower;
    return m;
}

/* seed's bits carried down (toward bit 0) through the runs of within that hold them */
static HOT_INLINE uint64_t smear_down(uint64_t seed, uint64_t within) {
    for (int shift = 1; shift < 64; shift *= 2) {
        seed |= (seed >> shift) & within;
        within &= within >> shift;
    }
    return seed;
}

/* the length of the contraction whose letters are a, b ('s: 2, 'll: 3), or 0; case-insensitive but for GPT-2's */
static HOT_INLINE unsigned contraction_length(int kind, uint8_t a, uint8_t b) {
    if (kind != BPE_KIND_GPT2) { /* (?i:...): only ASCII letters fold to ASCII here (ſ is not ASCII, nor K's Kelvin sign) */
        a |= 0x20;
        b |= 0x20;
    }
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return 2;
    return (a == 'l' && b == 'l') || ((a == 'v' || a == 'r') && b == 'e') ? 3 : 0;
}

/* The starts of the pre-tokens in p[0:64] (bit i: one starts at p[i]), where a pre-token starts at p[0] and the piece
   has `avail` bytes from p: those the block decides, up to its last one (the highest bit), whose end it may not know.
   *plain: where the bytes of 0x80 and above in the block end (0: none), for the scanners above to go past.

   Each regex's alternatives over ASCII, as the rules for where a pre-token starts (masks: lt letters, dg digits, ws \s,
   sp the space, nl \r and \n, ot the rest; `x << 1` is "the byte before is x"):
   - gpt2 (' ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+' take one space before them): a run of lt, dg or ot starts one unless a
     space is before it; a run of ws starts one, and so does its last character (\s+(?!\S) leaves it to what follows,
     which takes it if it is a space).
   - cl100k, o200k: an other-run takes the \r and \n after it ([\r\n]*; o200k's [\r\n/]*: the slashes too), one
     addition carrying each such newline through its run (taken). A letter run takes one character before it that
     begins a pre-token and is not \r, \n, a letter or a digit: whitespace (which always begins one before a letter) or
     other that begins one (no space or other before it). Digits start in threes from the start of their run. A run
     of whitespace starts one; so does what follows its last newline (\s*[\r\n]+), and the last character of that
     (\s+(?!\S)), found by carrying the run's end down through the whitespace that is not a newline (tail).
     o200k's letters: [A-Z]*[a-z]* is a word, so an upper-case letter after a lower-case one starts one.
   - contractions: cl100k's and GPT-2's begin a pre-token where a quote does; o200k's end the word before them.
   A whitespace run that reaches the end of what the block sees, or a quote too near it to see its letters, is left
   to the next block (the starts after it are dropped). tests/test_core_pretokenize.py holds this to the regexes. */
static HOT_INLINE uint64_t block_starts(int kind, const uint8_t *p, size_t avail, unsigned *plain) {
    ascii_masks m = classify(p, kind);
    unsigned seen = m.high ? (unsigned)__builtin_ctzll(m.high) : 64;
    *plain = m.high ? 64 - (unsigned)__builtin_clzll(m.high) : 0;
    if (avail < seen) seen = (unsigned)avail;
    if (seen < 2) return 0;
    uint64_t valid = seen == 64 ? ~0ULL : (1ULL << seen) - 1;
    uint64_t lt = m.letter & valid, dg = m.digit & valid, ws = m.white & valid, sp = m.space & valid;
    uint64_t ot = valid & ~(lt | dg | ws);
    uint64_t starts, white;
    if (kind == BPE_KIND_GPT2) {
        white = ws;
        starts = ((lt & ~(lt << 1)) | (dg & ~(dg << 1)) | (ot & ~(ot << 1))) & ~(sp << 1);
        starts |= (ws & ~(ws << 1)) | (ws & ~(ws >> 1));
    } else {
        uint64_t nl = m.newline & valid;
        uint64_t trail = kind == BPE_KIND_O200K ? nl | (m.slash & valid) : nl;
        uint64_t seed = nl & (ot << 1);
        uint64_t taken = (((trail + seed) ^ trail) & trail) | seed; /* subtle: | seed: a second seed in a run adds no carry */
        white = ws & ~taken;
        uint64_t inner = white & ~nl, ends = white & ~(white >> 1);
        uint64_t tail = smear_down(ends & inner, inner);
        uint64_t other = ot & ~taken;
        uint64_t ostart = other & ~(other << 1) & ~(sp << 1);
        uint64_t go_on = lt << 1; /* a letter after a letter goes on with its word */
        if (kind == BPE_KIND_O200K) go_on &= ~(m.upper & (m.lower << 1));
        uint64_t digits = dg & ~(dg << 1), three = dg & (dg << 1) & (dg << 2);
        for (uint64_t next = digits; (next = (next << 3) & three);) digits |= next;
        starts = (lt & ~go_on & ~((inner | ostart) << 1)) | digits | ostart;
        starts |= (white & ~(white << 1)) | (tail & ~(tail << 1)) | (ends & inner);
    }
    starts &= valid;
    if (kind == BPE_KIND_O200K) { /* a contraction after a word is the word's */
        uint64_t quotes = m.quote & valid & (lt << 1);
        unsigned after = 64;
        while (quotes) {
            unsigned j = (unsigned)__builtin_ctzll(quotes);
            quotes &= quotes - 1;
            if (j == after) continue; /* a quote just after a contraction begins a pre-token: C? is taken once */
            if (j + 3 >= seen) {
                starts &= (1ULL << j) - 1;
                break;
            }
            unsigned k = contraction_length(kind, p[j + 1], p[j + 2]);
            if (k) {
                starts = (starts & ~(((1ULL << k) - 1) << j)) | 1ULL << (j + k);
                after = j + k;
            }
        }
    } else { /* a quote that begins a pre-token, then a contraction's letters: the contraction alone */
        uint64_t quotes = m.quote & starts;
        while (quotes) {
            unsigned i = (unsigned)__builtin_ctzll(quotes);
            quotes &= quotes - 1;
            if (i + 3 >= seen) {
                starts &= (2ULL << i) - 1;
                break;
            }
            unsigned k = contraction_length(kind, p[i + 1], p[i + 2]);
            if (k) starts = (starts & ~(((1ULL << (k - 1)) - 1) << (i + 1))) | 1ULL << (i + k);
        }
    }
    if ((white >> (seen - 1)) & 1) { /* a whitespace run to the end: keep its start, nothing after */
        unsigned run = 63 - (unsigned)__builtin_clzll(white & ~(white << 1) & valid);
        starts &= (2ULL << run) - 1;
    }
    return starts;
}

/* a key of up to BPE_BLOCK_MAX bytes at p (16 readable) as its block: len bytes of p, zeros, its length last. A longer
   one gets bytes no block has (its last byte 16 or more), so that it matches no slot */
static HOT_INLINE __m128i block_at(const uint8_t *p, size_t len) {
    static const uint8_t ones[32] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF};
    size_t kept = len < 16 ? len : 16;
    __m128i keep = _mm_loadu_si128((const __m128i *)(ones + 16 - kept));
    return _mm_or_si128(_mm_and_si128(_mm_loadu_si128((const __m128i *)p), keep), _mm_slli_si128(_mm_cvtsi32_si128((int)(len < 255 ? len : 255)), 15));
}
#else
#define BPE_MASKS 0
#endif

/* a span's key and hash: a key of up to BPE_BLOCK_MAX bytes (one too) as its block and the block's hash; a longer one
   a key no block has (k1's last byte 0xFF), its hash unused */
static HOT_INLINE void key_span(bpe_span *span, const uint8_t *limit, int aes, const bpe_chunk_table *t, const void *keys) {
    if (span->len <= BPE_BLOCK_MAX) {
        key_words(span->p, span->len, limit, &span->k0, &span->k1);
#if BPE_HASH_AES
        span->hash = aes ? bpe_aes_block(span->k0, span->k1, (const bpe_aes_keys *)keys) : bpe_hash_block(span->k0, span->k1, t->key);
#else
        span->hash = bpe_hash_block(span->k0, span->k1, t->key);
#endif
    } else {
        span->k0 = 0;
        span->k1 = UINT64_MAX;
        span->hash = 0;
    }
}

/* a chunk of the pre-tokens of s[*at:n] into spans, with one scanner and one hash: each call below has constant
   arguments, so that each of the loops is compiled on its own with its scanner inlined */
static HOT_INLINE size_t fill_loop(int kind, int fast, int aes, const uint8_t *s, size_t n, size_t *at, bpe_span *spans,
                                   const bpe_chunk_table *t) {
    size_t count = 0, pos = *at, plain_until = 0;
    const uint8_t *limit = t->limit;
    const char *table = t->table;
    size_t mask = t->mask, stride = t->stride;
#if BPE_HASH_AES
    bpe_aes_keys keys = bpe_aes_keys_of(t->key);
    const void *aes_keys = &keys;
#else
    const void *aes_keys = NULL;
#endif
    while (count < BPE_CHUNK && pos < n) {
#if BPE_MASKS
        /* a block of 64 bytes (and 16 more to read keys from): its pre-tokens, each one's block, hash and slot asked for */
        if (fast && pos >= plain_until && limit - (s + pos) >= 80) {
            unsigned plain;
            uint64_t starts = block_starts(kind, s + pos, n - pos, &plain);
            if (starts > 1) {
                const uint8_t *base = s + pos;
                unsigned from = 0;
                uint64_t rest = starts & (starts - 1);
                while (rest) { /* at most 63: the chunk has room for a whole block past BPE_CHUNK */
                    unsigned to = (unsigned)__builtin_ctzll(rest);
                    rest &= rest - 1;
                    bpe_span *span = &spans[count++];
                    size_t len = to - from;
                    span->p = base + from;
                    span->len = len;
                    __m128i block = block_at(base + from, len);
                    _mm_storeu_si128((__m128i *)&span->k0, block);
#if BPE_HASH_AES
                    span->hash = aes ? bpe_aes_vector(block, &keys) : bpe_hash_block(span->k0, span->k1, t->key);
#else
                    span->hash = bpe_hash_block(span->k0, span->k1, t->key);
#endif
                    __builtin_prefetch(table + (span->hash & mask) * stride, 1, 3);
                    from = to;
                }
                pos += from;
                continue;
            }
            /* none decided: one pre-token by the scanner, and no block again before the bytes of 0x80 and above are passed */
            plain_until = pos + plain;
        }
#endif
        size_t end;
        if (kind == BPE_KIND_GPT2)
            end = fast ? next_gpt2(s, pos, n) : gpt2_general(s, pos, n);
        else if (kind == BPE_KIND_CL100K)
            end = fast ? next_cl100k(s, pos, n) : cl100k_general(s, pos, n);
        else
            end = fast ? next_o200k(s, pos, n) : o200k_general(s, pos, n);
        bpe_span *span = &spans[count++];
        span->p = s + pos;
        span->len = end - pos;
        key_span(span, limit, aes, t, aes_keys);
        __builtin_prefetch(table + (span->hash & mask) * stride, 1, 3);
        pos = end;
    }
    *at = pos;
    return count;
}

#define FILL(kind)                                                                                      \
    return !ascii_fast ? fill_loop(kind, 0, t->key->use_aes, s, n, at, spans, t)                         \
           : t->key->use_aes ? fill_loop(kind, 1, 1, s, n, at, spans, t) : fill_loop(kind, 1, 0, s, n, at, spans, t)

size_t bpe_fill_spans(int kind, const uint8_t *s, size_t n, size_t *at, bpe_span *spans, const bpe_chunk_table *t) {
    switch (kind) {
    case BPE_KIND_GPT2:
        FILL(BPE_KIND_GPT2);
    case BPE_KIND_CL100K:
        FILL(BPE_KIND_CL100K);
    case BPE_KIND_O200K:
        FILL(BPE_KIND_O200K);
    default: { /* none, whitespace: rare enough for the general path */
        size_t count = 0, start, end;
        while (count < BPE_CHUNK && bpe_next_pretoken(kind, s, n, at, &start, &end)) {
            bpe_span *span = &spans[count++];
            span->p = s + start;
            span->len = end - start;
            key_span(span, t->limit, 0, t, NULL);
        }
        return count;
    }
    }
}

/* PreTokenCounter(kind, seed): counts of unique pre-tokens over many calls of add(), as Tally keeps them.

   One open-addressing table (linear probing, at most half full) whose slots hold keys of up to 15 bytes themselves
   (all but ~0.5 % of the pre-tokens of prose) as the block hash.h hashes, so counting one is a compare of two words in
   one slot, prefetched a chunk before (bpe_fill_spans); longer keys live in an arena. One-byte pre-tokens (a third of
   them: spaces, newlines, punctuation) are counted in a plain array. */
#define SHORT_KEY BPE_BLOCK_MAX
#define FIRST_SLOTS 4096

typedef struct {
    uint64_t k0, k1; /* the key's block (bpe_block_of) when it has at most SHORT_KEY bytes; else k0 is its offset in the arena, k1 0 */
    uint64_t count;
    uint32_t len;   /* 0: the slot is empty (a pre-token is never empty) */
    uint32_t check; /* the hash's top half: a long key is compared byte by byte only when this matches */
} count_slot;

typedef struct {
    PyObject_HEAD int kind;
    bpe_hashkey key;
    count_slot *table; /* mask + 1 slots */
    size_t mask, used;
    uint8_t *arena; /* the keys longer than SHORT_KEY */
    size_t arena_used, arena_cap;
    uint64_t single[256]; /* the one-byte pre-tokens' counts */
    size_t longest;       /* the most slots one pre-token's lookup has read: a few, unless its keys collide (the tests) */
    bpe_span spans[BPE_CHUNK_ROOM];
} Counter;

static uint64_t slot_hash(const Counter *self, const count_slot *slot) {
    return slot->len <= SHORT_KEY ? bpe_hash_block(slot->k0, slot->k1, &self->key) : bpe_hash(self->arena + slot->k0, slot->len, &self->key);
}

static count_slot *new_table(size_t slots) { return bpe_zeroed_table(slots * sizeof(count_slot)); }

static int grow_table(Counter *self) {
    if (self->mask >= SIZE_MAX / 2 / sizeof(count_slot)) return -1;
    size_t size = (self->mask + 1) * 2;
    count_slot *table = new_table(size);
    if (!table) return -1;
    for (size_t k = 0; k <= self->mask; k++) {
        const count_slot *slot = &self->table[k];
        if (!slot->len) continue;
        size_t i = (size_t)slot_hash(self, slot) & (size - 1);
        while (table[i].len) i = (i + 1) & (size - 1);
        table[i] = *slot;
    }
    free(self->table);
    self->table = table;
    self->mask = size - 1;
    return 0;
}

/* a new key (the span's; hash: its hash) in an empty slot */
static int insert(Counter *self, const bpe_span *span, uint64_t hash) {
    if ((self->used + 1) * 2 > self->mask + 1 && grow_table(self) < 0) return -1;
    uint64_t k0 = span->k0, k1 = span->k1;
    if (span->len > SHORT_KEY) { /* into the arena */
        if (span->len > self->arena_cap - self->arena_used) {
            size_t cap = self->arena_cap ? self->arena_cap : 1 << 16;
            while (span->len > cap - self->arena_used) {
                if (cap > SIZE_MAX / 2) return -1;
                cap *= 2;
            }
            uint8_t *arena = realloc(self->arena, cap);
            if (!arena) return -1;
            self->arena = arena;
            self->arena_cap = cap;
        }
        memcpy(self->arena + self->arena_used, span->p, span->len);
        k0 = self->arena_used;
        k1 = 0;
        self->arena_used += span->len;
    }
    size_t i = (size_t)hash & self->mask;
    while (self->table[i].len) i = (i + 1) & self->mask;
    self->table[i] = (count_slot){k0, k1, 1, (uint32_t)span->len, (uint32_t)(hash >> 32)};
    self->used++;
    return 0;
}

/* count one pre-token of at least two bytes in the table */
static HOT_INLINE int count_span(Counter *self, const bpe_span *span) {
    int is_short = span->len <= SHORT_KEY;
    uint64_t hash = is_short ? span->hash : bpe_hash(span->p, span->len, &self->key);
    for (size_t i = (size_t)hash & self->mask, probes = 1;; i = (i + 1) & self->mask, probes++) {
        count_slot *slot = &self->table[i];
        if (probes > self->longest) self->longest = probes;
        if (!slot->len) return insert(self, span, hash);
        /* a short key's block holds its length: the two words decide (a long key's slot has k1 0, never a block's) */
        if (is_short ? slot->k0 == span->k0 && slot->k1 == span->k1
                     : slot->len == span->len && slot->check == (uint32_t)(hash >> 32) && memcmp(self->arena + slot->k0, span->p, span->len) == 0) {
            slot->count++; /* subtle: cannot pass 2**64: that many pre-tokens would be far more text than any disk holds */
            return 0;
        }
    }
}

static int counter_init(Counter *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"kind", "seed", NULL};
    int kind;
    unsigned long long seed;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "iK", names, &kind, &seed)) return -1;
    if (check_kind(kind) < 0) return -1;
    free(self->table);
    free(self->arena);
    memset((char *)self + offsetof(Counter, kind), 0, sizeof(Counter) - offsetof(Counter, kind));
    self->table = new_table(FIRST_SLOTS);
    if (!self->table) {
        PyErr_NoMemory();
        return -1;
    }
    self->mask = FIRST_SLOTS - 1;
    self->kind = kind;
    bpe_key_init(&self->key, seed, 0);
    return 0;
}

static void counter_dealloc(Counter *self) {
    free(self->table);
    free(self->arena);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* count the pre-tokens of s[0:n], a piece of a text that ends at limit: a chunk found and keyed, then counted */
static int count_piece(Counter *self, const uint8_t *s, size_t n, const uint8_t *limit) {
    size_t pos = 0;
    while (pos < n) {
        bpe_chunk_table t = {limit, &self->key, (const char *)self->table, self->mask, sizeof(count_slot)};
        size_t count = bpe_fill_spans(self->kind, s, n, &pos, self->spans, &t);
        for (size_t k = 0; k < count; k++) {
            const bpe_span *span = &self->spans[k];
            if (span->len == 1)
                self->single[span->p[0]]++;
            else if (count_span(self, span) < 0)
                return -1;
        }
    }
    return 0;
}

/* count a document: its pieces between special tokens, or each line of them; -1 when out of memory */
static int count_document(Counter *self, bpe_specials *sp, const uint8_t *s, size_t n, int split_lines) {
    const uint8_t *limit = s + n;
    size_t pos = 0;
    bpe_specials_reset(sp, s, n);
    for (;;) {
        size_t cut = n;
        Py_ssize_t which = -1;
        if (!bpe_specials_next(sp, s, n, pos, &cut, &which)) cut = n;
        if (split_lines) {
            while (pos < cut) {
                const uint8_t *newline = memchr(s + pos, '\n', cut - pos);
                size_t line_end = newline ? (size_t)(newline - s) + 1 : cut;
                if (count_piece(self, s + pos, line_end - pos, limit) < 0) return -1;
                pos = line_end;
            }
        } else if (count_piece(self, s + pos, cut - pos, limit) < 0) {
            return -1;
        }
        if (which < 0) break;
        pos = cut + sp->len[which];
    }
    return 0;
}

/* add(data, special_tokens=(), split_lines=False): count a document's pre-tokens (special tokens cut out, not counted;
   with split_lines each line, newline kept, on its own) */
static PyObject *counter_add(Counter *self, PyObject *args, PyObject *kwargs) {
    static char *names[] = {"data", "special_tokens", "split_lines", NULL};
    Py_buffer buffer;
    PyObject *tokens = NULL;
    int split_lines = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "y*|Op", names, &buffer, &tokens, &split_lines)) return NULL;
    bpe_specials sp;
    PyObject *result = NULL;
    if (bpe_specials_init(&sp, tokens) < 0) goto done_buffer;
    if (count_document(self, &sp, buffer.buf, (size_t)buffer.len, split_lines) < 0) {
        PyErr_NoMemory(); /* the counter is incomplete, and says so */
    } else {
        result = Py_NewRef(Py_None);
    }
    bpe_specials_free(&sp);
done_buffer:
    PyBuffer_Release(&buffer);
    return result;
}

/* counts() -> {pre-token bytes: count} */
static PyObject *counter_counts(Counter *self, PyObject *unused) {
    PyObject *out = PyDict_New();
    if (!out) return NULL;
    for (size_t k = 0; k <= self->mask + 256; k++) {
        uint8_t bytes[16], byte; /* a block */
        const uint8_t *key;
        size_t len;
        uint64_t count;
        if (k <= self->mask) {
            const count_slot *slot = &self->table[k];
            if (!slot->len) continue;
            len = slot->len;
            count = slot->count;
            if (len <= SHORT_KEY) {
                memcpy(bytes, &slot->k0, 8);
                memcpy(bytes + 8, &slot->k1, 8);
                key = bytes;
            } else {
                key = self->arena + slot->k0;
            }
        } else {
            byte = (uint8_t)(k - self->mask - 1);
            count = self->single[byte];
            if (!count) continue;
            key = &byte;
            len = 1;
        }
        PyObject *token = PyBytes_FromStringAndSize((const char *)key, (Py_ssize_t)len);
        PyObject *number = token ? PyLong_FromUnsignedLongLong(count) : NULL;
        if (!number || PyDict_SetItem(out, token, number) < 0) {
            Py_XDECREF(token);
            Py_XDECREF(number);
            Py_DECREF(out);
            return NULL;
        }
        Py_DECREF(token);
        Py_DECREF(number);
    }
    return out;
}

static Py_ssize_t counter_len(Counter *self) {
    Py_ssize_t n = (Py_ssize_t)self->used;
    for (int b = 0; b < 256; b++) n += self->single[b] != 0;
    return n;
}

static PyMethodDef counter_methods[] = {
    {"add", (PyCFunction)(void (*)(void))counter_add, METH_VARARGS | METH_KEYWORDS, "Count a document's pre-tokens."},
    {"counts", (PyCFunction)counter_counts, METH_NOARGS, "The counts so far, as a dict of bytes to int."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods counter_sequence = {.sq_length = (lenfunc)counter_len};

static PyMemberDef counter_members[] = {
    {"longest_probe", T_PYSSIZET, offsetof(Counter, longest), READONLY, "the most table slots one pre-token's lookup has read"},
    {NULL, 0, 0, 0, NULL},
};

static PyTypeObject CounterType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "bpe._core.PreTokenCounter",
    .tp_basicsize = sizeof(Counter),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PreTokenCounter(kind, seed): counts of unique pre-tokens, as pretokenize.Tally keeps them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)counter_init,
    .tp_dealloc = (destructor)counter_dealloc,
    .tp_methods = counter_methods,
    .tp_members = counter_members,
    .tp_as_sequence = &counter_sequence,
};

/* class_table() -> bytes: the class bits of every code point, for the test that compares them with regex */
static PyObject *class_table(PyObject *self, PyObject *unused) { return PyBytes_FromStringAndSize((const char *)classes, N_CODE_POINTS); }

static PyMethodDef functions[] = {
    {"pretokens", (PyCFunction)(void (*)(void))pretokens, METH_VARARGS | METH_KEYWORDS,
     "pretokens(data, kind, special_tokens=()): the pre-tokens of UTF-8 bytes in order, special tokens kept whole."},
    {"class_table", class_table, METH_NOARGS, "The class bits of every code point (unicode_classes.h)."},
    {NULL, NULL, 0, NULL},
};

int bpe_pretokenize_init(PyObject *module) {
    fill_tables();
    if (PyType_Ready(&CounterType) < 0) return -1;
    if (PyModule_AddObjectRef(module, "PreTokenCounter", (PyObject *)&CounterType) < 0) return -1;
    if (PyModule_AddFunctions(module, functions) < 0) return -1;
    if (PyModule_AddStringConstant(module, "REGEX_VERSION", BPE_REGEX_VERSION) < 0) return -1;
    static const char *kind_names[BPE_KINDS] = {"none", "gpt2", "cl100k", "o200k", "whitespace"};
    PyObject *kinds = PyDict_New();
    if (!kinds) return -1;
    for (int k = 0; k < BPE_KINDS; k++) {
        PyObject *value = PyLong_FromLong(k);
        if (!value || PyDict_SetItemString(kinds, kind_names[k], value) < 0) {
            Py_XDECREF(value);
            Py_DECREF(kinds);
            return -1;
        }
        Py_DECREF(value);
    }
    int failed = PyModule_AddObjectRef(module, "KINDS", kinds) < 0;
    Py_DECREF(kinds);
    return failed ? -1 : 0;
}
