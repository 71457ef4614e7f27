/* EWMA: weights proportional to exponentially smoothed speeds (Brown's simple exponential
 * smoothing, R. G. Brown, "Smoothing, Forecasting and Prediction of Discrete Time Series",
 * 1963; Holt's method without the trend term).
 *
 * A rank's speed over the last interval is the work it held over the time it took:
 * v_i = W_i / L_i (the weight stands for its particle share, since RCB cuts to the weights).
 * S_i <- alpha v_i + (1 - alpha) S_i, and W_i <- n S_i / sum S. With alpha = 1 the weights
 * jump to the measured speeds in one step; smaller alphas let a short burst of co-located
 * load move the weights only by a fraction alpha of its effect, and a lasting one fully after
 * a few intervals. The first update starts from the measured speeds. */
#include "policy/policy.h"

#include <stdlib.h>

typedef struct ewma {
  double alpha;
  double speed[]; /* smoothed, per rank (0: none yet) */
} ewma_t;

void dem_policy_ewma_step(double alpha, double *speed, const double *w_old, const double *load, int n,
                          double *w_new)
{
  /* a rank with no measured load keeps its smoothed speed */
  for (int i = 0; i < n; i++) {
    if (!(load[i] > 0)) continue;
    double v = w_old[i] / load[i];
    speed[i] = speed[i] > 0 ? alpha * v + (1.0 - alpha) * speed[i] : v;
  }
  double sum = 0;
  for (int i = 0; i < n; i++) sum += speed[i];
  if (!(sum > 0)) {
    for (int i = 0; i < n; i++) w_new[i] = w_old[i];
    return;
  }
  for (int i = 0; i < n; i++) w_new[i] = n * speed[i] / sum;
  dem_policy_floor_normalise(w_old, w_new, n);
}

static void *ewma_init(const dem_policy_params_t *p, int n, int *ok)
{
  ewma_t *e = calloc(1, sizeof *e + (size_t)n * sizeof e->speed[0]);
  *ok = e != NULL;
  if (e) e->alpha = p->ewma_alpha;
  return e;
}

static int ewma_update(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new)
{
  (void)lambda;
  ewma_t *e = state;
  dem_policy_ewma_step(e->alpha, e->speed, w_old, loads, n, w_new);
  return 1;
}

const dem_policy_t dem_policy_ewma = {"EWMA", "weights proportional to exponentially smoothed speeds (run.ewma_alpha)",
                                      ewma_init, free, ewma_update, NULL};
