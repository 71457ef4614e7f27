/* Domain decomposition with Zoltan (the only module that calls Zoltan): the partitioner named
 * by run.partitioner (RCB, RIB, HSFC, PHG, GRAPH, HIER; one descriptor each in partition.c), target
 * part sizes = the balancing weights (Zoltan_LB_Set_Part_Sizes); particles migrate with
 * Zoltan_Migrate and take their contact history with them; ghosts.c finds the ghosts from the
 * particles, whatever the partitioner (RCB's part boxes are kept for queries only). Part r is
 * owned by rank r. */
#ifndef DEMSIM_DOMAIN_PARTITION_H
#define DEMSIM_DOMAIN_PARTITION_H

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
/* The box of part `part` (m); sides on the outside of the domain are +-DBL_MAX. 0, or -1 (also
 * for a partitioner without part boxes, once it has partitioned). */
int dem_partition_part_box(const dem_partition_t *pt, int part, double lo[3], double hi[3]);
/* 1 once a repartition has made the cuts (before that, on 1 rank: every box is infinite). */
int dem_partition_has_cuts(const dem_partition_t *pt);
/* 1 when the partitioner answers dem_partition_part_box (RCB). 0: no boxes (part_box returns
 * -1). The ghosts do not use the boxes (ghosts.c: an exact set, found from the particles). */
int dem_partition_has_boxes(const dem_partition_t *pt);
/* The partitioner's name (run.partitioner). */
const char *dem_partition_name(const dem_partition_t *pt);

/* What this rank measured over the repartitions after the set-up one (no collective: the
 * summary gathers them at the end). */
typedef struct dem_partition_stats {
  int repartitions;        /* counted ones */
  double partition_s;      /* s (simulated under SMPI), in Zoltan_LB_Partition and its charge */
  double migrate_s;        /* s, migration (Zoltan_Migrate, packing) */
  double wall_partition_s; /* s of real time in Zoltan_LB_Partition (under SMPI all ranks share one core) */
  double sent_particles, sent_bytes; /* exported by this rank, summed */
  double sent_wan_bytes;   /* of sent_bytes, those to another site's ranks (platform.sites) */
  /* the neighbour structure at each repartition, before it (the partition of the interval that
   * ends): slots of owned particles naming another particle, and those naming one owned by
   * another rank (an edge cut counts each crossing pair twice, once per side) */
  double cut_samples, pair_slots, cut_slots;
} dem_partition_stats_t;
void dem_partition_stats(const dem_partition_t *pt, dem_partition_stats_t *st);

#endif
