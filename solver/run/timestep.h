#ifndef DEMSIM_RUN_TIMESTEP_H
#define DEMSIM_RUN_TIMESTEP_H

struct dem_sim;

/* Velocity Verlet needs the forces of the initial state before the first step. 0 or -1. */
int dem_timestep_prologue(struct dem_sim *sim, char *err, unsigned long errlen);

/* Advances the simulation by one time step, in the study's order. 0, or -1 with a message. */
int dem_timestep(struct dem_sim *sim, char *err, unsigned long errlen);

#endif
