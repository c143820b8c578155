/* A binary min-heap of uint64_t items in an array the caller owns: the encoders' merge queues (encode.c for the
   byte-level family, spm.c for HuggingFace's BPE), each item a rank in its high bits and a position in its low bits,
   so that the smallest item is the lowest rank, leftmost. */
#ifndef BPE_MINHEAP_H
#define BPE_MINHEAP_H

#include <stddef.h>
#include <stdint.h>

/* item into heap[0:*size] (room for one more is the caller's) */
static inline void bpe_minheap_push(uint64_t *heap, size_t *size, uint64_t item) {
    size_t i = (*size)++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (heap[parent] <= item) break;
        heap[i] = heap[parent];
        i = parent;
    }
    heap[i] = item;
}

/* the smallest item of heap[0:*size] (not empty), taken out */
static inline uint64_t bpe_minheap_pop(uint64_t *heap, size_t *size) {
    uint64_t top = heap[0], item = heap[--(*size)];
    size_t i = 0, n = *size;
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= n) break;
        if (child + 1 < n && heap[child + 1] < heap[child]) child++;
        if (item <= heap[child]) break;
        heap[i] = heap[child];
        i = child;
    }
    if (n) heap[i] = item;
    return top;
}

#endif
