/* Domain decomposition with Zoltan RCB (the only module that calls Zoltan): target part
 * sizes are the balancing weights (Zoltan_LB_Set_Part_Sizes); particles migrate with
 * Zoltan_Migrate and take their contact history with them; the part boxes serve ghost
 * registration. */
#ifndef DEMSIM_SOLVER_PARTITION_H
#define DEMSIM_SOLVER_PARTITION_H

#include <stddef.h>

struct dem_sim;
typedef struct dem_partition dem_partition_t;

dem_partition_t *dem_partition_create(struct dem_sim *sim, char *err, size_t errlen);
void dem_partition_destroy(dem_partition_t **pt);
/* Collective: repartitions with target part sizes `weights` (one per rank) and migrates the
 * particles (device -> host before, host -> device after). 0, or -1 with a message. */
int dem_partition_repartition(dem_partition_t *pt, struct dem_sim *sim, const double *weights, char *err,
                              size_t errlen);
/* Ranks whose part box intersects the box [lo, hi] (after a repartition): writes at most
 * max ranks into out and returns how many. */
int dem_partition_box_ranks(const dem_partition_t *pt, const double lo[3], const double hi[3], int *out, int max);

#endif
