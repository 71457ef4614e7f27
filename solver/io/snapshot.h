/* Particle snapshots: every rank's owned particles brought to rank 0 in id order and written
 * as one frame (output.h). Rank 0 holds one array per output field (92 bytes per particle);
 * the other ranks send fixed-size chunks, so no rank ever holds a second copy of the problem. */
#ifndef DEMSIM_IO_SNAPSHOT_H
#define DEMSIM_IO_SNAPSHOT_H

#include <stddef.h>

struct dem_sim;

/* Collective. The host arrays must be current (velocities synchronous). Writes DIR/name.h5 (a
 * new file when `create`, else one more frame) and its XDMF sidecar. 0 or -1. */
int dem_snapshot_write(struct dem_sim *sim, const char *name, int create, char *err, size_t errlen);

#endif
