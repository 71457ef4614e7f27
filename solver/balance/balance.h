/* Load monitoring and the repartition condition; the weight update is the policy's (policy.h).
 *   L_i      : the rank's own DEM computation time (COMPUTE timer) over the last interval
 *   lambda   : (L_max / L_avg - 1) * 100, in percent
 *   policies : NOW, RW, RW5, EWMA, PI, RUPER (one file each, policy_*.c)
 *   Condition: every repartition_every steps, or when lambda > lambda_threshold (if > 0).
 *   RUPER (report-driven): ranks report speeds to rank 0 (monitor.h), whose decision at each
 *   repartition_every checkpoint says whether to repartition; lambda is then the imbalance
 *   predicted from the reports, and lambda_threshold plays no part.
 * Each repartition's weights and the lambda of the interval after it are kept, for the
 * oscillation metric of summary.json (dem_balance_oscillation, policy/policy.h). */
#ifndef DEMSIM_BALANCE_BALANCE_H
#define DEMSIM_BALANCE_BALANCE_H

#include "policy/policy.h"

struct dem_scenario;
struct dem_sim;

typedef struct dem_balance dem_balance_t;

dem_balance_t *dem_balance_create(const struct dem_scenario *sc, struct dem_sim *sim);
void dem_balance_destroy(dem_balance_t **b);
/* Collective. Measures the loads of the interval when one ends and decides whether to
 * repartition before step `step` + 1. Returns 1 to repartition, 0 otherwise. */
int dem_balance_condition(dem_balance_t *b, long step);
/* Applies the policy to the weights (uses the loads measured by the last condition) and
 * records them for the oscillation metric. 0 or -1 (out of memory). */
int dem_balance_update_weights(dem_balance_t *b, long step);
/* Collective, at the end of the run: receives the speed reports still in flight. */
void dem_balance_finish(dem_balance_t *b);
/* Speed reports rank 0's monitor received (RUPER; 0 for the other policies and ranks). */
long dem_balance_reports(const dem_balance_t *b);
/* Current weights, one per rank, normalised to sum to the number of ranks. */
const double *dem_balance_weights(const dem_balance_t *b);
/* Restores weights (restart) and starts the load interval at `step`. */
void dem_balance_restore(dem_balance_t *b, const double *weights, long step);
double dem_balance_lambda(const dem_balance_t *b);      /* %, last measured */
const double *dem_balance_loads(const dem_balance_t *b); /* s, last interval, per rank */
const char *dem_balance_policy_name(const dem_balance_t *b);
/* %, the lambda of the interval after each repartition (those measured so far); sets *n. */
const double *dem_balance_lambda_after(const dem_balance_t *b, int *n);
/* The oscillation metric of this run's weights (see dem_balance_oscillation). */
double dem_balance_weight_oscillation(const dem_balance_t *b);

/* HIER: repartitions whose weights changed the sites' shares of the work. */
int dem_balance_site_moves(const dem_balance_t *b);

/* Pure helpers, tested against hand-computed values. */
/* Each site's sum of the weights w (sum[k]) and its share of them all (share[k]); site[i] is
 * rank i's site (0, 1, ...). Returns the number of sites. */
int dem_balance_site_shares(const double *w, const int *site, int n, double *share, double *sum);
/* Cross-site hysteresis (HIER): site[i] is rank i's site (0, 1, ...). When no site's share of
 * the total weight (sum over its ranks / sum over all) moves from w_old to w_new by more than
 * threshold % of itself, w_new is rescaled site by site so that each site keeps w_old's sum
 * (the ranks of a site still share it as w_new says) and 0 is returned; otherwise w_new is left
 * as it is and 1 returned (the plane between the sites moves). */
int dem_balance_hold_sites(const double *w_old, double *w_new, const int *site, int n, double threshold);

#endif
