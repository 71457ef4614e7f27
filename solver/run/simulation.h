/* The life cycle of one run on one rank: set-up (generate or restart,
 * partition, device), the time loop (timestep.c), and the closing outputs. */
#ifndef DEMSIM_RUN_SIMULATION_H
#define DEMSIM_RUN_SIMULATION_H

#include <stddef.h>

#include "scenario/state.h"

struct dem_scenario;
struct dem_cli;

/* Set-up: particles, partition, ghosts, device. 0, or -1 with a message in err (all ranks). */
int dem_simulation_setup(dem_sim_t *sim, const struct dem_scenario *sc, const struct dem_cli *cli, char *err,
                         size_t errlen);
/* The time loop. 0, -1 with a message, DEM_SIM_FAILED_ALL (message on rank 0) or
 * DEM_SIM_HOST_FAILED. */
int dem_simulation_run(dem_sim_t *sim, char *err, size_t errlen);
/* Final outputs (particles.h5, summary.json, metrics). 0 or -1. */
int dem_simulation_finish(dem_sim_t *sim, char *err, size_t errlen);
void dem_simulation_destroy(dem_sim_t *sim);

/* Kinetic energy (translational + rotational, J) of the owned particles, summed over ranks.
 * Velocities must be synchronous (after dem_engine_kick). */
double dem_simulation_kinetic_energy(dem_sim_t *sim);

#endif
