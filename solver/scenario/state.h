/* The state of one run on one rank (dem_sim_t): what every stage of the run reads and writes.
 * Its own small header at the bottom of the stages, so that they share the state without
 * including the driver (run/simulation.h) that sets it up and runs the loop. The stages'
 * own states are opaque here (forward declarations). */
#ifndef DEMSIM_SCENARIO_STATE_H
#define DEMSIM_SCENARIO_STATE_H

#include <stdio.h>

#include "base/timers.h"
#include "dem/params.h"

struct dem_scenario;
struct dem_particles;
struct dem_engine;
struct dem_balance;
struct dem_partition;
struct dem_ghosts;
struct dem_metrics;
struct dem_failure;

typedef struct dem_sim {
  const struct dem_scenario *sc;
  dem_params_t prm;
  struct dem_particles *p;
  struct dem_engine *engine;
  struct dem_balance *balance;     /* load monitoring, weights, Condition() */
  struct dem_partition *partition; /* Zoltan (run.partitioner), migration */
  struct dem_ghosts *ghosts;       /* ghost registration and per-step exchange */
  struct dem_metrics *metrics;     /* metrics.csv / metrics.h5 */
  struct dem_failure *failure;     /* a container lost mid-run (failure.*) */
  dem_timers_t timers;
  int rank, ranks;
  char host[64];                   /* the container (SMPI) or machine this rank runs on */
  long step;                       /* steps done */
  long total_particles;            /* over all ranks */
  double kick;                     /* 0.5 when velocities are synchronous, else 1 */
  long searches;                   /* contact searches done */
  int repartitions;                /* repartitions done (the initial partition excluded) */
  double lambda_max, lambda_last;  /* %, load imbalance */
  double wall_start, wall_loop_start, wall_loop_end; /* s, real time */
  double sim_loop_start, sim_loop_end;               /* s, MPI_Wtime (simulated under SMPI) */
  double sim_time_before;          /* s, loop time of the run this one restarted from */
  long restart_step;               /* step of the checkpoint restarted from (0: fresh run) */
  double sim_setup_start;          /* s, dem_clock_now() as set-up began */
  double sim_closed;               /* s, dem_clock_now() as rank 0 closed the run (before summary.json) */
  dem_timers_t loop_timers;        /* the timers as the time loop began (set-up's share left out) */
  double loop_wait0, loop_comm0;   /* s, this rank's ghost wait and communication as the loop began */
  double loop_wait, loop_comm;     /* s, the same over the time loop alone */
  double checkpoint_s;             /* s, writing checkpoints in the time loop (inside DEM_T_OUTPUT) */
  double ke_start, ke_end;         /* J, kinetic energy over all ranks */
  long particles_start, particles_end;
  FILE *log;                       /* progress and messages (rank 0), NULL elsewhere */
} dem_sim_t;

/* A failure every rank detected together (numerical safety): the run can end cleanly. */
#define DEM_SIM_FAILED_ALL (-2)
/* Bad input found after MPI started (e.g. a restart file of another problem): exit status 2. */
#define DEM_SIM_BAD_INPUT (-3)
/* A container was lost (failure.*): the launcher restarts from the last checkpoint. */
#define DEM_SIM_HOST_FAILED (-4)

#endif
