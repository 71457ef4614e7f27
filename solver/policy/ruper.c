/* RUPER: speed-report balancing with prediction (shared/RELATED.md, technique 1). Every rank
 * reports its speed (particles processed per second of its own load) to a monitor on rank 0
 * without waiting for an answer; at each checkpoint the monitor predicts the work left and
 * the time it will take at the total speed, and only when that time pays back a repartition
 * and the predicted imbalance is worth it does it set the targets in proportion to the speeds:
 * one step to balance when speeds hold, where RW's multiplicative step needs several. The
 * report interval of each rank adapts to how much its speed moves. The messaging is
 * balance.c's; this file is the arithmetic, tested against hand-computed values. */
#include "policy/policy.h"

#include <stddef.h>

int dem_ruper_targets(const double *speed, int n, double *w)
{
  double sum = 0;
  for (int i = 0; i < n; i++) {
    if (!(speed[i] > 0)) return 0;
    sum += speed[i];
  }
  for (int i = 0; i < n; i++) w[i] = n * speed[i] / sum;
  return n > 0;
}

double dem_ruper_remaining(const double *done, const double *rate, const double *t_report, int n, double now,
                           double total)
{
  double left = total, sum = 0;
  for (int i = 0; i < n; i++) {
    double since = now > t_report[i] ? now - t_report[i] : 0.0;
    left -= done[i] + rate[i] * since;
    sum += rate[i];
  }
  if (left < 0) left = 0;
  return sum > 0 ? left / sum : 0.0;
}

int dem_ruper_rebalance(double lambda, double threshold, double t_res, double t_min)
{
  return lambda > threshold && t_res >= t_min;
}

long dem_ruper_next_interval(long interval, double s, double s_last, double change, long lo, long hi)
{
  if (s > 0 && s_last > 0) {
    double r = s / s_last;
    interval = (r > change || r < 1.0 / change) ? interval / 2 : interval * 2;
  }
  if (interval < lo) interval = lo;
  if (interval > hi) interval = hi;
  return interval;
}

static int ruper_from_speeds(void *state, const double *speed, int n, double *w_new)
{
  (void)state;
  return dem_ruper_targets(speed, n, w_new);
}

const dem_policy_t dem_policy_ruper = {
  "RUPER", "targets proportional to the speeds reported to rank 0, while the time left pays back (run.ruper_*)",
  NULL, NULL, NULL, ruper_from_speeds};
