/* The owned particles' neighbour structure, from their contact slots: each partner's global id
 * and the rank that owns it (this rank, or the rank its ghost came from). The connectivity
 * partitioners (PHG, GRAPH: partition.c) read it, and the edge cut is sampled from it. */
#ifndef DEMSIM_DOMAIN_ADJACENCY_H
#define DEMSIM_DOMAIN_ADJACENCY_H

#include <stddef.h>

#include "dem/particles.h"

struct dem_sim;

/* The partners of owned particle i are gid / proc [first[i], first[i + 1]). */
typedef struct dem_adjacency {
  size_t *first;
  dem_gid_t *gid;
  int *proc;
} dem_adjacency_t;

/* Builds a (freed with dem_adjacency_free, also after a failure) for the owned particles of
 * sim->p with its n_ghost ghosts (their sources from sim->ghosts); *cut: the partners owned by
 * another rank. A partner found nowhere (slots restored from a checkpoint before any ghost
 * exists) is left out. Charges the host work to the clock. 0, or -1 when out of memory. */
int dem_adjacency_build(dem_adjacency_t *a, const struct dem_sim *sim, int rank, size_t n_ghost, size_t *cut);
void dem_adjacency_free(dem_adjacency_t *a);

#endif
