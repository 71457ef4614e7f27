/* metrics.csv: one row per rank per interval (see metrics.h). Columns:
 *   step, time_s (simulated/wall clock at the row), rank, host, load_s, wait_s, comm_s (the
 *   interval's), weight, particles, ghosts, lambda_percent, repartitioned (1 on the row after
 *   a repartition) */
#include "io/metrics.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "balance/balance.h"
#include "base/clock.h"
#include "base/parallel.h"
#include "dem/particles.h"
#include "domain/ghosts.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

typedef struct row {
  double load, wait, comm, weight, particles, ghosts;
} row_t;

struct dem_metrics {
  FILE *csv;         /* rank 0 */
  long every;
  double last_load, last_wait, last_comm;
  int last_repartitions; /* repartitions seen at the previous row */
  row_t *rows;       /* rank 0: one per rank */
  /* this rank's per-step load (its DEM_T_COMPUTE time in each step): the sums of its spread */
  double step_mark;  /* s, the compute total at the end of the previous step */
  double n, s1, s2, lag1, first, last; /* steps; sum, sum of squares, sum of x_k x_k-1; x_0, x_n-1 */
  char (*hosts)[64]; /* rank 0 */
};

dem_metrics_t *dem_metrics_create(dem_sim_t *sim, char *err, size_t errlen)
{
  dem_metrics_t *m = calloc(1, sizeof *m);
  if (!m) return NULL;
  m->every = sim->sc->metrics_every;
  char host[64];
  snprintf(host, sizeof host, "%s", sim->host);
  long *counts = NULL;
  if (sim->rank == 0) {
    m->rows = calloc((size_t)sim->ranks, sizeof *m->rows);
    m->hosts = calloc((size_t)sim->ranks, sizeof *m->hosts);
    counts = calloc((size_t)sim->ranks, sizeof *counts);
  }
  dem_parallel_gather_counts((long)sizeof host, counts, 0);
  dem_parallel_gatherv_bytes(host, (long)sizeof host, m->hosts, counts, 0);
  free(counts);
  int rc = 0;
  if (sim->rank == 0) {
    char path[DEM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/metrics.csv", sim->sc->out_dir);
    /* a restarted run continues the file of the run it restarts */
    int append = sim->restart_step > 0 && access(path, F_OK) == 0;
    m->csv = fopen(path, append ? "a" : "w");
    if (!m->csv || !m->rows || !m->hosts) {
      snprintf(err, errlen, "%s: cannot write", path);
      rc = -1;
    } else if (!append) {
      fprintf(m->csv, "step,time_s,rank,host,load_s,wait_s,comm_s,weight,particles,ghosts,lambda_percent,repartitioned\n");
    }
  }
  dem_parallel_max_int(&rc, 1);
  if (rc) {
    if (sim->rank != 0) snprintf(err, errlen, "rank 0 cannot write metrics.csv");
    dem_metrics_destroy(&m);
    return NULL;
  }
  return m;
}

void dem_metrics_destroy(dem_metrics_t **m)
{
  if (!*m) return;
  if ((*m)->csv) fclose((*m)->csv);
  free((*m)->rows);
  free((*m)->hosts);
  free(*m);
  *m = NULL;
}

int dem_metrics_step(dem_metrics_t *m, dem_sim_t *sim, char *err, size_t errlen)
{
  (void)err;
  (void)errlen;
  double x = sim->timers.total[DEM_T_COMPUTE] - m->step_mark;
  m->step_mark = sim->timers.total[DEM_T_COMPUTE];
  if (m->n > 0) m->lag1 += x * m->last;
  else m->first = x;
  m->n += 1;
  m->s1 += x;
  m->s2 += x * x;
  m->last = x;
  if (sim->step % m->every != 0 && sim->step != sim->sc->steps) return 0;
  double load = sim->timers.total[DEM_T_COMPUTE], wait = dem_ghosts_wait_time(sim->ghosts);
  double comm = dem_ghosts_comm_time(sim->ghosts);
  row_t mine = {load - m->last_load, wait - m->last_wait, comm - m->last_comm,
                dem_balance_weights(sim->balance)[sim->rank], (double)sim->p->n, (double)dem_ghosts_count(sim->ghosts)};
  m->last_load = load;
  m->last_wait = wait;
  m->last_comm = comm;
  dem_parallel_gather_double((const double *)&mine, 6, (double *)m->rows, 0);
  int rep = sim->repartitions;
  if (sim->rank == 0) {
    double mx = 0, sum = 0;
    for (int r = 0; r < sim->ranks; r++) {
      sum += m->rows[r].load;
      if (m->rows[r].load > mx) mx = m->rows[r].load;
    }
    double lambda = sum > 0 ? (mx / (sum / sim->ranks) - 1.0) * 100.0 : 0.0;
    double t = dem_clock_now();
    int flag = rep != m->last_repartitions;
    for (int r = 0; r < sim->ranks; r++)
      fprintf(m->csv, "%ld,%.9g,%d,%s,%.9g,%.9g,%.9g,%.9g,%.0f,%.0f,%.6g,%d\n", sim->step, t, r, m->hosts[r],
              m->rows[r].load, m->rows[r].wait, m->rows[r].comm, m->rows[r].weight, m->rows[r].particles,
              m->rows[r].ghosts, lambda, flag);
    fflush(m->csv);
  }
  m->last_repartitions = rep;
  return 0;
}

void dem_metrics_step_spread(const dem_metrics_t *m, double *cv, double *acf1)
{
  *cv = *acf1 = 0.0;
  if (m->n < 3 || m->s1 <= 0.0) return;
  double mean = m->s1 / m->n, var = m->s2 - m->n * mean * mean; /* n x the variance */
  if (var <= 0.0) return;
  *cv = sqrt(var / m->n) / mean;
  /* sum over k >= 1 of (x_k - mean)(x_k-1 - mean), over n x the variance */
  double cov = m->lag1 - mean * ((m->s1 - m->first) + (m->s1 - m->last)) + (m->n - 1) * mean * mean;
  *acf1 = cov / var;
}
