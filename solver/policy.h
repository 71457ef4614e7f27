/* Load-balancing policies: one file each, one entry each in the table of policy.c.
 *
 * A policy turns the last interval's measured loads into new weights (target part sizes for
 * Zoltan, normalised to sum to the number of ranks). balance.c owns the monitoring (loads,
 * lambda, when to repartition) and calls the policy at each repartition; a policy only owns
 * its arithmetic and, if it needs one, a state carried between repartitions (a smoothed
 * speed, an integral). Adding a policy: a file policy_x.c defining one dem_policy_t, and one
 * line in the table of policy.c (and its name in the run.policy key's choices). */
#ifndef DEMSIM_SOLVER_POLICY_H
#define DEMSIM_SOLVER_POLICY_H

/* The scenario keys the policies read (scenario.c checks their ranges). */
typedef struct dem_policy_params {
  double rw5_threshold; /* %, RW5: the weights change only above this imbalance */
  double ewma_alpha;    /* -, EWMA: smoothing factor of the speeds, (0, 1] */
  double pi_kp;         /* -, PI: proportional gain */
  double pi_ki;         /* -, PI: integral gain */
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
} dem_policy_t;

extern const dem_policy_t dem_policy_now, dem_policy_rw, dem_policy_rw5, dem_policy_ewma, dem_policy_pi;

/* The policy called `name`, or NULL. */
const dem_policy_t *dem_policy_find(const char *name);
/* The table, NULL-terminated (help, `demsim keys`). */
const dem_policy_t *const *dem_policy_table(void);

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

/* Shared by the policies: keeps at least 5 % of the old weight (a rank more than twice as slow
 * as the average would otherwise get a negative weight, and nothing left to measure next
 * time), then normalises to sum n. */
void dem_policy_floor_normalise(const double *w_old, double *w_new, int n);

#endif
