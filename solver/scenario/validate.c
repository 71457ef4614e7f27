/* A scenario's checks once every key is read (dem_scenario_validate: the keys' relations, the
 * lattice that must hold the particles, failures, sites, noise) and its lattice geometry
 * (dem_scenario_lattice). No libconfig here: scenario.c reads the file and the key table; this
 * unit checks what they stored. */
#include "scenario/scenario.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "dem/params.h"

/* Sites of spacing `spacing` along a length: the centres from d/2 to length - d/2. -1 when
 * the count is not a sane number (checked in double before any conversion). */
static long sites_along(double length, double d, double spacing)
{
  double n = floor((length - d) / spacing + 1e-9) + 1.0;
  if (!isfinite(n) || n < 1.0 || n > 2147483647.0) return -1;
  return (long)n;
}

int dem_scenario_lattice(const dem_scenario_t *s, dem_lattice_t *lat, char *err, size_t errlen)
{
  const char *f = s->file[0] ? s->file : "(defaults)";
  double height = s->box * s->fill;
  double spacing = s->spacing;
  if (spacing <= 0) {
    if (s->particles <= 0)
      return dem_fail(err, errlen, "%s: keys 'problem.spacing' and 'problem.particles': set at least one of them (> 0)", f);
    spacing = cbrt(s->box * s->box * height / (double)s->particles);
  }
  double d = s->diameter_ratio * spacing;
  if (!isfinite(spacing) || !isfinite(d) || spacing <= 0 || d >= s->box || d >= height)
    return dem_fail(err, errlen, "%s: keys 'problem.spacing'/'problem.diameter_ratio': particles of diameter %g m do not fit "
                "in the filled part (%g m x %g m x %g m)", f, d, s->box, s->box, height);
  /* the largest lattice of this spacing whose particles fit inside the walls */
  long nxy = sites_along(s->box, d, spacing), nz = sites_along(height, d, spacing);
  if (nxy < 0 || nz < 0 || (double)nxy * (double)nxy * (double)nz > 4e9)
    return dem_fail(err, errlen, "%s: key 'problem.spacing': a lattice of spacing %g m in a %g m box has too many sites "
                "(at most 2^31 particles)", f, spacing, s->box);
  long capacity = nxy * nxy * nz;
  long count = s->particles > 0 ? s->particles : capacity;
  /* rounding of a derived spacing can lose a row: shrink it just enough (a few steps) */
  for (int tries = 0; s->spacing <= 0 && count > capacity && tries < 100; tries++) {
    spacing *= 0.999;
    d = s->diameter_ratio * spacing;
    nxy = sites_along(s->box, d, spacing);
    nz = sites_along(height, d, spacing);
    if (nxy < 0 || nz < 0) break;
    capacity = nxy * nxy * nz;
  }
  if (count > capacity || count > 2147483647L)
    return dem_fail(err, errlen, "%s: key 'problem.particles' = %ld: the lattice of spacing %g m holds only %ld particles",
                f, count, spacing, capacity);
  lat->nx = lat->ny = nxy;
  lat->nz = nz;
  lat->count = count;
  lat->spacing = spacing;
  lat->diameter = d;
  /* centred in x and y, resting on the floor in z */
  double span = (double)(nxy - 1) * spacing;
  lat->origin[0] = 0.5 * (s->box - span);
  lat->origin[1] = 0.5 * (s->box - span);
  lat->origin[2] = 0.5 * d;
  return 0;
}

/* noise.*: a correlation time for each noisy resource kind, and profiles of a bounded length */
static int validate_noise(const dem_scenario_t *s, const char *f, char *err, size_t errlen)
{
  const dem_noise_t *n = &s->noise;
  const struct { const char *cv_key, *tau_key; double cv, tau; } kinds[] = {
    {"noise.cpu_cv", "noise.cpu_tau", n->cpu_cv, n->cpu_tau},
    {"noise.mem_cv", "noise.mem_tau", n->mem_cv, n->mem_tau},
    {"noise.net_cv", "noise.net_tau", n->net_cv, n->net_tau},
  };
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
    if (kinds[i].cv > 0.0 && !(kinds[i].tau > 0.0))
      return dem_fail(err, errlen, "%s: key '%s' = %g s: %s = %g needs a correlation time > 0 s", f, kinds[i].tau_key,
                      kinds[i].tau, kinds[i].cv_key, kinds[i].cv);
  if (n->horizon / n->dt > 1e6)
    return dem_fail(err, errlen, "%s: key 'noise.horizon' = %g s: at most 1e6 steps of noise.dt = %g s", f, n->horizon,
                    n->dt);
  return 0;
}

/* failure.*: one way to declare the loss, a container that runs a rank, and a container left to
 * restart on. After a restart (s->attempt > 0) the lost container is no longer in the list. */
static int validate_failure(const dem_scenario_t *s, const char *f, char *err, size_t errlen)
{
  if (s->failure_at > 0 && s->failure_mtbf > 0)
    return dem_fail(err, errlen, "%s: key 'failure.mtbf': expected either failure.at (one loss at a given time) or "
                    "failure.mtbf (losses drawn at a rate), not both", f);
  if (s->failure_host[0] && !(s->failure_at > 0))
    return dem_fail(err, errlen, "%s: key 'failure.at': failure.host = \"%s\" needs the time of the loss (> 0 s)", f,
                    s->failure_host);
  if (s->failure_mtbf > 0 && s->failure_host[0])
    return dem_fail(err, errlen, "%s: key 'failure.host': with failure.mtbf the lost containers are drawn; expected "
                    "no failure.host", f);
  if (!(s->failure_at > 0 || s->failure_mtbf > 0)) return 0;
  if (s->n_hosts == 0)
    return dem_fail(err, errlen, "%s: key 'platform.hosts': a declared failure (failure.*) needs the list of containers "
                    "that run the ranks", f);
  if (s->attempt == 0 && s->ranks < 2)
    return dem_fail(err, errlen, "%s: key 'run.ranks' = %d: losing a container needs at least 2 (one to restart on)",
                    f, s->ranks);
  if (s->failure_at > 0 && s->attempt == 0) {
    int found = 0;
    for (int r = 0; r < s->ranks; r++) found |= strcmp(s->hosts[r], s->failure_host) == 0;
    if (!found)
      return dem_fail(err, errlen, "%s: key 'failure.host' = \"%s\": expected one of the %d containers that run a rank "
                      "(platform.hosts)", f, s->failure_host, s->ranks);
  }
  return 0;
}

void dem_scenario_drop_host(dem_scenario_t *s, const char *host)
{
  int n = 0, used = s->ranks < s->n_hosts ? s->ranks : s->n_hosts;
  for (int r = 0; r < used; r++)
    if (strcmp(s->hosts[r], host)) {
      if (s->n_site_list) s->site[n] = s->site[r];
      memmove(s->hosts[n++], s->hosts[r], DEM_NAME_MAX);
    }
  s->n_hosts = s->ranks = n;
  if (!s->n_site_list) return;
  s->n_site_list = n;
  int map[DEM_MAX_HOSTS] = {0}, next = 0; /* the sites left, numbered in their old order */
  for (int i = 0; i < n; i++) map[s->site[i]] = 1;
  for (int k = 0; k < DEM_MAX_HOSTS; k++) map[k] = map[k] ? next++ : -1;
  for (int i = 0; i < n; i++) s->site[i] = map[s->site[i]];
}

/* platform.sites: one site per host, numbered 0, 1, ... in the order of the ranks' hosts;
 * HIER needs them. */
static int validate_sites(const dem_scenario_t *s, const char *f, char *err, size_t errlen)
{
  int hier = strcmp(s->partitioner, "HIER") == 0;
  if (!s->n_site_list) {
    if (hier && s->ranks > 1)
      return dem_fail(err, errlen, "%s: key 'platform.sites': run.partitioner = \"HIER\" needs the site of each "
                      "container of platform.hosts, e.g. [0, 0, 1, 1]", f);
    return 0;
  }
  if (s->n_site_list != s->n_hosts)
    return dem_fail(err, errlen, "%s: key 'platform.sites': %d entries, expected one per container of "
                    "platform.hosts (%d)", f, s->n_site_list, s->n_hosts);
  /* numbered in the order of their first ranks, without gaps: the ranks' first site is 0, and
   * each site number is at most one above the highest before it (partition.c relies on it) */
  for (int r = 0, top = -1; r < s->ranks; r++) {
    if (s->site[r] > top + 1)
      return dem_fail(err, errlen, "%s: key 'platform.sites' item %d = %d: expected sites numbered 0, 1, ... in the "
                      "order of their first containers (at most %d here)", f, r, s->site[r], top + 1);
    if (s->site[r] > top) top = s->site[r];
  }
  return 0;
}

int dem_scenario_validate(dem_scenario_t *s, char *err, size_t errlen)
{
  const char *f = s->file[0] ? s->file : "(defaults)";
  dem_lattice_t lat;
  if (dem_scenario_lattice(s, &lat, err, errlen)) return -1;
  double r = 0.5 * lat.diameter;
  s->params.box_lo[0] = s->params.box_lo[1] = s->params.box_lo[2] = 0.0;
  s->params.box_hi[0] = s->params.box_hi[1] = s->params.box_hi[2] = s->box;
  s->params.skin = s->skin_ratio * lat.diameter;
  if (dem_params_derive(&s->params, err, errlen)) return -1;
  double dt_crit = dem_params_rayleigh_dt(&s->params, r);
  if (s->params.dt > s->dt_fraction_max * dt_crit)
    return dem_fail(err, errlen, "%s: key 'time.dt' = %g s: expected at most %g x the Rayleigh critical step %g s = %g s "
                "(particle radius %g m)", f, s->params.dt, s->dt_fraction_max, dt_crit, s->dt_fraction_max * dt_crit, r);
  double overlap = (lat.diameter - lat.spacing) / r; /* neighbours on the lattice */
  if (overlap > s->overlap_max)
    return dem_fail(err, errlen, "%s: key 'problem.diameter_ratio' = %g: the initial overlap is %.3g of the radius, expected "
                "at most %g (physics.overlap_max); such a packing would explode", f, s->diameter_ratio, overlap,
                s->overlap_max);
  if (strcmp(s->device_cost, "measured") == 0 && strcmp(s->backend, "opencl") != 0)
    return dem_fail(err, errlen, "%s: key 'device.cost' = \"measured\": it times the OpenCL kernels, so it needs "
                "device.backend = \"opencl\" (got \"%s\")", f, s->backend);
  if (strcmp(s->device_cost, "measured") == 0 && !(s->local_speed > 0))
    return dem_fail(err, errlen, "%s: key 'device.local_speed': device.cost = \"measured\" needs the DEM kernels' rate "
                "of one core of this machine in flop/s, in the platforms' unit: its clock (`validation/study/hardware.py "
                "--calibrate-only` prints it) x KERNEL_FLOPS_PER_CYCLE (platforms/make_platforms.py), e.g. 4.1e9", f);
  if (s->server[0] && strcmp(s->device_cost, "measured") == 0)
    return dem_fail(err, errlen, "%s: key 'device.server' = \"%s\": device.cost = \"measured\" times a local device; "
                "a device server's kernels are charged by the model (expected device.cost = \"model\")", f, s->server);
  if (s->server[0] && s->hostmap[0])
    return dem_fail(err, errlen, "%s: key 'device.server' = \"%s\": not supported with native.hostmap (the host map "
                "places the ranks only; expected one of the two)", f, s->server);
  for (int r2 = 0; s->server[0] && r2 < s->n_stress; r2++)
    if (strcmp(s->stress[r2].host, s->server) == 0)
      return dem_fail(err, errlen, "%s: key 'device.server' = \"%s\": stress.[%d] runs on that container; expected a "
                  "container that runs no stress", f, s->server, r2);
  if (s->n_hosts > 0 && s->ranks > s->n_hosts)
    return dem_fail(err, errlen, "%s: key 'run.ranks' = %d: expected at most %d, the number of containers in "
                "'platform.hosts'", f, s->ranks, s->n_hosts);
  for (int i = 0; i < s->n_stress; i++)
    for (int r2 = 0; r2 < s->ranks && r2 < s->n_hosts; r2++)
      if (strcmp(s->stress[i].host, s->hosts[r2]) == 0)
        return dem_fail(err, errlen, "%s: key 'stress.[%d].host' = \"%s\": that container runs rank %d; stress runs on a "
                    "co-located container that runs no rank", f, i, s->stress[i].host, r2);
  if (validate_sites(s, f, err, errlen)) return -1;
  if (s->ranks > lat.count)
    return dem_fail(err, errlen, "%s: key 'run.ranks' = %d: more ranks than particles (%ld)", f, s->ranks, lat.count);
  if (s->ruper_report_max < s->ruper_report_min)
    return dem_fail(err, errlen, "%s: key 'run.ruper_report_max' = %ld steps: expected at least run.ruper_report_min "
                "(%ld steps)", f, s->ruper_report_max, s->ruper_report_min);
  if (validate_noise(s, f, err, errlen)) return -1;
  return validate_failure(s, f, err, errlen);
}
