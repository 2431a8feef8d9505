/*
 * What the bench programs share: the monotonic clock, strict whole-number options, and the latency
 * histogram whose [low_ns, high_ns, count] buckets histogram.ts reads, so probe.c and appender.c
 * cannot drift apart in bucket layout (log-linear, 256 sub-buckets per power of two: <0.8% relative
 * error). Header-only: build.ts compiles one .c at a time and hashes this file into its cache key.
 */
#ifndef BENCH_H
#define BENCH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define SUB_BITS 8
#define SUB_COUNT (1 << SUB_BITS)
#define HALF_SUB (SUB_COUNT / 2)
#define NBUCKETS (64 * HALF_SUB + SUB_COUNT)

static inline uint64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A bad number ends the run (exit 2) rather than measuring with a setting nobody asked for. */
static inline int int_arg(const char *prog, const char *name, const char *v, int lo, int hi) {
  char *end;
  long n = strtol(v, &end, 10);
  if (*end || n < lo || n > hi) {
    fprintf(stderr, "%s: %s: a whole number from %d to %d, not %s\n", prog, name, lo, hi, v);
    exit(2);
  }
  return (int)n;
}

static inline int bucket_of(uint64_t v) {
  if (v < SUB_COUNT) return (int)v;
  int e = 63 - __builtin_clzll(v) - (SUB_BITS - 1);
  return e * HALF_SUB + (int)(v >> e);
}

static inline void bucket_range(int idx, uint64_t *lo, uint64_t *hi) {
  if (idx < SUB_COUNT) {
    *lo = *hi = (uint64_t)idx;
    return;
  }
  int e = idx / HALF_SUB - 1;
  uint64_t m = (uint64_t)(idx - e * HALF_SUB);
  *lo = m << e;
  *hi = *lo + (1ull << e) - 1;
}

/* The non-empty buckets as a JSON array body: [lo,hi,count],... */
static inline void print_buckets(const uint64_t *b) {
  int first = 1;
  for (int i = 0; i < NBUCKETS; i++) {
    if (!b[i]) continue;
    uint64_t lo, hi;
    bucket_range(i, &lo, &hi);
    printf("%s[%llu,%llu,%llu]", first ? "" : ",", (unsigned long long)lo, (unsigned long long)hi,
           (unsigned long long)b[i]);
    first = 0;
  }
}

#endif
