/*
 * Kafka-shaped log appender: the disk side of a broker's partition, in one directory.
 *
 *   writer   open loop: append i is due at start + i/rate; write(2) of --append bytes to the active
 *            segment (page cache, as Kafka's FileChannel.write). Its latency runs from the due time,
 *            so a write that blocks (dirty throttling, a stable page under writeback) delays every
 *            append due during it instead of hiding behind the blocked writer.
 *   flusher  every --fsync-ms: fdatasync(2) of the active segment (log.flush.interval.ms, or the
 *            flush a replica does before it acknowledges); its latency is the call's duration.
 *   reader   --fetch-rate times a second: pread(2) of the last --fetch bytes written (a caught-up
 *            consumer or follower reading recent data); its latency is the call's duration.
 *
 * Segments roll at --segment-mib and the oldest beyond four is deleted, so the disk use stays bounded;
 * every segment is removed at exit. The files live in a directory of their own made under --dir.
 *
 * Output: one JSON object on stdout, a histogram per operation in the same form as probe.c's
 * ([low_ns, high_ns, count] log-linear buckets, <0.8% relative error, and the exact max).
 *
 *   appender --dir DIR [--rate N] [--append B] [--fsync-ms N] [--fetch B] [--fetch-rate N]
 *            [--segment-mib N] [--warmup S] [--duration S] [--label TEXT]
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
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define KEEP_SEGMENTS 4
#define MAX_APPEND (1 << 20)

static struct {
  const char *dir, *label;
  int rate, append, fsync_ms, fetch, fetch_rate, segment_mib;
  double warmup, duration;
} opt = {NULL, "appender", 1000, 4096, 20, 65536, 100, 64, 2, 10};

struct hist {
  uint64_t b[NBUCKETS];
  uint64_t max, count;
};
static struct hist h_write, h_fsync, h_read;

static void sleep_until(uint64_t ns) {
  struct timespec t = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {
  }
}

/* Each histogram has one writer thread: no lock. */
static void record(struct hist *h, uint64_t v) {
  h->b[bucket_of(v)]++;
  h->count++;
  if (v > h->max) h->max = v;
}

static char workdir[4096];
static uint64_t t_start, t_measure, t_end;

/* The active segment: the writer rolls it, the flusher and reader take a dup of its fd. */
static pthread_mutex_t seg_lock = PTHREAD_MUTEX_INITIALIZER;
static int seg_fd = -1;
static long seg_index = -1;
static uint64_t seg_bytes;

static void seg_path(char *buf, size_t n, long index) {
  snprintf(buf, n, "%s/%020ld.log", workdir, index);
}

static void remove_all(void);

static void fail(const char *what) {
  fprintf(stderr, "appender: %s: %s\n", what, strerror(errno));
  if (workdir[0]) remove_all();
  exit(1);
}

/* Caller holds seg_lock. */
static void roll(void) {
  char p[4200];
  seg_path(p, sizeof p, seg_index + 1);
  int fd = open(p, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) fail(p);
  if (seg_fd >= 0) close(seg_fd);
  seg_fd = fd;
  seg_index++;
  seg_bytes = 0;
  if (seg_index >= KEEP_SEGMENTS) {
    seg_path(p, sizeof p, seg_index - KEEP_SEGMENTS);
    unlink(p);
  }
}

/* A dup of the active segment's fd and how much it holds, so a roll cannot close it under a reader. */
static int take_segment(uint64_t *bytes) {
  pthread_mutex_lock(&seg_lock);
  int fd = dup(seg_fd);
  if (bytes) *bytes = seg_bytes;
  pthread_mutex_unlock(&seg_lock);
  return fd;
}

/* Only async-signal-safe calls (unlink and rmdir of what this run made): on_signal calls it. */
static void remove_all(void) {
  char p[4200];
  for (long i = seg_index - KEEP_SEGMENTS; i <= seg_index; i++) {
    if (i < 0) continue;
    seg_path(p, sizeof p, i);
    unlink(p);
  }
  rmdir(workdir);
}

static void on_signal(int sig) {
  remove_all();
  signal(sig, SIG_DFL);
  raise(sig);
}

static uint64_t appends_done, writer_late_max;

static void *writer_thread(void *arg) {
  (void)arg;
  unsigned char *buf = malloc((size_t)opt.append);
  if (!buf) fail("malloc");
  for (int i = 0; i < opt.append; i++) buf[i] = (unsigned char)(i * 131 + 7);
  uint64_t interval = 1000000000ull / (uint64_t)opt.rate;
  for (uint64_t i = 0;; i++) {
    uint64_t due = t_start + i * interval;
    if (due >= t_end) break;
    uint64_t now = now_ns();
    if (now < due) sleep_until(due);
    else if (now - due > writer_late_max) writer_late_max = now - due;
    pthread_mutex_lock(&seg_lock);
    if (seg_bytes + (uint64_t)opt.append > (uint64_t)opt.segment_mib << 20) roll();
    ssize_t w = write(seg_fd, buf, (size_t)opt.append);
    if (w == opt.append) seg_bytes += (uint64_t)w;
    pthread_mutex_unlock(&seg_lock);
    if (w != opt.append) fail("write");
    if (due >= t_measure) record(&h_write, now_ns() - due);
    appends_done++;
  }
  free(buf);
  return NULL;
}

static void *flusher_thread(void *arg) {
  (void)arg;
  uint64_t interval = (uint64_t)opt.fsync_ms * 1000000ull;
  for (uint64_t next = t_start + interval; next < t_end; next += interval) {
    sleep_until(next);
    int fd = take_segment(NULL);
    uint64_t t0 = now_ns();
    if (fdatasync(fd) != 0) fail("fdatasync");
    uint64_t t1 = now_ns();
    close(fd);
    if (t0 >= t_measure) record(&h_fsync, t1 - t0);
    /* A flush longer than the interval: the next one starts right away, as Kafka's flusher would. */
    if (t1 > next + interval) next = t1 - interval;
  }
  return NULL;
}

static void *reader_thread(void *arg) {
  (void)arg;
  unsigned char *buf = malloc((size_t)opt.fetch);
  if (!buf) fail("malloc");
  uint64_t interval = 1000000000ull / (uint64_t)opt.fetch_rate;
  for (uint64_t next = t_start + interval; next < t_end; next += interval) {
    sleep_until(next);
    uint64_t bytes;
    int fd = take_segment(&bytes);
    off_t from = bytes > (uint64_t)opt.fetch ? (off_t)(bytes - (uint64_t)opt.fetch) : 0;
    uint64_t t0 = now_ns();
    if (pread(fd, buf, (size_t)opt.fetch, from) < 0) fail("pread");
    uint64_t t1 = now_ns();
    close(fd);
    if (t0 >= t_measure) record(&h_read, t1 - t0);
    if (t1 > next + interval) next = t1 - interval;
  }
  free(buf);
  return NULL;
}

static void print_hist(const char *name, const struct hist *h, int last) {
  printf("\"%s\":{\"count\":%llu,\"maxNs\":%llu,\"buckets\":[", name, (unsigned long long)h->count,
         (unsigned long long)h->max);
  print_buckets(h->b);
  printf("]}%s", last ? "" : ",");
}

int main(int argc, char **argv) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const char *k = argv[i], *v = argv[i + 1];
    if (!strcmp(k, "--dir")) opt.dir = v;
    else if (!strcmp(k, "--rate")) opt.rate = int_arg("appender", k, v, 1, 1000000);
    else if (!strcmp(k, "--append")) opt.append = int_arg("appender", k, v, 1, MAX_APPEND);
    else if (!strcmp(k, "--fsync-ms")) opt.fsync_ms = int_arg("appender", k, v, 1, 600000);
    else if (!strcmp(k, "--fetch")) opt.fetch = int_arg("appender", k, v, 1, 64 << 20);
    else if (!strcmp(k, "--fetch-rate")) opt.fetch_rate = int_arg("appender", k, v, 1, 100000);
    else if (!strcmp(k, "--segment-mib")) opt.segment_mib = int_arg("appender", k, v, 1, 1 << 20);
    else if (!strcmp(k, "--warmup")) opt.warmup = atof(v);
    else if (!strcmp(k, "--duration")) opt.duration = atof(v);
    else if (!strcmp(k, "--label")) opt.label = v;
    else {
      fprintf(stderr, "appender: unknown option %s\n", k);
      return 2;
    }
  }
  if (!opt.dir || opt.duration <= 0 || opt.warmup < 0) {
    fprintf(stderr, "appender: --dir is required, --duration > 0, --warmup >= 0\n");
    return 2;
  }
  /* The default 50 µs timer slack would sit in every open-loop write latency. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
  snprintf(workdir, sizeof workdir, "%s/appender-XXXXXX", opt.dir);
  if (!mkdtemp(workdir)) fail(opt.dir);
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);
  pthread_mutex_lock(&seg_lock);
  roll();
  pthread_mutex_unlock(&seg_lock);

  t_start = now_ns() + 20000000ull;
  t_measure = t_start + (uint64_t)(opt.warmup * 1e9);
  t_end = t_measure + (uint64_t)(opt.duration * 1e9);
  pthread_t w, f, r;
  if (pthread_create(&w, NULL, writer_thread, NULL) || pthread_create(&f, NULL, flusher_thread, NULL) ||
      pthread_create(&r, NULL, reader_thread, NULL))
    fail("pthread_create");
  pthread_join(w, NULL);
  pthread_join(f, NULL);
  pthread_join(r, NULL);
  uint64_t due = (uint64_t)((opt.warmup + opt.duration) * opt.rate);

  printf("{\"label\":\"%s\",\"rate\":%d,\"append\":%d,\"fsyncMs\":%d,\"fetch\":%d,\"fetchRate\":%d,"
         "\"segmentMiB\":%d,\"warmupS\":%g,\"durationS\":%g,\"appendsDue\":%llu,\"appends\":%llu,"
         "\"writerLateMaxNs\":%llu,\"ops\":{",
         opt.label, opt.rate, opt.append, opt.fsync_ms, opt.fetch, opt.fetch_rate, opt.segment_mib,
         opt.warmup, opt.duration, (unsigned long long)due, (unsigned long long)appends_done,
         (unsigned long long)writer_late_max);
  print_hist("write", &h_write, 0);
  print_hist("fsync", &h_fsync, 0);
  print_hist("read", &h_read, 1);
  printf("}}\n");
  fflush(stdout);
  pthread_mutex_lock(&seg_lock);
  close(seg_fd);
  remove_all();
  pthread_mutex_unlock(&seg_lock);
  return 0;
}
