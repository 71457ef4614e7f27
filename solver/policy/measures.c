/* What the policies and the monitor share: the weights' floor and normalisation, the imbalance
 * lambda of a set of loads and the oscillation of a run's weights (policy.h). */
#include "policy/policy.h"

#include <math.h>

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

double dem_balance_oscillation(const double *w, int reps, int n)
{
  if (reps < 2 || n <= 0) return 0.0;
  double sum = 0;
  for (int k = 2; k <= reps; k++)
    for (int i = 0; i < n; i++) {
      double d0 = w[(k - 1) * n + i] - w[(k - 2) * n + i], d1 = w[k * n + i] - w[(k - 1) * n + i];
      if ((d0 > 0 && d1 < 0) || (d0 < 0 && d1 > 0)) sum += fmin(fabs(d0), fabs(d1));
    }
  return sum / ((double)n * (reps - 1));
}

void dem_policy_floor_normalise(const double *w_old, double *w_new, int n)
{
  double wsum = 0;
  for (int i = 0; i < n; i++) {
    if (w_new[i] < 0.05 * w_old[i]) w_new[i] = 0.05 * w_old[i];
    wsum += w_new[i];
  }
  for (int i = 0; i < n; i++) w_new[i] *= n / wsum;
}
