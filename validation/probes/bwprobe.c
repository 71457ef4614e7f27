/* bwprobe: the memory bandwidth and FP64 rate of this machine, for the calibrated local platform
 * (validation/study/hardware.py writes them into a copy of platforms/local.xml).
 *
 *   bwprobe [--threads N] [--mib M] [--reps R] [--gather] [--pingpong] [--first-touch] [--streams]
 *
 * Bandwidth: STREAM's triad a[i] = b[i] + s * c[i] on three arrays of M MiB each (default 256,
 * far above any last-level cache), each thread on its own slice (first-touch placement), best of
 * R repetitions; bytes counted as STREAM does (24 B per element: two loads, one store, no
 * write-allocate), which is also how sim/cost.c counts the kernels' bytes. Run with N = 1 for
 * the per-core bandwidth (core_bw) and N = all cores for the node's (the membus host's speed).
 * FP64 rate: per thread, 8 independent vector FMA chains held in registers (no memory traffic),
 * 2 flops per FMA and lane; the vector width is the compiler's for -march=native. The same in
 * scalar code: scalar_flops_per_thread (their ratio: the datapath's FP64 lanes, simd_lanes).
 * Divider rate: per thread, 8 independent vector chains of two square roots and one division
 * (the DEM contact's mix, sim/cost.c: 6 square roots and 3 divisions per contact), in lanes
 * completed per second: the divider's throughput (sim/cost.h: sim_cost_cpu_flops).
 *
 * triad_bus_Bps is the same triad as the memory bus moves it: the stored array's lines are read
 * before they are written (write-allocate), 32 B per element; sim/cost.c counts the DEM kernels'
 * traffic that way (sim_cost_cpu_traffic), so platforms take this figure.
 *
 * --gather (thread 0 only, after the rest): the neighbour gathers of sim/cost.c's cache model on
 * an array x of M MiB of doubles seen as a cubic lattice of side L, in lattice order:
 *   lattice: y[i] = sum of x over i's 6 lattice neighbours and itself, through an index list of
 *            7 ints per point (as the force kernel reads nbr_index, then the partners). The
 *            model: the partners are in the cache (two planes of the lattice fit), so the
 *            traffic is the streams only: index 28 B + x 8 B loaded, y 8 B stored + 8 B
 *            write-allocate = 52 B per point; lattice_Bps is that over the time;
 *   random:  the same sum with the 7 indices drawn at random: every gather misses and brings a
 *            64 B line; random_lines_per_s, and random_Bps = lines x 64 B + the 44 B of streams
 *            per point over the time.
 * --pingpong (Linux): two threads pinned to CPUs 0 and 1 pass one cache line back and forth (a
 *   flag set by one, awaited and reset by the other), 2,000,000 round trips: the time of a line
 *   moving from one core's cache to the other's and back. Cores under one last-level cache trade
 *   a line in tens of ns; cores with separate ones (other chiplets, other sockets) in hundreds,
 *   and then threads that take turns on the same data (an OpenCL CPU runtime dealing out
 *   work-groups to whichever thread asks) pay that per line: pingpong_round_trip_ns.
 * --first-touch (thread 0, after the rest): M MiB of a fresh anonymous mapping written one byte
 *   per 4 KiB page, best of 3 mappings: first_touch_Bps, the bytes of new memory the OS maps per
 *   second (a page fault and a zeroed page each; the platforms' first_touch_bw). Bare-metal
 *   Linux takes about 1 us a page; a virtual machine whose faults leave the guest, far more.
 * --streams (after the rest, on --threads threads at once, each on its own arrays): kick-drift's
 *   access pattern, six arrays read and three of them written back in place, 200 B of bus
 *   traffic per particle: streams_Bps, the bandwidth the threads draw with as many streams as
 *   the DEM kernels keep open (one thread: one core's; all: the node's as the DEM loads it), the arrays
 *   placed as the particle store places them (a core tracks a limited number of streams and
 *   misses, and streams whose addresses agree modulo 4 KiB conflict: page-aligned, these six
 *   drew 0.5-0.9 x the triad's bandwidth on one AMD EPYC host, staggered 1.2 x).
 * Prints one JSON object: {"threads", "mib", "triad_Bps", "triad_bus_Bps", "flops_per_thread",
 * "scalar_flops_per_thread", "divider_per_thread"}
 * (and the gather figures with --gather, pingpong_round_trip_ns with --pingpong). Plain C11 and POSIX threads, so any Debian machine
 * builds it: cc -O3 -march=native -pthread bwprobe.c. */
#define _GNU_SOURCE /* pthread_setaffinity_np, CPU_SET (--pingpong) */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HAVE_X86_SQRT 1
#endif

#if defined(__AVX512F__)
#define LANES 8
#elif defined(__AVX__)
#define LANES 4
#else
#define LANES 2
#endif
typedef double vec_t __attribute__((vector_size(LANES * sizeof(double))));

/* the vector square root instruction of this width (a scalar sqrt() per lane would go through
 * libm's errno path) */
static inline vec_t vsqrt(vec_t a)
{
#if defined(HAVE_X86_SQRT) && LANES == 8
  return (vec_t)_mm512_sqrt_pd((__m512d)a);
#elif defined(HAVE_X86_SQRT) && LANES == 4
  return (vec_t)_mm256_sqrt_pd((__m256d)a);
#elif defined(HAVE_X86_SQRT)
  return (vec_t)_mm_sqrt_pd((__m128d)a);
#else
  for (int l = 0; l < LANES; l++) a[l] = __builtin_sqrt(a[l]); /* other ISAs: the compiler's square root */
  return a;
#endif
}

typedef struct job {
  double *a, *b, *c;
  size_t lo, hi;
  int reps;
  pthread_barrier_t *bar;
  double best_s;  /* best triad time of this thread's slice (s); rank 0's row reads them all */
  double flops;   /* flop/s of the FMA loop */
  double scalar;  /* flop/s of the same loop in scalar code */
  double divider; /* lanes/s of the divide / square-root loop */
  double *starts, *ends; /* per repetition, filled by thread 0 only */
  int id;
} job_t;

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static double fma_rate(void)
{
  vec_t acc[8], m, x;
  for (int i = 0; i < 8; i++)
    for (int l = 0; l < LANES; l++) acc[i][l] = 1.0 + 1e-3 * (i + l);
  for (int l = 0; l < LANES; l++) {
    m[l] = 0.999999;
    x[l] = 1e-7;
  }
  const long iters = 50000000L;
  double t0 = now();
  for (long k = 0; k < iters; k++)
    for (int i = 0; i < 8; i++) acc[i] = acc[i] * m + x;
  double dt = now() - t0;
  double sink = 0;
  for (int i = 0; i < 8; i++)
    for (int l = 0; l < LANES; l++) sink += acc[i][l];
  if (sink == 42.0) fprintf(stderr, "%g\n", sink); /* keeps the loop alive */
  return (double)iters * 8.0 * LANES * 2.0 / dt;
}

/* The same 8 FMA chains in scalar code (one lane per instruction; the vectorizers kept out, so
 * the chains stay scalar): the vector loop's rate over this one is how many FP64 lanes the core's
 * vector datapath carries per instruction (4 on a 256-bit one, whatever the register width the
 * compiler chose: a 512-bit instruction on a 256-bit datapath issues as two), the platforms'
 * simd_lanes (sim/cost.h: scalar code's flops weigh that many). */
__attribute__((optimize("no-tree-vectorize", "no-tree-slp-vectorize"))) static double scalar_fma_rate(void)
{
  double acc[8];
  for (int i = 0; i < 8; i++) acc[i] = 1.0 + 1e-3 * i;
  volatile double mv = 0.999999, xv = 1e-7;
  const double m = mv, x = xv;
  const long iters = 50000000L;
  double t0 = now();
  for (long k = 0; k < iters; k++)
    for (int i = 0; i < 8; i++) acc[i] = acc[i] * m + x;
  double dt = now() - t0;
  double sink = 0;
  for (int i = 0; i < 8; i++) sink += acc[i];
  if (sink == 42.0) fprintf(stderr, "%g\n", sink);
  return (double)iters * 8.0 * 2.0 / dt;
}

static double divider_rate(void)
{
  vec_t acc[8], c;
  for (int i = 0; i < 8; i++)
    for (int l = 0; l < LANES; l++) acc[i][l] = 1.5 + 1e-3 * (i + l);
  for (int l = 0; l < LANES; l++) c[l] = 1.25;
  const long iters = 4000000L;
  double t0 = now();
  for (long k = 0; k < iters; k++)
    for (int i = 0; i < 8; i++) {
      vec_t a = acc[i];
      a = vsqrt(vsqrt(a));
      acc[i] = c / a + a; /* stays near 2: no denormals, no infinities */
    }
  double dt = now() - t0;
  double sink = 0;
  for (int i = 0; i < 8; i++)
    for (int l = 0; l < LANES; l++) sink += acc[i][l];
  if (sink == 42.0) fprintf(stderr, "%g\n", sink);
  return (double)iters * 8.0 * LANES * 3.0 / dt;
}

static void *worker(void *arg)
{
  job_t *j = arg;
  for (size_t i = j->lo; i < j->hi; i++) {
    j->a[i] = 0.0;
    j->b[i] = 1.0;
    j->c[i] = 2.0;
  }
  const double s = 3.0;
  for (int r = 0; r < j->reps; r++) {
    pthread_barrier_wait(j->bar);
    if (j->id == 0) j->starts[r] = now();
    for (size_t i = j->lo; i < j->hi; i++) j->a[i] = j->b[i] + s * j->c[i];
    pthread_barrier_wait(j->bar);
    if (j->id == 0) j->ends[r] = now();
  }
  pthread_barrier_wait(j->bar);
  j->flops = fma_rate();
  j->scalar = scalar_fma_rate();
  j->divider = divider_rate();
  return NULL;
}

/* xorshift64*: a fixed random sequence, no libc state */
static uint64_t rnd(uint64_t *s)
{
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ULL;
}

static double gather_pass(const double *x, const int32_t *idx, double *y, size_t n)
{
  double t0 = now();
  for (size_t i = 0; i < n; i++) {
    const int32_t *k = idx + 7 * i;
    y[i] = x[k[0]] + x[k[1]] + x[k[2]] + x[k[3]] + x[k[4]] + x[k[5]] + x[k[6]];
  }
  return now() - t0;
}

/* The two gathers of --gather, best of reps; prints the JSON fields (leading comma). */
static int gather_probe(long mib, int reps)
{
  size_t side = 1;
  while ((side + 1) * (side + 1) * (side + 1) * sizeof(double) <= (size_t)mib * 1024 * 1024) side++;
  size_t n = side * side * side;
  double *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  int32_t *idx = malloc(7 * n * sizeof *idx);
  if (!x || !y || !idx) return -1;
  const long d[7] = {0, 1, -1, (long)side, -(long)side, (long)(side * side), -(long)(side * side)};
  for (size_t i = 0; i < n; i++) {
    x[i] = 1.0;
    y[i] = 0.0;
    for (int k = 0; k < 7; k++) {
      long j = (long)i + d[k];
      idx[7 * i + k] = (int32_t)(j < 0 ? j + (long)n : j >= (long)n ? j - (long)n : j);
    }
  }
  double lattice = 1e30, random = 1e30;
  for (int r = 0; r < reps; r++) {
    double t = gather_pass(x, idx, y, n);
    if (t < lattice) lattice = t;
  }
  uint64_t seed = 88172645463325252ULL;
  for (size_t i = 0; i < 7 * n; i++) idx[i] = (int32_t)(rnd(&seed) % n);
  for (int r = 0; r < reps; r++) {
    double t = gather_pass(x, idx, y, n);
    if (t < random) random = t;
  }
  double lines = 7.0 * (double)n;
  printf(", \"gather_side\": %zu, \"lattice_Bps\": %.6g, \"random_lines_per_s\": %.6g, \"random_Bps\": %.6g",
         side, 52.0 * (double)n / lattice, lines / random, (lines * 64.0 + 44.0 * (double)n) / random);
  free(x);
  free(y);
  free(idx);
  return 0;
}

/* --streams: kick-drift's pattern (integrator.cl, sim/cost.c INTEGRATE) on each thread: per
 * particle, radius 8 B, force and torque 24 B each read; position, velocity and angular velocity
 * 24 B each read and written back in place: six streams in, three out, 200 B of bus traffic (a
 * line written in place was read first: no write-allocate on top). Arrays sized so that the
 * particles' 128 B of storage fill `mib` MiB, placed as the particle store places its arrays. */
typedef struct stream_job {
  size_t n;                /* this thread's particles */
  int reps, id, failed;
  pthread_barrier_t *bar;
  double *starts, *ends;   /* per repetition, written by thread 0 */
} stream_job_t;

/* one thread's share of --streams: its own arrays, the repetitions in step with the others */
static void *stream_worker(void *arg)
{
  stream_job_t *j = arg;
  const size_t n = j->n;
  /* one mapping per array, each starting 384 B x its index into its first page, as the
   * particle store places its arrays (solver/dem/particles.c: streams that agree modulo 4 KiB
   * conflict) */
  double *q[6] = {0};
  size_t len[6];
  for (int k = 0; k < 6; k++) {
    len[k] = (k ? 3 * n : n) * sizeof(double) + 4096;
    char *m = mmap(NULL, len[k], PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) j->failed = 1;
    else q[k] = (double *)(m + 384 * k);
  }
  double *r = q[0], *f = q[1], *t = q[2], *x = q[3], *v = q[4], *w = q[5];
  if (!j->failed) {
    for (size_t i = 0; i < n; i++) r[i] = 0.005 + 1e-9 * (double)(i % 7);
    for (size_t i = 0; i < 3 * n; i++) {
      f[i] = 1e-3;
      t[i] = 1e-6;
      x[i] = (double)i * 1e-7;
      v[i] = 0.0;
      w[i] = 0.0;
    }
  }
  const double dt = 1e-8, inv_rho = 1.0 / (4.18879 * 2500.0);
  for (int rep = 0; rep < j->reps + 1; rep++) {
    pthread_barrier_wait(j->bar);
    if (j->id == 0) j->starts[rep] = now();
    for (size_t i = 0; !j->failed && i < n; i++) {
      double r3 = r[i] * r[i] * r[i], kv = dt * inv_rho / r3, kw = 2.5 * kv / (r[i] * r[i]);
      for (int d = 0; d < 3; d++) {
        v[3 * i + d] += kv * f[3 * i + d];
        w[3 * i + d] += kw * t[3 * i + d];
        x[3 * i + d] += dt * v[3 * i + d];
      }
    }
    pthread_barrier_wait(j->bar);
    if (j->id == 0) j->ends[rep] = now();
  }
  if (!j->failed && x[n / 2] + w[n / 3] == 42.0) fprintf(stderr, "%g\n", x[n / 2]); /* keeps the loop alive */
  for (int k = 0; k < 6; k++)
    if (q[k]) munmap((char *)q[k] - 384 * k, len[k]);
  return NULL;
}

/* --streams on `threads` threads at once, each on its own arrays (mib / threads MiB of them):
 * B/s of the bus traffic of all of them over the best repetition (the first warms up), or < 0
 * when the arrays cannot be mapped */
static double streams_rate(long mib, int reps, int threads)
{
  size_t n = (size_t)mib * 1024 * 1024 / 128 / (size_t)threads;
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)threads);
  double *starts = calloc((size_t)reps + 1, sizeof *starts), *ends = calloc((size_t)reps + 1, sizeof *ends);
  stream_job_t *jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  int failed = !starts || !ends || !jobs || !tid, started = 0;
  for (int t = 0; !failed && t < threads; t++, started++) {
    jobs[t] = (stream_job_t){n, reps, t, 0, &bar, starts, ends};
    if (pthread_create(&tid[t], NULL, stream_worker, &jobs[t])) failed = 1;
  }
  for (int t = 0; t < started; t++) {
    pthread_join(tid[t], NULL);
    failed |= jobs[t].failed;
  }
  /* a thread that failed to start leaves the others at the barrier: only the error path */
  double best = 1e30;
  for (int rep = 1; !failed && rep < reps + 1; rep++)
    if (ends[rep] - starts[rep] < best) best = ends[rep] - starts[rep];
  pthread_barrier_destroy(&bar);
  free(starts);
  free(ends);
  free(jobs);
  free(tid);
  return failed ? -1.0 : 200.0 * (double)n * (double)threads / best;
}

/* --pingpong: one cache line between CPUs 0 and 1 */
enum { PINGPONG_ROUNDS = 2000000 };
static _Atomic int pp_flag __attribute__((aligned(64)));

static int pin_to(int cpu)
{
#ifdef __linux__
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set);
#else
  (void)cpu;
  return -1;
#endif
}

static void *pong(void *arg)
{
  (void)arg;
  if (pin_to(1)) return (void *)1;
  for (int i = 0; i < PINGPONG_ROUNDS; i++) {
    while (atomic_load_explicit(&pp_flag, memory_order_acquire) != 1) {}
    atomic_store_explicit(&pp_flag, 0, memory_order_release);
  }
  return NULL;
}

/* round trip of a line between CPUs 0 and 1 in ns, or < 0 when the threads cannot be pinned */
static double pingpong(void)
{
  pthread_t t;
  atomic_store(&pp_flag, 0);
  if (pin_to(0) || pthread_create(&t, NULL, pong, NULL)) return -1.0;
  double t0 = now();
  for (int i = 0; i < PINGPONG_ROUNDS; i++) {
    atomic_store_explicit(&pp_flag, 1, memory_order_release);
    while (atomic_load_explicit(&pp_flag, memory_order_acquire) != 0) {}
  }
  double dt = now() - t0;
  void *rc = NULL;
  pthread_join(t, &rc);
  return rc ? -1.0 : 1e9 * dt / PINGPONG_ROUNDS;
}

/* --first-touch: bytes of fresh anonymous memory mapped per second at their first write, best of
 * 3 mappings of `mib` MiB; < 0 when no mapping could be made */
static double first_touch(long mib)
{
  const size_t bytes = (size_t)mib * 1024 * 1024, page = 4096;
  double best = -1.0;
  for (int r = 0; r < 3; r++) {
    volatile char *m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1.0;
    double t0 = now();
    for (size_t i = 0; i < bytes; i += page) m[i] = 1;
    double rate = (double)bytes / (now() - t0);
    munmap((void *)m, bytes);
    if (rate > best) best = rate;
  }
  return best;
}

int main(int argc, char **argv)
{
  int threads = 1, reps = 10, gather = 0, pp = 0, ft = 0, st = 0;
  long mib = 256;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--mib") && i + 1 < argc) mib = atol(argv[++i]);
    else if (!strcmp(argv[i], "--reps") && i + 1 < argc) reps = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--gather")) gather = 1;
    else if (!strcmp(argv[i], "--pingpong")) pp = 1;
    else if (!strcmp(argv[i], "--first-touch")) ft = 1;
    else if (!strcmp(argv[i], "--streams")) st = 1;
    else {
      fprintf(stderr, "usage: bwprobe [--threads N] [--mib M] [--reps R] [--gather] [--pingpong] [--first-touch] "
                      "[--streams]\n");
      return 2;
    }
  }
  if (threads < 1 || mib < 1 || reps < 1) {
    fprintf(stderr, "bwprobe: --threads, --mib and --reps must be positive\n");
    return 2;
  }
  size_t n = (size_t)mib * 1024 * 1024 / sizeof(double);
  double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  double *starts = calloc((size_t)reps, sizeof *starts), *ends = calloc((size_t)reps, sizeof *ends);
  job_t *jobs = calloc((size_t)threads, sizeof *jobs);
  pthread_t *tid = calloc((size_t)threads, sizeof *tid);
  if (!a || !b || !c || !starts || !ends || !jobs || !tid) {
    fprintf(stderr, "bwprobe: cannot allocate 3 x %ld MiB\n", mib);
    return 1;
  }
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)threads);
  for (int t = 0; t < threads; t++) {
    jobs[t] = (job_t){a, b, c, n * (size_t)t / (size_t)threads, n * (size_t)(t + 1) / (size_t)threads, reps, &bar,
                      0, 0, 0, 0, starts, ends, t};
    if (pthread_create(&tid[t], NULL, worker, &jobs[t])) {
      fprintf(stderr, "bwprobe: cannot start thread %d\n", t);
      return 1;
    }
  }
  for (int t = 0; t < threads; t++) pthread_join(tid[t], NULL);
  double best = 1e30;
  for (int r = 1; r < reps; r++) /* the first repetition warms up (page faults are in the init) */
    if (ends[r] - starts[r] < best) best = ends[r] - starts[r];
  if (reps == 1) best = ends[0] - starts[0];
  double flops = 0, scalar = 0, divider = 0;
  for (int t = 0; t < threads; t++) {
    flops += jobs[t].flops;
    scalar += jobs[t].scalar;
    divider += jobs[t].divider;
  }
  printf("{\"threads\": %d, \"mib\": %ld, \"lanes\": %d, \"triad_Bps\": %.6g, \"triad_bus_Bps\": %.6g, "
         "\"flops_per_thread\": %.6g, \"scalar_flops_per_thread\": %.6g, \"divider_per_thread\": %.6g",
         threads, mib, LANES, 3.0 * sizeof(double) * (double)n / best, 4.0 * sizeof(double) * (double)n / best,
         flops / threads, scalar / threads, divider / threads);
  if (gather && gather_probe(mib, reps < 3 ? reps : 3) != 0) {
    fprintf(stderr, "bwprobe: cannot allocate the gather arrays\n");
    return 1;
  }
  if (st) {
    double rate = streams_rate(mib, reps < 3 ? reps : 3, threads);
    if (rate < 0.0) {
      fprintf(stderr, "bwprobe: cannot allocate the --streams arrays (%ld MiB)\n", mib);
      return 1;
    }
    printf(", \"streams_Bps\": %.6g", rate);
  }
  if (ft) {
    double rate = first_touch(mib);
    if (rate < 0.0) {
      fprintf(stderr, "bwprobe: cannot map %ld MiB for --first-touch\n", mib);
      return 1;
    }
    printf(", \"first_touch_Bps\": %.6g", rate);
  }
  if (pp) {
    double ns = pingpong(); /* after the rest: it pins this thread to CPU 0 */
    if (ns < 0.0) {
      fprintf(stderr, "bwprobe: --pingpong needs CPUs 0 and 1 (Linux thread affinity)\n");
      return 1;
    }
    printf(", \"pingpong_round_trip_ns\": %.4g", ns);
  }
  printf("}\n");
  pthread_barrier_destroy(&bar);
  free(a);
  free(b);
  free(c);
  free(starts);
  free(ends);
  free(jobs);
  free(tid);
  return 0;
}
