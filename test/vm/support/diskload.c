/*
 * Disk load for the Kafka's-disks guest (test/vm/kafka-disks.test.ts), one static binary, two roles:
 *
 *   diskload append DIR STATS   a Kafka-shaped log appender: one thread appends RECORD-byte records
 *                               to the active segment every APPEND_US (paced open loop, as producers
 *                               arrive), rolls 16 MiB segments and keeps the last 8 (retention); a
 *                               flusher thread fsyncs the active segment every FSYNC_MS (Kafka's
 *                               flush.ms); a reader thread reads 4 KiB of recent data every READ_MS
 *                               (a consumer at the tail).
 *   diskload batch FILE STATS   a batch job's checkpoint/spill writer: THREADS threads of random
 *                               4 KiB O_DIRECT writes over a FILE_MB file it fills first.
 *
 * Both record the latency of every operation. SIGUSR1 closes the current measurement window: the
 * process writes the window's counts and percentiles to STATS (a temporary file renamed over it, so a
 * reader never sees half of it), `seq=` one more than the last, and starts the next window. The
 * scenario signals once to open a window and once to close it.
 *
 * Settings come from the environment (DISKLOAD_*), so the units stay plain.
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

#define MAX_SAMPLES (1u << 20)

struct series {
	const char *name;
	uint32_t *us;
	size_t n;
	uint64_t errors;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile sig_atomic_t dump_wanted;
static const char *stats_path;
static unsigned seq;
static double window_start;

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);
	if (!v || !*v) return def;
	char *end;
	long x = strtol(v, &end, 10);
	if (*end || x <= 0) {
		fprintf(stderr, "diskload: %s=%s is not a positive integer\n", name, v);
		exit(2);
	}
	return x;
}

static void die(const char *what)
{
	fprintf(stderr, "diskload: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void record(struct series *s, double t0, int ok)
{
	double us = (now() - t0) * 1e6;
	pthread_mutex_lock(&lock);
	if (!ok) s->errors++;
	else if (s->n < MAX_SAMPLES) s->us[s->n++] = us > 4e9 ? 4000000000u : (uint32_t)us;
	pthread_mutex_unlock(&lock);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest sample with at least p of all samples at or below it. */
static uint32_t pct(const uint32_t *v, size_t n, double p)
{
	if (n == 0) return 0;
	size_t r = (size_t)(p * n + 0.999999);
	if (r < 1) r = 1;
	return v[r - 1];
}

static void print_series(FILE *f, struct series *s)
{
	qsort(s->us, s->n, sizeof *s->us, cmp_u32);
	uint64_t sum = 0;
	for (size_t i = 0; i < s->n; i++) sum += s->us[i];
	fprintf(f, "%s_n=%zu\n%s_errors=%llu\n", s->name, s->n, s->name, (unsigned long long)s->errors);
	fprintf(f, "%s_mean_us=%llu\n", s->name, s->n ? (unsigned long long)(sum / s->n) : 0ull);
	fprintf(f, "%s_p50_us=%u\n%s_p99_us=%u\n%s_max_us=%u\n", s->name, pct(s->us, s->n, 0.50), s->name,
		pct(s->us, s->n, 0.99), s->name, s->n ? s->us[s->n - 1] : 0);
	s->n = 0;
	s->errors = 0;
}

/* Called by the main thread only, when SIGUSR1 asked for it. */
static void dump(struct series **all, int count)
{
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", stats_path);
	FILE *f = fopen(tmp, "w");
	if (!f) die(tmp);
	pthread_mutex_lock(&lock);
	double t = now();
	fprintf(f, "seq=%u\nseconds=%.3f\n", ++seq, t - window_start);
	for (int i = 0; i < count; i++) print_series(f, all[i]);
	window_start = t;
	pthread_mutex_unlock(&lock);
	if (fclose(f) != 0 || rename(tmp, stats_path) != 0) die(stats_path);
}

static void on_usr1(int sig)
{
	(void)sig;
	dump_wanted = 1;
}

static void sleep_until(double t)
{
	double d = t - now();
	if (d <= 0) return;
	struct timespec ts = {(time_t)d, (long)((d - (time_t)d) * 1e9)};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
	}
}

static struct series *series(const char *name)
{
	struct series *s = calloc(1, sizeof *s);
	s->name = name;
	s->us = malloc(MAX_SAMPLES * sizeof *s->us);
	if (!s->us) die("malloc");
	return s;
}

/* ---- append: the broker ---- */

static const char *log_dir;
static int active_fd = -1;
static long long active_base;
static off_t active_size;
static struct series *s_write, *s_fsync, *s_read;

static long fsync_ms, read_ms;

static int open_segment(long long base)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%020lld.log", log_dir, base);
	int fd = open(p, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0644);
	if (fd < 0) die(p);
	return fd;
}

static void drop_segment(long long base)
{
	char p[4096];
	snprintf(p, sizeof p, "%s/%020lld.log", log_dir, base);
	unlink(p);
}

/* The active segment's fd, duplicated under the lock so a roll cannot close it under us. */
static int active_dup(off_t *size)
{
	pthread_mutex_lock(&lock);
	int fd = dup(active_fd);
	if (size) *size = active_size;
	pthread_mutex_unlock(&lock);
	return fd;
}

static void *flusher(void *arg)
{
	(void)arg;
	for (double next = now();; next += fsync_ms / 1e3) {
		sleep_until(next);
		int fd = active_dup(NULL);
		double t0 = now();
		int ok = fsync(fd) == 0;
		record(s_fsync, t0, ok);
		close(fd);
	}
	return NULL;
}

static void *reader(void *arg)
{
	(void)arg;
	char buf[4096];
	unsigned r = 1;
	for (double next = now();; next += read_ms / 1e3) {
		sleep_until(next);
		off_t size;
		int fd = active_dup(&size);
		r = r * 1103515245u + 12345u;
		off_t back = (off_t)(r % (1u << 20)) & ~(off_t)4095;
		off_t at = size > back + 4096 ? size - back - 4096 : 0;
		double t0 = now();
		int ok = pread(fd, buf, sizeof buf, at) >= 0;
		record(s_read, t0, ok);
		close(fd);
	}
	return NULL;
}

/* The workers inherited the blocked mask; the main thread, which dumps, takes SIGUSR1 from here on. */
static void main_takes_usr1(void)
{
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
}

static _Noreturn void run_append(void)
{
	long rec = env_long("DISKLOAD_RECORD", 4096);
	long every_us = env_long("DISKLOAD_APPEND_US", 2000);
	long seg_bytes = env_long("DISKLOAD_SEGMENT_MB", 16) << 20;
	long keep = env_long("DISKLOAD_SEGMENTS", 8);
	fsync_ms = env_long("DISKLOAD_FSYNC_MS", 50);
	read_ms = env_long("DISKLOAD_READ_MS", 10);
	s_write = series("write");
	s_fsync = series("fsync");
	s_read = series("read");
	struct series *all[] = {s_write, s_fsync, s_read};
	char *buf = malloc(rec);
	memset(buf, 'k', rec);

	active_fd = open_segment(0);
	long long oldest = 0;
	pthread_t t;
	if (pthread_create(&t, NULL, flusher, NULL) || pthread_create(&t, NULL, reader, NULL)) die("pthread_create");
	main_takes_usr1();
	printf("diskload append: %ld-byte records every %ld us, fsync every %ld ms, read every %ld ms\n", rec,
	       every_us, fsync_ms, read_ms);
	fflush(stdout);
	for (double next = now();; next += every_us / 1e6) {
		if (dump_wanted) {
			dump_wanted = 0;
			dump(all, 3);
		}
		sleep_until(next);
		double t0 = now();
		ssize_t w = write(active_fd, buf, rec);
		record(s_write, t0, w == rec);
		pthread_mutex_lock(&lock);
		if (w > 0) active_size += w;
		if (active_size >= seg_bytes) {
			/* Roll: the new segment becomes active; the old one is closed (Kafka flushes it first). */
			int old = active_fd;
			active_base += active_size;
			active_fd = open_segment(active_base);
			active_size = 0;
			pthread_mutex_unlock(&lock);
			fsync(old);
			close(old);
			if ((active_base / seg_bytes) - (oldest / seg_bytes) >= keep) {
				drop_segment(oldest);
				oldest += seg_bytes;
			}
		} else {
			pthread_mutex_unlock(&lock);
		}
		/* Behind schedule by more than a second: drop the backlog rather than burst to catch up. */
		if (now() - next > 1.0) next = now();
	}
}

/* ---- batch: random direct writes ---- */

static int batch_fd;
static off_t batch_blocks;
static struct series *s_bwrite;

static void *batch_writer(void *arg)
{
	unsigned r = (unsigned)(uintptr_t)arg * 2654435761u + 1;
	void *buf;
	if (posix_memalign(&buf, 4096, 4096)) die("posix_memalign");
	memset(buf, 'b', 4096);
	for (;;) {
		r = r * 1103515245u + 12345u;
		off_t at = (off_t)((r >> 4) % batch_blocks) * 4096;
		double t0 = now();
		int ok = pwrite(batch_fd, buf, 4096, at) == 4096;
		record(s_bwrite, t0, ok);
	}
	return NULL;
}

static _Noreturn void run_batch(const char *file)
{
	long threads = env_long("DISKLOAD_THREADS", 4);
	long mb = env_long("DISKLOAD_FILE_MB", 64);
	s_bwrite = series("bwrite");
	struct series *all[] = {s_bwrite};
	batch_fd = open(file, O_CREAT | O_RDWR | O_DIRECT | O_CLOEXEC, 0644);
	if (batch_fd < 0) die(file);
	/* Filled once, so later writes overwrite allocated blocks: the load is the device's, not ext4's. */
	if (lseek(batch_fd, 0, SEEK_END) < (off_t)mb << 20) {
		void *chunk;
		if (posix_memalign(&chunk, 4096, 1 << 20)) die("posix_memalign");
		memset(chunk, 'f', 1 << 20);
		for (long i = 0; i < mb; i++)
			if (pwrite(batch_fd, chunk, 1 << 20, (off_t)i << 20) != 1 << 20) die("fill");
		if (fsync(batch_fd) != 0) die("fsync");
		free(chunk);
	}
	batch_blocks = ((off_t)mb << 20) / 4096;
	printf("diskload batch: %ld threads of random 4 KiB O_DIRECT writes over %ld MiB\n", threads, mb);
	fflush(stdout);
	pthread_t t;
	for (long i = 0; i < threads; i++)
		if (pthread_create(&t, NULL, batch_writer, (void *)(uintptr_t)(i + 1))) die("pthread_create");
	main_takes_usr1();
	for (;;) {
		if (dump_wanted) {
			dump_wanted = 0;
			dump(all, 1);
		}
		usleep(20000);
	}
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[1], "append") && strcmp(argv[1], "batch"))) {
		fprintf(stderr, "usage: diskload append DIR STATS | diskload batch FILE STATS\n");
		return 2;
	}
	stats_path = argv[3];
	window_start = now();
	struct sigaction sa = {0};
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	/* SIGUSR1 is for the main thread: the workers keep it blocked (they inherit the mask). */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	if (sigaction(SIGUSR1, &sa, NULL) != 0) die("sigaction");
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
	if (!strcmp(argv[1], "append")) {
		log_dir = argv[2];
		run_append();
	}
	run_batch(argv[2]);
}
