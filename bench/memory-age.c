// What makes memory a process has held for minutes dearer to touch on this machine: its physical pages
// or its mapping? bench/memory-age.mjs shows held memory costing more than fresh; this is the same
// measure without Node.js, with two more buffers (JavaScript cannot remap memory):
//   held    mapped once at the start
//   fresh   unmapped and mapped anew every minute
//   repaged given new pages every 5 minutes (MADV_DONTNEED, then written): same addresses
//   moved   moved to new addresses every 5 minutes (mremap): same pages, new page-table entries
// Every second one read from each page of each, in turn; the mean per minute, in ns of thread CPU time a
// page. On the 2-core VMs (PVM), 2026-12-04, two runs: held memory cost more than fresh in both (at
// 12-17 minutes 541-601 against 372-402 ns at 10:14-10:17 UTC; 224-253 against 86-175 at 10:38-10:43,
// during a CI run, but for one minute with fresh at 263). The renewed buffers disagreed: after their
// second renewal they cost what fresh memory cost in the first run (314-388 ns) and as much as held
// memory or more in the second (moved 252-287, repaged 196-225), so which of pages, page-table entries
// or addresses ages is not settled.
//   gcc -O2 -o /tmp/memory-age bench/memory-age.c && /tmp/memory-age [minutes]
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define SIZE (16u << 20)
#define PAGE 4096u
#define PAGES (SIZE / PAGE)
enum { HELD, FRESH, REPAGED, MOVED, N };
static const char *const name[N] = {"held", "fresh", "repaged", "moved"};

static double ns(clockid_t clock) {
  struct timespec t;
  clock_gettime(clock, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

static volatile unsigned long sink;

/** Thread CPU ns to read one byte of every page, each at another cache line. */
static double pass(const unsigned char *p) {
  double t0 = ns(CLOCK_THREAD_CPUTIME_ID);
  unsigned long s = 0;
  for (size_t i = 0; i < PAGES; i++) s += p[i * PAGE + (i * 64) % PAGE];
  sink = s;
  return ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/** Every cache line written, so every page is present. */
static void fill(unsigned char *p) {
  for (size_t o = 0; o < SIZE; o += 64) p[o] = (unsigned char)(o >> 6);
}

static unsigned char *mapped(void) {
  unsigned char *p = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    perror("mmap");
    exit(1);
  }
  fill(p);
  return p;
}

int main(int argc, char **argv) {
  int minutes = argc > 1 ? atoi(argv[1]) : 20;
  if (minutes < 1) {
    fprintf(stderr, "usage: %s [minutes ≥ 1]\n", argv[0]);
    return 2;
  }
  unsigned char *buf[N];
  for (int i = 0; i < N; i++) buf[i] = mapped();
  double start = ns(CLOCK_MONOTONIC);
  printf("one read a page of four %u MB buffers every second; mean per minute, ns of CPU a page\n", SIZE >> 20);
  for (int m = 0; m < minutes; m++) {
    munmap(buf[FRESH], SIZE);
    buf[FRESH] = mapped();
    if (m % 5 == 4) {
      madvise(buf[REPAGED], SIZE, MADV_DONTNEED);
      fill(buf[REPAGED]);
      void *to = mmap(NULL, SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      void *moved = to == MAP_FAILED ? MAP_FAILED : mremap(buf[MOVED], SIZE, SIZE, MREMAP_MAYMOVE | MREMAP_FIXED, to);
      if (moved == MAP_FAILED) {
        perror("mremap");
        return 1;
      }
      buf[MOVED] = moved;
    }
    double sum[N] = {0};
    for (int s = 0; s < 60; s++) {
      sleep(1);
      // In turn, so that none is always the first after the wake-up.
      for (int j = 0; j < N; j++) sum[(j + s) % N] += pass(buf[(j + s) % N]);
    }
    printf("%5.0f s:", (ns(CLOCK_MONOTONIC) - start) / 1e9);
    for (int i = 0; i < N; i++) printf(" %s %.0f", name[i], sum[i] / 60 / PAGES);
    printf("%s\n", m % 5 == 4 ? " (repaged and moved this minute)" : "");
    fflush(stdout);
  }
  return 0;
}
