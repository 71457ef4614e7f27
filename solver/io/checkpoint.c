#include "io/checkpoint.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "balance/balance.h"
#include "base/clock.h"
#include "base/parallel.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "failure/failure.h"
#include "io/output.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

/* The parameters that define the problem: a restart must match them all exactly. */
static void problem_keys(const dem_sim_t *sim, dem_checkpoint_header_t *h)
{
  const dem_scenario_t *s = sim->sc;
  dem_lattice_t lat;
  char err[256];
  if (dem_scenario_lattice(s, &lat, err, sizeof err)) memset(&lat, 0, sizeof lat);
  const struct { const char *k; double v; } keys[] = {
    {"problem.box", s->box}, {"problem.fill", s->fill}, {"problem.particles", (double)lat.count},
    {"problem.spacing", lat.spacing}, {"problem.diameter_ratio", s->diameter_ratio}, {"problem.jitter", s->jitter},
    {"problem.seed", (double)s->seed}, {"material.youngs_modulus", s->params.mat.youngs_modulus},
    {"material.poisson", s->params.mat.poisson}, {"material.restitution", s->params.mat.restitution},
    {"material.friction", s->params.mat.friction}, {"material.density", s->params.mat.density},
    {"time.dt", s->params.dt}, {"physics.gravity", s->params.gravity[2]}, {"physics.skin_ratio", s->skin_ratio}};
  h->n_keys = 0;
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    snprintf(h->key[h->n_keys], sizeof h->key[0], "%s", keys[i].k);
    h->value[h->n_keys++] = keys[i].v;
  }
}

/* What writing or reading `bytes` of a checkpoint costs: the container's storage. 0, or -1 with
 * a message when the platform gives the container none. */
static int charge_storage(double bytes, char *err, size_t errlen)
{
  dem_work_t w = {.kind = DEM_WORK_STORAGE, .bytes = bytes};
  if (dem_clock_charge(&w) == 0) return 0;
  snprintf(err, errlen, "checkpoint: platform: host '%s': missing property 'storage_bw' (B/s): checkpoints are "
           "written to the container's storage (platforms/README.md)", dem_clock_host());
  return -1;
}

static double file_bytes(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 ? (double)st.st_size : 0.0;
}

int dem_checkpoint_write(dem_sim_t *sim, char *err, size_t errlen)
{
  double began = dem_clock_now();
  /* the exact integrator state: no velocity synchronisation here */
  if (dem_engine_pull(sim->engine, DEM_F_ALL, 0, sim->p->n)) {
    snprintf(err, errlen, "checkpoint: device -> host: %s", dem_engine_error(sim->engine));
    return -1;
  }
  char path[DEM_PATH_MAX + 32], tmp[DEM_PATH_MAX + 40];
  snprintf(path, sizeof path, "%s/checkpoint.h5", sim->sc->out_dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  long offset = (long)sim->p->n;
  long total = offset;
  dem_parallel_sum_long(&total, 1);
  /* exclusive prefix sum of the owned counts gives each rank its rows */
  long *counts = calloc((size_t)sim->ranks, sizeof *counts);
  if (!counts) {
    snprintf(err, errlen, "checkpoint: out of memory");
    return -1;
  }
  dem_parallel_gather_counts(offset, counts, 0);
  dem_parallel_bcast(counts, (long)sim->ranks * (long)sizeof *counts, 0);
  long first = 0;
  for (int r = 0; r < sim->rank; r++) first += counts[r];
  free(counts);
  int rc = 0;
  if (sim->rank == 0) {
    dem_checkpoint_header_t h = {.step = sim->step, .total = total, .ranks = sim->ranks,
                                 .repartitions = sim->repartitions, .searches = sim->searches, .kick = sim->kick,
                                 .lambda_max = sim->lambda_max, .lambda_last = sim->lambda_last,
                                 .sim_time = dem_clock_now() - sim->sim_loop_start + sim->sim_time_before};
    problem_keys(sim, &h);
    rc = dem_output_checkpoint_create(tmp, &h, dem_balance_weights(sim->balance), err, errlen);
    if (rc == 0) rc = charge_storage(file_bytes(tmp), err, errlen);
    rc = rc != 0; /* 1 on failure: the maximum over the ranks carries it (-1 would lose to 0) */
  }
  dem_parallel_max_int(&rc, 1);
  /* HDF5 is serial: the ranks write their rows one after the other */
  for (int r = 0; r < sim->ranks && rc == 0; r++) {
    int mine = 0;
    if (sim->rank == r) {
      double before = file_bytes(tmp);
      mine = dem_output_checkpoint_write(tmp, first, sim->p, err, errlen);
      if (mine == 0) mine = charge_storage(file_bytes(tmp) - before, err, errlen);
      mine = mine != 0;
    }
    dem_parallel_max_int(&mine, 1);
    rc = mine;
  }
  /* a container lost while the checkpoint was written: it never became the checkpoint */
  if (dem_failure_due(sim->failure)) {
    if (sim->rank == 0) remove(tmp);
    return DEM_SIM_HOST_FAILED;
  }
  if (rc == 0 && sim->rank == 0 && rename(tmp, path)) {
    snprintf(err, errlen, "checkpoint: cannot rename %s to %s", tmp, path);
    rc = 1;
  }
  dem_parallel_max_int(&rc, 1);
  if (rc && err[0] == '\0') snprintf(err, errlen, "checkpoint: writing %s failed on another rank", tmp);
  if (rc == 0) dem_failure_checkpoint_done(sim->failure, sim->step, dem_clock_now() - began);
  return rc ? -1 : 0;
}

int dem_checkpoint_restore(dem_sim_t *sim, const char *path, double *weights, char *err, size_t errlen)
{
  dem_checkpoint_header_t h, mine;
  int n_weights = 0, rc = 0;
  double *saved = calloc((size_t)sim->ranks, sizeof *saved);
  if (!saved) return -1;
  if (sim->rank == 0) {
    rc = dem_output_checkpoint_read_header(path, &h, saved, sim->ranks, &n_weights, err, errlen) ? DEM_SIM_BAD_INPUT : 0;
    if (rc == 0) {
      problem_keys(sim, &mine);
      for (int k = 0; k < mine.n_keys && rc == 0; k++) {
        int found = 0;
        for (int q = 0; q < h.n_keys; q++)
          if (strcmp(h.key[q], mine.key[k]) == 0) {
            found = 1;
            if (h.value[q] != mine.value[k]) {
              snprintf(err, errlen, "%s: a checkpoint of another problem: key '%s' is %.17g there, %.17g in %s", path,
                       mine.key[k], h.value[q], mine.value[k], sim->sc->file);
              rc = DEM_SIM_BAD_INPUT;
            }
          }
        if (!found) {
          snprintf(err, errlen, "%s: not a checkpoint of this problem: key '%s' is missing", path, mine.key[k]);
          rc = DEM_SIM_BAD_INPUT;
        }
      }
      if (rc == 0 && h.step >= sim->sc->steps) {
        snprintf(err, errlen, "%s: the checkpoint is at step %ld, key 'time.steps' = %ld leaves nothing to run", path,
                 h.step, sim->sc->steps);
        rc = DEM_SIM_BAD_INPUT;
      }
    }
  }
  dem_parallel_bcast(&rc, (long)sizeof rc, 0);
  if (rc) {
    dem_parallel_bcast(err, (long)errlen, 0);
    free(saved);
    return rc;
  }
  dem_parallel_bcast(&h, (long)sizeof h, 0);
  dem_parallel_bcast(&n_weights, (long)sizeof n_weights, 0);
  dem_parallel_bcast(saved, (long)sim->ranks * (long)sizeof *saved, 0);
  long first = h.total * sim->rank / sim->ranks, last = h.total * (sim->rank + 1) / sim->ranks;
  for (int r = 0; r < sim->ranks && rc == 0; r++) {
    int e = 0;
    if (sim->rank == r) {
      e = dem_output_checkpoint_read(path, first, last - first, sim->p, err, errlen);
      if (e == 0) e = charge_storage(file_bytes(path) * (double)(last - first) / (double)(h.total > 0 ? h.total : 1), err,
                                     errlen);
      e = e != 0;
    }
    dem_parallel_max_int(&e, 1);
    rc = e;
  }
  if (rc) {
    if (err[0] == '\0') snprintf(err, errlen, "%s: reading failed on another rank", path);
    free(saved);
    return -1;
  }
  sim->step = h.step;
  sim->kick = h.kick;
  sim->repartitions = h.repartitions;
  sim->searches = h.searches;
  sim->lambda_max = h.lambda_max;
  sim->lambda_last = h.lambda_last;
  sim->sim_time_before = h.sim_time;
  sim->restart_step = h.step;
  /* the saved weights apply when the rank count is the same; otherwise start from equal parts */
  for (int r = 0; r < sim->ranks; r++) weights[r] = n_weights == sim->ranks ? saved[r] : 1.0;
  free(saved);
  return 0;
}
