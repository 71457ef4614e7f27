/* Progress of a long run: on a terminal one live line (rewritten in place); in a log or CI a
 * plain line every 5 % of the steps. Rank 0 only (a NULL stream disables it). */
#ifndef DEMSIM_BASE_PROGRESS_H
#define DEMSIM_BASE_PROGRESS_H

#include <stdio.h>

typedef struct dem_progress {
  FILE *out;
  int tty;
  long first;         /* step the run started from (restart) */
  long steps;
  long next;          /* next step to report (log mode) */
  double wall_start;  /* s */
  double last_print;  /* s, wall time of the last live update */
} dem_progress_t;

void dem_progress_start(dem_progress_t *p, FILE *out, long first, long steps);
/* sim_time: physical time of the step; clock: the run's clock since set-up began (simulated
 * under SMPI, shown there only) */
void dem_progress_update(dem_progress_t *p, long step, double sim_time, double clock, double lambda, int repartitions);
void dem_progress_end(dem_progress_t *p);

#endif
