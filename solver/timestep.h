#ifndef DEMSIM_SOLVER_TIMESTEP_H
#define DEMSIM_SOLVER_TIMESTEP_H

struct dem_sim;

/* Advances the simulation by one time step, in the study's order. 0, or -1 with a message. */
int dem_timestep(struct dem_sim *sim, char *err, unsigned long errlen);

#endif
