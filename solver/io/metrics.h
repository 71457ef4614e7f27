/* Run metrics: every `metrics_every` steps one row per rank (load, weight, particles, ghosts,
 * wait and communication time of the interval) and the global imbalance, gathered on rank 0
 * and written to DIR/metrics.csv (gnuplot/pandas friendly) as the run goes. */
#ifndef DEMSIM_IO_METRICS_H
#define DEMSIM_IO_METRICS_H

#include <stddef.h>

struct dem_sim;
typedef struct dem_metrics dem_metrics_t;

dem_metrics_t *dem_metrics_create(struct dem_sim *sim, char *err, size_t errlen);
void dem_metrics_destroy(dem_metrics_t **m);
/* Collective on metric steps. Records one row per rank when the interval ends. 0 or -1. */
int dem_metrics_step(dem_metrics_t *m, struct dem_sim *sim, char *err, size_t errlen);
/* This rank's per-step load (its own DEM computing in each step of the loop, every step, search
 * steps included) over the run: its coefficient of variation and its lag-1 autocorrelation (0
 * for fewer than 3 steps or a constant load). Natively the machine's variation, under SMPI the
 * model's (noise.*): the same measure on both sides. No collective. */
void dem_metrics_step_spread(const dem_metrics_t *m, double *cv, double *acf1);

#endif
