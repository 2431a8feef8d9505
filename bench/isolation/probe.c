/*
 * Broker-shaped latency probe: a miniature of Kafka's request path over loopback TCP.
 *
 *   client pacer ──TCP──▶ network threads (epoll) ──▶ request queue ──▶ handler pool
 *        ▲                        │ ◀── response queues + eventfd ◀──────────┘
 *   client receiver ◀──TCP────────┘
 *
 * Each request appends its payload to a per-partition log (under the partition's lock, as Kafka
 * appends), looks a recent offset up in the partition's offset index (binary search) and copies a
 * fetch-sized slice out of the log. The client is open loop: request i is due at start + i/rate and
 * its latency is measured from that due time, so a stall delays every request that should have been
 * sent during it instead of hiding behind a blocked sender (coordinated omission).
 *
 * Output: one JSON object on stdout with counts and the latency histogram as [low_ns, high_ns, count]
 * buckets (log-linear, 256 sub-buckets per power of two: <0.8% relative error) and the exact max.
 *
 *   probe [--rate N] [--conns N] [--net N] [--handlers N] [--partitions N] [--log-kib N]
 *         [--payload B] [--fetch B] [--warmup S] [--duration S] [--label TEXT]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

#define MAX_PAYLOAD 4096

struct req_hdr {
  uint64_t due_ns;   /* when the request was due (open-loop schedule) */
  uint64_t seq;
  uint32_t partition;
  uint32_t payload;
};

struct resp {
  uint64_t due_ns;
  uint64_t seq;
  uint64_t checksum;
  uint64_t offset;
};

struct job {
  struct req_hdr h;
  int fd;
  int net;
  unsigned char payload[];
};

static struct {
  int rate, conns, nnet, nhandlers, partitions, payload, fetch;
  long log_bytes;
  double warmup, duration;
  const char *label;
} opt = {1000, 8, 2, 4, 32, 512, 4096, 4L << 20, 2, 10, "probe"};

static void die(const char *what) {
  perror(what);
  exit(1);
}

/* ---------- per-partition log ---------- */

struct partition {
  pthread_mutex_t lock;
  unsigned char *log;
  uint64_t *index_off; /* offset -> position, one entry per appended record */
  uint64_t *index_pos;
  long index_cap, index_len;
  long tail;
  uint64_t next_offset;
};

static struct partition *parts;

static void partitions_init(void) {
  parts = calloc((size_t)opt.partitions, sizeof *parts);
  for (int i = 0; i < opt.partitions; i++) {
    struct partition *p = &parts[i];
    pthread_mutex_init(&p->lock, NULL);
    p->log = malloc((size_t)opt.log_bytes);
    if (!p->log) die("malloc log");
    memset(p->log, 0, (size_t)opt.log_bytes); /* fault it in now, not during the measurement */
    p->index_cap = opt.log_bytes / 64;
    p->index_off = calloc((size_t)p->index_cap, sizeof(uint64_t));
    p->index_pos = calloc((size_t)p->index_cap, sizeof(uint64_t));
  }
}

/* Append, look a recent offset up, copy a fetch out: the memory work of a produce + fetch. */
static uint64_t partition_work(struct job *j, unsigned char *scratch, uint64_t *out_off, uint64_t *rnd) {
  struct partition *p = &parts[j->h.partition % (uint32_t)opt.partitions];
  long len = j->h.payload;
  pthread_mutex_lock(&p->lock);
  if (p->tail + len > opt.log_bytes || p->index_len == p->index_cap) { /* roll the segment */
    p->tail = 0;
    p->index_len = 0;
  }
  memcpy(p->log + p->tail, j->payload, (size_t)len);
  p->index_off[p->index_len] = p->next_offset;
  p->index_pos[p->index_len] = (uint64_t)p->tail;
  p->index_len++;
  p->tail += len;
  uint64_t off = p->next_offset++;
  /* a consumer a little behind the head: binary search the index for a recent offset */
  *rnd = *rnd * 6364136223846793005ull + 1442695040888963407ull;
  uint64_t back = (*rnd >> 33) % (uint64_t)(p->index_len < 1024 ? p->index_len : 1024);
  uint64_t want = off - back;
  long lo = 0, hi = p->index_len - 1;
  while (lo < hi) {
    long mid = (lo + hi + 1) / 2;
    if (p->index_off[mid] <= want) lo = mid;
    else hi = mid - 1;
  }
  long pos = (long)p->index_pos[lo];
  long n = opt.fetch;
  if (pos + n > opt.log_bytes) n = opt.log_bytes - pos;
  memcpy(scratch, p->log + pos, (size_t)n);
  pthread_mutex_unlock(&p->lock);
  uint64_t sum = 0;
  for (long i = 0; i < n; i += 8) sum = sum * 31 + *(uint64_t *)(scratch + i);
  *out_off = off;
  return sum;
}

/* ---------- request queue (network threads -> handlers) ---------- */

static struct {
  pthread_mutex_t lock;
  pthread_cond_t nonempty, nonfull;
  struct job **ring;
  int cap, head, len;
} rq = {.lock = PTHREAD_MUTEX_INITIALIZER, .nonempty = PTHREAD_COND_INITIALIZER,
        .nonfull = PTHREAD_COND_INITIALIZER};

static void rq_push(struct job *j) {
  pthread_mutex_lock(&rq.lock);
  while (rq.len == rq.cap) pthread_cond_wait(&rq.nonfull, &rq.lock); /* queued.max.requests */
  rq.ring[(rq.head + rq.len) % rq.cap] = j;
  rq.len++;
  pthread_cond_signal(&rq.nonempty);
  pthread_mutex_unlock(&rq.lock);
}

static struct job *rq_pop(void) {
  pthread_mutex_lock(&rq.lock);
  while (rq.len == 0) pthread_cond_wait(&rq.nonempty, &rq.lock);
  struct job *j = rq.ring[rq.head];
  rq.head = (rq.head + 1) % rq.cap;
  rq.len--;
  pthread_cond_signal(&rq.nonfull);
  pthread_mutex_unlock(&rq.lock);
  return j;
}

/* ---------- network threads ---------- */

struct outmsg {
  struct outmsg *next;
  int fd;
  struct resp r;
};

struct conn_in {
  int fd;
  size_t have;
  unsigned char buf[sizeof(struct req_hdr) + MAX_PAYLOAD];
};

struct net {
  int ep, evfd;
  pthread_mutex_t lock;
  struct outmsg *out_head, *out_tail;
};

static struct net *nets;

static void net_send(int fd, const void *buf, size_t len) {
  const unsigned char *p = buf;
  while (len > 0) {
    ssize_t w = write(fd, p, len);
    if (w < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) { /* the client drains continuously; wait for room */
        usleep(50);
        continue;
      }
      die("write response");
    }
    p += w;
    len -= (size_t)w;
  }
}

static void *net_thread(void *arg) {
  long id = (long)arg;
  struct net *n = &nets[id];
  struct epoll_event ev[64];
  size_t reqlen = sizeof(struct req_hdr) + (size_t)opt.payload;
  for (;;) {
    int k = epoll_wait(n->ep, ev, 64, -1);
    if (k < 0) {
      if (errno == EINTR) continue;
      die("epoll_wait");
    }
    for (int i = 0; i < k; i++) {
      if (ev[i].data.ptr == NULL) { /* responses ready */
        uint64_t v;
        if (read(n->evfd, &v, sizeof v) < 0 && errno != EAGAIN) die("eventfd read");
        pthread_mutex_lock(&n->lock);
        struct outmsg *m = n->out_head;
        n->out_head = n->out_tail = NULL;
        pthread_mutex_unlock(&n->lock);
        while (m) {
          struct outmsg *next = m->next;
          net_send(m->fd, &m->r, sizeof m->r);
          free(m);
          m = next;
        }
        continue;
      }
      struct conn_in *c = ev[i].data.ptr;
      for (;;) {
        ssize_t r = read(c->fd, c->buf + c->have, reqlen - c->have);
        if (r == 0) {
          epoll_ctl(n->ep, EPOLL_CTL_DEL, c->fd, NULL);
          break;
        }
        if (r < 0) {
          if (errno == EAGAIN || errno == EINTR) break;
          die("read request");
        }
        c->have += (size_t)r;
        if (c->have == reqlen) {
          struct job *j = malloc(sizeof *j + (size_t)opt.payload);
          memcpy(&j->h, c->buf, sizeof j->h);
          memcpy(j->payload, c->buf + sizeof j->h, (size_t)opt.payload);
          j->fd = c->fd;
          j->net = (int)id;
          c->have = 0;
          rq_push(j);
        }
      }
    }
  }
  return NULL;
}

static void *handler_thread(void *arg) {
  uint64_t rnd = (uint64_t)(long)arg * 0x9E3779B97F4A7C15ull + 1;
  unsigned char *scratch = malloc((size_t)opt.fetch + 8);
  for (;;) {
    struct job *j = rq_pop();
    struct outmsg *m = malloc(sizeof *m);
    m->next = NULL;
    m->fd = j->fd;
    m->r.due_ns = j->h.due_ns;
    m->r.seq = j->h.seq;
    m->r.checksum = partition_work(j, scratch, &m->r.offset, &rnd);
    struct net *n = &nets[j->net];
    free(j);
    pthread_mutex_lock(&n->lock);
    if (n->out_tail) n->out_tail->next = m;
    else n->out_head = m;
    n->out_tail = m;
    pthread_mutex_unlock(&n->lock);
    uint64_t one = 1;
    if (write(n->evfd, &one, sizeof one) < 0) die("eventfd write");
  }
  return NULL;
}

/* ---------- histogram ---------- */

static uint64_t hist[NBUCKETS];
static uint64_t hist_max, hist_count;

static void record(uint64_t v) {
  hist[bucket_of(v)]++;
  hist_count++;
  if (v > hist_max) hist_max = v;
}

/* ---------- client ---------- */

static int *client_fds;
static uint64_t t_start, t_measure, t_end;
static volatile uint64_t sent_total;
static volatile int pacer_done;
static uint64_t pacer_late_max;

static void *pacer_thread(void *arg) {
  (void)arg;
  size_t reqlen = sizeof(struct req_hdr) + (size_t)opt.payload;
  unsigned char *buf = malloc(reqlen);
  for (size_t i = 0; i < reqlen; i++) buf[i] = (unsigned char)(i * 7);
  uint64_t interval = 1000000000ull / (uint64_t)opt.rate;
  for (uint64_t i = 0;; i++) {
    uint64_t due = t_start + i * interval;
    if (due >= t_end) break;
    uint64_t now = now_ns();
    if (now < due) {
      struct timespec ts = {(time_t)(due / 1000000000ull), (long)(due % 1000000000ull)};
      while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
      }
    } else if (now - due > pacer_late_max && due >= t_measure) {
      pacer_late_max = now - due;
    }
    struct req_hdr *h = (struct req_hdr *)buf;
    h->due_ns = due;
    h->seq = i;
    h->partition = (uint32_t)(i % (uint64_t)opt.partitions);
    h->payload = (uint32_t)opt.payload;
    /* blocking write: when the server stalls the pacer blocks too, and the due times keep the cost */
    int fd = client_fds[i % (uint64_t)opt.conns];
    size_t off = 0;
    while (off < reqlen) {
      ssize_t w = write(fd, buf + off, reqlen - off);
      if (w < 0) {
        if (errno == EINTR) continue;
        die("write request");
      }
      off += (size_t)w;
    }
    sent_total = i + 1;
  }
  pacer_done = 1;
  return NULL;
}

int main(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) {
      fprintf(stderr, "probe: %s needs a value\n", a);
      return 2;
    }
    i++;
    if (!strcmp(a, "--rate")) opt.rate = atoi(v);
    else if (!strcmp(a, "--conns")) opt.conns = atoi(v);
    else if (!strcmp(a, "--net")) opt.nnet = atoi(v);
    else if (!strcmp(a, "--handlers")) opt.nhandlers = atoi(v);
    else if (!strcmp(a, "--partitions")) opt.partitions = atoi(v);
    else if (!strcmp(a, "--log-kib")) opt.log_bytes = atol(v) * 1024;
    else if (!strcmp(a, "--payload")) opt.payload = atoi(v);
    else if (!strcmp(a, "--fetch")) opt.fetch = atoi(v);
    else if (!strcmp(a, "--warmup")) opt.warmup = atof(v);
    else if (!strcmp(a, "--duration")) opt.duration = atof(v);
    else if (!strcmp(a, "--label")) opt.label = v;
    else {
      fprintf(stderr, "probe: unknown option %s\n", a);
      return 2;
    }
  }
  if (opt.rate < 1 || opt.conns < 1 || opt.nnet < 1 || opt.nhandlers < 1 || opt.partitions < 1 ||
      opt.payload < 8 || opt.payload > MAX_PAYLOAD || opt.fetch < 8 || opt.log_bytes < 65536 ||
      opt.fetch > opt.log_bytes || opt.duration <= 0 || opt.warmup < 0) {
    fprintf(stderr, "probe: bad options\n");
    return 2;
  }
  partitions_init();
  rq.cap = 65536;
  rq.ring = calloc((size_t)rq.cap, sizeof *rq.ring);

  int ls = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof sa;
  if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(ls, 128) < 0 ||
      getsockname(ls, (struct sockaddr *)&sa, &sl) < 0)
    die("listen on loopback");

  nets = calloc((size_t)opt.nnet, sizeof *nets);
  for (int i = 0; i < opt.nnet; i++) {
    nets[i].ep = epoll_create1(0);
    nets[i].evfd = eventfd(0, EFD_NONBLOCK);
    pthread_mutex_init(&nets[i].lock, NULL);
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = NULL};
    if (nets[i].ep < 0 || nets[i].evfd < 0 || epoll_ctl(nets[i].ep, EPOLL_CTL_ADD, nets[i].evfd, &e) < 0)
      die("epoll/eventfd");
  }

  client_fds = calloc((size_t)opt.conns, sizeof(int));
  int one = 1;
  int cep = epoll_create1(0);
  for (int i = 0; i < opt.conns; i++) {
    int c = socket(AF_INET, SOCK_STREAM, 0);
    if (c < 0 || connect(c, (struct sockaddr *)&sa, sizeof sa) < 0) die("connect");
    int s = accept4(ls, NULL, NULL, SOCK_NONBLOCK);
    if (s < 0) die("accept");
    setsockopt(c, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    client_fds[i] = c;
    struct conn_in *ci = calloc(1, sizeof *ci);
    ci->fd = s;
    struct epoll_event e = {.events = EPOLLIN, .data.ptr = ci};
    if (epoll_ctl(nets[i % opt.nnet].ep, EPOLL_CTL_ADD, s, &e) < 0) die("epoll_ctl conn");
    struct epoll_event ce = {.events = EPOLLIN, .data.fd = c};
    if (epoll_ctl(cep, EPOLL_CTL_ADD, c, &ce) < 0) die("epoll_ctl client");
  }

  pthread_t t;
  for (long i = 0; i < opt.nnet; i++)
    if (pthread_create(&t, NULL, net_thread, (void *)i)) die("pthread_create net");
  for (long i = 0; i < opt.nhandlers; i++)
    if (pthread_create(&t, NULL, handler_thread, (void *)i)) die("pthread_create handler");

  t_start = now_ns() + 20000000ull;
  t_measure = t_start + (uint64_t)(opt.warmup * 1e9);
  t_end = t_measure + (uint64_t)(opt.duration * 1e9);
  if (pthread_create(&t, NULL, pacer_thread, NULL)) die("pthread_create pacer");

  /* The receiver is this thread: responses come back in any order, each carries its due time. */
  uint64_t received = 0, measured_sent = 0;
  struct resp *rbuf = calloc((size_t)opt.conns, sizeof *rbuf);
  size_t *have = calloc((size_t)opt.conns, sizeof(size_t));
  int *slot = calloc(65536, sizeof(int));
  for (int i = 0; i < opt.conns; i++) slot[client_fds[i] % 65536] = i;
  /* drain deadline: as long as the measurement itself, so a long stall still gets recorded */
  uint64_t drain_until = 0;
  int lost_wait_expired = 0;
  for (;;) {
    if (pacer_done) {
      if (!drain_until) drain_until = now_ns() + (uint64_t)((opt.duration > 5 ? opt.duration : 5) * 1e9);
      if (received == sent_total) break;
      if (now_ns() > drain_until) {
        lost_wait_expired = 1;
        break;
      }
    }
    struct epoll_event ev[16];
    int k = epoll_wait(cep, ev, 16, 100);
    if (k < 0 && errno != EINTR) die("client epoll_wait");
    for (int i = 0; i < k; i++) {
      int fd = ev[i].data.fd, s = slot[fd % 65536];
      for (;;) {
        ssize_t r = recv(fd, (char *)&rbuf[s] + have[s], sizeof(struct resp) - have[s], MSG_DONTWAIT);
        if (r <= 0) break;
        have[s] += (size_t)r;
        if (have[s] == sizeof(struct resp)) {
          have[s] = 0;
          received++;
          uint64_t now = now_ns();
          if (rbuf[s].due_ns >= t_measure) record(now - rbuf[s].due_ns);
        }
      }
    }
  }
  uint64_t interval = 1000000000ull / (uint64_t)opt.rate;
  for (uint64_t i = 0; i < sent_total; i++)
    if (t_start + i * interval >= t_measure) measured_sent++;

  printf("{\"label\":\"%s\",\"rate\":%d,\"warmupS\":%g,\"durationS\":%g,\"conns\":%d,\"net\":%d,"
         "\"handlers\":%d,\"partitions\":%d,\"logKiB\":%ld,\"payload\":%d,\"fetch\":%d,"
         "\"sent\":%llu,\"measuredSent\":%llu,\"received\":%llu,\"recorded\":%llu,\"lost\":%llu,"
         "\"drainExpired\":%s,\"pacerLateMaxNs\":%llu,\"maxNs\":%llu,\"buckets\":[",
         opt.label, opt.rate, opt.warmup, opt.duration, opt.conns, opt.nnet, opt.nhandlers,
         opt.partitions, opt.log_bytes / 1024, opt.payload, opt.fetch, (unsigned long long)sent_total,
         (unsigned long long)measured_sent, (unsigned long long)received, (unsigned long long)hist_count,
         (unsigned long long)(sent_total - received), lost_wait_expired ? "true" : "false",
         (unsigned long long)pacer_late_max, (unsigned long long)hist_max);
  print_buckets(hist);
  printf("]}\n");
  fflush(stdout);
  _exit(0); /* network and handler threads block forever; do not wait for them */
}
