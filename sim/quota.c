/* sim/quota.h: the duty cycle of a CFS quota, running in the first s x P of every period P. */
#include "quota.h"

#include <math.h>

double sim_quota_ran(double t, double share, double period)
{
  double k = floor(t / period), into = t - k * period, on = share * period;
  return k * on + (into < on ? into : on);
}

double sim_quota_end(double start, double need, double share, double period)
{
  if (!(need > 0.0)) return start;
  double on = share * period, target = sim_quota_ran(start, share, period) + need;
  double k = floor(target / on), rest = target - k * on;
  /* the target falls in period k at `rest` into its running time; a whole number of periods'
   * running ends at the end of the last period's running, not at the next period's start (rest
   * within rounding of 0: below a nanosecond of a window, the simulator's precision) */
  double t = rest > 1e-9 * on ? k * period + rest : (k - 1.0) * period + on;
  return t > start ? t : start;
}

double sim_quota_seen(double t, double share, double period)
{
  /* the end of a running part counts as running (sim_quota_end ends work there) */
  double k = floor(t / period);
  return t - k * period <= share * period * (1.0 + 1e-9) ? t : (k + 1.0) * period;
}
