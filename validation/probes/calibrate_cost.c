/* calibrate_cost: a check of the kernel cost model (sim/cost.c) against the real kernels.
 *
 *   calibrate_cost [--platform FILE] [--host NAME] [--sizes 10,20,40] [--reps 10]
 *                  [--packings apart,listed,contact] [--check FACTOR] [--reference 1]
 *   calibrate_cost --search-turns 1 [--sizes 60] [--reps 15]
 *
 * Runs every kernel of a step on this machine's OpenCL device (PoCL here) through the engine,
 * over simple cubic packings of s^3 particles (tests/physics_testing.h, the benchmark material):
 *   apart   : diameter 0.99 x spacing: no partner within the search cutoff (walls only);
 *   listed  : 0.998: the six lattice neighbours are listed (within the skin) but do not touch;
 *   contact : 1.001: the study's benchmark, six contacts per particle.
 * The skin is the scenarios' default (0.005 diameters), velocities are small and the kick is 0,
 * so the packing does not change between repetitions. Each kernel is timed with OpenCL profiling
 * events (dem_engine_profile: device time, launch overhead excluded), the host binning with the
 * wall clock; the best and the median of the repetitions are printed (the best is the one least
 * disturbed by other load on a shared machine). Beside them: the counts the engine reports, the
 * cost model's flops and DRAM traffic for them (sim_cost_cpu_traffic: cache lines, write-allocate),
 * the achieved GB/s and GF/s (model traffic and flops over the best time), and the time the
 * model predicts on the platform's idle host, as the SMPI build charges it (sim/membus.c):
 * flops / (cores x core rate) + launch latency, and traffic / min(cores x core_bw, node bandwidth),
 * added for work that gathers through an index and the larger of the two for streaming work,
 * for a kernel; one core for host work.
 *
 * The platform figures are read from the SimGrid XML with a small parser (the host's speed and
 * core count, its core_bw, launch_latency and membus properties, the membus host's speed); the
 * default is platforms/local.xml's 2-core host `local`, which is what PoCL uses (all cores).
 *
 * --check F: exit 1 when a kernel's best time and the prediction differ by more than a factor F
 * either way (the CTest smoke run; see validation/CMakeLists.txt for the factor it uses). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "cost.h"
#include "dem/grid.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "dem/physics_ref.h"
#include "device/engine.h"
#include "physics_testing.h"

#define MAX_SIZES 8
#define MAX_REPS 1000
#define SEARCH_CANDIDATES_MODEL 26.0 /* sim/cost.c's SEARCH_CANDIDATES */

/* the platform host the prediction is made for */
typedef struct platform {
  char file[512];
  char host[64];
  int cores;
  double core_flops; /* flop/s, one core */
  double core_bw;    /* B/s, one core */
  double node_bw;    /* B/s, the membus host's speed */
  double latency;    /* s, per kernel launch */
  double line;       /* B, cache line */
  double llc;        /* B, last-level cache of the container */
  double gather_bw;  /* B/s of missed lines, one core */
  double divider;    /* lanes/s of divisions and square roots, one core (0: the platform has none) */
  double lanes;      /* FP64 lanes of the core's vector datapath: scalar code's flops weigh that many */
  double search_rate, search_slot_rate; /* the measured search's particles/s and slots/s, one core (0: none) */
} platform_t;

/* the element <host id="name" ...> ... </host> (or <host .../>) of an XML text: [*b, *e) */
static int xml_host(const char *xml, const char *name, const char **b, const char **e)
{
  char key[128];
  snprintf(key, sizeof key, "<host id=\"%s\"", name);
  const char *s = strstr(xml, key);
  if (!s) return -1;
  const char *gt = strchr(s, '>');
  if (!gt) return -1;
  const char *end = gt[-1] == '/' ? gt + 1 : strstr(gt, "</host>");
  if (!end) return -1;
  *b = s;
  *e = end;
  return 0;
}

/* the value of attribute `attr` (attr="...") within [b, e), copied into out */
static int xml_attr(const char *b, const char *e, const char *attr, char *out, size_t len)
{
  char key[64];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *s = strstr(b, key);
  if (!s || s >= e) return -1;
  s += strlen(key);
  const char *q = strchr(s, '"');
  if (!q || q >= e || (size_t)(q - s) >= len) return -1;
  memcpy(out, s, (size_t)(q - s));
  out[q - s] = '\0';
  return 0;
}

/* <prop id="name" value="..."/> within [b, e) */
static int xml_prop(const char *b, const char *e, const char *name, char *out, size_t len)
{
  char key[96];
  snprintf(key, sizeof key, "<prop id=\"%s\"", name);
  const char *s = strstr(b, key);
  if (!s || s >= e) return -1;
  const char *gt = strchr(s, '>');
  if (!gt || gt >= e) return -1;
  return xml_attr(s, gt, "value", out, len);
}

/* a SimGrid speed ("4e+10f", "2.5Gf") or a plain number, in its base unit */
static int parse_rate(const char *txt, double *v)
{
  char *end;
  errno = 0;
  double x = strtod(txt, &end);
  if (errno || end == txt) return -1;
  static const struct { const char *unit; double scale; } units[] = {
    {"", 1.0}, {"f", 1.0}, {"kf", 1e3}, {"Mf", 1e6}, {"Gf", 1e9}, {"Tf", 1e12}};
  for (size_t i = 0; i < sizeof units / sizeof units[0]; ++i)
    if (strcmp(end, units[i].unit) == 0) {
      *v = x * units[i].scale;
      return x > 0.0 && isfinite(x) ? 0 : -1;
    }
  return -1;
}

static int platform_read(platform_t *pl, char *err, size_t errlen)
{
  FILE *f = fopen(pl->file, "rb");
  if (!f) {
    snprintf(err, errlen, "%s: %s", pl->file, strerror(errno));
    return -1;
  }
  static char xml[1 << 20];
  size_t len = fread(xml, 1, sizeof xml - 1, f);
  fclose(f);
  xml[len] = '\0';
  const char *b, *e;
  if (xml_host(xml, pl->host, &b, &e) != 0) {
    snprintf(err, errlen, "%s: no host '%s'", pl->file, pl->host);
    return -1;
  }
  char speed[64], core[16] = "1", core_bw[64], latency[64], membus[64], bus_speed[64], line[64], llc[64], gbw[64];
  if (xml_attr(b, e, "speed", speed, sizeof speed) != 0 || parse_rate(speed, &pl->core_flops) != 0) {
    snprintf(err, errlen, "%s: host '%s': missing or bad 'speed'", pl->file, pl->host);
    return -1;
  }
  xml_attr(b, e, "core", core, sizeof core); /* SimGrid's default: 1 */
  pl->cores = atoi(core);
  if (pl->cores < 1) {
    snprintf(err, errlen, "%s: host '%s': 'core' = '%s': expected a positive integer", pl->file, pl->host, core);
    return -1;
  }
  const char *props[] = {"core_bw", "launch_latency", "membus", "cache_line", "llc_bytes", "core_gather_bw"};
  char *vals[] = {core_bw, latency, membus, line, llc, gbw};
  for (int i = 0; i < 6; ++i)
    if (xml_prop(b, e, props[i], vals[i], 64) != 0) {
      snprintf(err, errlen, "%s: host '%s': missing property '%s'", pl->file, pl->host, props[i]);
      return -1;
    }
  if (parse_rate(line, &pl->line) != 0 || parse_rate(llc, &pl->llc) != 0 || parse_rate(gbw, &pl->gather_bw) != 0) {
    snprintf(err, errlen, "%s: host '%s': 'cache_line' = '%s', 'llc_bytes' = '%s': expected positive numbers",
             pl->file, pl->host, line, llc);
    return -1;
  }
  if (parse_rate(core_bw, &pl->core_bw) != 0 || parse_rate(latency, &pl->latency) != 0) {
    snprintf(err, errlen, "%s: host '%s': 'core_bw' = '%s', 'launch_latency' = '%s': expected positive numbers",
             pl->file, pl->host, core_bw, latency);
    return -1;
  }
  char divider[64], lanes[64];
  if (xml_prop(b, e, "divider_rate", divider, sizeof divider) == 0 && parse_rate(divider, &pl->divider) != 0) {
    snprintf(err, errlen, "%s: host '%s': 'divider_rate' = '%s': expected a positive number", pl->file, pl->host,
             divider);
    return -1;
  }
  pl->lanes = 1.0;
  if (xml_prop(b, e, "simd_lanes", lanes, sizeof lanes) == 0 && (parse_rate(lanes, &pl->lanes) != 0 || pl->lanes < 1.0)) {
    snprintf(err, errlen, "%s: host '%s': 'simd_lanes' = '%s': expected a number of at least 1", pl->file, pl->host,
             lanes);
    return -1;
  }
  char rate[64], slot_rate[64];
  if (xml_prop(b, e, "search_rate", rate, sizeof rate) == 0 &&
      (xml_prop(b, e, "search_slot_rate", slot_rate, sizeof slot_rate) != 0 || parse_rate(rate, &pl->search_rate) ||
       parse_rate(slot_rate, &pl->search_slot_rate))) {
    snprintf(err, errlen, "%s: host '%s': 'search_rate' needs 'search_slot_rate', both positive numbers", pl->file,
             pl->host);
    return -1;
  }
  if (xml_host(xml, membus, &b, &e) != 0 || xml_attr(b, e, "speed", bus_speed, sizeof bus_speed) != 0 ||
      parse_rate(bus_speed, &pl->node_bw) != 0) {
    snprintf(err, errlen, "%s: membus host '%s' of '%s': missing, or no valid 'speed'", pl->file, membus, pl->host);
    return -1;
  }
  return 0;
}

static double min2(double a, double b) { return a < b ? a : b; }
static double max2(double a, double b) { return a > b ? a : b; }

/* compute and traffic of one piece: the larger for streaming work, else their sum (sim/membus.c) */
static double combine(double t_flop, double t_mem, int streaming)
{
  return streaming ? max2(t_flop, t_mem) : t_flop + t_mem;
}

/* seconds the platform's host takes for the cost c on an idle node (the SMPI build's charge,
 * sim/clock.c and sim/membus.c: compute and the cache-line traffic, added, or the larger of the
 * two for streaming work) */
static double predict(const platform_t *pl, const sim_cost_t *c)
{
  double traffic = sim_cost_cpu_traffic(c, pl->line, pl->llc, pl->core_bw / pl->gather_bw);
  double flops = sim_cost_cpu_flops(c, pl->core_flops, pl->divider, pl->lanes);
  if (c->place == SIM_ON_HOST)
    return combine(flops / pl->core_flops, traffic / min2(pl->core_bw, pl->node_bw), sim_cost_streaming(c));
  double bw = min2(pl->cores * pl->core_bw, pl->node_bw);
  return combine(flops / (pl->cores * pl->core_flops) + pl->latency, traffic / bw, sim_cost_streaming(c));
}

static double wall(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU time of the whole process (PoCL's worker threads included) */
static double cpu_now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

enum { T_SEARCH, T_BINNING, T_FORCES, T_BOUNDARIES, T_EXTERNAL, T_FORCES_ALL, T_KICK_DRIFT, T_COUNT };
static const char *timed_names[T_COUNT] = {"search", "binning", "forces", "boundaries", "external",
                                            "forces_all", "kick_drift"};
static const dem_work_kind_t timed_kinds[T_COUNT] = {DEM_WORK_SEARCH, DEM_WORK_BINNING, DEM_WORK_FORCES,
                                                     DEM_WORK_BOUNDARIES, DEM_WORK_EXTERNAL, DEM_WORK_FORCES_ALL,
                                                     DEM_WORK_INTEGRATE};

typedef struct packing {
  const char *name;
  double ratio; /* diameter / spacing */
} packing_t;

typedef struct run_opts {
  int sizes[MAX_SIZES], n_sizes;
  int reps;
  double check;
  const packing_t *packings[3];
  int n_packings;
  int reference; /* --reference: time the C reference's pair pass too (reference_pair_pass) */
  int turns;     /* --search-turns: only the searches against the force kernel, in turns (search_turns) */
} run_opts_t;

/* The particles the search kernel examines per owned particle, on average: everything in the
 * buckets of the 9 rows of three cells around its cell (kernels/search.cl), other cells sharing
 * them included. */
static double search_candidates(const dem_grid_t *g, const dem_particles_t *p)
{
  double sum = 0.0;
  for (size_t i = 0; i < p->n; ++i) {
    int32_t c[3];
    for (int d = 0; d < 3; ++d) c[d] = dem_grid_coord(p->pos[3 * i + d], g->origin[d], g->h);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy) {
        int32_t run[6];
        int runs = dem_grid_row_runs(g, c[0], c[1] + dy, c[2] + dz, run);
        for (int r = 0; r < runs; ++r) sum += run[2 * r + 1] - run[2 * r];
      }
  }
  return p->n ? sum / (double)p->n : 0.0;
}

/* One row of the table: kernel k's measured times (tk, uk: device and CPU seconds of the
 * repetitions, sorted here) beside the model's for its cost c (and cw, the fused step's wall
 * pass). Returns 1 when the ratio is outside the --check factor. */
static int report_row(const platform_t *pl, const packing_t *pk, int k, const dem_work_t *wk, const sim_cost_t *pc,
                      const sim_cost_t *pcw, const dem_engine_work_t *pww, double *tk, double *uk,
                      const run_opts_t *o)
{
  const dem_work_t w = *wk;
  const sim_cost_t c = *pc, cw = *pcw;
  const dem_engine_work_t ww = *pww;
  qsort(tk, (size_t)o->reps, sizeof(double), cmp_double);
  qsort(uk, (size_t)o->reps, sizeof(double), cmp_double);
  const int cores = c.place == SIM_ON_HOST ? 1 : pl->cores;
  double best = tk[0], median = tk[o->reps / 2], cpu = uk[o->reps / 2] / cores;
  const int pass2 = cw.flops > 0.0 || cw.bytes > 0.0; /* the fused step's wall pass */
  double flops = c.flops + cw.flops, divsqrt = c.divsqrt + cw.divsqrt;
  double t_flop = (sim_cost_cpu_flops(&c, pl->core_flops, pl->divider, pl->lanes) +
                   (pass2 ? sim_cost_cpu_flops(&cw, pl->core_flops, pl->divider, pl->lanes) : 0.0)) / (cores * pl->core_flops);
  double traffic = sim_cost_cpu_traffic(&c, pl->line, pl->llc, pl->core_bw / pl->gather_bw) +
                   (pass2 ? sim_cost_cpu_traffic(&cw, pl->line, pl->llc, pl->core_bw / pl->gather_bw) : 0.0);
  double t_mem = traffic / (c.place == SIM_ON_HOST ? min2(pl->core_bw, pl->node_bw)
                                                   : min2(pl->cores * pl->core_bw, pl->node_bw));
  const int streaming = sim_cost_streaming(&c) && (!pass2 || sim_cost_streaming(&cw));
  double roof = combine(t_flop, t_mem, streaming), charged = predict(pl, &c) + (pass2 ? predict(pl, &cw) : 0.0);
  if (k == T_SEARCH && pl->search_rate > 0.0) /* at the measured rates (sim/clock.c), on an idle bus */
    charged = (w.particles / pl->search_rate + w.pairs / pl->search_slot_rate) / cores + pl->latency;
  double ratio = best / roof;
  int bad = o->check > 0.0 && (ratio > o->check || ratio < 1.0 / o->check);
  const int fused = k == T_FORCES_ALL;
  printf("%-7s %6.0f %-10s %7.0f %7.0f %5.0f %5.0f | %9.3g %9.3g | %9.1f %9.1f %9.1f | %6.2f %6.2f | %9.1f %-4s "
         "%9.1f | %6.2f %9.3g%s\n",
         pk->name, w.particles, timed_names[k], w.pairs, w.contacts, fused ? ww.pairs : 0.0,
         fused ? ww.contacts : 0.0, flops, traffic, 1e6 * best, 1e6 * median, 1e6 * cpu, 1e-9 * traffic / best,
         1e-9 * flops / best, 1e6 * roof, t_mem >= t_flop ? "mem" : "flop", 1e6 * charged, ratio,
         divsqrt, bad ? "  OUTSIDE" : "");
  return bad;
}

/* --reference: the same pair pass in the C reference (solver/dem/physics_ref.c, scalar code, one
 * pair at a time) over the same particles, its neighbour list from the reference search on the
 * same grid, timed right after the kernel's pair pass in each of reps rounds (a neighbour that
 * slows this core for a while slows both of a round's passes: the ratio is taken per round, and
 * its median reported). That ratio is how many times slower scalar code does the kernels' work
 * on this core: what a platform's simd_lanes stands for (sim/cost.c), measured instead of taken
 * from the FMA loops' widths (on a core whose FMA units are wider than the kernels can use,
 * those overstate it). Returns 0, or -1. */
static int reference_pair_pass(dem_engine_t *e, dem_particles_t *p, const dem_params_t *prm, const dem_grid_t *g,
                               const packing_t *pk, double kernel_pairs, int reps)
{
  dem_search_result_t sr = dem_ref_search(p, prm, g);
  if (sr.overflow) {
    fprintf(stderr, "calibrate_cost: the reference search overflowed the neighbour slots\n");
    return -1;
  }
  double best = 1e300, kbest = 1e300, ratio[MAX_REPS];
  dem_force_result_t fr = {0};
  for (int r = 0; r < reps; ++r) {
    if (dem_engine_forces(e) != 0 || dem_engine_pull(e, 0, 0, 0) != 0) {
      fprintf(stderr, "calibrate_cost: the kernel's pair pass failed beside the reference\n");
      return -1;
    }
    double k = dem_engine_kernel_seconds(e), w0 = wall();
    fr = dem_ref_forces(p, prm);
    double ref = wall() - w0;
    best = min2(best, ref);
    kbest = min2(kbest, k);
    ratio[r] = ref / k;
  }
  qsort(ratio, (size_t)reps, sizeof(double), cmp_double);
  printf("%-7s %6.0f %-10s %7.0f %7.0f | C reference pair pass best %.1f us (kernel %.1f us over %.0f pairs; "
         "each round's reference over its kernel, median of %d): scalar over lanes %.2f\n",
         pk->name, (double)p->n, "forces_ref", fr.pairs, fr.contacts, 1e6 * best, 1e6 * kbest, kernel_pairs, reps,
         ratio[(reps - 1) / 2]);
  fflush(stdout);
  return 0;
}

/* An engine call that must succeed: else its message, and -1 */
#define TRY(call, what)                                                            \
  do {                                                                                     \
    if ((call) != 0) {                                                                     \
      fprintf(stderr, "calibrate_cost: %s: %s\n", what, dem_engine_error(e));               \
      return -1;                                                                           \
    }                                                                                      \
  } while (0)

/* What the timed rounds are compared with: the search's slots, the pair pass's slots and contacts
 * (pw) and the wall pass's (ww), after two plain steps (the contact counters read back by
 * kick-drift then describe this packing). Profiling is on after it. 0 or -1. */
static int warm_up(dem_engine_t *e, double *slots, dem_engine_work_t *pw, dem_engine_work_t *ww)
{
  for (int step = 0; step < 2; ++step) {
    TRY(dem_engine_search(e), "search");
    TRY(dem_engine_forces(e), "forces");
    TRY(dem_engine_boundaries(e), "boundaries");
    TRY(dem_engine_external(e), "external");
    TRY(dem_engine_kick_drift(e, 0.0), "kick-drift");
  }
  TRY(dem_engine_search(e), "search");
  *slots = dem_engine_last_work(e).pairs;
  TRY(dem_engine_forces(e), "forces");
  *pw = dem_engine_last_work(e);
  TRY(dem_engine_boundaries(e), "boundaries");
  *ww = dem_engine_last_work(e);
  TRY(dem_engine_external(e), "external");
  TRY(dem_engine_kick_drift(e, 0.0), "kick-drift");
  TRY(dem_engine_profile(e, 1), "profiling");
  return 0;
}

/* One timed round r of every kernel: t[k][r] its device time, u[k][r] the process CPU time
 * around it; the binning is timed on the host (h: the cell edge). 0 or -1. */
static int time_round(dem_engine_t *e, dem_grid_t *g, const dem_particles_t *p, const dem_params_t *prm, double h,
                      int r, double *const *t, double *const *u)
{
  double c0;
  dem_engine_kernel_seconds(e);
  /* the engine's search bins on the host first: its CPU time is taken off below */
  c0 = cpu_now();
  TRY(dem_engine_search(e), "search");
  u[T_SEARCH][r] = cpu_now() - c0;
  t[T_SEARCH][r] = dem_engine_kernel_seconds(e);
  size_t bad = 0;
  double w0 = wall();
  c0 = cpu_now();
  if (dem_grid_build(g, p->pos, p->n + p->n_ghost, h, prm->box_lo, &bad) != 0) {
    fprintf(stderr, "calibrate_cost: binning failed\n");
    return -1;
  }
  u[T_BINNING][r] = cpu_now() - c0;
  t[T_BINNING][r] = wall() - w0;
  u[T_SEARCH][r] = max2(u[T_SEARCH][r] - u[T_BINNING][r], 0.0);
  c0 = cpu_now();
  TRY(dem_engine_forces(e), "forces");
  TRY(dem_engine_pull(e, 0, 0, 0), "forces"); /* pulls nothing: launches the pending forces alone */
  u[T_FORCES][r] = cpu_now() - c0;
  t[T_FORCES][r] = dem_engine_kernel_seconds(e);
  c0 = cpu_now();
  TRY(dem_engine_boundaries(e), "boundaries"); /* nothing pending: runs alone */
  u[T_BOUNDARIES][r] = cpu_now() - c0;
  t[T_BOUNDARIES][r] = dem_engine_kernel_seconds(e);
  c0 = cpu_now();
  TRY(dem_engine_external(e), "external");
  u[T_EXTERNAL][r] = cpu_now() - c0;
  t[T_EXTERNAL][r] = dem_engine_kernel_seconds(e);
  c0 = cpu_now();
  TRY(dem_engine_forces(e), "forces");
  TRY(dem_engine_boundaries(e), "boundaries");
  TRY(dem_engine_external(e), "forces_all"); /* the three, fused */
  u[T_FORCES_ALL][r] = cpu_now() - c0;
  t[T_FORCES_ALL][r] = dem_engine_kernel_seconds(e);
  c0 = cpu_now();
  TRY(dem_engine_kick_drift(e, 0.0), "kick-drift");
  u[T_KICK_DRIFT][r] = cpu_now() - c0;
  t[T_KICK_DRIFT][r] = dem_engine_kernel_seconds(e);
  return 0;
}

/* The device -> host copies the solver makes (dem_engine_pull, blocking), on the host's wall
 * clock and in process CPU time: one field of one particle (a command and its wait: the fixed
 * cost) and every field of every particle (the ghost registration's pull: a command per array of
 * the store, one wait). The buffers are the store's own memory (CL_MEM_USE_HOST_PTR), so what a
 * copy costs here is the runtime's commands, not bytes. Row per copy: commands, bytes, wall best,
 * median, CPU median (us). Returns 0, or -1. */
enum { C_ONE, C_ALL, C_COUNT };
static int time_copies(dem_engine_t *e, const dem_particles_t *p, const packing_t *pk, int reps)
{
  static const char *names[C_COUNT] = {"pull_one", "pull_all"};
  const unsigned fields[C_COUNT] = {DEM_F_POS, DEM_F_ALL};
  const size_t counts[C_COUNT] = {1, p->n};
  double t[MAX_REPS], u[MAX_REPS];
  if (dem_engine_finish(e) != 0) return -1;
  for (int c = 0; c < C_COUNT; ++c) {
    for (int r = 0; r < reps; ++r) {
      double w0 = wall(), c0 = cpu_now();
      if (dem_engine_pull(e, fields[c], 0, counts[c]) != 0) return -1;
      t[r] = wall() - w0;
      u[r] = cpu_now() - c0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    qsort(u, (size_t)reps, sizeof(double), cmp_double);
    int commands = 0;
    for (int b = 0; b < DEM_ARRAY_COUNT; ++b) commands += (fields[c] & dem_particle_arrays[b].flag) != 0;
    printf("%-7s %6.0f %-10s commands %d bytes %.0f | wall best %.1f median %.1f cpu %.1f us\n", pk->name,
           (double)p->n, names[c], commands, (double)dem_particles_rows_bytes(p, fields[c], counts[c]), 1e6 * t[0],
           1e6 * t[reps / 2], 1e6 * u[reps / 2]);
  }
  fflush(stdout);
  return 0;
}

/* The ghost registration's permutation of the store (dem_particles_permute, in place), on the host's
 * wall clock: every 50th particle moved last, the others keeping their order (a stable partition,
 * as move_border_last's, with the border spread through the store), so that nearly every row
 * moves. Row: rows moved, their bytes, wall best, median, CPU median (us): probe.json's
 * permute_*, a platform's permute_bw. Returns 0, or -1. */
static int time_permute(dem_particles_t *p, const packing_t *pk, int reps)
{
  const size_t n = p->n, every = 50;
  size_t *perm = malloc((n ? n : 1) * sizeof *perm), k = 0, moved = 0;
  double t[MAX_REPS], u[MAX_REPS];
  if (!perm) return -1;
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < n; ++i)
      if ((i % every == every - 1) == pass) perm[k++] = i;
  for (size_t i = 0; i < n; ++i) moved += perm[i] != i;
  for (int r = 0; r < reps; ++r) {
    double w0 = wall(), c0 = cpu_now();
    if (dem_particles_permute(p, perm, n) != 0) {
      free(perm);
      return -1;
    }
    t[r] = wall() - w0;
    u[r] = cpu_now() - c0;
  }
  free(perm);
  qsort(t, (size_t)reps, sizeof(double), cmp_double);
  qsort(u, (size_t)reps, sizeof(double), cmp_double);
  printf("%-7s %6.0f %-10s rows %.0f bytes %.0f | wall best %.1f median %.1f cpu %.1f us\n", pk->name, (double)n,
         "permute", (double)moved, (double)moved * (double)dem_particles_bytes_per_particle(p->slots), 1e6 * t[0],
         1e6 * t[reps / 2], 1e6 * u[reps / 2]);
  fflush(stdout);
  return 0;
}

/* The migration's compaction (partition.c cb_mid_migrate) on the host's wall clock: of every 53
 * particles the last 9 leave (runs of 44 kept, as an RCB cut across the lattice's rows left
 * them in the runs measured), the kept ones close up. Two ways, alternating within each
 * repetition: run by run with dem_particles_move_rows (the code's), and particle by particle
 * with dem_particles_copy_one (the way before it). The store's count is put back after each (the
 * rows' contents do not matter to the time). Rows: particles moved, the charge's bytes (whole
 * rows: partition.c), wall best and median (us). */
static void time_compact(dem_particles_t *p, const packing_t *pk, int reps)
{
  const size_t n = p->n, block = 53, keep = 44;
  double t[2][MAX_REPS];
  size_t moved = 0;
  for (int r = 0; r < reps; ++r)
    for (int way = 0; way < 2; ++way) {
      size_t kept = 0;
      double w0 = wall();
      for (size_t i = 0; i < n;) {
        if (i % block >= keep) { /* an export */
          ++i;
          continue;
        }
        size_t end = i - i % block + keep < n ? i - i % block + keep : n;
        if (way == 0 && kept != i) dem_particles_move_rows(p, kept, i, end - i);
        for (size_t j = i; way == 1 && kept != i && j < end; ++j) dem_particles_copy_one(p, kept + j - i, p, j);
        kept += end - i;
        i = end;
      }
      t[way][r] = wall() - w0;
      moved = kept;
      p->n = n;
    }
  for (int way = 0; way < 2; ++way) {
    qsort(t[way], (size_t)reps, sizeof(double), cmp_double);
    printf("%-7s %6.0f %-10s rows %.0f bytes %.0f | wall best %.1f median %.1f us\n", pk->name, (double)n,
           way ? "compact1" : "compact", (double)moved, (double)moved * (double)dem_particles_bytes_per_particle(p->slots),
           1e6 * t[way][0], 1e6 * t[way][reps / 2]);
  }
  fflush(stdout);
}

/* Each kernel's timed rounds against the model's charge for its work; one line each. The number
 * of kernels outside the --check factor, or -1 when the model rejects a work report. */
static int compare_rows(const platform_t *pl, const packing_t *pk, double n, double binned, double slots,
                        dem_engine_work_t pw, dem_engine_work_t ww, double *const *t, double *const *u,
                        const run_opts_t *o)
{
  int outside = 0;
  for (int k = 0; k < T_COUNT; ++k) {
    dem_work_t w = {.kind = timed_kinds[k], .particles = n};
    /* the wall pass over the wall list: the boundaries kernel, and the fused step's second one */
    dem_work_t walls = {.kind = DEM_WORK_BOUNDARIES, .particles = ww.particles, .pairs = ww.pairs,
                        .contacts = ww.contacts, .reach = n};
    switch (k) {
    case T_SEARCH: w.pairs = slots; break;
    case T_BINNING: w.particles = binned; break;
    case T_FORCES: case T_FORCES_ALL: w.pairs = pw.pairs, w.contacts = pw.contacts; break;
    case T_BOUNDARIES: w = walls; break;
    default: break;
    }
    sim_cost_t c, cw = {0};
    if (sim_cost_of(&w, &c) != 0 || (k == T_FORCES_ALL && walls.particles > 0.0 && sim_cost_of(&walls, &cw) != 0)) {
      fprintf(stderr, "calibrate_cost: the cost model rejected %s\n", timed_names[k]);
      return -1;
    }
    outside += report_row(pl, pk, k, &w, &c, &cw, &ww, t[k], u[k], o);
  }
  return outside;
}

/* Times every kernel over one packing of s^3 particles; prints one line per kernel. Returns the
 * number of kernels outside the --check factor, or -1 on error. */
/* One lattice of s^3 particles at a packing, its grid and its OpenCL engine, warmed up (warm_up). */
typedef struct bench {
  dem_params_t prm;
  dem_particles_t *p;
  dem_grid_t *g;
  dem_engine_t *e;
  double slots, h; /* the search's slots; the cell edge */
  dem_engine_work_t pw, ww;
} bench_t;

static void bench_close(bench_t *b)
{
  dem_engine_destroy(&b->e);
  dem_grid_destroy(&b->g);
  dem_particles_destroy(&b->p);
}

static int bench_open(bench_t *b, const packing_t *pk, int s)
{
  const double spacing = 0.01; /* m; the counts do not depend on the scale */
  char err[1024] = "";
  *b = (bench_t){.prm = dem_test_params(1e-8, 0.005 * pk->ratio * spacing)};
  b->p = dem_test_lattice(&b->prm, s, s, s, spacing, pk->ratio * spacing, 0.0, 1e-3, 1e-1, 0, 7);
  b->g = dem_grid_create();
  if (!b->p || !b->g || dem_params_derive(&b->prm, err, sizeof err) != 0) {
    fprintf(stderr, "calibrate_cost: set-up of %d^3 particles: %s\n", s, err[0] ? err : "out of memory");
    return -1;
  }
  dem_engine_opts_t eo = {.backend = DEM_BACKEND_OPENCL, .cl_platform = -1, .cl_device = -1, .cl_device_type = "any"};
  b->e = dem_engine_create(&eo, &b->prm, b->p, err, sizeof err);
  if (!b->e) {
    fprintf(stderr, "calibrate_cost: OpenCL engine: %s\n", err);
    return -1;
  }
  b->h = 2.0 * b->p->radius[0] + b->prm.skin;
  return warm_up(b->e, &b->slots, &b->pw, &b->ww);
}

static int calibrate(const platform_t *pl, const packing_t *pk, int s, const run_opts_t *o)
{
  bench_t b;
  double *t[T_COUNT] = {NULL}, *u[T_COUNT] = {NULL}; /* s: device time, process CPU time */
  int outside = -1;
  if (bench_open(&b, pk, s) != 0) goto done;
  for (int k = 0; k < T_COUNT; ++k)
    if (!(t[k] = calloc((size_t)o->reps, sizeof(double))) || !(u[k] = calloc((size_t)o->reps, sizeof(double))))
      goto done;
  dem_engine_t *e = b.e;
  dem_particles_t *p = b.p;
  double candidates = 0.0;
  for (int r = 0; r < o->reps; ++r) {
    if (time_round(e, b.g, p, &b.prm, b.h, r, t, u) != 0) goto done;
    if (r == 0) candidates = search_candidates(b.g, p);
  }
  const double n = (double)p->n;
  outside = compare_rows(pl, pk, n, (double)(p->n + p->n_ghost), b.slots, b.pw, b.ww, t, u, o);
  if (outside < 0) goto done;
  printf("%-7s %6.0f %-10s candidates examined per particle: %.1f (the model: %.0f)\n", pk->name, n,
         "search", candidates, SEARCH_CANDIDATES_MODEL);
  fflush(stdout);
  if (time_copies(e, p, pk, o->reps) != 0) {
    fprintf(stderr, "calibrate_cost: a device -> host copy failed: %s\n", dem_engine_error(e));
    outside = -1;
    goto done;
  }
  /* last: the store's rows change order (the engine's buffers wrap the same memory) */
  if (time_permute(p, pk, o->reps) != 0) {
    fprintf(stderr, "calibrate_cost: the store's permutation ran out of memory\n");
    outside = -1;
    goto done;
  }
  time_compact(p, pk, o->reps);
  if (o->reference && reference_pair_pass(e, p, &b.prm, b.g, pk, b.pw.pairs, o->reps) != 0)
    outside = -1;
done:
  for (int k = 0; k < T_COUNT; ++k) {
    free(t[k]);
    free(u[k]);
  }
  bench_close(&b);
  return outside;
}

/* The search's device time, s, or -1 */
static double search_time(dem_engine_t *e)
{
  dem_engine_kernel_seconds(e);
  return dem_engine_search(e) == 0 ? dem_engine_kernel_seconds(e) : -1.0;
}

/* --search-turns: the search over the apart lattice, the search over the contact lattice and the
 * contact-force kernel (the pair pass, the wall pass and the external forces, as in forces_all)
 * over the contact lattice, one after the other in each of reps turns. A host whose rate changes
 * for a while changes all three of a turn alike, so the ratios of the two searches to the force
 * kernel are taken per turn and their medians reported (as reference_pair_pass does): what a
 * particle's candidates and a written slot cost against the kernel a probed platform's core rate
 * comes from (demsim probe; platforms/make_platforms.py, search_rates). Returns 0, or -1. */
static int search_turns(const packing_t *apart, const packing_t *contact, int s, int reps)
{
  bench_t a, c;
  int rc = -1, opened = bench_open(&a, apart, s);
  opened |= bench_open(&c, contact, s);
  double *t = calloc((size_t)reps * 5, sizeof(double)); /* apart, contact, forces; the two ratios */
  if (opened != 0 || !t) goto done;
  for (int r = 0; r < reps; ++r) {
    double ta = search_time(a.e), tc = search_time(c.e);
    dem_engine_kernel_seconds(c.e);
    if (ta < 0.0 || tc < 0.0 || dem_engine_forces(c.e) || dem_engine_boundaries(c.e) || dem_engine_external(c.e)) {
      fprintf(stderr, "calibrate_cost: search turns: %s\n", dem_engine_error(ta < 0.0 ? a.e : c.e));
      goto done;
    }
    double tf = dem_engine_kernel_seconds(c.e);
    t[r] = ta, t[reps + r] = tc, t[2 * reps + r] = tf, t[3 * reps + r] = ta / tf, t[4 * reps + r] = tc / tf;
  }
  for (int k = 0; k < 5; ++k) qsort(t + k * reps, (size_t)reps, sizeof(double), cmp_double);
  printf("search-turns %.0f particles, slots apart %.0f contact %.0f | best us: search apart %.1f, search contact "
         "%.1f, forces_all contact %.1f | over forces_all, median of %d turns: apart %.4f contact %.4f\n",
         (double)a.p->n, a.slots, c.slots, 1e6 * t[0], 1e6 * t[reps], 1e6 * t[2 * reps], reps,
         t[3 * reps + reps / 2], t[4 * reps + reps / 2]);
  rc = 0;
done:
  free(t);
  bench_close(&a);
  bench_close(&c);
  return rc;
}

static int usage(const char *msg)
{
  fprintf(stderr,
          "calibrate_cost: %s\nusage: calibrate_cost [--platform FILE] [--host NAME] [--sizes 10,20,40] [--reps 10]\n"
          "                      [--packings apart,listed,contact] [--check FACTOR]\n"
          "                      [--reference 1]  (also the C reference's pair pass: scalar over lanes)\n"
          "                      [--search-turns 1]  (only the search apart and in contact against the\n"
          "                      contact-force kernel, in turns: a probed platform's search_rate)\n",
          msg);
  return 2;
}

int main(int argc, char **argv)
{
  static const packing_t all[3] = {{"apart", 0.99}, {"listed", 0.998}, {"contact", 1.001}};
  platform_t pl = {.host = "local"};
  snprintf(pl.file, sizeof pl.file, "%s/platforms/local.xml", DEMSIM_SOURCE_DIR);
  run_opts_t o = {.sizes = {10, 20, 40}, .n_sizes = 3, .reps = 10, .n_packings = 3,
                  .packings = {&all[0], &all[1], &all[2]}};
  for (int a = 1; a < argc; ++a) {
    const char *v = a + 1 < argc ? argv[a + 1] : NULL;
    if (!v) return usage("every option takes a value");
    if (strcmp(argv[a], "--platform") == 0) snprintf(pl.file, sizeof pl.file, "%s", v);
    else if (strcmp(argv[a], "--host") == 0) snprintf(pl.host, sizeof pl.host, "%s", v);
    else if (strcmp(argv[a], "--reps") == 0) {
      o.reps = atoi(v);
      if (o.reps < 1 || o.reps > MAX_REPS) return usage("--reps: expected 1 to 1000");
    } else if (strcmp(argv[a], "--reference") == 0) {
      o.reference = strcmp(v, "1") == 0;
      if (!o.reference && strcmp(v, "0") != 0) return usage("--reference: expected 0 or 1");
    } else if (strcmp(argv[a], "--search-turns") == 0) {
      o.turns = strcmp(v, "1") == 0;
      if (!o.turns && strcmp(v, "0") != 0) return usage("--search-turns: expected 0 or 1");
    } else if (strcmp(argv[a], "--check") == 0) {
      o.check = strtod(v, NULL);
      if (!(o.check > 1.0)) return usage("--check: expected a factor > 1");
    } else if (strcmp(argv[a], "--sizes") == 0) {
      o.n_sizes = 0;
      for (const char *s = v; *s && o.n_sizes < MAX_SIZES; s = strchr(s, ',') ? strchr(s, ',') + 1 : "") {
        int x = atoi(s);
        if (x < 2 || x > 200) return usage("--sizes: expected lattice edges of 2 to 200 particles, comma-separated");
        o.sizes[o.n_sizes++] = x;
      }
      if (o.n_sizes == 0) return usage("--sizes: empty");
    } else if (strcmp(argv[a], "--packings") == 0) {
      o.n_packings = 0;
      for (int i = 0; i < 3; ++i)
        if (strstr(v, all[i].name)) o.packings[o.n_packings++] = &all[i];
      if (o.n_packings == 0) return usage("--packings: expected apart, listed and/or contact");
    } else {
      return usage("unknown option");
    }
    ++a;
  }
  char err[1024];
  if (platform_read(&pl, err, sizeof err) != 0) {
    fprintf(stderr, "calibrate_cost: %s\n", err);
    return 2;
  }
  if (o.turns) {
    for (int i = 0; i < o.n_sizes; ++i)
      if (search_turns(&all[0], &all[2], o.sizes[i], o.reps) != 0) return 1;
    return 0;
  }
  printf("# platform %s, host %s: %d cores of %.3g flop/s, core_bw %.3g B/s, node bandwidth %.3g B/s, "
         "launch latency %.3g s, cache line %.0f B, last-level cache %.3g B, divider %.3g lanes/s, "
         "%g FP64 lanes (scalar kernels' flops weigh that many)\n",
         pl.file, pl.host, pl.cores, pl.core_flops, pl.core_bw, pl.node_bw, pl.latency, pl.line, pl.llc, pl.divider,
         pl.lanes);
  printf("# times in us. best, median: device time of %d repetitions (OpenCL profiling; binning: host wall\n"
         "#   clock); cpu: median process CPU time over the host's %d cores (PoCL's threads: what the kernel\n"
         "#   costs on an idle machine if its work splits evenly; the search's excludes the host binning;\n"
         "#   with PoCL on fewer cores, e.g. POCL_MAX_PTHREAD_COUNT=1, pass --host of as many: local-0)\n",
         o.reps, pl.cores);
  printf("# counts as the engine reports them to the clock (boundaries: the wall pass, n = the particles\n"
         "#   of the wall list, wall slots and contacts in pairs, contacts; forces_all: the pair pass over\n"
         "#   all n, then the wall pass over the listed ones, its slots and contacts in walls, wallc, two\n"
         "#   launches); bytes: the model's DRAM traffic; GB/s, GF/s: traffic and flops over the best time\n");
  printf("# model: flops / (cores x rate) + traffic / bandwidth (streaming kernels, nothing gathered:\n"
         "#   the larger of the two), the divisions and square roots of the\n"
         "#   flops (divsqrt) at the divider's rate (divider_rate), bound: its larger term;\n"
         "#   charged: what the SMPI build charges (sim/membus.c: launch latency added to the flop term);\n"
         "#   ratio: best / model\n");
  printf("%-7s %6s %-10s %7s %7s %5s %5s | %9s %9s | %9s %9s %9s | %6s %6s | %9s %-4s %9s | %6s %9s\n", "packing",
         "n", "kernel", "pairs", "contact", "walls", "wallc", "flops", "bytes", "best", "median", "cpu", "GB/s", "GF/s",
         "model", "bnd", "charged", "ratio", "divsqrt");
  int outside = 0;
  for (int q = 0; q < o.n_packings; ++q)
    for (int i = 0; i < o.n_sizes; ++i) {
      int rc = calibrate(&pl, o.packings[q], o.sizes[i], &o);
      if (rc < 0) return 1;
      outside += rc;
    }
  if (o.check > 0.0) {
    printf("# check: %d kernel runs outside a factor %g of the prediction\n", outside, o.check);
    return outside ? 1 : 0;
  }
  return 0;
}
