/* Load monitoring and weights (see balance.h). Loads come from the COMPUTE timer, which
 * reads MPI_Wtime(): under SMPI it measures the modelled container, natively the real one. */
#include "balance.h"

#include <stdlib.h>
#include <string.h>

#include "parallel.h"
#include "scenario.h"
#include "simulation.h"

struct dem_balance {
  dem_sim_t *sim;
  dem_policy_t policy;
  int ranks;
  long every;              /* steps between repartitions */
  double threshold;        /* %, lambda that triggers a repartition (0: off) */
  double rw5_threshold;    /* %, RW5 */
  long check_every;        /* steps between load measurements for the threshold */
  double last_compute;     /* s, COMPUTE timer at the start of the interval */
  long interval_start;     /* step at the start of the interval */
  double *weights;         /* per rank */
  double *loads;           /* s per step, per rank, last interval */
  double lambda;           /* % */
  int have_loads;
};

const char *dem_balance_policy_name(dem_policy_t p)
{
  return p == DEM_POLICY_RW ? "RW" : p == DEM_POLICY_RW5 ? "RW5" : "NOW";
}

double dem_balance_imbalance(const double *load, int n)
{
  double mx = 0, sum = 0;
  for (int i = 0; i < n; i++) {
    sum += load[i];
    if (load[i] > mx) mx = load[i];
  }
  if (n <= 0 || sum <= 0) return 0.0;
  return (mx / (sum / n) - 1.0) * 100.0;
}

void dem_balance_rw(const double *w_old, const double *load, int n, double *w_new)
{
  double sum = 0;
  for (int i = 0; i < n; i++) sum += load[i];
  double avg = sum / n;
  double wsum = 0;
  for (int i = 0; i < n; i++) {
    double w = avg > 0 ? w_old[i] * (2.0 - load[i] / avg) : w_old[i];
    /* a rank more than twice as slow as the average would get a negative weight: keep a
     * small positive part so Zoltan still gives it something to measure next time */
    if (w < 0.05 * w_old[i]) w = 0.05 * w_old[i];
    w_new[i] = w;
    wsum += w;
  }
  for (int i = 0; i < n; i++) w_new[i] *= n / wsum;
}

dem_balance_t *dem_balance_create(const dem_scenario_t *sc, dem_sim_t *sim)
{
  dem_balance_t *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->sim = sim;
  b->ranks = sim->ranks;
  b->policy = strcmp(sc->policy, "RW") == 0 ? DEM_POLICY_RW : strcmp(sc->policy, "RW5") == 0 ? DEM_POLICY_RW5
                                                                                               : DEM_POLICY_NOW;
  b->every = sc->repartition_every;
  b->threshold = sc->lambda_threshold;
  b->rw5_threshold = sc->rw5_threshold;
  b->check_every = sc->metrics_every < b->every ? sc->metrics_every : b->every;
  b->weights = malloc((size_t)b->ranks * sizeof *b->weights);
  b->loads = calloc((size_t)b->ranks, sizeof *b->loads);
  if (!b->weights || !b->loads) {
    dem_balance_destroy(&b);
    return NULL;
  }
  for (int i = 0; i < b->ranks; i++) b->weights[i] = 1.0;
  return b;
}

void dem_balance_destroy(dem_balance_t **b)
{
  if (!*b) return;
  free((*b)->weights);
  free((*b)->loads);
  free(*b);
  *b = NULL;
}

/* Collective: gathers this interval's per-step load of every rank. */
static void measure(dem_balance_t *b, long step)
{
  double now = b->sim->timers.total[DEM_T_COMPUTE];
  long steps = step - b->interval_start;
  double mine = steps > 0 ? (now - b->last_compute) / (double)steps : 0.0;
  dem_parallel_gather_double(&mine, 1, b->loads, 0);
  dem_parallel_bcast(b->loads, (long)b->ranks * (long)sizeof(double), 0);
  b->lambda = dem_balance_imbalance(b->loads, b->ranks);
  b->have_loads = steps > 0;
  b->last_compute = now;
  b->interval_start = step;
  if (b->lambda > b->sim->lambda_max) b->sim->lambda_max = b->lambda;
  b->sim->lambda_last = b->lambda;
}

int dem_balance_condition(dem_balance_t *b, long step)
{
  /* the first interval starts with the loop, not with the set-up's initial force evaluation */
  if (step == 0) b->last_compute = b->sim->timers.total[DEM_T_COMPUTE];
  if (b->ranks < 2 || step == 0) return 0;
  int due = step % b->every == 0;
  int check = b->threshold > 0 && step % b->check_every == 0;
  if (!due && !check) return 0;
  measure(b, step);
  return due || (check && b->lambda > b->threshold);
}

int dem_balance_update_weights(dem_balance_t *b, long step)
{
  (void)step;
  if (!b->have_loads || b->policy == DEM_POLICY_NOW) return 0;
  if (b->policy == DEM_POLICY_RW5 && b->lambda <= b->rw5_threshold) return 0;
  double *w = malloc((size_t)b->ranks * sizeof *w);
  if (!w) return -1;
  dem_balance_rw(b->weights, b->loads, b->ranks, w);
  memcpy(b->weights, w, (size_t)b->ranks * sizeof *w);
  free(w);
  return 0;
}

const double *dem_balance_weights(const dem_balance_t *b) { return b->weights; }

void dem_balance_restore(dem_balance_t *b, const double *weights, long step)
{
  if (weights) memcpy(b->weights, weights, (size_t)b->ranks * sizeof *b->weights);
  b->interval_start = step;
}
double dem_balance_lambda(const dem_balance_t *b) { return b->lambda; }
const double *dem_balance_loads(const dem_balance_t *b) { return b->loads; }
dem_policy_t dem_balance_policy(const dem_balance_t *b) { return b->policy; }
