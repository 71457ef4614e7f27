/* `demsim probe` (see probe.h). Design:
 * - One MPI rank per entry of --hosts; started by mpirun with --bind-to none, so that the node
 *   leader (the lowest rank of a node) may place its measurements on any core. The other ranks
 *   of a node only wait: a host listed twice is there for the intra-node pair.
 * - Every measurement of a node is a child process with its own affinity (sched_setaffinity
 *   between fork and exec): bwprobe (validation/probes/bwprobe.c, built as demsim-bwprobe beside
 *   demsim) for memory and FP64, stress-ng beside it for the co-located case, and demsim
 *   itself (`run`, one rank) for the DEM kernels on k cores with PoCL limited to k compute
 *   units, and under a nested mpirun (two ranks) for Zoltan's rate in the solver's repartition.
 *   The children get this process's environment without Open MPI's variables, or a nested
 *   demsim would take itself for a rank of the probe.
 * - Ranks that wait (for their node's leader, for a pair) sleep between polls of a
 *   non-blocking barrier: a blocking MPI barrier spins on a core, which the leader is measuring.
 * - Nodes measure at the same time (they share nothing but the network, which is idle then);
 *   pairs of ranks ping-pong one pair at a time, every other rank waiting at a barrier.
 * - Leaders send their node as a line of JSON (summary.c writes and reads every JSON file);
 *   rank 0 writes DIR/probe.json and, after MPI_Finalize, runs
 *   platforms/make_platforms.py --probe on it. */
#define _GNU_SOURCE
#include "run/probe.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "base/parallel.h"
#include "io/summary.h"
#include "run/cli.h"
#include "scenario/hostmap.h"

extern char **environ;

const long dem_probe_sizes[DEM_PROBE_SIZES] = {8, 1024, 65536, 1048576, 8388608};
/* timed round trips per size (full, quick): fewer for the large messages */
static const int reps_full[DEM_PROBE_SIZES] = {1000, 1000, 200, 50, 20};
static const int reps_quick[DEM_PROBE_SIZES] = {100, 100, 30, 10, 5};

#define PROBE_PATH 4096
#define STRESS_CMD "stress-ng --quiet --vm 1 --vm-bytes 1G --vm-keep"

/* What every measurement of this node needs: options, paths, the cores it may use. */
typedef struct probe_ctx {
  const dem_cli_probe_t *opt;
  char self[PROBE_PATH];    /* this program */
  char bwprobe[PROBE_PATH]; /* demsim-bwprobe, beside it */
  char calibrate[PROBE_PATH]; /* validation/calibrate_cost of the same build tree */
  char dir[PROBE_PATH];     /* --out */
  char name[256];           /* short host name: the prefix of progress lines */
  int cpus[CPU_SETSIZE];    /* the cores this process may run on, in order */
  int n_cpus;
} probe_ctx_t;

/* ---- child processes ---------------------------------------------------------------------- */

static int is_mpi_variable(const char *e)
{
  return !strncmp(e, "OMPI_", 5) || !strncmp(e, "PMIX_", 5) || !strncmp(e, "OPAL_", 5) || !strncmp(e, "ORTE_", 5);
}

/* A child process: args[0] found in PATH, this environment without Open MPI's variables (and
 * with PoCL limited to pocl_cu threads when > 0), running on cpus[0..n_cpus) (all of this
 * process's when n_cpus = 0), stdout into out_path when not NULL; in a process group of its own
 * when own_group (stress-ng: its workers end with it). */
static pid_t spawn(char *const *args, int pocl_cu, const int *cpus, int n_cpus, const char *out_path, int own_group)
{
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid > 0 && own_group) setpgid(pid, pid); /* in both, whichever runs first */
  if (pid != 0) return pid;
  if (own_group) setpgid(0, 0);
  for (int i = 0; environ[i];)
    if (is_mpi_variable(environ[i])) {
      char name[256];
      size_t len = strcspn(environ[i], "=");
      snprintf(name, sizeof name, "%.*s", (int)len, environ[i]);
      unsetenv(name);
    } else
      i++;
  if (pocl_cu > 0) dem_pocl_thread_limit(pocl_cu, 1);
  if (n_cpus > 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < n_cpus; i++) CPU_SET(cpus[i], &set);
    if (sched_setaffinity(0, sizeof set, &set)) fprintf(stderr, "demsim: probe: cannot pin %s: %s\n", args[0], strerror(errno));
  }
  if (out_path && !freopen(out_path, "w", stdout)) _exit(126);
  execvp(args[0], args);
  fprintf(stderr, "demsim: probe: cannot run %s: %s\n", args[0], strerror(errno));
  _exit(127);
}

/* Waits for a child; 0 when it exited with 0. */
static int wait_child(pid_t pid, const char *what)
{
  int status = 0;
  if (pid < 0) return -1;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  fprintf(stderr, "demsim: probe: %s %s %d\n", what, WIFEXITED(status) ? "exited with" : "was killed by signal",
          WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
  return -1;
}

static int in_path(const char *prog)
{
  const char *path = getenv("PATH");
  char buf[PROBE_PATH];
  if (!path) return 0;
  for (const char *p = path; *p;) {
    size_t len = strcspn(p, ":");
    snprintf(buf, sizeof buf, "%.*s/%s", (int)len, p, prog);
    if (access(buf, X_OK) == 0) return 1;
    p += len + (p[len] == ':');
  }
  return 0;
}


static void progress(const probe_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const probe_ctx_t *c, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  printf("%s: ", c->name);
  vprintf(fmt, ap);
  printf("\n");
  fflush(stdout);
  va_end(ap);
}

static void add_command(dem_probe_node_t *nd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_command(dem_probe_node_t *nd, const char *fmt, ...)
{
  if (nd->n_commands >= DEM_PROBE_MAX_COMMANDS) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(nd->commands[nd->n_commands++], sizeof nd->commands[0], fmt, ap);
  va_end(ap);
}

/* ---- node facts ----------------------------------------------------------------------------- */

/* The value after "key" and ':' on the first line of path that starts with key. */
static int file_field(const char *path, const char *key, char *out, size_t len)
{
  FILE *f = fopen(path, "r");
  char line[1024];
  if (!f) return -1;
  int rc = -1;
  while (rc && fgets(line, sizeof line, f))
    if (!strncmp(line, key, strlen(key))) {
      char *v = strchr(line, ':');
      if (!v) continue;
      for (v++; *v == ' ' || *v == '\t'; v++) {}
      v[strcspn(v, "\n")] = '\0';
      snprintf(out, len, "%s", v);
      rc = 0;
    }
  fclose(f);
  return rc;
}

/* The largest cache level of cpu0 that holds data (sysfs sizes read "32768K"), NAN if none. */
static double llc_bytes(void)
{
  int best_level = 0;
  double best = NAN;
  for (int i = 0; i < 16; i++) {
    char path[256], buf[64];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    int level = 0;
    if (fscanf(f, "%d", &level) != 1) level = 0;
    fclose(f);
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
    if ((f = fopen(path, "r"))) {
      if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
      fclose(f);
      if (!strncmp(buf, "Instruction", 11)) continue;
    }
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
    if (!(f = fopen(path, "r"))) continue;
    double size = 0;
    char unit = 0;
    int n = fscanf(f, "%lf%c", &size, &unit);
    fclose(f);
    if (n < 1 || level < best_level) continue;
    best_level = level;
    best = size * (unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : 1.0);
  }
  return best;
}

static void node_facts(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  char buf[256];
  snprintf(nd->name, sizeof nd->name, "%s", c->name);
  nd->cores = c->n_cpus;
  if (file_field("/proc/cpuinfo", "model name", nd->cpu_model, sizeof nd->cpu_model))
    snprintf(nd->cpu_model, sizeof nd->cpu_model, "unknown");
  nd->llc_bytes = llc_bytes();
  nd->mem_bytes = file_field("/proc/meminfo", "MemTotal", buf, sizeof buf) ? NAN : 1024.0 * atof(buf);
  nd->n_cl = dem_device_list(nd->cl, DEM_PROBE_MAX_CL);
  if (nd->n_cl > DEM_PROBE_MAX_CL) nd->n_cl = DEM_PROBE_MAX_CL;
  progress(c, "%d cores, %s, last-level cache %.0f B, memory %.0f B, %d OpenCL device(s)", nd->cores, nd->cpu_model,
           nd->llc_bytes, nd->mem_bytes, nd->n_cl);
}

/* ---- memory and FP64 (bwprobe) ---------------------------------------------------------------- */

enum { BW_BUS, BW_FLOPS, BW_SCALAR, BW_LANES, BW_DIVIDER, BW_LINES, BW_LATTICE, BW_STREAMS, BW_COUNT };
static const char *const bw_keys[BW_COUNT] = {"triad_bus_Bps",      "flops_per_thread", "scalar_flops_per_thread",
                                              "lanes",              "divider_per_thread", "random_lines_per_s",
                                              "lattice_Bps",        "streams_Bps"};

/* Runs bwprobe with `threads` threads on cpus[0..n_cpus) (all when 0), with gather: its gathers too,
 * with streams: kick-drift's streams too; its JSON goes to DIR/bwprobe-<tag>.json and its figures
 * into v (NAN on failure, and for the figures not asked for). */
static int run_bwprobe(const probe_ctx_t *c, const char *tag, int threads, int gather, int streams, const int *cpus,
                       int n_cpus, double v[BW_COUNT])
{
  char out[PROBE_PATH + 64], t[16], err[PROBE_PATH + 256];
  snprintf(out, sizeof out, "%s/bwprobe-%s.json", c->dir, tag);
  snprintf(t, sizeof t, "%d", threads);
  char *args[8] = {(char *)c->bwprobe, "--threads", t, "--mib", c->opt->quick ? "64" : "256", NULL, NULL, NULL};
  int n = 5;
  if (gather) args[n++] = "--gather";
  if (streams) args[n++] = "--streams";
  for (int i = 0; i < BW_COUNT; i++) v[i] = NAN;
  if (wait_child(spawn(args, 0, cpus, n_cpus, out, 0), "demsim-bwprobe")) return -1;
  if (dem_summary_read_reals(out, bw_keys, v, BW_COUNT, err, sizeof err)) {
    fprintf(stderr, "demsim: probe: %s\n", err);
    return -1;
  }
  return 0;
}

/* One thread on the first core beside stress-ng's memory worker on the last core. */
static int stressed_triad(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  double v[BW_COUNT];
  int last = c->cpus[c->n_cpus - 1];
  char *args[] = {"stress-ng", "--quiet", "--vm", "1", "--vm-bytes", "1G", "--vm-keep", NULL};
  pid_t stress = spawn(args, 0, &last, 1, NULL, 1);
  if (stress < 0) return -1;
  sleep(2); /* the worker has touched its gigabyte and streams through it */
  if (waitpid(stress, NULL, WNOHANG) == stress) {
    snprintf(nd->stress_skipped, sizeof nd->stress_skipped, "stress-ng ended at once (" STRESS_CMD ")");
    return -1;
  }
  int rc = run_bwprobe(c, "stressed", 1, 0, 0, c->cpus, 1, v);
  kill(-stress, SIGTERM);
  waitpid(stress, NULL, 0);
  nd->triad_stressed_Bps = v[BW_BUS];
  snprintf(nd->stress, sizeof nd->stress, STRESS_CMD " on core %d", last);
  add_command(nd, "demsim-bwprobe --threads 1 --mib %s (core %d) beside " STRESS_CMD " (core %d)",
              c->opt->quick ? "64" : "256", c->cpus[0], last);
  progress(c, "triad, 1 core beside stress-ng on core %d: %.3g B/s", last, nd->triad_stressed_Bps);
  return rc;
}

static int measure_memory(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  double v[BW_COUNT];
  const char *mib = c->opt->quick ? "64" : "256";
  int rc = run_bwprobe(c, "1core", 1, 1, 1, c->cpus, 1, v);
  nd->triad_1core_Bps = v[BW_BUS];
  nd->flops_peak_1core = v[BW_FLOPS];
  nd->scalar_flops_1core = v[BW_SCALAR];
  nd->vector_lanes = v[BW_LANES];
  nd->divider_1core = v[BW_DIVIDER];
  nd->gather_1core_Bps = v[BW_LINES] * 64.0;
  nd->lattice_1core_Bps = v[BW_LATTICE];
  nd->streams_1core_Bps = v[BW_STREAMS];
  add_command(nd, "demsim-bwprobe --threads 1 --mib %s --gather --streams (core %d)", mib, c->cpus[0]);
  progress(c, "triad, 1 core: %.3g B/s; kick-drift's streams %.3g B/s; FP64 %.3g flop/s (%g lanes), scalar %.3g "
           "flop/s, divider %.3g lanes/s; gathers %.3g B/s, lattice %.3g B/s", nd->triad_1core_Bps, nd->streams_1core_Bps,
           nd->flops_peak_1core, nd->vector_lanes, nd->scalar_flops_1core, nd->divider_1core, nd->gather_1core_Bps,
           nd->lattice_1core_Bps);
  rc |= run_bwprobe(c, "allcore", c->n_cpus, 0, 1, NULL, 0, v);
  nd->triad_allcore_Bps = v[BW_BUS];
  nd->streams_allcore_Bps = v[BW_STREAMS];
  add_command(nd, "demsim-bwprobe --threads %d --mib %s --streams (unpinned)", c->n_cpus, mib);
  progress(c, "triad, %d cores: %.3g B/s; kick-drift's streams %.3g B/s", c->n_cpus, nd->triad_allcore_Bps,
           nd->streams_allcore_Bps);
  nd->triad_stressed_Bps = NAN;
  if (c->n_cpus < 2)
    snprintf(nd->stress_skipped, sizeof nd->stress_skipped, "one core only: no core left for stress-ng");
  else if (!in_path("stress-ng"))
    snprintf(nd->stress_skipped, sizeof nd->stress_skipped, "stress-ng not found in PATH");
  else
    rc |= stressed_triad(c, nd);
  if (nd->stress_skipped[0]) progress(c, "triad beside stress-ng not measured: %s", nd->stress_skipped);
  return rc;
}

/* ---- DEM kernels ------------------------------------------------------------------------------ */

/* A gravity packing in contact (as scenarios/bench-contact.cfg), no stress: DIR/TAG.cfg, writing
 * into DIR/TAG, `particles` x `steps`, with the run group `run` (its ranks and repartitions). */
static int write_scenario(const probe_ctx_t *c, const char *tag, const char *why, long particles, long steps,
                          const char *run, char *path, size_t len)
{
  snprintf(path, len, "%s/%s.cfg", c->dir, tag);
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "demsim: probe: cannot write %s: %s\n", path, strerror(errno));
    return -1;
  }
  fprintf(f, "# written by demsim probe: %s\n"
             "name = \"probe-%s\";\n"
             "description = \"gravity packing in contact, as scenarios/bench-contact.cfg\";\n"
             "problem = { box = 1.0; fill = 0.5; particles = %ld; diameter_ratio = 1.001; };\n"
             "material = { youngs_modulus = 5.0e6; poisson = 0.45; restitution = 0.3; friction = 0.5; "
             "density = 2500.0; };\n"
             "time = { dt = 1.0e-8; steps = %ld; };\n"
             "run = { %s };\n"
             "output = { dir = \"%s/%s\"; };\n",
          why, tag, particles, steps, run, c->dir, tag);
  return fclose(f) ? -1 : 0;
}

static int run_kernel(const probe_ctx_t *c, const char *cfg, int k, dem_probe_node_t *nd)
{
  char out[PROBE_PATH + 32], sum[PROBE_PATH + 64], n[32], s[32], err[PROBE_PATH + 256];
  snprintf(out, sizeof out, "%s/kernel-%d", c->dir, k);
  snprintf(n, sizeof n, "%ld", c->opt->particles);
  snprintf(s, sizeof s, "%ld", c->opt->steps);
  char *args[] = {(char *)c->self, "run", (char *)cfg, "--quiet", "--particles", n, "--steps", s, "--out", out, NULL};
  static const char *const keys[] = {"particle_steps_per_s", "wall_loop_s"};
  double v[2] = {NAN, NAN};
  int rc = wait_child(spawn(args, k, c->cpus, k, NULL, 0), "demsim run (kernel rate)");
  snprintf(sum, sizeof sum, "%s/summary.json", out);
  if (rc == 0 && (rc = dem_summary_read_reals(sum, keys, v, 2, err, sizeof err)))
    fprintf(stderr, "demsim: probe: %s\n", err);
  int i = nd->n_kernel++;
  nd->kernel[i].cores = k;
  nd->kernel[i].particle_steps_per_s = v[0];
  nd->kernel[i].loop_s = v[1];
  progress(c, "DEM kernels on %d core(s): %.3g particle-steps/s (loop %.3g s)", k, v[0], v[1]);
  return rc;
}

static int measure_kernels(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  char cfg[PROBE_PATH + 16];
  if (write_scenario(c, "kernel", "the DEM kernels' rate on k cores", c->opt->particles, c->opt->steps, "ranks = 1;",
                     cfg, sizeof cfg))
    return -1;
  int rc = 0, top = c->n_cpus < DEM_PROBE_MAX_KERNELS ? c->n_cpus : DEM_PROBE_MAX_KERNELS;
  for (int k = 1; k <= top; k++)
    if (!c->opt->quick || k == 1 || k == top) rc |= run_kernel(c, cfg, k, nd);
  add_command(nd, "demsim run %s --quiet --particles %ld --steps %ld --out %s/kernel-K "
              "(POCL_MAX_PTHREAD_COUNT=K, cores 0..K-1)", cfg, c->opt->particles, c->opt->steps, c->dir);
  return rc;
}

/* calibrate_cost's output `path`: its dem_forces_all row of the contact lattice (counts, best and
 * median, s), the C reference's ratio, the binning row's particles and median and the permute row's
 * bytes and median into k; -1 when the forces row is missing. */
static int read_contact_row(const char *path, dem_probe_contact_t *k)
{
  char line[1024];
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  int found = 0;
  while (fgets(line, sizeof line, f)) {
    for (char *q = line; *q; q++)
      if (*q == '|') *q = ' ';
    double v[19];
    char kernel[32];
    const char *ref = strstr(line, "scalar over lanes");
    if (!strncmp(line, "contact", 7) && ref) k->reference_over_kernel = atof(ref + 17);
    double rows, bytes, best, median;
    if (sscanf(line, "contact %*f permute rows %lf bytes %lf wall best %lf median %lf", &rows, &bytes, &best,
               &median) == 4) {
      k->permute_bytes = bytes;
      k->permute_median_s = median * 1e-6;
    }
    if (strncmp(line, "contact", 7) ||
        sscanf(line, "%*s %lf %31s %lf %lf %lf %lf %lf %lf %lf %lf %*s %*s %*s %*s %*s %*s %*s %lf", &v[1], kernel,
               &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[18]) != 11)
      continue;
    if (!strcmp(kernel, "binning")) {
      k->binning_particles = v[1];
      k->binning_median_s = v[10] * 1e-6;
    }
    if (strcmp(kernel, "forces_all")) continue;
    k->particles = v[1];
    k->flops = v[7];
    k->traffic_B = v[8];
    k->best_s = v[9] * 1e-6;
    k->median_s = v[10] * 1e-6;
    k->divsqrt = v[18];
    found = 1;
  }
  fclose(f);
  return found ? 0 : -1;
}

/* The same kernel on every core at once, one process per core (each container of a node busy, as
 * in a run of the scenario): the mean of the cores' medians into nd->contact.all_median_s. */
static int contact_all_cores(const probe_ctx_t *c, dem_probe_node_t *nd, char **args)
{
  int n = c->n_cpus < DEM_PROBE_MAX_KERNELS ? c->n_cpus : DEM_PROBE_MAX_KERNELS, rc = 0;
  pid_t pid[DEM_PROBE_MAX_KERNELS];
  char out[PROBE_PATH + 48];
  for (int i = 0; i < n; i++) {
    snprintf(out, sizeof out, "%s/calibrate-contact-all-%d.txt", c->dir, c->cpus[i]);
    pid[i] = spawn(args, 1, &c->cpus[i], 1, out, 0);
  }
  for (int i = 0; i < n; i++) rc |= wait_child(pid[i], "calibrate_cost (contact-force kernel, every core)");
  double sum = 0.0, binning = 0.0, permute = 0.0;
  for (int i = 0; i < n && !rc; i++) {
    dem_probe_contact_t k = nd->contact;
    snprintf(out, sizeof out, "%s/calibrate-contact-all-%d.txt", c->dir, c->cpus[i]);
    rc |= read_contact_row(out, &k);
    sum += k.median_s;
    binning += k.binning_median_s;
    permute += k.permute_median_s;
  }
  if (rc) return -1;
  nd->contact.all_median_s = sum / n;
  nd->contact.binning_all_median_s = binning / n;
  nd->contact.permute_all_median_s = permute / n;
  nd->contact.all_cores = n;
  return 0;
}

/* The contact-force kernel on the first core, one PoCL thread (a one-core container's rank), over
 * calibrate_cost's contact lattice of 60^3 particles: its row of dem_forces_all (counts from the
 * cost model, best and median of the repetitions) and the C reference's pair pass over the
 * kernel's; then on every core at once. Not measured (NAN, a progress line saying why) where
 * calibrate_cost is not built. */
static int measure_contact_kernel(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  if (access(c->calibrate, X_OK)) {
    progress(c, "contact-force kernel not measured: %s is not built", c->calibrate);
    return 0;
  }
  char out[PROBE_PATH + 32];
  snprintf(out, sizeof out, "%s/calibrate-contact.txt", c->dir);
  const char *reps = c->opt->quick ? "5" : "10";
  char *args[] = {(char *)c->calibrate, "--host", "local-0", "--sizes", "60", "--packings", "contact", "--reps",
                  (char *)reps, "--reference", "1", NULL};
  if (wait_child(spawn(args, 1, c->cpus, 1, out, 0), "calibrate_cost (contact-force kernel)") ||
      read_contact_row(out, &nd->contact) || (c->n_cpus > 1 && contact_all_cores(c, nd, args)))
    return -1;
  add_command(nd, "POCL_MAX_PTHREAD_COUNT=1 %s --host local-0 --sizes 60 --packings contact --reps %s --reference 1 "
              "(core %d; then one on each core at once)", c->calibrate, reps, c->cpus[0]);
  progress(c, "contact-force kernel, 1 core: %.3g s (median of %s; best %.3g s) for %.3g flops over %.0f particles, "
           "C reference %.3g x; on all %d cores at once %.3g s", nd->contact.median_s, reps, nd->contact.best_s,
           nd->contact.flops, nd->contact.particles, nd->contact.reference_over_kernel, nd->contact.all_cores,
           nd->contact.all_median_s);
  return 0;
}

#define SEARCH_TURNS 15 /* turns of the search apart, in contact and the contact-force kernel */

/* The contact search on the first core over the apart lattice (nearly every candidate rejected)
 * and the contact lattice (each particle's neighbours written to its slots), in turns with the
 * contact-force kernel the core's rate comes from (calibrate_cost --search-turns): what a
 * particle's candidates and a written slot take against that kernel (make_platforms.py:
 * search_rate, search_slot_rate). Not measured where calibrate_cost is not built. */
static int measure_search(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  if (access(c->calibrate, X_OK)) return 0;
  char out[PROBE_PATH + 32], turns[16], line[1024];
  snprintf(out, sizeof out, "%s/calibrate-search.txt", c->dir);
  snprintf(turns, sizeof turns, "%d", SEARCH_TURNS);
  char *args[] = {(char *)c->calibrate, "--search-turns", "1", "--sizes", "60", "--reps", turns, NULL};
  if (wait_child(spawn(args, 1, c->cpus, 1, out, 0), "calibrate_cost (search turns)")) return -1;
  dem_probe_contact_t *k = &nd->contact;
  double best[3];
  FILE *f = fopen(out, "r");
  int found = 0;
  while (f && !found && fgets(line, sizeof line, f))
    found = sscanf(line, "search-turns %lf particles, slots apart %lf contact %lf | best us: search apart %lf, "
                   "search contact %lf, forces_all contact %lf | over forces_all, median of %d turns: apart %lf "
                   "contact %lf", &k->search_particles, &k->search_apart_slots, &k->search_contact_slots, &best[0],
                   &best[1], &best[2], &k->search_turns, &k->search_apart_ratio, &k->search_contact_ratio) == 9;
  if (f) fclose(f);
  if (!found) {
    fprintf(stderr, "demsim: probe: %s: no search-turns line\n", out);
    k->search_turns = 0;
    return -1;
  }
  add_command(nd, "POCL_MAX_PTHREAD_COUNT=1 %s --search-turns 1 --sizes 60 --reps %d (core %d)", c->calibrate,
              SEARCH_TURNS, c->cpus[0]);
  progress(c, "contact search, 1 core, median of %d turns: apart %.3g and contact %.3g x the contact-force kernel "
           "(best %.3g, %.3g and %.3g ms)", k->search_turns, k->search_apart_ratio, k->search_contact_ratio,
           best[0] * 1e-3, best[1] * 1e-3, best[2] * 1e-3);
  return 0;
}

/* ---- Zoltan ------------------------------------------------------------------------------------ */

#define PARTITION_STEPS 20 /* a run of the partition measurement: a repartition every 4 steps, 4 timed calls */
#define PARTITION_EVERY 4

/* One run of the partition scenario under a nested mpirun (two ranks, one PoCL thread each, on
 * the first two cores): its rate in particle-levels/s, NAN when it failed. A call of RCB over two
 * ranks costs a rank's share x (ceil(log2 2) + 1) particle-levels (sim/cost.c; the platform's
 * partition_rate, sim/host.h); the call's time is the slowest rank's real time in
 * Zoltan_LB_Partition (summary wall_partition_s, the initial partition not counted) over the calls. */
static double partition_run(const probe_ctx_t *c, const char *cfg, int k)
{
  char out[PROBE_PATH + 32], sum[PROBE_PATH + 64], err[PROBE_PATH + 256];
  snprintf(out, sizeof out, "%s/partition-%d", c->dir, k);
  char *args[16];
  int a = 0;
  args[a++] = "mpirun";
  if (geteuid() == 0) args[a++] = "--allow-run-as-root";
  char *rest[] = {"--oversubscribe", "--bind-to", "none", "-np", "2", (char *)c->self, "run", (char *)cfg, "--quiet",
                  "--out", out, NULL};
  for (int i = 0; i < (int)(sizeof rest / sizeof rest[0]); i++) args[a++] = rest[i];
  static const char *const keys[] = {"wall_partition_s", "repartitions"};
  double v[2] = {NAN, NAN};
  if (wait_child(spawn(args, 1, c->cpus, 2, NULL, 0), "mpirun -np 2 demsim run (Zoltan's rate)")) return NAN;
  snprintf(sum, sizeof sum, "%s/summary.json", out);
  if (dem_summary_read_reals(sum, keys, v, 2, err, sizeof err)) {
    fprintf(stderr, "demsim: probe: %s\n", err);
    return NAN;
  }
  if (!(v[0] > 0.0 && v[1] >= 1.0)) return NAN;
  double levels = (double)c->opt->partition_particles / 2.0 * 2.0; /* a rank's share x 2 levels */
  return levels / (v[0] / v[1]);
}

/* Zoltan RCB's rate on this node, as validation/study/hardware.py measures it for its platform:
 * the best of three short two-rank runs (two on --quick). Not measured (NAN, a progress line
 * saying why) on one core or without mpirun. */
static int measure_partition(const probe_ctx_t *c, dem_probe_node_t *nd)
{
  const char *why = c->n_cpus < 2 ? "one core only" : !in_path("mpirun") ? "mpirun not found in PATH" : NULL;
  if (why) {
    progress(c, "Zoltan's rate not measured: %s", why);
    return 0;
  }
  char cfg[PROBE_PATH + 16];
  char run[96];
  snprintf(run, sizeof run, "ranks = 2; policy = \"NOW\"; repartition_every = %d;", PARTITION_EVERY);
  if (write_scenario(c, "partition", "Zoltan RCB's rate in the solver's call, two ranks on two cores",
                     c->opt->partition_particles, PARTITION_STEPS, run, cfg, sizeof cfg))
    return -1;
  int runs = c->opt->quick ? 2 : 3;
  for (int k = 0; k < runs; k++) {
    double r = partition_run(c, cfg, k);
    if (isnan(r)) return -1;
    if (isnan(nd->partition_rate) || r > nd->partition_rate) nd->partition_rate = r;
  }
  nd->partition_particles = (double)c->opt->partition_particles;
  add_command(nd, "mpirun -np 2 demsim run %s --quiet --out %s/partition-K (cores %d and %d, one PoCL thread each; "
              "best of %d)", cfg, c->dir, c->cpus[0], c->cpus[1], runs);
  progress(c, "Zoltan RCB: %.3g M particle-levels/s (best of %d runs of 2 ranks x %ld particles / 2)",
           nd->partition_rate / 1e6, runs, c->opt->partition_particles);
  return 0;
}

/* ---- pairs -------------------------------------------------------------------------------------- */

static int cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Every pair (a < b) in turn; one_way (pairs x sizes, zero on entry) gets rank a's medians / 2,
 * then the sum over ranks gives every rank the table. */
static int measure_pairs(const probe_ctx_t *c, double *one_way, int ranks)
{
  int me = dem_parallel_rank(), rc = 0;
  const int *reps = c->opt->quick ? reps_quick : reps_full;
  double rtt[1000];
  double *t = one_way;
  for (int a = 0; a < ranks; a++)
    for (int b = a + 1; b < ranks; b++, t += DEM_PROBE_SIZES) {
      dem_parallel_barrier_idle();
      for (int s = 0; s < DEM_PROBE_SIZES; s++) {
        int failed = dem_parallel_pingpong(a, b, dem_probe_sizes[s], reps[s], rtt);
        if (failed) rc = -1;
        if (me != a) continue;
        if (failed) {
          t[s] = NAN; /* null in probe.json */
          continue;
        }
        qsort(rtt, (size_t)reps[s], sizeof rtt[0], cmp_double);
        int r = reps[s];
        t[s] = 0.5 * (r % 2 ? rtt[r / 2] : 0.5 * (rtt[r / 2 - 1] + rtt[r / 2]));
      }
      if (me == a)
        progress(c, "ranks %d-%d: latency %.3g s, bandwidth %.3g B/s", a, b, t[0],
                 (double)dem_probe_sizes[DEM_PROBE_SIZES - 1] / t[DEM_PROBE_SIZES - 1]);
    }
  dem_parallel_sum_double(one_way, ranks * (ranks - 1) / 2 * DEM_PROBE_SIZES);
  return rc;
}

/* ---- the probe ------------------------------------------------------------------------------- */

static int probe_context(probe_ctx_t *c, const dem_cli_probe_t *opt)
{
  memset(c, 0, sizeof *c);
  c->opt = opt;
  ssize_t n = readlink("/proc/self/exe", c->self, sizeof c->self - 1);
  if (n <= 0) return -1;
  c->self[n] = '\0';
  snprintf(c->bwprobe, sizeof c->bwprobe, "%s", c->self);
  char *slash = strrchr(c->bwprobe, '/');
  snprintf(slash + 1, sizeof c->bwprobe - (size_t)(slash + 1 - c->bwprobe), "demsim-bwprobe");
  snprintf(c->calibrate, sizeof c->calibrate, "%.*svalidation/calibrate_cost", (int)(slash + 1 - c->bwprobe),
           c->bwprobe);
  snprintf(c->dir, sizeof c->dir, "%s", opt->out);
  dem_parallel_processor_name(c->name, sizeof c->name);
  c->name[strcspn(c->name, ".")] = '\0';
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set)) return -1;
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < CPU_SETSIZE && (online <= 0 || c->n_cpus < online); i++)
    if (CPU_ISSET(i, &set)) c->cpus[c->n_cpus++] = i;
  return c->n_cpus > 0 ? 0 : -1;
}

/* The leader's part: everything about its node, as a line of JSON (malloc'd). */
static char *measure_node(const probe_ctx_t *c, int *rc)
{
  dem_probe_node_t *nd = calloc(1, sizeof *nd);
  if (!nd) {
    *rc = -1;
    return NULL;
  }
  /* what is not measured stays NAN: null in probe.json, not a zero */
  nd->llc_bytes = nd->mem_bytes = nd->triad_1core_Bps = nd->triad_allcore_Bps = nd->triad_stressed_Bps = NAN;
  nd->streams_allcore_Bps = NAN;
  nd->gather_1core_Bps = nd->lattice_1core_Bps = nd->streams_1core_Bps = nd->flops_peak_1core = nd->vector_lanes =
      nd->scalar_flops_1core = NAN;
  nd->divider_1core = nd->partition_rate = nd->partition_particles = NAN;
  nd->contact.particles = nd->contact.best_s = nd->contact.median_s = nd->contact.flops = nd->contact.traffic_B =
      nd->contact.divsqrt = nd->contact.reference_over_kernel = nd->contact.all_median_s = NAN;
  nd->contact.binning_particles = nd->contact.binning_median_s = nd->contact.binning_all_median_s = NAN;
  nd->contact.permute_bytes = nd->contact.permute_median_s = nd->contact.permute_all_median_s = NAN;
  nd->contact.search_particles = nd->contact.search_apart_slots = nd->contact.search_contact_slots = NAN;
  nd->contact.search_apart_ratio = nd->contact.search_contact_ratio = NAN;
  if (dem_files_make_dirs(c->dir)) {
    fprintf(stderr, "demsim: probe: cannot create %s: %s\n", c->dir, strerror(errno));
    *rc = -1;
  }
  node_facts(c, nd);
  if (access(c->bwprobe, X_OK)) {
    fprintf(stderr, "demsim: probe: %s is missing (it is built with demsim)\n", c->bwprobe);
    *rc = -1;
  } else if (measure_memory(c, nd))
    *rc = -1;
  if (!c->opt->no_kernels && (measure_contact_kernel(c, nd) | measure_search(c, nd) | measure_kernels(c, nd) |
                                 measure_partition(c, nd)))
    *rc = -1;
  char *text = dem_summary_probe_node(nd);
  free(nd);
  return text;
}

static void probe_header(dem_probe_report_t *r, int argc, char **argv, const dem_cli_probe_t *opt)
{
  time_t now = time(NULL);
  struct tm tm;
  gmtime_r(&now, &tm);
  strftime(r->date, sizeof r->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
  size_t len = (size_t)snprintf(r->command, sizeof r->command, "demsim probe");
  for (int i = opt->first_arg; i < argc && len < sizeof r->command; i++)
    len += (size_t)snprintf(r->command + len, sizeof r->command - len, " %s", argv[i]);
  r->particles = opt->particles;
  r->steps = opt->steps;
  r->quick = opt->quick;
}

/* Rank 0: gathers what the leaders sent and writes DIR/probe.json. */
static int write_report(dem_probe_report_t *r, const char *node_text, const char *names, const probe_ctx_t *c)
{
  char path[PROBE_PATH + 16], err[PROBE_PATH + 256];
  r->node_text = node_text;
  r->names = names;
  snprintf(path, sizeof path, "%s/probe.json", c->dir);
  if (dem_files_make_dirs(c->dir) || dem_summary_probe_write(path, r, err, sizeof err)) {
    fprintf(stderr, "demsim: probe: %s\n", err);
    return -1;
  }
  return 0;
}

/* Under mpirun: every rank. Returns 0, or 1 when something failed (on any rank). */
static int probe_ranks(int argc, char **argv, const dem_cli_probe_t *opt)
{
  static probe_ctx_t c;
  dem_parallel_init(&argc, &argv);
  int ranks = dem_parallel_size(), me = dem_parallel_rank(), rc = 0;
  if (probe_context(&c, opt)) {
    fprintf(stderr, "demsim: probe: cannot find this program or its cores\n");
    rc = -1;
  }
  long leader = dem_parallel_node_leader();
  if (me == 0) printf("demsim probe: %d rank(s); results in %s\n", ranks, c.dir);
  char *text = leader == me ? measure_node(&c, &rc) : NULL;
  dem_parallel_barrier_idle();
  int n_pairs = ranks * (ranks - 1) / 2;
  double *one_way = calloc((size_t)n_pairs * DEM_PROBE_SIZES + 1, sizeof *one_way);
  long *leaders = calloc((size_t)ranks, sizeof *leaders);
  if (!one_way || !leaders) dem_parallel_abort(1);
  if (measure_pairs(&c, one_way, ranks)) rc = -1;
  char *all_text = dem_parallel_gather_text(text ? text : "", 0);
  char *names = dem_parallel_gather_text(c.name, 0);
  dem_parallel_gather_counts(leader, leaders, 0);
  if (me == 0) {
    static dem_probe_report_t r;
    probe_header(&r, argc, argv, opt);
    r.ranks = ranks;
    r.leader = leaders;
    r.sizes = dem_probe_sizes;
    r.one_way_s = one_way;
    if (write_report(&r, all_text, names, &c)) rc = -1;
  }
  int failed = rc != 0;
  dem_parallel_max_int(&failed, 1);
  free(text);
  free(all_text);
  free(names);
  free(one_way);
  free(leaders);
  dem_parallel_finalize();
  return me == 0 ? (failed ? -1 : 1) : 0;
}

static int script_knows_probe(const char *script)
{
  FILE *f = fopen(script, "r");
  char line[4096];
  int found = 0;
  if (!f) return 0;
  while (!found && fgets(line, sizeof line, f)) found = strstr(line, "\"--probe\"") != NULL;
  fclose(f);
  return found;
}

/* After MPI: the platform from probe.json. A missing or failing generator is only a warning. */
static void make_platform(const dem_cli_probe_t *opt)
{
  char script[PROBE_PATH], json[PROBE_PATH], xml[PROBE_PATH];
  const char *dir = getenv("DEMSIM_PLATFORMS_DIR");
  snprintf(script, sizeof script, "%s/make_platforms.py", dir && *dir ? dir : DEMSIM_SOURCE_DIR "/platforms");
  snprintf(json, sizeof json, "%s/probe.json", opt->out);
  snprintf(xml, sizeof xml, "%s/platform.xml", opt->out);
  char *args[] = {"python3", script, "--probe", json, "--out", xml, NULL};
  printf("demsim probe: measurements in %s\n", json);
  remove(xml); /* not a stale one from an earlier probe */
  /* a generator without --probe ignores its arguments and rewrites the source tree's platforms */
  const char *why = !script_knows_probe(script) ? "it is missing or does not know --probe"
                  : wait_child(spawn(args, 0, NULL, 0, NULL, 0), "make_platforms.py --probe") ? "it failed"
                  : access(xml, R_OK) ? "it wrote no platform" : NULL;
  if (why) {
    fprintf(stderr, "demsim: probe: warning: no platform generated: python3 %s --probe %s --out %s: %s (set "
            "DEMSIM_PLATFORMS_DIR to a platforms/ folder whose make_platforms.py knows --probe)\n",
            script, json, xml, why);
    return;
  }
  printf("demsim probe: SimGrid platform in %s\n", xml);
}

/* Not under mpirun yet: mpirun, one rank per host, this program again. */
static int probe_relaunch(int argc, char **argv, const dem_cli_probe_t *opt)
{
  char self[PROBE_PATH], np[16];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) snprintf(self, sizeof self, "%s", argv[0]);
  else self[n] = '\0';
  int hosts = 1;
  for (const char *p = opt->hosts; *p; p++) hosts += *p == ',';
  snprintf(np, sizeof np, "%d", hosts);
  char **args = calloc((size_t)argc + 16, sizeof *args);
  if (!args) return 1;
  int k = 0;
  args[k++] = "mpirun";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  args[k++] = "--oversubscribe";
  args[k++] = "--host";
  args[k++] = (char *)opt->hosts;
  args[k++] = "-np";
  args[k++] = np;
  args[k++] = "--map-by";
  args[k++] = "node";
  args[k++] = "--bind-to";
  args[k++] = "none";
  args[k++] = self;
  args[k++] = "probe";
  for (int i = opt->first_arg; i < argc; i++) args[k++] = argv[i];
  char tmp[PROBE_PATH], saved[PROBE_PATH]; /* its own Open MPI session (base/files.h) */
  if (dem_files_tmpdir_push("demsim-mpi", tmp, sizeof tmp, saved, sizeof saved)) {
    fprintf(stderr, "demsim: probe: cannot create a temporary directory %s: %s\n", tmp, strerror(errno));
    free(args);
    return 1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    execvp(args[0], args);
    fprintf(stderr, "demsim: probe: cannot run mpirun: %s\n", strerror(errno));
    _exit(127);
  }
  free(args);
  int status = 0;
  while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (dem_files_tmpdir_pop(tmp, saved))
    fprintf(stderr, "demsim: probe: cannot remove the temporary directory %s: %s\n", tmp, strerror(errno));
  if (pid < 0 || !WIFEXITED(status)) return 1;
  return WEXITSTATUS(status) == 0 ? 0 : (WEXITSTATUS(status) == 2 ? 2 : 1);
}

int dem_probe_main(int argc, char **argv, const dem_cli_t *cli)
{
  const dem_cli_probe_t *opt = &cli->probe;
  if (!getenv("OMPI_COMM_WORLD_SIZE")) return probe_relaunch(argc, argv, opt);
  int rc = probe_ranks(argc, argv, opt);
  if (rc == 0) return 0;          /* not rank 0 */
  make_platform(opt);             /* rank 0, after MPI_Finalize */
  return rc < 0 ? 1 : 0;
}
