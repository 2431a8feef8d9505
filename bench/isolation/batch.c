/*
 * Stream-operator-shaped batch load: one thread per CPU (by default), each owning a working set
 * larger than L2 and a share of L3, run in bursts like a Flink/Storm operator chewing through a
 * window of records: a burst (20-200 ms) of dependent random reads over the working set (a hash
 * join probing its table) interleaved with sequential read-modify-write passes (a window
 * aggregation), then a short pause (2-30 ms, waiting for the next network buffer). The point is to
 * evict a latency-sensitive neighbour's cache lines and take its cores in spikes, as real batch
 * jobs do, not to be a fair CPU hog.
 *
 *   batch [--threads N] [--ws-kib N] [--label TEXT]     runs until killed
 *
 * --ws-kib default: max(2 x L2, 2 x L3 / CPUs sharing L3), from sysfs, clamped to 1-64 MiB.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static long ws_bytes;

static long read_size_kib(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  long v = 0;
  char unit = 'K';
  if (fscanf(f, "%ld%c", &v, &unit) < 1) v = 0;
  fclose(f);
  if (unit == 'M') v *= 1024;
  return v;
}

/* CPUs sharing a cache, from its shared_cpu_list ("0-3,8-11"). */
static long count_cpu_list(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return 1;
  long n = 0, a, b;
  char sep;
  while (fscanf(f, "%ld", &a) == 1) {
    b = a;
    if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
      if (fscanf(f, "%ld", &b) != 1) b = a;
      if (fscanf(f, "%c", &sep) != 1) sep = 0;
    }
    n += b - a + 1;
    if (sep != ',') break;
  }
  fclose(f);
  return n > 0 ? n : 1;
}

static long default_ws_kib(void) {
  long l2 = 0, l3 = 0, l3_sharers = 1;
  char path[128];
  for (int i = 0; i < 8; i++) {
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    int level = 0;
    if (fscanf(f, "%d", &level) != 1) level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    long kib = read_size_kib(path);
    if (level == 2) l2 = kib;
    if (level == 3) {
      l3 = kib;
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
      l3_sharers = count_cpu_list(path);
    }
  }
  long ws = 2 * l2;
  if (2 * l3 / l3_sharers > ws) ws = 2 * l3 / l3_sharers;
  if (ws < 1024) ws = 1024;
  if (ws > 65536) ws = 65536;
  return ws;
}

static void *worker(void *arg) {
  uint64_t rnd = (uint64_t)(long)arg * 0x9E3779B97F4A7C15ull + 7;
  /* the working set: a chase table (8 bytes per slot) and window aggregates (4 bytes per slot) */
  long n = ws_bytes / 12;
  uint64_t *ws = malloc((size_t)n * sizeof(uint64_t));
  uint32_t *agg = calloc((size_t)n, sizeof(uint32_t));
  if (!ws || !agg) {
    perror("malloc working set");
    exit(1);
  }
  /* a random cyclic permutation (Sattolo), so the chase visits every line in cache-hostile order */
  for (long i = 0; i < n; i++) ws[i] = (uint64_t)i;
  for (long i = n - 1; i > 0; i--) {
    rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
    long j = (long)((rnd >> 33) % (uint64_t)i);
    uint64_t t = ws[i];
    ws[i] = ws[j];
    ws[j] = t;
  }
  volatile uint64_t sink = 0;
  uint64_t cur = 0;
  for (;;) {
    rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
    uint64_t burst_ns = (20 + (rnd >> 33) % 181) * 1000000ull;
    uint64_t until = now_ns() + burst_ns;
    while (now_ns() < until) {
      for (int k = 0; k < 4096; k++) cur = ws[cur]; /* probe the "hash table" */
      long start = (long)((rnd >> 17) % (uint64_t)n), len = n / 16;
      for (long i = 0; i < len; i++) { /* aggregate a window: read the records, update the state */
        long at = (start + i) % n;
        agg[at] += (uint32_t)ws[at] * 2654435761u;
      }
      rnd = rnd * 6364136223846793005ull + 1442695040888963407ull;
    }
    sink += cur + agg[cur % (uint64_t)n];
    struct timespec pause = {0, (long)((2 + (rnd >> 40) % 29) * 1000000)};
    nanosleep(&pause, NULL);
  }
  return NULL;
}

int main(int argc, char **argv) {
  long threads = sysconf(_SC_NPROCESSORS_ONLN);
  long ws_kib = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--threads")) threads = atol(argv[i + 1]);
    else if (!strcmp(argv[i], "--ws-kib")) ws_kib = atol(argv[i + 1]);
    else if (strcmp(argv[i], "--label")) {
      fprintf(stderr, "batch: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  if (ws_kib <= 0) ws_kib = default_ws_kib();
  if (threads < 1) threads = 1;
  ws_bytes = ws_kib * 1024;
  fprintf(stderr, "batch: %ld threads, working set %ld KiB each\n", threads, ws_kib);
  pthread_t t;
  for (long i = 0; i < threads; i++) {
    if (pthread_create(&t, NULL, worker, (void *)i)) {
      perror("pthread_create");
      return 1;
    }
  }
  for (;;) pause();
}
