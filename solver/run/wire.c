/* demsim-wire: the wire of an emulated cloud's routes where the kernel has no netem qdisc
 * (CONFIG_NET_SCH_NETEM off). Started by the emulator for one container, it takes that
 * container's outgoing IPv4 packets from netfilter queues of its network namespace (an iptables
 * NFQUEUE rule per destination container in mangle POSTROUTING; queue number = the rule's; a
 * latency and a rate each), and the other containers' pure TCP acknowledgements to this one from
 * queues of their namespaces (each `--netns` names the namespace of the queues after it; see
 * run/containers.c build_wire for why they come here), and hands each packet back to the kernel
 * (NF_ACCEPT) when it has crossed the wire: it enters when the packets before it have been sent,
 * takes its frames' bytes over the rate (a
 * TCP send of several segments, which reaches the queue whole (GSO), as the MTU-sized frames it
 * becomes, with Ethernet's header, FCS, preamble and gap), and arrives the latency later
 * (run/wireline.h: that arithmetic, tested by tests/test_wireline.c).
 *
 *   demsim-wire [--cgroup DIR] [--cpus LIST] [--name CONTAINER] [--netns NS] QUEUE=SECONDS[,BYTES_PER_S] ...
 *               [--netns NS2 QUEUE=... ...] ...
 *
 * Why here and not only in the kernel's shapers: htb and tbf need a burst of several packets to
 * keep their rate with the timer lateness of a virtual machine, and then pass a lone message of
 * up to that burst (or a whole 64 KiB GSO packet, for htb) without its serialization time; this
 * program waits until a release is due by polling for its last microseconds (SCHED_FIFO, so
 * that busy-polling MPI ranks on the same cores do not delay it). The htb class at the same rate
 * stays behind it with a burst large enough never to hold what it releases (run/containers.c:
 * WIRE_HTB_BURST).
 *
 * It binds the queues, then goes to the background (its parent exits 0: the routes are held from
 * then on) in the cgroup given, where the emulator's teardown finds it. The hold starts when a
 * packet reaches this program: the queue path's own cost (about 10 us one way here, measured
 * with the latency at 0) is part of the emulated host's stack, like the namespaces' own. Only a
 * packet's first 80 bytes (its IPv4 and TCP headers) are copied here. When it is not running the
 * kernel lets the packets pass (fail-open). SIGTERM/SIGINT: every held packet is released, the
 * counts and the wire's own CPU time are printed to standard error. This is the only unit that uses libnetfilter_queue. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "run/wireline.h"

#define MAX_QUEUES 99
#define MAX_NETNS 99
#define RING (1 << 16) /* packets held per queue at most (more are released at once) */
#define COPY 80        /* bytes of each packet copied here: its IPv4 and TCP headers */

typedef struct held {
  uint32_t id;
  double due; /* when its last bit has crossed the wire */
} held_t;

typedef struct wire_queue {
  int num;
  int ns;               /* its namespace: an index into netns (-1: this process's own) */
  dem_wire_line_t line; /* its rate, latency and when it is free */
  struct nfq_q_handle *qh;
  held_t ring[RING];
  unsigned head, tail; /* ring[head..tail) is held, oldest first */
  unsigned long passed;
  double late_s;       /* the releases' lateness summed (s), for the mean printed at the end */
} wire_queue_t;

static wire_queue_t *queues;
static int nq;
static const char *netns[MAX_NETNS];
static int nns;
static volatile sig_atomic_t stop;

static void on_signal(int sig) { (void)sig, stop = 1; }

static double seconds_of(struct timeval t) { return (double)t.tv_sec + 1e-6 * (double)t.tv_usec; }

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Lets go, oldest first, at most `most` held packets that are due by `until` (t: now, for their
 * lateness): one verdict for the lot (a batch verdict accepts every packet of the queue up to an id). */
static void release(wire_queue_t *q, double t, double until, unsigned most)
{
  uint32_t last = 0;
  unsigned n = 0;
  for (; n < most && q->head != q->tail && q->ring[q->head % RING].due <= until; n++) {
    held_t *h = &q->ring[q->head % RING];
    if (t > h->due) q->late_s += t - h->due;
    last = h->id;
    q->head++, q->passed++;
  }
  if (n) nfq_set_verdict_batch(q->qh, last, NF_ACCEPT);
}

/* A packet enters the wire when the wire has sent the ones before it, crosses it at the rate,
 * and arrives the latency later. */
static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg, struct nfq_data *nfa, void *data)
{
  (void)msg, (void)qh;
  wire_queue_t *q = data;
  struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
  if (!ph) return 0;
  unsigned char *payload = NULL;
  int n = nfq_get_payload(nfa, &payload);
  double t = now(), due = dem_wire_due(&q->line, t, dem_wire_bytes(payload, n));
  if (q->tail - q->head >= RING) release(q, t, INFINITY, 1); /* full: the oldest goes now */
  q->ring[q->tail % RING] = (held_t){ntohl(ph->packet_id), due};
  q->tail++;
  return 0;
}

/* Releases every packet due by now; the time (s) until the next one is due, or -1 when none is held. */
static double release_due(void)
{
  double t = now(), next = -1;
  for (int i = 0; i < nq; i++) {
    wire_queue_t *q = &queues[i];
    release(q, t, stop ? INFINITY : t, RING); /* on SIGTERM, everything */
    if (q->head != q->tail) {
      double wait = q->ring[q->head % RING].due - t;
      if (next < 0 || wait < next) next = wait;
    }
  }
  return next;
}

/* The CPU set of a list such as "0", "1,3" or "0-2": 0, or -1 when it is not one. */
static int cpu_list(const char *text, cpu_set_t *set)
{
  CPU_ZERO(set);
  for (const char *p = text; *p;) {
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    if (end == p || lo < 0) return -1;
    if (*end == '-') {
      p = end + 1;
      hi = strtol(p, &end, 10);
      if (end == p || hi < lo) return -1;
    }
    if (hi >= CPU_SETSIZE) return -1;
    for (long c = lo; c <= hi; c++) CPU_SET((int)c, set);
    if (*end && *end != ',') return -1;
    p = *end ? end + 1 : end;
  }
  return CPU_COUNT(set) ? 0 : -1;
}

static int parse(int argc, char **argv, const char **cgroup, const char **name, const char **cpus)
{
  int ns = -1;
  queues = calloc(MAX_QUEUES, sizeof *queues);
  if (!queues) return -1;
  for (int a = 1; a < argc; a++) {
    char *end;
    if (strcmp(argv[a], "--cgroup") == 0 && a + 1 < argc) { *cgroup = argv[++a]; continue; }
    if (strcmp(argv[a], "--name") == 0 && a + 1 < argc) { *name = argv[++a]; continue; }
    if (strcmp(argv[a], "--netns") == 0 && a + 1 < argc) {
      if (nns >= MAX_NETNS) return -1;
      netns[ns = nns++] = argv[++a];
      continue;
    }
    if (strcmp(argv[a], "--cpus") == 0 && a + 1 < argc) {
      cpu_set_t set;
      *cpus = argv[++a];
      if (cpu_list(*cpus, &set)) return -1;
      continue;
    }
    long num = strtol(argv[a], &end, 10);
    if (nq >= MAX_QUEUES || end == argv[a] || *end != '=' || num < 0 || num > 65535) return -1;
    double delay = strtod(end + 1, &end), rate = 0;
    if (*end == ',') rate = strtod(end + 1, &end);
    if (*end || !(delay >= 0) || delay > 1 || !(rate >= 0)) return -1;
    queues[nq].num = (int)num, queues[nq].ns = ns, queues[nq].line = (dem_wire_line_t){rate, delay, 0.0};
    nq++;
  }
  return nq ? 0 : -1;
}

static struct nfq_handle *handles[MAX_NETNS + 1]; /* [k]: netns[k]'s queues; [nns]: this process's own */

/* Enters the network namespace `ip netns` names so (its mount namespace and /sys stay this one's,
 * unlike `ip netns exec`, so that the cgroup can be joined). */
static int enter(const char *name)
{
  char path[320];
  snprintf(path, sizeof path, "/run/netns/%s", name);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 || setns(fd, CLONE_NEWNET))
    return fprintf(stderr, "demsim-wire: cannot enter the network namespace %s: %s\n", path, strerror(errno)), -1;
  close(fd);
  return 0;
}

/* The queues of namespace k (-1: this process's own), bound through a netlink socket opened in
 * that namespace (it stays there whichever namespace this process is in later). 0, or -1. */
static int open_namespace(int k)
{
  if (k >= 0 && enter(netns[k])) return -1;
  struct nfq_handle *h = nfq_open();
  if (!h) return fprintf(stderr, "demsim-wire: cannot open netfilter queues (nfnetlink_queue; root?)\n"), -1;
  handles[k < 0 ? nns : k] = h;
  nfq_unbind_pf(h, AF_INET);
  if (nfq_bind_pf(h, AF_INET) < 0) return fprintf(stderr, "demsim-wire: cannot bind to IPv4\n"), -1;
  for (int i = 0; i < nq; i++) {
    wire_queue_t *q = &queues[i];
    if (q->ns != k) continue;
    q->qh = nfq_create_queue(h, (uint16_t)q->num, on_packet, q);
    if (!q->qh || nfq_set_mode(q->qh, NFQNL_COPY_PACKET, COPY) < 0)
      return fprintf(stderr, "demsim-wire: cannot bind queue %d of %s (in use?)\n", q->num, k < 0 ? "this namespace" :
                     netns[k]), -1;
    nfq_set_queue_maxlen(q->qh, RING);
    nfq_set_queue_flags(q->qh, NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN, NFQA_CFG_F_GSO | NFQA_CFG_F_FAIL_OPEN);
  }
  return 0;
}

static void close_queues(void)
{
  for (int k = 0; k <= nns; k++)
    if (handles[k]) nfq_close(handles[k]), handles[k] = NULL;
}

/* Binds the queues of every namespace named (and of this one, for queues before any --netns),
 * then stays in the first named. 0, or -1 with a message. */
static int open_queues(void)
{
  for (int i = 0; i < nq; i++)
    if (queues[i].ns < 0 && !handles[nns] && open_namespace(-1)) return close_queues(), -1;
  for (int k = 0; k < nns; k++)
    if (open_namespace(k)) return close_queues(), -1;
  return nns && enter(netns[0]) ? close_queues(), -1 : 0;
}

/* Real-time priority, on the container's own cores where given: the sender's wire then takes its
 * microseconds from the sender, which waits for the answer anyway, and not from the receiver, which
 * must take the packet (on this 2-core VM the small messages' stack was 20-24 us one way with each
 * wire on its container's core, 40-56 us on the other one, either at random when left free:
 * BENCHMARKS.md "The emulated wire"). */
static void realtime(const char *cpus)
{
  cpu_set_t set;
  if (cpus && !cpu_list(cpus, &set) && sched_setaffinity(0, sizeof set, &set))
    fprintf(stderr, "demsim-wire: note: cannot keep to cores %s (%s)\n", cpus, strerror(errno));
  struct sched_param sp = {.sched_priority = 50};
  if (sched_setscheduler(0, SCHED_FIFO, &sp))
    fprintf(stderr, "demsim-wire: note: no real-time priority (%s): releases may be late under load\n",
            strerror(errno));
  prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
}

/* Waits for packets until the next release is `margin` away, then polls without sleeping until it
 * is due: a timer's wake-up is late by tens of microseconds on a virtual machine. The margin
 * follows the lateness seen (its running mean, plus 5 us). */
static void loop(void)
{
  static char buf[65536] __attribute__((aligned));
  struct pollfd p[MAX_NETNS + 1];
  struct nfq_handle *h[MAX_NETNS + 1];
  int nfd = 0;
  for (int k = 0; k <= nns; k++)
    if (handles[k]) h[nfd] = handles[k], p[nfd++] = (struct pollfd){nfq_fd(handles[k]), POLLIN, 0};
  double margin = 30e-6;
  while (!stop) {
    double next = release_due();
    struct timespec ts = {0, 0}, *tp = NULL;
    double sleep = next < 0 ? -1 : next - margin, asleep = now();
    if (next >= 0) {
      if (sleep < 0) sleep = 0;
      ts.tv_sec = (time_t)sleep, ts.tv_nsec = (long)((sleep - (double)(time_t)sleep) * 1e9), tp = &ts;
    }
    int r = ppoll(p, (nfds_t)nfd, tp, NULL);
    if (r == 0 && sleep > 0) {
      double late = now() - asleep - sleep;
      margin = 0.9 * margin + 0.1 * (late + 5e-6);
      if (margin < 5e-6) margin = 5e-6;
      if (margin > 500e-6) margin = 500e-6;
    }
    if (r <= 0) continue;
    for (int f = 0; f < nfd; f++) {
      ssize_t n;
      for (int k = 0; k < 64 && (p[f].revents & POLLIN) && (n = recv(p[f].fd, buf, sizeof buf, MSG_DONTWAIT)) > 0; k++)
        nfq_handle_packet(h[f], buf, (int)n);
    }
  }
  release_due();
}

/* Joins the cgroup (its tasks file) and leaves the foreground: the parent exits 0 once the queues
 * are bound, so that whoever started it knows the routes are held from then on. */
static int background(const char *cgroup)
{
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid > 0) _exit(0);
  setsid();
  if (cgroup) {
    char path[512];
    snprintf(path, sizeof path, "%s/tasks", cgroup);
    FILE *f = fopen(path, "w");
    if (!f || fprintf(f, "%ld\n", (long)getpid()) < 0 || fclose(f))
      return fprintf(stderr, "demsim-wire: cannot join the cgroup %s\n", cgroup), -1;
  }
  return 0;
}

int main(int argc, char **argv)
{
  const char *cgroup = NULL, *name = "", *cpus = NULL;
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    printf("usage: demsim-wire [--cgroup DIR] [--cpus LIST] [--name CONTAINER] [--netns NS] QUEUE=SECONDS[,BYTES_PER_S]"
           " ... [--netns NS2 QUEUE=... ...] ...\n"
           "Holds the packets of each netfilter queue of the network namespace named before it (none: this one)\n"
           "until they have crossed a wire of that one-way latency (s) and rate (B/s, Ethernet frames), then\n"
           "accepts them. Goes to the background (into cgroup DIR, on the cores of LIST, e.g. 0 or 0-1,3) once\n"
           "bound; SIGTERM releases what it holds and prints how many packets each queue carried.\n"
           "Exit status: 0, 2 on bad arguments, 1 when it cannot bind.\n");
    return 0;
  }
  if (parse(argc, argv, &cgroup, &name, &cpus))
    return fprintf(stderr, "demsim-wire: expected [--cgroup DIR] [--cpus LIST] [--name CONTAINER] [--netns NS] "
                   "QUEUE=SECONDS[,BYTES_PER_S] ... (a queue 0-65535, a latency 0-1 s, a rate >= 0, cores such as "
                   "0-1,3)\n"), 2;
  struct sigaction sa = {0};
  sa.sa_handler = on_signal;
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);
  if (open_queues()) return 1;
  fflush(stdout);
  if (background(cgroup)) return 1;
  realtime(cpus);
  loop();
  for (int i = 0; i < nq; i++) {
    wire_queue_t *q = &queues[i];
    fprintf(stderr, "demsim-wire %s: queue %d%s%s, latency %.1f us, %.4g B/s: %lu packets, released %.1f us late on "
            "average\n", name, q->num, q->ns < 0 ? "" : " of ", q->ns < 0 ? "" : netns[q->ns], q->line.latency * 1e6,
            q->line.rate, q->passed, q->passed ? 1e6 * q->late_s / (double)q->passed : 0.0);
    nfq_destroy_queue(q->qh);
  }
  close_queues();
  /* its own time on the container's cores: taken from the container's running, not its quota */
  struct rusage ru;
  if (getrusage(RUSAGE_SELF, &ru) == 0)
    fprintf(stderr, "demsim-wire %s: CPU time %.3f s (user %.3f, system %.3f) on cores %s\n", name,
            seconds_of(ru.ru_utime) + seconds_of(ru.ru_stime), seconds_of(ru.ru_utime), seconds_of(ru.ru_stime),
            cpus ? cpus : "any");
  return 0;
}
