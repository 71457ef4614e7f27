/* Checkpoint and restart (file layout: output.h). A checkpoint captures the exact state of the
 * integrator (half-step velocities, forces, the pending kick factor), the contact history
 * and the balancing weights, so that a restarted run ends in the same state as an
 * uninterrupted one. */
#ifndef DEMSIM_IO_CHECKPOINT_H
#define DEMSIM_IO_CHECKPOINT_H

#include <stddef.h>

struct dem_sim;

/* Collective: writes DIR/checkpoint.h5 atomically. 0 or -1. */
int dem_checkpoint_write(struct dem_sim *sim, char *err, size_t errlen);
/* Collective: reads `path` into the (empty) particle store of every rank, block by block, and
 * restores step, integrator and balancing state. 0; DEM_SIM_BAD_INPUT when the file is not a
 * checkpoint of this problem (message on every rank); -1 on other failures. */
int dem_checkpoint_restore(struct dem_sim *sim, const char *path, double *weights, char *err, size_t errlen);

#endif
