/* Scenario files (libconfig syntax) and command-line overrides.
 *
 * Design: one table, `keys[]`, describes every scalar key (dotted path, type, offset in
 * dem_scenario_t, range, unit, help). Reading a file walks the file's settings and looks each
 * one up in the table, so an unknown or misspelt key is an error instead of being ignored;
 * `--set a.b=v` goes through the same table. Two keys are not scalars: `platform.hosts` (a
 * list of container names) and `stress` (a list of groups); they have their own readers. */
#include "base/error.h"
#include "policy/policy.h"
#include "policy/table.h"
#include "scenario/hostmap.h"
#include "scenario/scenario.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef enum { K_DOUBLE, K_LONG, K_INT, K_STRING, K_BOOL } key_type_t;

typedef struct key_def {
  const char *path;
  key_type_t type;
  size_t offset;
  size_t size;        /* for strings: buffer size */
  double min, max;    /* accepted range (numbers); min_open: min itself is refused */
  int min_open;
  const char *unit;
  const char *help;
  const char *choices; /* for strings: "a|b|c", or NULL */
} key_def_t;

#define OFF(f) offsetof(dem_scenario_t, f)
#define SZ(f) sizeof(((dem_scenario_t *)0)->f)
#define BIG 1e300

static const key_def_t keys[] = {
  {"name", K_STRING, OFF(name), SZ(name), 0, 0, 0, "", "scenario name", NULL},
  {"description", K_STRING, OFF(description), SZ(description), 0, 0, 0, "", "one line on what it models", NULL},
  {"problem.box", K_DOUBLE, OFF(box), 0, 0, BIG, 1, "m", "edge of the cubic container", NULL},
  {"problem.fill", K_DOUBLE, OFF(fill), 0, 0, 1, 1, "-", "filled fraction of the container height", NULL},
  {"problem.particles", K_LONG, OFF(particles), 0, 0, 2147483647.0, 0, "-",
   "particle count (0: every lattice site of the filled part; with spacing 0 it sets the spacing)", NULL},
  {"problem.spacing", K_DOUBLE, OFF(spacing), 0, 0, BIG, 0, "m", "lattice spacing (0: derived from particles)", NULL},
  {"problem.diameter_ratio", K_DOUBLE, OFF(diameter_ratio), 0, 0, 2, 1, "-",
   "particle diameter / lattice spacing (0.99: apart, 1.001: in contact)", NULL},
  {"problem.jitter", K_DOUBLE, OFF(jitter), 0, 0, 1, 0, "-", "random site displacement, fraction of the gap", NULL},
  {"problem.seed", K_LONG, OFF(seed), 0, 0, 2147483647.0, 0, "-", "random seed of the jitter", NULL},
  {"material.youngs_modulus", K_DOUBLE, OFF(params.mat.youngs_modulus), 0, 0, BIG, 1, "Pa", "Young's modulus E", NULL},
  {"material.poisson", K_DOUBLE, OFF(params.mat.poisson), 0, -1, 0.5, 1, "-", "Poisson ratio", NULL},
  {"material.restitution", K_DOUBLE, OFF(params.mat.restitution), 0, 0, 1, 1, "-", "normal coefficient of restitution", NULL},
  {"material.friction", K_DOUBLE, OFF(params.mat.friction), 0, 0, BIG, 0, "-", "Coulomb friction coefficient", NULL},
  {"material.density", K_DOUBLE, OFF(params.mat.density), 0, 0, BIG, 1, "kg/m^3", "particle density", NULL},
  {"time.dt", K_DOUBLE, OFF(params.dt), 0, 0, BIG, 1, "s", "time step", NULL},
  {"time.steps", K_LONG, OFF(steps), 0, 0, 1e15, 1, "-", "number of time steps", NULL},
  {"time.dt_fraction_max", K_DOUBLE, OFF(dt_fraction_max), 0, 0, 1, 1, "-",
   "largest accepted dt as a fraction of the Rayleigh critical step", NULL},
  {"physics.gravity", K_DOUBLE, OFF(params.gravity[2]), 0, -BIG, BIG, 0, "m/s^2", "vertical gravity (z)", NULL},
  {"physics.skin_ratio", K_DOUBLE, OFF(skin_ratio), 0, 0, 0.4, 1, "-",
   "neighbour-search skin / particle diameter (the search runs when a particle may have moved skin/2)", NULL},
  {"physics.overlap_max", K_DOUBLE, OFF(overlap_max), 0, 0, 1, 1, "-",
   "largest initial overlap accepted, as a fraction of the radius", NULL},
  {"physics.overlap_abort", K_DOUBLE, OFF(overlap_abort), 0, 0, 1, 1, "-",
   "an overlap beyond this fraction of the radius stops the run (numerical safety)", NULL},
  {"physics.check_every", K_LONG, OFF(check_every), 0, 0, 1e15, 0, "steps",
   "steps between numerical checks: NaN/inf, escaped particles, deep overlaps (0: never)", NULL},
  {"run.ranks", K_INT, OFF(ranks), 0, 0, 65536, 1, "-", "MPI processes", NULL},
  {"run.policy", K_STRING, OFF(policy), SZ(policy), 0, 0, 0, "", "load-balancing policy (scenarios/README.md)", "NOW|RW|RW5|EWMA|PI|RUPER"},
  {"run.partitioner", K_STRING, OFF(partitioner), SZ(partitioner), 0, 0, 0, "",
   "domain decomposition (Zoltan): RCB, RIB, HSFC geometric; PHG hypergraph and GRAPH (over PHG) from the neighbour "
   "lists; HIER across the sites of platform.sites, then within each (scenarios/README.md)", "RCB|RIB|HSFC|PHG|GRAPH|HIER"},
  {"run.site_threshold", K_DOUBLE, OFF(site_threshold), 0, 0, BIG, 0, "%",
   "HIER: a site's share of the work changes only when the policy moves it by more than this (WAN migrations "
   "are dear)", NULL},
  {"run.repartition_every", K_LONG, OFF(repartition_every), 0, 0, 1e15, 1, "steps", "repartition period", NULL},
  {"run.lambda_threshold", K_DOUBLE, OFF(lambda_threshold), 0, 0, BIG, 0, "%",
   "imbalance that triggers an extra repartition (0: never)", NULL},
  {"run.rw5_threshold", K_DOUBLE, OFF(rw5_threshold), 0, 0, BIG, 0, "%", "RW5: weights change only above this imbalance", NULL},
  {"run.ewma_alpha", K_DOUBLE, OFF(ewma_alpha), 0, 0, 1, 1, "-",
   "EWMA: smoothing factor of the measured speeds, in (0, 1] (1: no smoothing)", NULL},
  {"run.pi_kp", K_DOUBLE, OFF(pi_kp), 0, 0, 2, 0, "-", "PI: proportional gain, 0..2 (1 with pi_ki = 0: RW's step)", NULL},
  {"run.pi_ki", K_DOUBLE, OFF(pi_ki), 0, 0, 1, 0, "-", "PI: integral gain, 0..1", NULL},
  {"run.ruper_tmin_factor", K_DOUBLE, OFF(ruper_tmin_factor), 0, 0, 1e6, 0, "-",
   "RUPER: no repartition once the predicted time left is below this x the measured cost of one", NULL},
  {"run.ruper_threshold", K_DOUBLE, OFF(ruper_threshold), 0, 0, BIG, 0, "%",
   "RUPER: repartition only above this imbalance predicted from the speed reports", NULL},
  {"run.ruper_change", K_DOUBLE, OFF(ruper_change), 0, 1, BIG, 1, "-",
   "RUPER: a speed ratio s/s_last beyond [1/c, c] halves a rank's report interval (else it doubles), > 1", NULL},
  {"run.ruper_report_min", K_LONG, OFF(ruper_report_min), 0, 0, 1e15, 1, "steps",
   "RUPER: shortest report interval (the first, and the first after a repartition)", NULL},
  {"run.ruper_report_max", K_LONG, OFF(ruper_report_max), 0, 0, 1e15, 1, "steps",
   "RUPER: longest report interval, at least run.ruper_report_min", NULL},
  {"run.imbalance_tol", K_DOUBLE, OFF(zoltan_imbalance_tol), 0, 1, BIG, 0, "-", "Zoltan IMBALANCE_TOL (max/avg)", NULL},
  {"run.migrate_batch", K_LONG, OFF(migrate_batch), 0, 0, 2147483647.0, 0, "particles",
   "particles a rank sends per round of a migration (0: all in one round); rounds bound a repartition's memory", NULL},
  {"platform.file", K_STRING, OFF(platform), SZ(platform), 0, 0, 0, "", "SimGrid platform (relative to the scenario file)", NULL},
  {"native.hostmap", K_STRING, OFF(hostmap), SZ(hostmap), 0, 0, 0, "",
   "native build: host map file placing each container on a real host and cores (relative to the scenario file; "
   "\"\": none; see scenarios/README.md); ignored by the SMPI build", NULL},
  {"native.emulate", K_BOOL, OFF(emulate), 0, 0, 1, 0, "",
   "native build, as root: run on an emulated cloud on this machine (a network namespace, cpuset cgroup and tc-shaped "
   "routes from platform.file per container; README.md, \"Emulating a scenario on one machine\"); the SMPI build "
   "refuses it", NULL},
  {"device.backend", K_STRING, OFF(backend), SZ(backend), 0, 0, 0, "", "compute backend", "opencl|reference"},
  {"device.platform", K_INT, OFF(cl_platform), 0, -1, 1024, 0, "-", "OpenCL platform index (-1: first with a device)", NULL},
  {"device.device", K_INT, OFF(cl_device), 0, -1, 1024, 0, "-", "OpenCL device index (-1: first)", NULL},
  {"device.cost", K_STRING, OFF(device_cost), SZ(device_cost), 0, 0, 0, "",
   "kernel time under SMPI: the cost model, or each kernel's time on this machine's device scaled by speed",
   "model|measured"},
  {"device.local_speed", K_DOUBLE, OFF(local_speed), 0, 0, BIG, 0, "flop/s",
   "device.cost = measured: one core of this machine, in the platforms' unit (clock x KERNEL_FLOPS_PER_CYCLE)", NULL},
  {"device.code_cost", K_DOUBLE, OFF(code_cost), 0, 0, 1e6, 1, "-",
   "the modelled DEM code's kernel time per particle-step over demsim's kernels on the same core: every kernel's "
   "compute and memory traffic x this (SMPI build; 1: demsim's own code)", NULL},
  {"device.server", K_STRING, OFF(server), SZ(server), 0, 0, 0, "",
   "container of a device server: every rank's kernels run there, over MPI (\"\": each rank its own device)", NULL},
  {"device.type", K_STRING, OFF(cl_device_type), SZ(cl_device_type), 0, 0, 0, "", "OpenCL device type", "any|cpu|gpu"},
  {"output.dir", K_STRING, OFF(out_dir), SZ(out_dir), 0, 0, 0, "", "output directory", NULL},
  {"output.snapshot_every", K_LONG, OFF(output_every), 0, 0, 1e15, 0, "steps", "particle snapshots (0: final state only)", NULL},
  {"output.metrics_every", K_LONG, OFF(metrics_every), 0, 0, 1e15, 1, "steps", "metrics rows", NULL},
  {"output.gather_block", K_LONG, OFF(gather_block), 0, 0, 2147483647.0, 1, "particles",
   "particles of a frame rank 0 gathers and writes at once (93 bytes each while writing)", NULL},
  {"output.checkpoint_every", K_LONG, OFF(checkpoint_every), 0, 0, 1e15, 0, "steps",
   "checkpoints in DIR/checkpoint.h5, for --restart (0: none)", NULL},
  {"output.progress", K_BOOL, OFF(progress), 0, 0, 1, 0, "", "print progress", NULL},
  {"failure.host", K_STRING, OFF(failure_host), SZ(failure_host), 0, 0, 0, "",
   "the container (one of platform.hosts) lost at failure.at (\"\": none)", NULL},
  {"failure.at", K_DOUBLE, OFF(failure_at), 0, 0, BIG, 0, "s",
   "time of the loss on the run's time line: simulated (SMPI), wall clock (native) (0: none)", NULL},
  {"failure.mtbf", K_DOUBLE, OFF(failure_mtbf), 0, 0, BIG, 0, "s",
   "mean time between container losses, exponential, drawn with failure.seed (0: none)", NULL},
  {"failure.seed", K_LONG, OFF(failure_seed), 0, 0, 2147483647.0, 0, "-", "seed of the failure draws", NULL},
  {"failure.restart_latency", K_DOUBLE, OFF(restart_latency), 0, 0, BIG, 0, "s",
   "SMPI build: detecting a loss and launching the run again (ESTIMATE; scenarios/README.md)", NULL},
  {"noise.enabled", K_BOOL, OFF(noise.enabled), 0, 0, 1, 0, "",
   "SMPI build: vary each container's core speed, each node's memory bus and each link's bandwidth with time "
   "(lognormal factor of mean 1 over an Ornstein-Uhlenbeck process; scenarios/README.md); false: no noise", NULL},
  {"noise.seed", K_LONG, OFF(noise.seed), 0, 0, 9007199254740992.0, 0, "-",
   "seed of the noise: each resource's stream comes from it and the resource's name", NULL},
  {"noise.cpu_cv", K_DOUBLE, OFF(noise.cpu_cv), 0, 0, 10, 0, "-",
   "coefficient of variation of a container's core speed (0 until measured: no CPU noise)", NULL},
  {"noise.cpu_tau", K_DOUBLE, OFF(noise.cpu_tau), 0, 0, BIG, 0, "s",
   "correlation time of the core speed's noise (> 0 when cpu_cv > 0; 0 until measured)", NULL},
  {"noise.cpu_memory", K_BOOL, OFF(noise.cpu_memory), 0, 0, 1, 0, "",
   "the core-speed factor also scales the container's memory streams (a vCPU slows as a whole: "
   "scenarios/README.md); false: the arithmetic only", NULL},
  {"noise.mem_cv", K_DOUBLE, OFF(noise.mem_cv), 0, 0, 10, 0, "-",
   "coefficient of variation of a node's memory-bus speed (the <node>-membus host; 0 until measured)", NULL},
  {"noise.mem_tau", K_DOUBLE, OFF(noise.mem_tau), 0, 0, BIG, 0, "s",
   "correlation time of the memory bus's noise (> 0 when mem_cv > 0; 0 until measured)", NULL},
  {"noise.net_cv", K_DOUBLE, OFF(noise.net_cv), 0, 0, 10, 0, "-",
   "coefficient of variation of each link's bandwidth (0 until measured)", NULL},
  {"noise.net_tau", K_DOUBLE, OFF(noise.net_tau), 0, 0, BIG, 0, "s",
   "correlation time of the links' noise (> 0 when net_cv > 0; 0 until measured)", NULL},
  {"noise.dt", K_DOUBLE, OFF(noise.dt), 0, 0, BIG, 1, "s", "time step of the noise profiles", NULL},
  {"noise.horizon", K_DOUBLE, OFF(noise.horizon), 0, 0, BIG, 1, "s",
   "length of the generated profiles; beyond it they repeat (period = horizon)", NULL},
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const char *list_keys_help[][2] = {
  {"platform.hosts", "list of container hosts, one per rank (rank r runs on hosts[r])"},
  {"platform.sites", "list of site numbers 0, 1, ..., one per host of platform.hosts (run.partitioner = \"HIER\"; "
                     "summary.json counts the bytes between sites)"},
  {"stress", "list of co-located loads: ( { host = \"...\"; kind = \"vm\"|\"cpu\"; workers = 2; "
             "bytes = 2e9; start = 0.0; on = 0.0; off = 0.0; } )"},
};


static const key_def_t *find_key(const char *path)
{
  for (size_t i = 0; i < NKEYS; i++)
    if (strcmp(keys[i].path, path) == 0) return &keys[i];
  return NULL;
}

/* Levenshtein distance between a and b (at most 63 characters each; longer: a large number). */
static int edit_distance(const char *a, const char *b)
{
  size_t m = strlen(a), n = strlen(b);
  if (m > 63 || n > 63) return 1000;
  int d[64][64];
  for (size_t i = 0; i <= m; i++) d[i][0] = (int)i;
  for (size_t j = 0; j <= n; j++) d[0][j] = (int)j;
  for (size_t i = 1; i <= m; i++)
    for (size_t j = 1; j <= n; j++) {
      int sub = d[i - 1][j - 1] + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
      int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
      d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
    }
  return d[m][n];
}

/* The message of an unknown key: the closest valid key when one is near (a typo: at most a
 * third of its length away), and where the list is. */
static int unknown_key(const char *where, const char *path, char *err, size_t errlen)
{
  const char *best = NULL;
  int best_d = 1000;
  for (size_t i = 0; i < NKEYS; i++) {
    int d = edit_distance(path, keys[i].path);
    if (d < best_d) best_d = d, best = keys[i].path;
  }
  if (best && best_d <= (int)strlen(path) / 3 + 1)
    return dem_fail(err, errlen, "%s: unknown key '%s' (did you mean '%s'? `demsim keys` lists the valid ones)", where,
                    path, best);
  return dem_fail(err, errlen, "%s: unknown key '%s' (`demsim keys` lists the valid ones)", where, path);
}

void dem_scenario_defaults(dem_scenario_t *s)
{
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "unnamed");
  /* the study's gravity packing */
  s->box = 1.0;
  s->fill = 0.5;
  s->particles = 500000;
  s->spacing = 0.0;
  s->diameter_ratio = 1.001;
  s->seed = 1;
  /* a soft glass-like material, as in common DEM packing examples */
  s->params.mat = (dem_material_t){.youngs_modulus = 5.0e6, .poisson = 0.45, .restitution = 0.3,
                                   .friction = 0.5, .density = 2500.0};
  s->params.dt = 1.0e-8;
  s->params.gravity[2] = -9.81;
  s->steps = 10000;
  s->dt_fraction_max = 0.2;
  s->skin_ratio = 0.005;
  s->overlap_max = 0.05;
  s->failure_seed = 1;
  s->noise.seed = 1;
  s->noise.dt = 0.1;
  s->noise.horizon = 600.0;
  s->restart_latency = DEM_RESTART_LATENCY_ESTIMATE;
  s->overlap_abort = 0.25;
  s->check_every = 1000;
  s->ranks = 1;
  snprintf(s->policy, sizeof s->policy, "NOW");
  snprintf(s->partitioner, sizeof s->partitioner, "RCB");
  s->repartition_every = 1000;
  s->lambda_threshold = 0.0;
  s->rw5_threshold = 5.0;
  s->site_threshold = 10.0;
  s->ewma_alpha = 0.5;
  s->pi_kp = 1.0;
  s->pi_ki = 0.3;
  s->ruper_tmin_factor = 2.0;
  s->ruper_threshold = 5.0;
  s->ruper_change = 1.25;
  s->ruper_report_min = 5;
  s->ruper_report_max = 40;
  s->zoltan_imbalance_tol = 1.05;
  s->migrate_batch = 0;
  snprintf(s->backend, sizeof s->backend, "opencl");
  s->cl_platform = -1;
  s->cl_device = -1;
  snprintf(s->cl_device_type, sizeof s->cl_device_type, "any");
  snprintf(s->device_cost, sizeof s->device_cost, "model");
  s->code_cost = 1.0;
  snprintf(s->out_dir, sizeof s->out_dir, "out");
  s->metrics_every = 100;
  s->gather_block = 65536;
  s->progress = 1;
}

static const char *type_name(key_type_t t)
{
  switch (t) {
  case K_DOUBLE: return "a number";
  case K_LONG: case K_INT: return "an integer";
  case K_STRING: return "a string";
  case K_BOOL: return "true or false";
  }
  return "?";
}

/* Stores a number after the range check; `where` names the file:line or --set. */
/* A bound or value as a user wrote it: whole numbers of integer keys in full, others as %g. */
static const char *number_text(const key_def_t *k, double v, char *buf, size_t len)
{
  if (k->type != K_DOUBLE && fabs(v) < 1e15 && v == floor(v)) snprintf(buf, len, "%.0f", v);
  else snprintf(buf, len, "%g", v);
  return buf;
}

/* What a key accepts, for its error message: "a value > 0", "a value in [0, 1]", ... */
static void range_text(const key_def_t *k, char *buf, size_t len)
{
  char lo[32], hi[32];
  number_text(k, k->min, lo, sizeof lo);
  number_text(k, k->max, hi, sizeof hi);
  if (k->max >= BIG) snprintf(buf, len, "a value %s %s", k->min_open ? ">" : ">=", lo);
  else if (k->min_open) snprintf(buf, len, "a value > %s and <= %s", lo, hi);
  else snprintf(buf, len, "a value in [%s, %s]", lo, hi);
}

static int store_number(dem_scenario_t *s, const key_def_t *k, double v, const char *where, char *err, size_t errlen)
{
  if (!isfinite(v) || v < k->min || v > k->max || (k->min_open && v == k->min)) {
    char range[96], got[32];
    range_text(k, range, sizeof range);
    return dem_fail(err, errlen, "%s: key '%s' = %s: expected %s%s%s", where, k->path, number_text(k, v, got, sizeof got),
                    range, k->unit[0] && strcmp(k->unit, "-") != 0 ? " " : "",
                    k->unit[0] && strcmp(k->unit, "-") != 0 ? k->unit : "");
  }
  char *base = (char *)s + k->offset;
  switch (k->type) {
  case K_DOUBLE: *(double *)base = v; break;
  case K_LONG: *(long *)base = (long)v; break;
  case K_INT: case K_BOOL: *(int *)base = (int)v; break;
  default: break;
  }
  return 0;
}

static int store_string(dem_scenario_t *s, const key_def_t *k, const char *v, const char *where, char *err, size_t errlen)
{
  if (strlen(v) >= k->size)
    return dem_fail(err, errlen, "%s: key '%s': expected at most %zu characters", where, k->path, k->size - 1);
  if (k->choices) {
    /* any case: the choice's own spelling is stored (run.policy = rw is RW) */
    const char *c = k->choices, *match = NULL;
    size_t n = strlen(v), len = 0;
    while (*c && !match) {
      const char *bar = strchr(c, '|');
      len = bar ? (size_t)(bar - c) : strlen(c);
      if (len == n && strncasecmp(c, v, n) == 0) match = c;
      else c += len + (bar ? 1 : 0);
    }
    if (!match) return dem_fail(err, errlen, "%s: key '%s' = \"%s\": expected one of %s", where, k->path, v, k->choices);
    snprintf((char *)s + k->offset, k->size, "%.*s", (int)len, match);
    return 0;
  }
  snprintf((char *)s + k->offset, k->size, "%s", v);
  return 0;
}

/* The length of the list under `key` (an array or a list, at most DEM_MAX_HOSTS entries), or -1
 * with a message: `expected` says what the list holds. */
static int host_list_length(config_setting_t *set, const char *key, const char *expected, const char *where, char *err,
                            size_t errlen)
{
  if (config_setting_type(set) != CONFIG_TYPE_ARRAY && config_setting_type(set) != CONFIG_TYPE_LIST)
    return dem_fail(err, errlen, "%s: key '%s': expected a list of %s", where, key, expected);
  int n = config_setting_length(set);
  if (n > DEM_MAX_HOSTS) return dem_fail(err, errlen, "%s: key '%s': at most %d entries", where, key, DEM_MAX_HOSTS);
  return n;
}

static int read_hosts(dem_scenario_t *s, config_setting_t *set, const char *where, char *err, size_t errlen)
{
  int n = host_list_length(set, "platform.hosts", "host names [\"a\", \"b\"]", where, err, errlen);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) {
    const char *h = config_setting_get_string_elem(set, i);
    if (!h || !*h || strlen(h) >= DEM_NAME_MAX)
      return dem_fail(err, errlen, "%s: key 'platform.hosts' item %d: expected a non-empty host name (string)", where, i);
    snprintf(s->hosts[i], DEM_NAME_MAX, "%s", h);
  }
  s->n_hosts = n;
  return 0;
}

static int read_stress(dem_scenario_t *s, config_setting_t *set, const char *file, char *err, size_t errlen)
{
  if (config_setting_type(set) != CONFIG_TYPE_LIST)
    return dem_fail(err, errlen, "%s:%d: key 'stress': expected a list of groups ( { host = ...; kind = ...; } )", file,
                config_setting_source_line(set));
  int n = config_setting_length(set);
  if (n > DEM_MAX_STRESS) return dem_fail(err, errlen, "%s: key 'stress': at most %d entries", file, DEM_MAX_STRESS);
  for (int i = 0; i < n; i++) {
    config_setting_t *g = config_setting_get_elem(set, i);
    int line = config_setting_source_line(g);
    if (config_setting_type(g) != CONFIG_TYPE_GROUP)
      return dem_fail(err, errlen, "%s:%d: key 'stress' item %d: expected a group { host = ...; kind = ...; }", file, line, i);
    dem_stress_t *st = &s->stress[i];
    memset(st, 0, sizeof *st);
    st->workers = 1;
    st->bytes = 0;
    const char *known[] = {"host", "kind", "workers", "bytes", "start", "on", "off"};
    for (int j = 0; j < config_setting_length(g); j++) {
      const char *name = config_setting_name(config_setting_get_elem(g, j));
      int ok = 0;
      for (size_t q = 0; q < sizeof known / sizeof known[0]; q++) ok |= strcmp(name, known[q]) == 0;
      if (!ok)
        return dem_fail(err, errlen, "%s:%d: unknown key 'stress.[%d].%s' (expected host, kind, workers, bytes, start, on, off)",
                    file, line, i, name);
    }
    const char *host = NULL, *kind = NULL;
    if (!config_setting_lookup_string(g, "host", &host) || !*host || strlen(host) >= sizeof st->host)
      return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].host': expected the name of a container host", file, line, i);
    snprintf(st->host, sizeof st->host, "%s", host);
    if (!config_setting_lookup_string(g, "kind", &kind) || (strcmp(kind, "vm") && strcmp(kind, "cpu")))
      return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].kind': expected \"vm\" or \"cpu\"", file, line, i);
    st->vm = strcmp(kind, "vm") == 0;
    int w = 1;
    config_setting_t *ws = config_setting_get_member(g, "workers");
    if (ws) {
      if (config_setting_type(ws) != CONFIG_TYPE_INT || (w = config_setting_get_int(ws)) <= 0)
        return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].workers': expected an integer > 0", file, line, i);
    }
    st->workers = w;
    const char *nums[] = {"bytes", "start", "on", "off"};
    double *dst[] = {&st->bytes, &st->start_s, &st->on_s, &st->off_s};
    for (int q = 0; q < 4; q++) {
      config_setting_t *v = config_setting_get_member(g, nums[q]);
      if (!v) continue;
      int t = config_setting_type(v);
      if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64 && t != CONFIG_TYPE_FLOAT)
        return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].%s': expected a number", file, line, i, nums[q]);
      double x = t == CONFIG_TYPE_FLOAT ? config_setting_get_float(v) : (double)config_setting_get_int64(v);
      if (!isfinite(x) || x < 0)
        return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].%s' = %g: expected a number >= 0", file, line, i, nums[q], x);
      *dst[q] = x;
    }
    if (st->vm && st->bytes <= 0)
      return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].bytes': a memory stress needs bytes > 0 (stress-ng --vm-bytes)",
                  file, line, i);
    if (st->on_s > 0 && st->off_s <= 0)
      return dem_fail(err, errlen, "%s:%d: key 'stress.[%d].off': a periodic stress (on > 0) needs off > 0", file, line, i);
  }
  s->n_stress = n;
  return 0;
}

static int read_sites(dem_scenario_t *s, config_setting_t *set, const char *where, char *err, size_t errlen)
{
  int n = host_list_length(set, "platform.sites", "site numbers [0, 0, 1]", where, err, errlen);
  if (n < 0) return -1;
  for (int i = 0; i < n; i++) {
    config_setting_t *e = config_setting_get_elem(set, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 0 ||
        config_setting_get_int(e) >= DEM_MAX_HOSTS)
      return dem_fail(err, errlen, "%s: key 'platform.sites' item %d: expected a site number 0..%d (integer)", where, i,
                      DEM_MAX_HOSTS - 1);
    s->site[i] = config_setting_get_int(e);
  }
  s->n_site_list = n;
  return 0;
}

/* Walks the settings of a file, dispatching each scalar to the key table. */
static int walk(dem_scenario_t *s, config_setting_t *group, const char *prefix, const char *file, char *err,
                size_t errlen)
{
  for (int i = 0; i < config_setting_length(group); i++) {
    config_setting_t *set = config_setting_get_elem(group, i);
    char path[256], where[DEM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s%s%s", prefix, *prefix ? "." : "", config_setting_name(set));
    /* a file's line, or the --set option itself (set_parsed) */
    if (strncmp(file, "--set ", 6) == 0) snprintf(where, sizeof where, "%s", file);
    else snprintf(where, sizeof where, "%s:%d", file, config_setting_source_line(set));
    int t = config_setting_type(set);
    if (strcmp(path, "platform.hosts") == 0) {
      if (read_hosts(s, set, where, err, errlen)) return -1;
      continue;
    }
    if (strcmp(path, "platform.sites") == 0) {
      if (read_sites(s, set, where, err, errlen)) return -1;
      continue;
    }
    if (strcmp(path, "stress") == 0) {
      if (read_stress(s, set, file, err, errlen)) return -1;
      continue;
    }
    if (t == CONFIG_TYPE_GROUP) {
      if (walk(s, set, path, file, err, errlen)) return -1;
      continue;
    }
    const key_def_t *k = find_key(path);
    if (!k) return unknown_key(where, path, err, errlen);
    int is_num = t == CONFIG_TYPE_INT || t == CONFIG_TYPE_INT64 || t == CONFIG_TYPE_FLOAT;
    switch (k->type) {
    case K_DOUBLE:
      if (!is_num) return dem_fail(err, errlen, "%s: key '%s': expected %s", where, path, type_name(k->type));
      if (store_number(s, k, t == CONFIG_TYPE_FLOAT ? config_setting_get_float(set) : (double)config_setting_get_int64(set),
                       where, err, errlen))
        return -1;
      break;
    case K_LONG: case K_INT:
      if (t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
        return dem_fail(err, errlen, "%s: key '%s': expected %s", where, path, type_name(k->type));
      if (store_number(s, k, (double)config_setting_get_int64(set), where, err, errlen)) return -1;
      break;
    case K_BOOL:
      if (t != CONFIG_TYPE_BOOL) return dem_fail(err, errlen, "%s: key '%s': expected %s", where, path, type_name(k->type));
      if (store_number(s, k, config_setting_get_bool(set), where, err, errlen)) return -1;
      break;
    case K_STRING:
      if (t != CONFIG_TYPE_STRING) return dem_fail(err, errlen, "%s: key '%s': expected %s", where, path, type_name(k->type));
      if (store_string(s, k, config_setting_get_string(set), where, err, errlen)) return -1;
      break;
    }
  }
  return 0;
}

/* A scenario says what to simulate: a file without any of the groups that set the problem
 * or the run (empty, only comments, or only output settings) would silently run the defaults
 * (the study's 500,000 particles x 10,000 steps). */
static int check_not_empty(config_t *cfg, const char *path, char *err, size_t errlen)
{
  config_setting_t *root = config_root_setting(cfg);
  if (config_setting_length(root) == 0)
    return dem_fail(err, errlen, "%s: the scenario is empty (expected at least the groups problem = {...}; and "
                    "time = {...}; see scenarios/README.md or `demsim keys`)", path);
  static const char *const groups[] = {"problem", "material", "physics", "time", "run"};
  for (size_t g = 0; g < sizeof groups / sizeof groups[0]; ++g)
    if (config_setting_get_member(root, groups[g])) return 0;
  return dem_fail(err, errlen, "%s: no problem or run settings (none of the groups problem, material, physics, time, run; "
                  "see scenarios/README.md or `demsim keys`)", path);
}

/* A path set by the file (changed from `before`), relative, becomes relative to the file's directory. */
static int resolve_path(dem_scenario_t *s, char *field, const char *before, const char *key, char *err, size_t errlen)
{
  if (strcmp(before, field) == 0 || !field[0] || field[0] == '/') return 0;
  char full[2 * DEM_PATH_MAX + 2];
  snprintf(full, sizeof full, "%s/%s", s->dir, field);
  if (strlen(full) >= DEM_PATH_MAX) return dem_fail(err, errlen, "%s: key '%s': path too long", s->file, key);
  memcpy(field, full, strlen(full) + 1);
  return 0;
}

/* Shared by the file and text readers: the parsed configuration is walked into s. */
static int load(dem_scenario_t *s, config_t *cfg, const char *path, char *err, size_t errlen)
{
  snprintf(s->file, sizeof s->file, "%s", path);
  snprintf(s->dir, sizeof s->dir, "%s", path);
  char *slash = strrchr(s->dir, '/');
  if (slash) *slash = '\0';
  else snprintf(s->dir, sizeof s->dir, ".");
  char platform_before[DEM_PATH_MAX], hostmap_before[DEM_PATH_MAX];
  snprintf(platform_before, sizeof platform_before, "%s", s->platform);
  snprintf(hostmap_before, sizeof hostmap_before, "%s", s->hostmap);
  int rc = walk(s, config_root_setting(cfg), "", path, err, errlen);
  if (rc == 0) rc = check_not_empty(cfg, path, err, errlen); /* after walk: a bad key is named first */
  /* a platform or host map named in the file is relative to the file */
  if (rc == 0) rc = resolve_path(s, s->platform, platform_before, "platform.file", err, errlen);
  if (rc == 0) rc = resolve_path(s, s->hostmap, hostmap_before, "native.hostmap", err, errlen);
  return rc;
}

int dem_scenario_read(dem_scenario_t *s, const char *path, char *err, size_t errlen)
{
  FILE *f = fopen(path, "r");
  if (!f) return dem_fail(err, errlen, "%s: cannot open the scenario file: %s", path, strerror(errno));
  config_t cfg;
  config_init(&cfg);
  int ok = config_read(&cfg, f);
  fclose(f);
  int rc = ok ? load(s, &cfg, path, err, errlen)
              : dem_fail(err, errlen, "%s:%d: syntax error: %s (expected libconfig syntax: key = value;)", path,
                     config_error_line(&cfg), config_error_text(&cfg));
  config_destroy(&cfg);
  return rc;
}

int dem_scenario_read_text(dem_scenario_t *s, const char *text, const char *name, char *err, size_t errlen)
{
  config_t cfg;
  config_init(&cfg);
  /* no @include from text: it has no directory of its own */
  config_set_include_dir(&cfg, "/nonexistent");
  int ok = config_read_string(&cfg, text);
  int rc = ok ? load(s, &cfg, name, err, errlen)
              : dem_fail(err, errlen, "%s:%d: syntax error: %s (expected libconfig syntax: key = value;)", name,
                     config_error_line(&cfg), config_error_text(&cfg));
  config_destroy(&cfg);
  return rc;
}

/* One entry of a host map: container, host and cores, all non-empty strings, nothing else. */
static int read_hostmap_entry(config_setting_t *g, int i, dem_hostmap_t *m, char *err, size_t errlen)
{
  dem_hostmap_entry_t *e = &m->e[i];
  int line = config_setting_source_line(g);
  const char *name = NULL;
  if (config_setting_type(g) != CONFIG_TYPE_GROUP)
    return dem_fail(err, errlen, "%s:%d: entry %d: expected { container = \"...\"; host = \"...\"; cores = \"...\"; }",
                    m->file, line, i);
  config_setting_lookup_string(g, "container", &name);
  if (!name || !*name || strlen(name) >= sizeof e->container)
    return dem_fail(err, errlen, "%s:%d: entry %d (container \"%s\"): expected a non-empty string 'container' (the "
                    "scenario's container name)", m->file, line, i, name ? name : "");
  snprintf(e->container, sizeof e->container, "%s", name);
  for (int k = 0; k < config_setting_length(g); k++) {
    const char *key = config_setting_name(config_setting_get_elem(g, k));
    if (strcmp(key, "container") && strcmp(key, "host") && strcmp(key, "cores"))
      return dem_fail(err, errlen, "%s:%d: entry %d (container \"%s\"): unknown key '%s' (expected container, host, "
                      "cores)", m->file, line, i, name, key);
  }
  const char *host = NULL, *cores = NULL;
  config_setting_lookup_string(g, "host", &host);
  config_setting_lookup_string(g, "cores", &cores);
  if (!host || !*host || strlen(host) >= sizeof e->host)
    return dem_fail(err, errlen, "%s:%d: entry %d (container \"%s\"): expected a non-empty string 'host' (the real "
                    "machine's name or address)", m->file, line, i, name);
  snprintf(e->host, sizeof e->host, "%s", host);
  if (!cores || strlen(cores) >= sizeof e->cores || dem_hostmap_parse_cores(cores, e->cpu, &e->ncores))
    return dem_fail(err, errlen, "%s:%d: entry %d (container \"%s\"): cores \"%s\": expected logical CPU ids below %d "
                    "as a string like \"0\", \"0-3\" or \"0,2,4-5\"", m->file, line, i, name, cores ? cores : "",
                    DEM_CPU_MAX);
  snprintf(e->cores, sizeof e->cores, "%s", cores);
  int dup = dem_hostmap_find(m, name); /* among the entries before this one */
  if (dup >= 0)
    return dem_fail(err, errlen, "%s:%d: entry %d (container \"%s\"): duplicate container (entry %d has it); expected "
                    "one entry per container", m->file, line, i, name, dup);
  return 0;
}

int dem_scenario_read_hostmap(const char *path, dem_hostmap_t *m, char *err, size_t errlen)
{
  memset(m, 0, sizeof *m);
  snprintf(m->file, sizeof m->file, "%s", path);
  FILE *f = fopen(path, "r");
  if (!f) return dem_fail(err, errlen, "%s: cannot open the host map (key 'native.hostmap'): %s", path, strerror(errno));
  config_t cfg;
  config_init(&cfg);
  int ok = config_read(&cfg, f), rc = 0;
  fclose(f);
  config_setting_t *root = ok ? config_root_setting(&cfg) : NULL, *list = NULL;
  if (!ok)
    rc = dem_fail(err, errlen, "%s:%d: syntax error: %s (expected a host map: hostmap = ( { container = \"c0\"; host = "
                  "\"localhost\"; cores = \"0\"; } );)", path, config_error_line(&cfg), config_error_text(&cfg));
  for (int k = 0; rc == 0 && k < config_setting_length(root); k++)
    if (strcmp(config_setting_name(config_setting_get_elem(root, k)), "hostmap"))
      rc = dem_fail(err, errlen, "%s: unknown key '%s' (expected only hostmap = ( ... );)", path,
                    config_setting_name(config_setting_get_elem(root, k)));
  if (rc == 0) list = config_setting_get_member(root, "hostmap");
  if (rc == 0 && (!list || !config_setting_is_aggregate(list) || config_setting_length(list) == 0 ||
                  config_setting_length(list) > DEM_HOSTMAP_MAX))
    rc = dem_fail(err, errlen, "%s: expected hostmap = ( { container = \"c0\"; host = \"localhost\"; cores = \"0\"; }, "
                  "... ); with 1 to %d entries", path, DEM_HOSTMAP_MAX);
  for (int i = 0; rc == 0 && i < config_setting_length(list); i++) {
    rc = read_hostmap_entry(config_setting_get_elem(list, i), i, m, err, errlen);
    m->n = i + 1;
  }
  config_destroy(&cfg);
  return rc;
}

/* --set KEY=VALUE where VALUE is written as in a scenario file: a quoted string, a list or an
 * array ("RIB", ["a", "b"], ( { ... } )). The assignment is read by libconfig as the file's text
 * `a = { b = VALUE; };` and walked like a file, so it takes what a file takes and is checked
 * alike; messages name the option. 0, or -1 with a message. */
static int set_parsed(dem_scenario_t *s, const char *key, const char *val, const char *where, char *err, size_t errlen)
{
  char text[8192];
  size_t n = 0, depth = 0;
  const char *k = key;
  for (const char *dot; (dot = strchr(k, '.')) != NULL; k = dot + 1, depth++)
    n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, "%.*s = { ", (int)(dot - k), k);
  n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, "%s = %s;", k, val);
  for (size_t i = 0; i < depth; i++) n += (size_t)snprintf(text + n, n < sizeof text ? sizeof text - n : 0, " };");
  if (n >= sizeof text) return dem_fail(err, errlen, "%s: value too long", where);
  config_t cfg;
  config_init(&cfg);
  config_set_include_dir(&cfg, "/nonexistent");
  int rc = config_read_string(&cfg, text)
               ? walk(s, config_root_setting(&cfg), "", where, err, errlen)
               : dem_fail(err, errlen, "%s: '%s' is not a value of a scenario file (%s; e.g. \"RIB\", [\"a\", \"b\"], 0.3)",
                          where, val, config_error_text(&cfg));
  config_destroy(&cfg);
  return rc;
}

int dem_scenario_set(dem_scenario_t *s, const char *assignment, char *err, size_t errlen)
{
  const char *eq = strchr(assignment, '=');
  if (!eq || eq == assignment)
    return dem_fail(err, errlen, "--set '%s': expected key=value (e.g. --set material.friction=0.3)", assignment);
  char key[256];
  size_t n = (size_t)(eq - assignment);
  if (n >= sizeof key) return dem_fail(err, errlen, "--set: key too long");
  memcpy(key, assignment, n);
  key[n] = '\0';
  const char *val = eq + 1;
  char where[300];
  snprintf(where, sizeof where, "--set %s", key);
  /* written as in a file: a quoted string, a list, an array */
  if (val[0] && strchr("\"[({", val[0])) return set_parsed(s, key, val, where, err, errlen);
  if (strcmp(key, "platform.hosts") == 0) {
    /* comma-separated list */
    int count = 0;
    const char *c = val;
    while (*c && count < DEM_MAX_HOSTS) {
      const char *comma = strchr(c, ',');
      size_t len = comma ? (size_t)(comma - c) : strlen(c);
      if (len == 0 || len >= DEM_NAME_MAX) return dem_fail(err, errlen, "%s: expected host names separated by commas", where);
      memcpy(s->hosts[count], c, len);
      s->hosts[count][len] = '\0';
      count++;
      c += len + (comma ? 1 : 0);
    }
    s->n_hosts = count;
    return 0;
  }
  if (strcmp(key, "platform.sites") == 0) {
    int count = 0;
    for (const char *c = val; *c && count < DEM_MAX_HOSTS;) {
      char *end = NULL;
      errno = 0;
      long v = strtol(c, &end, 10);
      if (end == c || (*end && *end != ',') || errno || v < 0 || v >= DEM_MAX_HOSTS)
        return dem_fail(err, errlen, "%s: expected site numbers 0..%d separated by commas, got '%s'", where,
                        DEM_MAX_HOSTS - 1, val);
      s->site[count++] = (int)v;
      c = *end ? end + 1 : end;
    }
    s->n_site_list = count;
    return 0;
  }
  const key_def_t *k = find_key(key);
  if (!k) return unknown_key(where, key, err, errlen);
  if (k->type == K_STRING) return store_string(s, k, val, where, err, errlen);
  if (k->type == K_BOOL) {
    if (strcmp(val, "true") == 0) return store_number(s, k, 1, where, err, errlen);
    if (strcmp(val, "false") == 0) return store_number(s, k, 0, where, err, errlen);
    return dem_fail(err, errlen, "%s: expected true or false, got '%s'", where, val);
  }
  char *end = NULL;
  errno = 0;
  double v = strtod(val, &end);
  if (end == val || *end != '\0' || errno == ERANGE)
    return dem_fail(err, errlen, "%s: expected %s, got '%s'", where, type_name(k->type), val);
  if ((k->type == K_LONG || k->type == K_INT) && v != floor(v))
    return dem_fail(err, errlen, "%s: expected an integer, got '%s'", where, val);
  return store_number(s, k, v, where, err, errlen);
}

void dem_scenario_print_keys(void *stream)
{
  FILE *out = stream;
  dem_scenario_t d;
  dem_scenario_defaults(&d);
  fprintf(out, "Scenario keys (libconfig file, or --set key=value):\n");
  for (size_t i = 0; i < NKEYS; i++) {
    const key_def_t *k = &keys[i];
    const char *base = (const char *)&d + k->offset;
    char def[96];
    switch (k->type) {
    case K_DOUBLE: snprintf(def, sizeof def, "%g", *(const double *)base); break;
    case K_LONG: snprintf(def, sizeof def, "%ld", *(const long *)base); break;
    case K_INT: snprintf(def, sizeof def, "%d", *(const int *)base); break;
    case K_BOOL: snprintf(def, sizeof def, "%s", *(const int *)base ? "true" : "false"); break;
    case K_STRING: snprintf(def, sizeof def, "\"%s\"", base); break;
    }
    fprintf(out, "  %-26s %-9s default %-12s %s%s%s%s%s\n", k->path, k->unit[0] ? k->unit : "", def, k->help,
            k->choices ? " (" : "", k->choices ? k->choices : "", k->choices ? ")" : "", "");
  }
  for (size_t i = 0; i < sizeof list_keys_help / sizeof list_keys_help[0]; i++)
    fprintf(out, "  %-26s %s\n", list_keys_help[i][0], list_keys_help[i][1]);
  fprintf(out, "run.policy:\n");
  for (const dem_policy_t *const *p = dem_policy_table(); *p; p++) fprintf(out, "  %-26s %s\n", (*p)->name, (*p)->help);
}

void dem_scenario_print(const dem_scenario_t *s, void *stream)
{
  FILE *out = stream;
  for (size_t i = 0; i < NKEYS; i++) {
    const key_def_t *k = &keys[i];
    const char *base = (const char *)s + k->offset;
    switch (k->type) {
    case K_DOUBLE: fprintf(out, "  %-26s = %g %s\n", k->path, *(const double *)base, k->unit); break;
    case K_LONG: fprintf(out, "  %-26s = %ld\n", k->path, *(const long *)base); break;
    case K_INT: fprintf(out, "  %-26s = %d\n", k->path, *(const int *)base); break;
    case K_BOOL: fprintf(out, "  %-26s = %s\n", k->path, *(const int *)base ? "true" : "false"); break;
    case K_STRING: fprintf(out, "  %-26s = \"%s\"\n", k->path, base); break;
    }
  }
  if (s->n_hosts) {
    fprintf(out, "  %-26s = [", "platform.hosts");
    for (int i = 0; i < s->n_hosts; i++) fprintf(out, "%s\"%s\"", i ? ", " : "", s->hosts[i]);
    fprintf(out, "]\n");
  }
  if (s->n_site_list) {
    fprintf(out, "  %-26s = [", "platform.sites");
    for (int i = 0; i < s->n_site_list; i++) fprintf(out, "%s%d", i ? ", " : "", s->site[i]);
    fprintf(out, "]\n");
  }
  for (int i = 0; i < s->n_stress; i++)
    fprintf(out, "  stress[%d] = %s x%d on %s, %g B, start %g s, on %g s, off %g s\n", i, s->stress[i].vm ? "vm" : "cpu",
            s->stress[i].workers, s->stress[i].host, s->stress[i].bytes, s->stress[i].start_s, s->stress[i].on_s,
            s->stress[i].off_s);
}
