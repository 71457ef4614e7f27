/* Load monitoring and weights (see balance.h). Loads come from the COMPUTE timer, which
 * reads MPI_Wtime(): under SMPI it measures the modelled container, natively the real one.
 * The weight update itself is the policy's (policy.h); this file only measures, decides
 * when, and keeps the history the oscillation metric needs. Report-driven policies (RUPER)
 * measure through the speed monitor (monitor.h) instead of gathering the loads. */
#include "balance/balance.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "balance/monitor.h"
#include "base/parallel.h"
#include "dem/particles.h"
#include "policy/table.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

struct dem_balance {
  dem_sim_t *sim;
  const dem_policy_t *policy;
  void *state;             /* the policy's, or NULL */
  dem_monitor_t *monitor;  /* report-driven policies, 2 ranks or more; NULL otherwise */
  int ranks;
  long every;              /* steps between repartitions */
  double threshold;        /* %, lambda that triggers a repartition (0: off) */
  long check_every;        /* steps between load measurements for the threshold */
  double last_compute;     /* s, COMPUTE timer at the start of the interval */
  long interval_start;     /* step at the start of the interval */
  double *weights;         /* per rank */
  double *w_new;           /* per rank, the policy's output */
  double *loads;           /* s per step, per rank, last interval */
  double lambda;           /* % */
  int have_loads;
  /* history: weights before the first repartition and after each, lambda after each */
  double *w_hist;          /* (reps + 1) x ranks */
  double *lambda_after;    /* %, reps (those measured) */
  int reps, n_after, cap;
  int after_pending;       /* the next measured interval follows a repartition */
  int failed;              /* the monitor ran out of memory */
  const int *site;         /* HIER: site of each rank (platform.sites); NULL otherwise */
  double site_threshold;   /* %, HIER: a site's share changes only beyond this */
  int site_moves;          /* repartitions that changed the sites' shares */
};

const char *dem_balance_policy_name(const dem_balance_t *b) { return b->policy->name; }

dem_balance_t *dem_balance_create(const dem_scenario_t *sc, dem_sim_t *sim)
{
  dem_balance_t *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->sim = sim;
  b->ranks = sim->ranks;
  /* scenario.c accepts only the table's names; NOW is the default */
  b->policy = dem_policy_find(sc->policy);
  if (!b->policy) b->policy = &dem_policy_now;
  dem_policy_params_t p = {.rw5_threshold = sc->rw5_threshold, .ewma_alpha = sc->ewma_alpha,
                           .pi_kp = sc->pi_kp, .pi_ki = sc->pi_ki, .ruper_tmin_factor = sc->ruper_tmin_factor,
                           .ruper_threshold = sc->ruper_threshold, .ruper_change = sc->ruper_change,
                           .ruper_report_min = sc->ruper_report_min, .ruper_report_max = sc->ruper_report_max};
  int ok = 1;
  if (b->policy->init) b->state = b->policy->init(&p, b->ranks, &ok);
  if (b->policy->from_speeds && b->ranks > 1) {
    dem_monitor_run_t run = {.ranks = b->ranks, .rank = sim->rank, .every = sc->repartition_every,
                             .first = sim->step, .last = sc->steps,
                             .total_work = (double)sim->total_particles * (double)(sc->steps - sim->step)};
    b->monitor = dem_monitor_create(b->policy, b->state, &p, &run);
    ok = ok && b->monitor;
  }
  b->every = sc->repartition_every;
  b->threshold = sc->lambda_threshold;
  if (strcmp(sc->partitioner, "HIER") == 0 && sc->n_site_list) b->site = sc->site;
  b->site_threshold = sc->site_threshold;
  b->check_every = sc->metrics_every < b->every ? sc->metrics_every : b->every;
  b->cap = 16;
  b->weights = malloc((size_t)b->ranks * sizeof *b->weights);
  b->w_new = malloc((size_t)b->ranks * sizeof *b->w_new);
  b->loads = calloc((size_t)b->ranks, sizeof *b->loads);
  b->w_hist = malloc((size_t)(b->cap + 1) * (size_t)b->ranks * sizeof *b->w_hist);
  b->lambda_after = malloc((size_t)b->cap * sizeof *b->lambda_after);
  if (!ok || !b->weights || !b->w_new || !b->loads || !b->w_hist || !b->lambda_after) {
    dem_balance_destroy(&b);
    return NULL;
  }
  for (int i = 0; i < b->ranks; i++) b->weights[i] = b->w_hist[i] = 1.0;
  return b;
}

void dem_balance_destroy(dem_balance_t **b)
{
  if (!*b) return;
  if ((*b)->state && (*b)->policy->destroy) (*b)->policy->destroy((*b)->state);
  dem_monitor_destroy(&(*b)->monitor);
  free((*b)->weights);
  free((*b)->w_new);
  free((*b)->loads);
  free((*b)->w_hist);
  free((*b)->lambda_after);
  free(*b);
  *b = NULL;
}

/* The run's imbalance figures after a new lambda: its maximum, the last one, and the one
 * after each repartition. */
static void note_lambda(dem_balance_t *b)
{
  if (b->lambda > b->sim->lambda_max) b->sim->lambda_max = b->lambda;
  b->sim->lambda_last = b->lambda;
  if (b->after_pending && b->have_loads) {
    b->lambda_after[b->n_after++] = b->lambda;
    b->after_pending = 0;
  }
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
  note_lambda(b);
}

/* RUPER's condition: the monitor runs at every step boundary (reports, and on rank 0 the
 * polling and the decisions); at a checkpoint every rank takes rank 0's decision. The
 * weights it carries wait in w_new for dem_balance_update_weights. */
static int monitored_condition(dem_balance_t *b, long step)
{
  dem_sim_t *sim = b->sim;
  double cost = sim->repartitions > 0 ? sim->timers.total[DEM_T_REPARTITION] / sim->repartitions : 0.0;
  if (dem_monitor_step(b->monitor, step, sim->timers.total[DEM_T_COMPUTE], (long)sim->p->n, cost))
    b->failed = 1;
  if (step == 0 || step % b->every != 0) return b->failed;
  dem_monitor_decision_t d;
  dem_monitor_decision(b->monitor, step, &d, b->w_new, b->loads);
  b->have_loads = d.have;
  if (d.have) {
    b->lambda = d.lambda;
    note_lambda(b);
  }
  return d.repartition || b->failed;
}

int dem_balance_condition(dem_balance_t *b, long step)
{
  /* the first interval starts with the loop, not with the set-up's initial force evaluation */
  if (step == 0) b->last_compute = b->sim->timers.total[DEM_T_COMPUTE];
  if (b->monitor) return monitored_condition(b, step);
  if (b->ranks < 2 || step == 0) return 0;
  int due = step % b->every == 0;
  int check = b->threshold > 0 && step % b->check_every == 0;
  if (!due && !check) return 0;
  measure(b, step);
  return due || (check && b->lambda > b->threshold);
}

/* Appends the current weights to the history (one more repartition). 0 or -1. */
static int record(dem_balance_t *b)
{
  if (b->reps == b->cap) {
    int cap = 2 * b->cap;
    double *h = realloc(b->w_hist, (size_t)(cap + 1) * (size_t)b->ranks * sizeof *h);
    if (h) b->w_hist = h;
    double *l = realloc(b->lambda_after, (size_t)cap * sizeof *l);
    if (l) b->lambda_after = l;
    if (!h || !l) return -1;
    b->cap = cap;
  }
  b->reps++;
  memcpy(b->w_hist + (size_t)b->reps * (size_t)b->ranks, b->weights, (size_t)b->ranks * sizeof *b->weights);
  b->after_pending = 1;
  return 0;
}

int dem_balance_site_shares(const double *w, const int *site, int n, double *share, double *sum)
{
  int sites = 0;
  double all = 0;
  for (int i = 0; i < n; i++)
    if (site[i] + 1 > sites) sites = site[i] + 1;
  for (int k = 0; k < sites; k++) sum[k] = 0.0;
  for (int i = 0; i < n; i++) {
    sum[site[i]] += w[i];
    all += w[i];
  }
  for (int k = 0; k < sites; k++) share[k] = sum[k] / all;
  return sites;
}

int dem_balance_hold_sites(const double *w_old, double *w_new, const int *site, int n, double threshold)
{
  double old_share[DEM_MAX_HOSTS], new_share[DEM_MAX_HOSTS], old_sum[DEM_MAX_HOSTS], new_sum[DEM_MAX_HOSTS];
  int sites = dem_balance_site_shares(w_old, site, n, old_share, old_sum);
  dem_balance_site_shares(w_new, site, n, new_share, new_sum);
  for (int k = 0; k < sites; k++)
    if (fabs(new_share[k] / old_share[k] - 1.0) * 100.0 > threshold) return 1;
  /* held: each site keeps its sum, its ranks share it as the policy says */
  for (int i = 0; i < n; i++) w_new[i] *= old_sum[site[i]] / new_sum[site[i]];
  return 0;
}

/* The policy's (or the monitor's) new weights, the sites' shares held under HIER. */
static void adopt(dem_balance_t *b)
{
  if (b->site && dem_balance_hold_sites(b->weights, b->w_new, b->site, b->ranks, b->site_threshold))
    b->site_moves++;
  memcpy(b->weights, b->w_new, (size_t)b->ranks * sizeof *b->weights);
}

int dem_balance_update_weights(dem_balance_t *b, long step)
{
  if (b->failed) return -1;
  if (b->monitor) {
    /* the monitor's decision brought the weights; its next reports are of the new parts */
    adopt(b);
    dem_monitor_repartitioned(b->monitor, step);
  } else if (b->have_loads && b->policy->update(b->state, b->weights, b->loads, b->ranks, b->lambda, b->w_new))
    adopt(b);
  return record(b);
}

int dem_balance_site_moves(const dem_balance_t *b) { return b->site_moves; }

void dem_balance_finish(dem_balance_t *b)
{
  if (b->monitor) dem_monitor_close(b->monitor);
}

long dem_balance_reports(const dem_balance_t *b) { return b->monitor ? dem_monitor_reports(b->monitor) : 0; }

const double *dem_balance_weights(const dem_balance_t *b) { return b->weights; }

void dem_balance_restore(dem_balance_t *b, const double *weights, long step)
{
  if (weights) {
    memcpy(b->weights, weights, (size_t)b->ranks * sizeof *b->weights);
    memcpy(b->w_hist, weights, (size_t)b->ranks * sizeof *b->weights);
  }
  b->interval_start = step;
}
double dem_balance_lambda(const dem_balance_t *b) { return b->lambda; }
const double *dem_balance_loads(const dem_balance_t *b) { return b->loads; }

const double *dem_balance_lambda_after(const dem_balance_t *b, int *n)
{
  *n = b->n_after;
  return b->lambda_after;
}

double dem_balance_weight_oscillation(const dem_balance_t *b)
{
  return dem_balance_oscillation(b->w_hist, b->reps, b->ranks);
}
