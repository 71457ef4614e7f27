/* RW and RW5, the study's runtime-adapted weights: W_i <- W_i (2 - L_i / L_avg), a
 * multiplicative step from the last interval's loads alone. RW5 is RW with a dead band: the
 * weights change only when lambda exceeds run.rw5_threshold (5 %), which damps RW's
 * oscillation but also ignores small imbalances. */
#include "policy/policy.h"

#include <stddef.h>
#include <stdlib.h>

void dem_balance_rw(const double *w_old, const double *load, int n, double *w_new)
{
  double sum = 0;
  for (int i = 0; i < n; i++) sum += load[i];
  double avg = sum / n;
  for (int i = 0; i < n; i++) w_new[i] = avg > 0 ? w_old[i] * (2.0 - load[i] / avg) : w_old[i];
  dem_policy_floor_normalise(w_old, w_new, n);
}

static int rw_update(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new)
{
  (void)state, (void)lambda;
  dem_balance_rw(w_old, loads, n, w_new);
  return 1;
}

/* RW5's only state is its threshold */
static void *rw5_init(const dem_policy_params_t *p, int n, int *ok)
{
  (void)n;
  double *t = malloc(sizeof *t);
  *ok = t != NULL;
  if (t) *t = p->rw5_threshold;
  return t;
}

static int rw5_update(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new)
{
  if (lambda <= *(const double *)state) return 0;
  dem_balance_rw(w_old, loads, n, w_new);
  return 1;
}

const dem_policy_t dem_policy_rw = {"RW", "W_i <- W_i (2 - L_i/L_avg) at every repartition", NULL, NULL, rw_update, NULL};
const dem_policy_t dem_policy_rw5 = {"RW5", "RW, only when lambda > run.rw5_threshold", rw5_init, free, rw5_update, NULL};
