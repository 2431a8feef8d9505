/*
 * Stand-in for Kafka / Flink / batch processes in the qemu guest: N threads that are busy
 * (spin 2 ms, sleep 8 ms: visible load without starving the emulated CPUs) or asleep.
 * SIGUSR1 allocates and touches MEM_MB of anonymous memory (to check NUMA placement after a move).
 *
 *   standin LABEL THREADS busy|sleep [MEM_MB]      one process (LABEL is only for cmdline matching)
 *   standin --fanout PROCS THREADS                 PROCS sleeping processes of THREADS threads each;
 *                                                  prints their PIDs, one a line, then "fanout ready"
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int busy;
static long mem_mb;
static volatile sig_atomic_t want_alloc;

static void on_usr1(int sig) { (void)sig; want_alloc = 1; }

static void spin_ms(long ms) {
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (;;) {
    clock_gettime(CLOCK_MONOTONIC, &b);
    if ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 >= ms) return;
  }
}

static void *worker(void *arg) {
  (void)arg;
  for (;;) {
    if (busy) {
      spin_ms(1);
      usleep(250000);
    } else {
      pause();
    }
  }
  return NULL;
}

static void start_threads(int n) {
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setstacksize(&at, 64 * 1024);
  for (int i = 0; i < n; i++) {
    pthread_t t;
    if (pthread_create(&t, &at, worker, NULL) != 0) {
      perror("pthread_create");
      exit(1);
    }
  }
}

int main(int argc, char **argv) {
  if (argc >= 4 && strcmp(argv[1], "--fanout") == 0) {
    int procs = atoi(argv[2]), threads = atoi(argv[3]);
    for (int i = 0; i < procs; i++) {
      pid_t p = fork();
      if (p == 0) {
        /* raw closes: do not flush the parent's buffered output, do not hold its pipes open */
        close(0);
        close(1);
        close(2);
        start_threads(threads);
        for (;;) pause();
      }
      if (p < 0) {
        perror("fork");
        return 1;
      }
      printf("%d\n", (int)p);
    }
    printf("fanout ready\n");
    fflush(stdout);
    return 0;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: standin LABEL THREADS busy|sleep [MEM_MB]\n");
    return 2;
  }
  busy = strcmp(argv[3], "busy") == 0;
  mem_mb = argc > 4 ? atol(argv[4]) : 0;
  signal(SIGUSR1, on_usr1);
  start_threads(atoi(argv[2]));
  for (;;) {
    if (want_alloc && mem_mb > 0) {
      want_alloc = 0;
      size_t len = (size_t)mem_mb << 20;
      char *p = malloc(len);
      if (p) memset(p, 1, len);
    }
    usleep(20000);
  }
}
