// The proxy benchmark's fixed-rate load generator, in C: one thread, epoll, keep-alive HTTP/1.1.
//
// Why by hand, and why C: the load generator shares the machine's two cores with the sidecar it
// measures, so every microsecond and every GC pause it spends is one the sidecar (and the direct
// path) may wait for. The node load generator (lean-http.ts plus a pacer thread) costs ~100 µs of CPU
// and three thread wake-ups per request and pauses for its own GC; this costs a few syscalls. wrk2 and
// vegeta (the usual constant-rate tools) are not packaged for this image, and wrk does not send at a
// constant rate. Only what the benchmark needs: one request at a time per connection, a request
// template per target with a counter written into it, responses framed by content-length or chunked
// encoding (trailers allowed), the sidecar's X-Service-Overhead-Ms read from the headers.
//
// Open loop: phase p sends `count` requests to target cycle[p % n], one every 1000/rps ms from its
// start, each timed from its scheduled send time (so a stall delays the requests it holds up, as a
// user would see them); the next phase starts 2 ms after the last answer of the one before. With
// every connection busy (max per target) a request waits for one, its clock already running.
//
// Usage: rate-client <rps> <count per phase> <phases> <cycle: target indexes, comma-separated>
//          <host> <port> <template file> <counter offset> [<host> <port> <template file> <offset> ...]
// Output, one line per request: "<phase> <k> <ms from scheduled time to the answer's end> <overhead
// header or nan> <status or 0 on a connection error> <scheduled time, ms since the epoch>", then
// "late <sends over 5 ms late>" and "cpu <ms of CPU this process used>".
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_TARGETS 4
#define MAX_CONNS 512
#define COUNTER_WIDTH 7

typedef struct {
  struct sockaddr_in addr;
  char *tpl;
  size_t tpl_len;
  size_t counter_at;
} Target;

typedef struct Conn {
  int fd;
  int target;
  int connecting;
  char *req; /* this connection's copy of the template */
  size_t req_len, written;
  char *rbuf;
  size_t rlen, rcap;
  long req_index; /* index into the results, -1 when idle */
  int idle;       /* on its target's free list */
  struct Conn *next_free;
} Conn;

typedef struct {
  double scheduled;  /* monotonic ms */
  double latency;    /* ms */
  double overhead;   /* ms or NaN */
  int status;        /* 0 = connection error */
  int phase, k;
} Result;

static Target targets[MAX_TARGETS];
static int ntargets;
static Conn *free_conns[MAX_TARGETS];
static int open_conns[MAX_TARGETS];
static int ep;
static Result *results;
static long *waitq; /* requests waiting for a connection (indexes into results), FIFO */
static long waitq_head, waitq_tail;
static long inflight;
static long counter;
static long late_sends;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void die(const char *what) {
  perror(what);
  exit(2);
}

static void write_counter(char *at, long n) {
  for (int i = COUNTER_WIDTH - 1; i >= 0; i--, n /= 26) at[i] = (char)('a' + n % 26);
}

static void finish(Conn *c, int status, double overhead);

static void conn_close(Conn *c) {
  if (c->idle) { /* closed by the server while idle (or it sent bytes nobody asked for) */
    Conn **p = &free_conns[c->target];
    while (*p != c) p = &(*p)->next_free;
    *p = c->next_free;
  }
  epoll_ctl(ep, EPOLL_CTL_DEL, c->fd, NULL);
  close(c->fd);
  open_conns[c->target]--;
  free(c->req);
  free(c->rbuf);
  free(c);
}

static void conn_fail(Conn *c) {
  if (c->req_index >= 0) finish(c, 0, NAN);
  conn_close(c);
}

static void want_write(Conn *c, int on) {
  struct epoll_event ev = {.events = EPOLLIN | (on ? EPOLLOUT : 0), .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_MOD, c->fd, &ev) < 0) die("epoll_ctl");
}

static void flush(Conn *c) {
  while (c->written < c->req_len) {
    ssize_t n = write(c->fd, c->req + c->written, c->req_len - c->written);
    if (n < 0) {
      if (errno == EAGAIN) {
        want_write(c, 1);
        return;
      }
      conn_fail(c);
      return;
    }
    c->written += (size_t)n;
  }
}

static Conn *conn_open(int t) {
  Conn *c = calloc(1, sizeof *c);
  c->target = t;
  c->req_index = -1;
  c->req = malloc(targets[t].tpl_len);
  memcpy(c->req, targets[t].tpl, targets[t].tpl_len);
  c->req_len = targets[t].tpl_len;
  c->rcap = 64 * 1024;
  c->rbuf = malloc(c->rcap);
  c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd < 0) die("socket");
  int one = 1;
  setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (connect(c->fd, (struct sockaddr *)&targets[t].addr, sizeof targets[t].addr) < 0) {
    if (errno != EINPROGRESS) die("connect");
    c->connecting = 1;
  }
  struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.ptr = c};
  if (epoll_ctl(ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) die("epoll_ctl");
  open_conns[t]++;
  return c;
}

static void send_on(Conn *c, long index) {
  c->req_index = index;
  c->rlen = 0;
  c->written = 0;
  write_counter(c->req + targets[c->target].counter_at, counter++);
  if (!c->connecting) flush(c); /* else written once the connection is up (EPOLLOUT) */
}

/** Sends request `index` to target t on an idle connection, a new one, or queues it. */
static void dispatch(int t, long index) {
  Conn *c = free_conns[t];
  if (c) {
    free_conns[t] = c->next_free;
    c->idle = 0;
    send_on(c, index);
  } else if (open_conns[t] < MAX_CONNS) {
    send_on(conn_open(t), index);
  } else {
    waitq[waitq_tail++] = index;
  }
}

static void finish(Conn *c, int status, double overhead) {
  Result *r = &results[c->req_index];
  r->latency = now_ms() - r->scheduled;
  r->status = status;
  r->overhead = overhead;
  c->req_index = -1;
  inflight--;
}

static void release(Conn *c) {
  if (waitq_head < waitq_tail) {
    send_on(c, waitq[waitq_head++]);
    return;
  }
  c->idle = 1;
  c->next_free = free_conns[c->target];
  free_conns[c->target] = c;
}

/** Length of a complete chunked body starting at `p`, or -1 if more bytes are needed, -2 if malformed. */
static long chunked_len(const char *buf, size_t start, size_t len) {
  size_t pos = start;
  for (;;) {
    const char *line_end = memmem(buf + pos, len - pos, "\r\n", 2);
    if (!line_end) return -1;
    char *endp;
    unsigned long size = strtoul(buf + pos, &endp, 16);
    if (endp == buf + pos) return -2;
    size_t after = (size_t)(line_end - buf) + 2;
    if (size == 0) { /* "0\r\n" [trailers] "\r\n" */
      if (len - after >= 2 && buf[after] == '\r' && buf[after + 1] == '\n') return (long)(after + 2 - start);
      const char *end = memmem(buf + after, len - after, "\r\n\r\n", 4);
      return end ? (long)((size_t)(end - buf) + 4 - start) : -1;
    }
    pos = after + size + 2;
    if (pos > len) return -1;
  }
}

/** A header's value (case-insensitive name, "\r\nname:" inside head[0..end)), or NULL. */
static const char *header(const char *head, size_t end, const char *name) {
  size_t n = strlen(name);
  for (const char *p = head; (p = memmem(p, (size_t)(head + end - p), "\r\n", 2)) != NULL; p += 2) {
    if ((size_t)(head + end - p) > n + 3 && strncasecmp(p + 2, name, n) == 0 && p[2 + n] == ':') {
      const char *v = p + 3 + n;
      while (*v == ' ' || *v == '\t') v++;
      return v;
    }
  }
  return NULL;
}

static void on_readable(Conn *c) {
  for (;;) {
    if (c->rcap - c->rlen < 16 * 1024) {
      c->rcap *= 2;
      c->rbuf = realloc(c->rbuf, c->rcap);
    }
    ssize_t n = read(c->fd, c->rbuf + c->rlen, c->rcap - c->rlen - 1);
    if (n < 0) {
      if (errno == EAGAIN) return;
      conn_fail(c);
      return;
    }
    if (n == 0 || c->req_index < 0) { /* closed, or an answer nobody asked for */
      conn_fail(c);
      return;
    }
    c->rlen += (size_t)n;
    c->rbuf[c->rlen] = 0;
    const char *hend = memmem(c->rbuf, c->rlen, "\r\n\r\n", 4);
    if (!hend) continue;
    size_t body = (size_t)(hend - c->rbuf) + 4;
    size_t head_len = body - 2; /* keep the last "\r\n" so every header line starts with one */
    int status = c->rlen > 12 ? atoi(c->rbuf + 9) : 0;
    const char *te = header(c->rbuf, head_len, "transfer-encoding");
    const char *cl = header(c->rbuf, head_len, "content-length");
    long total;
    if (te && strncasecmp(te, "chunked", 7) == 0) {
      long b = chunked_len(c->rbuf, body, c->rlen);
      if (b == -2) {
        conn_fail(c);
        return;
      }
      total = b < 0 ? -1 : (long)body + b;
    } else if (cl) {
      long want = (long)body + strtol(cl, NULL, 10);
      total = (long)c->rlen >= want ? want : -1;
    } else {
      conn_fail(c); /* the benchmark's servers always frame their answers */
      return;
    }
    if (total < 0) continue;
    if ((size_t)total != c->rlen) { /* bytes past the answer: not HTTP/1.1 as this client speaks it */
      conn_fail(c);
      return;
    }
    const char *ov = header(c->rbuf, head_len, "x-service-overhead-ms");
    const char *conn_hdr = header(c->rbuf, head_len, "connection");
    finish(c, status, ov ? strtod(ov, NULL) : NAN);
    if (conn_hdr && strncasecmp(conn_hdr, "close", 5) == 0) conn_close(c);
    else release(c);
    return;
  }
}

int main(int argc, char **argv) {
  if (argc < 9 || (argc - 5) % 4 != 0) {
    fprintf(stderr, "usage: rate-client <rps> <count> <phases> <cycle> (<host> <port> <template> <counter offset>)...\n");
    return 2;
  }
  double interval = 1000.0 / atof(argv[1]);
  long count = atol(argv[2]);
  int phases = atoi(argv[3]);
  int cycle[64], ncycle = 0;
  for (char *s = argv[4], *tok; (tok = strsep(&s, ",")) != NULL && ncycle < 64;) cycle[ncycle++] = atoi(tok);
  for (int a = 5; a + 3 < argc && ntargets < MAX_TARGETS; a += 4) {
    Target *t = &targets[ntargets++];
    t->addr.sin_family = AF_INET;
    t->addr.sin_port = htons((uint16_t)atoi(argv[a + 1]));
    if (inet_pton(AF_INET, argv[a], &t->addr.sin_addr) != 1) die("address");
    FILE *f = fopen(argv[a + 2], "rb");
    if (!f) die("template");
    fseek(f, 0, SEEK_END);
    t->tpl_len = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    t->tpl = malloc(t->tpl_len);
    if (fread(t->tpl, 1, t->tpl_len, f) != t->tpl_len) die("template read");
    fclose(f);
    t->counter_at = (size_t)atol(argv[a + 3]);
  }
  for (int i = 0; i < ncycle; i++)
    if (cycle[i] < 0 || cycle[i] >= ntargets) {
      fprintf(stderr, "cycle names target %d of %d\n", cycle[i], ntargets);
      return 2;
    }
  prctl(PR_SET_TIMERSLACK, 1UL); /* wake at the send time, not up to 50 µs after it */
  ep = epoll_create1(EPOLL_CLOEXEC);
  if (ep < 0) die("epoll_create1");
  results = calloc((size_t)phases * (size_t)count, sizeof *results);
  waitq = malloc((size_t)phases * (size_t)count * sizeof *waitq);
  struct timespec rt, mt;
  clock_gettime(CLOCK_REALTIME, &rt);
  clock_gettime(CLOCK_MONOTONIC, &mt);
  double epoch_offset = (rt.tv_sec - mt.tv_sec) * 1e3 + (rt.tv_nsec - mt.tv_nsec) / 1e6;
  struct epoll_event events[64];
  for (int phase = 0; phase < phases; phase++) {
    int t = cycle[phase % ncycle];
    double start = now_ms() + 2;
    long k = 0;
    waitq_head = waitq_tail = 0;
    while (k < count || inflight > 0) {
      double now = now_ms();
      while (k < count && start + k * interval <= now) {
        long index = (long)phase * count + k;
        Result *r = &results[index];
        r->scheduled = start + k * interval;
        r->phase = phase;
        r->k = (int)k;
        if (now - r->scheduled > 5) late_sends++;
        inflight++;
        dispatch(t, index);
        k++;
      }
      struct timespec timeout, *tp = NULL;
      if (k < count) {
        double wait = start + k * interval - now_ms();
        if (wait < 0) wait = 0;
        timeout.tv_sec = (time_t)(wait / 1e3);
        timeout.tv_nsec = (long)((wait - timeout.tv_sec * 1e3) * 1e6);
        tp = &timeout;
      } else {
        timeout.tv_sec = 60; /* no answer for a minute: something is wrong */
        timeout.tv_nsec = 0;
        tp = &timeout;
      }
      int n = epoll_pwait2(ep, events, 64, tp, NULL);
      if (n < 0) {
        if (errno == EINTR) continue;
        die("epoll_pwait2");
      }
      if (n == 0 && k >= count) {
        fprintf(stderr, "rate-client: %ld answers missing after 60 s\n", inflight);
        return 3;
      }
      for (int i = 0; i < n; i++) {
        Conn *c = events[i].data.ptr;
        if (c->connecting && (events[i].events & (EPOLLOUT | EPOLLERR | EPOLLHUP))) {
          int err = 0;
          socklen_t len = sizeof err;
          getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
          if (err) {
            conn_fail(c);
            continue;
          }
          c->connecting = 0;
          want_write(c, 0);
          if (c->req_index >= 0) flush(c);
          continue;
        }
        if (events[i].events & EPOLLOUT) {
          want_write(c, 0);
          flush(c);
          continue; /* an answer comes after the request is written */
        }
        if (events[i].events & (EPOLLIN | EPOLLERR | EPOLLHUP)) on_readable(c);
      }
    }
  }
  long total = (long)phases * count;
  for (long i = 0; i < total; i++) {
    Result *r = &results[i];
    printf("%d %d %.4f %.4f %d %.2f\n", r->phase, r->k, r->latency, r->overhead, r->status, r->scheduled + epoch_offset);
  }
  printf("late %ld\n", late_sends);
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("cpu %.1f\n", (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3);
  return 0;
}
