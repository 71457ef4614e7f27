/* Load-balancing policies: one file each, one entry each in the table of table.c.
 *
 * A policy turns the last interval's measured loads into new weights (target part sizes for
 * Zoltan, normalised to sum to the number of ranks). balance.c owns the monitoring (loads,
 * lambda, when to repartition) and calls the policy at each repartition; a policy only owns
 * its arithmetic and, if it needs one, a state carried between repartitions (a smoothed
 * speed, an integral). Adding a policy: a file policy_x.c defining one dem_policy_t, and one
 * line in the table of table.c (and its name in the run.policy key's choices). */
#ifndef DEMSIM_POLICY_POLICY_H
#define DEMSIM_POLICY_POLICY_H

/* The scenario keys the policies read (scenario.c checks their ranges). */
typedef struct dem_policy_params {
  double rw5_threshold; /* %, RW5: the weights change only above this imbalance */
  double ewma_alpha;    /* -, EWMA: smoothing factor of the speeds, (0, 1] */
  double pi_kp;         /* -, PI: proportional gain */
  double pi_ki;         /* -, PI: integral gain */
  double ruper_tmin_factor; /* -, RUPER: t_min = this x the measured cost of one repartition */
  double ruper_threshold;   /* %, RUPER: rebalance only above this predicted imbalance */
  double ruper_change;      /* -, RUPER: s/s_last beyond [1/c, c] halves the report interval */
  long ruper_report_min;    /* steps, RUPER: shortest report interval (and the first) */
  long ruper_report_max;    /* steps, RUPER: longest report interval */
} dem_policy_params_t;

typedef struct dem_policy {
  const char *name;
  const char *help;
  /* state for n ranks, or NULL when the policy keeps none (init may then be NULL too);
   * *ok is set to 0 when an allocation failed */
  void *(*init)(const dem_policy_params_t *p, int n, int *ok);
  void (*destroy)(void *state);
  /* loads: s per step of the last interval, per rank; lambda: %, their imbalance.
   * Returns 1 with w_new filled (normalised to sum n), or 0 to keep w_old. */
  int (*update)(void *state, const double *w_old, const double *loads, int n, double lambda, double *w_new);
  /* Report-driven policies (RUPER) set this instead of update: each rank reports its speed
   * asynchronously to a monitor on rank 0 (balance.c), which decides when to rebalance and
   * gets w_new (normalised to sum n) from the ranks' last speeds, particles per second of
   * their own load. 1 with w_new filled, or 0 to keep the weights. NULL elsewhere. */
  int (*from_speeds)(void *state, const double *speed, int n, double *w_new);
} dem_policy_t;

extern const dem_policy_t dem_policy_now, dem_policy_rw, dem_policy_rw5, dem_policy_ewma, dem_policy_pi,
    dem_policy_ruper;

/* Pure updates, tested against hand-computed values. All normalise w_new to sum n. */
void dem_balance_rw(const double *w_old, const double *load, int n, double *w_new);
/* EWMA: speed_i = w_old_i / load_i, smoothed into `speed` (alpha), w_new proportional to it.
 * `speed` holds the previous smoothed speeds, or zeros before the first update. */
void dem_policy_ewma_step(double alpha, double *speed, const double *w_old, const double *load, int n,
                          double *w_new);
/* PI: e_i = 1 - load_i / L_avg; integral_i += e_i, clamped to |ki integral_i| <= 0.5;
 * w_new_i = w_old_i (1 + kp e_i + ki integral_i). */
void dem_policy_pi_step(double kp, double ki, double *integral, const double *w_old, const double *load, int n,
                        double *w_new);

/* RUPER (policy_ruper.c). Targets proportional to the speeds, normalised to sum n; 0 (w
 * untouched) when a speed is not positive. */
int dem_ruper_targets(const double *speed, int n, double *w);
/* Predicted remaining time (s): each rank had done done_i particle-steps when it reported at
 * t_i, and keeps its rate (particle-steps per second) since, so the work left at `now` is
 * total - sum_i (done_i + rate_i (now - t_i)) (at least 0), done at the total rate. */
double dem_ruper_remaining(const double *done, const double *rate, const double *t_report, int n, double now,
                           double total);
/* Rebalance only when worth it: the predicted imbalance lambda (%) is above the threshold and
 * the remaining time t_res pays back a repartition (t_res >= t_min). */
int dem_ruper_rebalance(double lambda, double threshold, double t_res, double t_min);
/* The next report interval (steps): half the last one when the speed changed much since the
 * previous report (s / s_last > change or < 1 / change), twice it when steady, within
 * [lo, hi]; unchanged (but clamped) without a previous speed (s_last <= 0). */
long dem_ruper_next_interval(long interval, double s, double s_last, double change, long lo, long hi);

/* Shared by the policies (measures.c): keeps at least 5 % of the old weight (a rank more than twice as slow
 * as the average would otherwise get a negative weight, and nothing left to measure next
 * time), then normalises to sum n. */
void dem_policy_floor_normalise(const double *w_old, double *w_new, int n);

/* Pure measures of loads and weights (policy/measures.c). lambda: %, (max / mean - 1) x 100 of
 * the loads (0 for none). */
double dem_balance_imbalance(const double *load, int n);
/* Weight oscillation of a sequence of weights: w[k * n + i] is rank i's weight after
 * repartition k (k = 0: before the first; weights sum to n, so 1 is the average rank's).
 * With d_k,i = w[k] - w[k-1], each reversal (d_k,i and d_k-1,i of opposite signs) counts
 * min(|d_k,i|, |d_k-1,i|); the metric is their sum over ranks and k, divided by
 * n x (reps - 1), for reps >= 2 weight changes (0 otherwise). It is 0 for weights that move
 * monotonically to their balance and then stay (up to noise of their own size), and grows
 * with the amplitude and the frequency of back-and-forth moves. */
double dem_balance_oscillation(const double *w, int reps, int n);

#endif
