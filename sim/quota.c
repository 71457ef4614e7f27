/* sim/quota.h: the schedule of a CFS quota, running from the start of every period P. */
#include "quota.h"

#include <math.h>
#include <stdlib.h>

/* --- without a tick: the first s x P of every period (closed forms) --------------------------- */

static double flat_ran(double t, double share, double period)
{
  double k = floor(t / period), into = t - k * period, on = share * period;
  return k * on + (into < on ? into : on);
}

static double flat_end(double start, double need, double share, double period)
{
  if (!(need > 0.0)) return start;
  double on = share * period, target = flat_ran(start, share, period) + need;
  double k = floor(target / on), rest = target - k * on;
  /* the target falls in period k at `rest` into its running time; a whole number of periods'
   * running ends at the end of the last period's running, not at the next period's start (rest
   * within rounding of 0: below a nanosecond of a window, the simulator's precision) */
  double t = rest > 1e-9 * on ? k * period + rest : (k - 1.0) * period + on;
  return t > start ? t : start;
}

static double flat_seen(double t, double share, double period)
{
  /* the end of a running part counts as running (flat_end ends work there) */
  double k = floor(t / period);
  return t - k * period <= share * period * (1.0 + 1e-9) ? t : (k + 1.0) * period;
}

/* --- with the host's tick: the kernel's schedule, period by period ---------------------------- */

int sim_quota_init(sim_quota_t *q, double share, double period, double tick, double phase)
{
  *q = (sim_quota_t){0};
  if (!(share > 0.0 && share < 1.0 && period > 0.0 && tick >= 0.0)) return -1;
  q->share = share;
  q->period = period;
  q->tick = tick;
  q->phase = tick > 0.0 ? fmod(fmod(phase, tick) + tick, tick) : 0.0;
  return 0;
}

void sim_quota_free(sim_quota_t *q)
{
  free(q->on);
  free(q->before);
  q->on = q->before = NULL;
  q->n = q->cap = 0;
}

/* period n's run: its budget is the quota less the debt; it stops at the first tick at or after
 * the budget is spent (the kernel throttles at the tick that finds no run-time left) */
static void next_period(sim_quota_t *q)
{
  size_t k = q->n;
  double start = (double)k * q->period, budget = q->share * q->period - q->debt, on = 0.0;
  if (budget <= 0.0) {
    q->debt = -budget;
  } else {
    double tau = q->phase + ceil((start + budget - q->phase) / q->tick) * q->tick;
    if (tau < start + budget) tau += q->tick; /* rounding */
    on = tau - start < q->period ? tau - start : q->period;
    q->debt = on - budget;
  }
  q->before[k] = k ? q->before[k - 1] + q->on[k - 1] : 0.0;
  q->on[k] = on;
  q->n = k + 1;
}

/* periods 0..k known; -1 when memory runs out (the callers then take the closed forms) */
static int know(sim_quota_t *q, size_t k)
{
  if (k >= q->cap) {
    size_t cap = q->cap ? q->cap : 1024;
    while (cap <= k) cap *= 2;
    double *on = realloc(q->on, cap * sizeof *on);
    if (!on) return -1;
    q->on = on;
    double *before = realloc(q->before, cap * sizeof *before);
    if (!before) return -1;
    q->before = before;
    q->cap = cap;
  }
  while (q->n <= k) next_period(q);
  return 0;
}

static size_t period_of(const sim_quota_t *q, double t) { return t > 0.0 ? (size_t)floor(t / q->period) : 0; }

double sim_quota_on(sim_quota_t *q, size_t k)
{
  if (!(q->tick > 0.0) || know(q, k)) return q->share * q->period;
  return q->on[k];
}

static double ran_at(sim_quota_t *q, double t)
{
  size_t k = period_of(q, t);
  if (!(q->tick > 0.0) || know(q, k)) return flat_ran(t, q->share, q->period);
  double into = t - (double)k * q->period;
  if (into < 0.0) into = 0.0;
  return q->before[k] + (into < q->on[k] ? into : q->on[k]);
}

static double end_at(sim_quota_t *q, double start, double need)
{
  if (!(q->tick > 0.0)) return flat_end(start, need, q->share, q->period);
  if (!(need > 0.0)) return start;
  double target = ran_at(q, start) + need;
  for (size_t k = period_of(q, start);; k++) {
    if (know(q, k)) return flat_end(start, need, q->share, q->period);
    if (q->before[k] + q->on[k] >= target) {
      double t = (double)k * q->period + (target - q->before[k]);
      return t > start ? t : start;
    }
  }
}

static double seen_at(sim_quota_t *q, double t)
{
  if (!(q->tick > 0.0)) return flat_seen(t, q->share, q->period);
  size_t k = period_of(q, t);
  if (know(q, k)) return flat_seen(t, q->share, q->period);
  /* the end of a running part counts as running (sim_quota_end ends work there) */
  if (t - (double)k * q->period <= q->on[k] * (1.0 + 1e-9)) return t;
  for (k++;; k++) {
    if (know(q, k)) return flat_seen(t, q->share, q->period);
    if (q->on[k] > 0.0) return (double)k * q->period;
  }
}

/* --- the rank's time: the quota's shifted by the period timer's start (sim_quota_shift) ------- */

void sim_quota_shift(sim_quota_t *q, double offset)
{
  q->offset = q->period > 0.0 ? fmod(fmod(offset, q->period) + q->period, q->period) : 0.0;
}

double sim_quota_ran(sim_quota_t *q, double t)
{
  return ran_at(q, t + q->offset) - ran_at(q, q->offset);
}

double sim_quota_end(sim_quota_t *q, double start, double need)
{
  return end_at(q, start + q->offset, need) - q->offset;
}

double sim_quota_seen(sim_quota_t *q, double t)
{
  return seen_at(q, t + q->offset) - q->offset;
}
