/* Named timers over dem_clock_now() (simulated time under SMPI), as CoMD's
 * performanceTimers: an enum of handles and a table of names indented to show nesting. */
#ifndef DEMSIM_BASE_TIMERS_H
#define DEMSIM_BASE_TIMERS_H

#include <stdio.h>

typedef enum dem_timer {
  DEM_T_TOTAL,        /* the time loop */
  DEM_T_REPARTITION,  /*   weights, Zoltan partition, migration, ghost registration */
  DEM_T_GHOSTS,       /*   per-step ghost copy and exchange */
  DEM_T_WAIT,         /*     blocked in the search decision, the ghost exchange and the ghost
                       *     registration before a search (waiting and transfer) */
  DEM_T_COMPUTE,      /*   the rank's own DEM computations (its load L_i) */
  DEM_T_SEARCH,       /*     contact search + history */
  DEM_T_FORCES,       /*     contact forces and moments, walls, gravity */
  DEM_T_INTEGRATE,    /*     velocity Verlet */
  DEM_T_OUTPUT,       /*   snapshots and metrics */
  DEM_T_COUNT
} dem_timer_t;

typedef struct dem_timers {
  double start[DEM_T_COUNT];
  double total[DEM_T_COUNT]; /* s, accumulated over the run */
  long count[DEM_T_COUNT];
} dem_timers_t;

void dem_timers_reset(dem_timers_t *t);
void dem_timer_start(dem_timers_t *t, dem_timer_t h);
void dem_timer_stop(dem_timers_t *t, dem_timer_t h);
/* adds a duration measured elsewhere (s) to timer h, as one more interval */
void dem_timer_add(dem_timers_t *t, dem_timer_t h, double seconds);
const char *dem_timer_name(dem_timer_t h);
/* Prints per-rank totals and min/avg/max across ranks (collective; rank 0 prints). */
void dem_timers_report(const dem_timers_t *t, FILE *out);

#endif
