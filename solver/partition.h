/* Domain decomposition with Zoltan RCB (the only module that calls Zoltan): target part
 * sizes are the balancing weights (Zoltan_LB_Set_Part_Sizes); particles migrate with
 * Zoltan_Migrate and take their contact history with them; the part boxes serve ghost
 * registration. Part r is owned by rank r. */
#ifndef DEMSIM_SOLVER_PARTITION_H
#define DEMSIM_SOLVER_PARTITION_H

#include <stddef.h>

struct dem_sim;
typedef struct dem_partition dem_partition_t;

dem_partition_t *dem_partition_create(struct dem_sim *sim, char *err, size_t errlen);
void dem_partition_destroy(dem_partition_t **pt);
/* Collective: repartitions with target part sizes `weights` (one per rank, relative) and
 * migrates the particles with their whole state, contact slots included (device -> host
 * before, host -> device after). Ghosts are dropped (n_ghost = 0): register them again. The
 * slots' local indices (nbr_index) are stale afterwards: a contact search must run before the
 * next force evaluation (dem_ghosts_register takes care of it). 0, or -1 with a message. */
int dem_partition_repartition(dem_partition_t *pt, struct dem_sim *sim, const double *weights, char *err,
                              size_t errlen);
/* Ranks whose part box intersects the box [lo, hi] (after a repartition): writes at most
 * max ranks into out and returns how many (-1 on a Zoltan error). */
int dem_partition_box_ranks(const dem_partition_t *pt, const double lo[3], const double hi[3], int *out, int max);
/* The box of part `part` (m); sides on the outside of the domain are +-DBL_MAX. 0 or -1. */
int dem_partition_part_box(const dem_partition_t *pt, int part, double lo[3], double hi[3]);
/* 1 once a repartition has made the cuts (before that, on 1 rank: every box is infinite). */
int dem_partition_has_cuts(const dem_partition_t *pt);

#endif
