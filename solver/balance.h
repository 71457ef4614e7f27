/* Load monitoring and the study's load-balancing policies.
 *   L_i      : the rank's own DEM computation time (COMPUTE timer) over the last interval
 *   lambda   : (L_max / L_avg - 1) * 100, in percent
 *   RW       : W_i_new = W_i_old * (2 - L_i / L_avg) at each repartition
 *   RW5      : as RW, but the weights change only when lambda > rw5_threshold (5 %)
 *   NOW      : equal weights
 *   Condition: every repartition_every steps, or when lambda > lambda_threshold (if > 0). */
#ifndef DEMSIM_SOLVER_BALANCE_H
#define DEMSIM_SOLVER_BALANCE_H

struct dem_scenario;
struct dem_sim;

typedef enum { DEM_POLICY_NOW, DEM_POLICY_RW, DEM_POLICY_RW5 } dem_policy_t;

typedef struct dem_balance dem_balance_t;

dem_balance_t *dem_balance_create(const struct dem_scenario *sc, struct dem_sim *sim);
void dem_balance_destroy(dem_balance_t **b);
/* Collective. Measures the loads of the interval when one ends and decides whether to
 * repartition before step `step` + 1. Returns 1 to repartition, 0 otherwise. */
int dem_balance_condition(dem_balance_t *b, long step);
/* Applies the policy to the weights (uses the loads measured by the last condition). 0 or -1. */
int dem_balance_update_weights(dem_balance_t *b, long step);
/* Current weights, one per rank, normalised to sum to the number of ranks. */
const double *dem_balance_weights(const dem_balance_t *b);
/* Restores weights (restart) and starts the load interval at `step`. */
void dem_balance_restore(dem_balance_t *b, const double *weights, long step);
double dem_balance_lambda(const dem_balance_t *b);      /* %, last measured */
const double *dem_balance_loads(const dem_balance_t *b); /* s, last interval, per rank */
dem_policy_t dem_balance_policy(const dem_balance_t *b);
const char *dem_balance_policy_name(dem_policy_t p);

/* Pure helpers, tested against hand-computed values. */
double dem_balance_imbalance(const double *load, int n);
void dem_balance_rw(const double *w_old, const double *load, int n, double *w_new);

#endif
