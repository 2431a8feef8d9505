/*
 * Random-write batch load on the disk under test: what a Flink checkpoint, a shuffle spill or
 * `fio --rw=randwrite --direct=1` does to a disk Kafka shares. N threads each keep one O_DIRECT write
 * of --bs-kib in flight at a random aligned offset of one file (queue depth N). Direct I/O, not page
 * cache: cgroup v1's blkio sees only I/O a task issues itself (v1 has no cgroup writeback), and v2's io
 * controller charges it to the cgroup the same way, so both hierarchies can throttle it.
 *
 * The file is made in a directory of its own under --dir and written once in full first, so the
 * timed writes overwrite allocated blocks (no extent conversion in the filesystem's journal). "ready"
 * goes to stderr when it is; it runs until killed and removes its file on SIGTERM/SIGINT.
 *
 * --count-file: every 100 ms, "WRITES BYTES" completed so far replaces that file (write and rename), so
 * the bench can tell what the batch wrote during an arm: v1's blkio counters stay at zero on a disk
 * with no throttle rule, so the kernel cannot say it in the unisolated arm.
 *
 *   iobatch --dir DIR [--file-mib N] [--threads N] [--bs-kib N] [--count-file PATH] [--label TEXT]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static struct {
  const char *dir, *label;
  int file_mib, threads, bs_kib;
} opt = {NULL, "iobatch", 256, 4, 16};

static char workdir[4096], file[4200];
static const char *count_file;
static int fd = -1;
static uint64_t writes_done, bytes_done;

static void on_signal(int sig) {
  unlink(file);
  rmdir(workdir);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void fail(const char *what) {
  fprintf(stderr, "iobatch: %s: %s\n", what, strerror(errno));
  if (file[0]) unlink(file);
  if (workdir[0]) rmdir(workdir);
  exit(1);
}

static void *writer(void *arg) {
  uint64_t rnd = (uint64_t)(uintptr_t)arg * 0x9E3779B97F4A7C15ull + (uint64_t)time(NULL);
  size_t bs = (size_t)opt.bs_kib << 10;
  uint64_t blocks = ((uint64_t)opt.file_mib << 20) / bs;
  void *buf;
  if (posix_memalign(&buf, 4096, bs)) fail("posix_memalign");
  memset(buf, 0x5a, bs);
  for (;;) {
    rnd ^= rnd << 13;
    rnd ^= rnd >> 7;
    rnd ^= rnd << 17;
    if (pwrite(fd, buf, bs, (off_t)((rnd % blocks) * bs)) != (ssize_t)bs) fail("pwrite");
    __atomic_fetch_add(&writes_done, 1, __ATOMIC_RELAXED);
    __atomic_fetch_add(&bytes_done, bs, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void publish_counts(void) {
  char tmp[4200], line[64];
  snprintf(tmp, sizeof tmp, "%s.tmp", count_file);
  int n = snprintf(line, sizeof line, "%llu %llu\n",
                   (unsigned long long)__atomic_load_n(&writes_done, __ATOMIC_RELAXED),
                   (unsigned long long)__atomic_load_n(&bytes_done, __ATOMIC_RELAXED));
  int f = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (f < 0) return;
  if (write(f, line, (size_t)n) == n) rename(tmp, count_file);
  close(f);
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--dir")) opt.dir = v;
    else if (!strcmp(k, "--file-mib")) opt.file_mib = int_arg("iobatch", k, v, 1, 1 << 20);
    else if (!strcmp(k, "--threads")) opt.threads = int_arg("iobatch", k, v, 1, 1024);
    else if (!strcmp(k, "--bs-kib")) opt.bs_kib = int_arg("iobatch", k, v, 4, 16384);
    else if (!strcmp(k, "--count-file")) count_file = v;
    else if (!strcmp(k, "--label")) opt.label = v;
    else {
      fprintf(stderr, "iobatch: unknown option %s\n", k);
      return 2;
    }
  }
  if (!opt.dir || opt.bs_kib % 4 != 0 || ((long)opt.file_mib << 10) < opt.bs_kib) {
    fprintf(stderr, "iobatch: --dir is required; --bs-kib a multiple of 4 no larger than the file\n");
    return 2;
  }
  snprintf(workdir, sizeof workdir, "%s/iobatch-XXXXXX", opt.dir);
  if (!mkdtemp(workdir)) {
    workdir[0] = 0;
    fail(opt.dir);
  }
  snprintf(file, sizeof file, "%s/data", workdir);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  fd = open(file, O_RDWR | O_CREAT | O_EXCL | O_DIRECT | O_CLOEXEC, 0600);
  if (fd < 0) fail(errno == EINVAL ? "O_DIRECT is not supported on this filesystem" : file);
  /* Written once in full, so every timed write is an overwrite. */
  size_t chunk = 1 << 20;
  void *buf;
  if (posix_memalign(&buf, 4096, chunk)) fail("posix_memalign");
  memset(buf, 0xa5, chunk);
  for (long i = 0; i < opt.file_mib; i++)
    if (pwrite(fd, buf, chunk, (off_t)i << 20) != (ssize_t)chunk) fail("prefill");
  if (fdatasync(fd)) fail("fdatasync");
  free(buf);
  fprintf(stderr, "iobatch: %s: %d threads, each one %d KiB O_DIRECT random write in flight over a %d MiB file\n",
          opt.label, opt.threads, opt.bs_kib, opt.file_mib);
  if (count_file) publish_counts();
  fprintf(stderr, "ready\n");
  fflush(stderr);
  pthread_t t;
  for (long i = 0; i < opt.threads; i++)
    if (pthread_create(&t, NULL, writer, (void *)(i + 1))) fail("pthread_create");
  for (;;) {
    struct timespec tick = {0, 100000000L};
    nanosleep(&tick, NULL);
    if (count_file) publish_counts();
  }
}
