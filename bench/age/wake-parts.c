// What the parts of an idle round cost on this machine, without Node.js: a wake-up from a sleep, a
// page of held memory read, a small kernel file read again (pread of /proc/loadavg, as the agent's
// kept descriptors do). Each round reads PAGES pages of a buffer mapped at the start, split into
// SYSCALLS+1 runs with one pread between two runs, then sleeps SLEEP_MS; prints the CPU (user+system,
// getrusage) a round took, over ROUNDS rounds. With this VM's DAMON monitor on (bench/damon.mjs) the
// price of a page grows with the sleep: `8000 0 100 100`, `8000 0 20 1000` and `8000 0 8 3000` took 364,
// 1,265 and 2,731 µs a round on, 283-320 µs at all three with the monitor paused (2026-12-04).
//   gcc -O2 -o /tmp/wake-parts bench/age/wake-parts.c
//   for a in "0 0" "2000 0" "0 150" "2000 150"; do /tmp/wake-parts $a 40 250; done
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double cpu_us(int user_only) {
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  double u = r.ru_utime.tv_sec * 1e6 + r.ru_utime.tv_usec;
  return user_only ? u : u + r.ru_stime.tv_sec * 1e6 + r.ru_stime.tv_usec;
}

int main(int argc, char **argv) {
  if (argc != 5) {
    fprintf(stderr, "usage: %s PAGES SYSCALLS ROUNDS SLEEP_MS\n", argv[0]);
    return 2;
  }
  int pages = atoi(argv[1]), syscalls = atoi(argv[2]), rounds = atoi(argv[3]), ms = atoi(argv[4]);
  char *mem = mmap(0, (size_t)(pages + 1) * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mem == MAP_FAILED) return 1;
  for (int i = 0; i < pages; i++) mem[(size_t)i * 4096] = 1;
  int fd = open("/proc/loadavg", O_RDONLY);
  if (fd < 0) return 1;
  char buf[256];
  volatile long sink = 0;
  struct timespec nap = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&nap, 0);
  double c0 = cpu_us(0), u0 = cpu_us(1);
  for (int r = 0; r < rounds; r++) {
    int run = syscalls ? pages / (syscalls + 1) + 1 : pages, p = 0;
    for (int s = 0; s <= syscalls; s++) {
      for (int k = 0; k < run && p < pages; k++, p++) sink += mem[(size_t)p * 4096 + (r * 64) % 4096];
      if (s < syscalls && pread(fd, buf, sizeof buf, 0) < 0) return 1;
    }
    nanosleep(&nap, 0);
  }
  printf("pages=%d syscalls=%d: %.1f us a round (user %.1f)\n", pages, syscalls, (cpu_us(0) - c0) / rounds,
         (cpu_us(1) - u0) / rounds);
  return 0;
}
