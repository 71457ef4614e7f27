/* Ghost particles: copies of other ranks' particles within the ghost layer (contact range +
 * skin) of this rank's part. Registered at each repartition; their state is exchanged every
 * step with non-blocking MPI through buffers allocated at registration; only the ghosts (and
 * the owned particles other ranks need) are copied device <-> host each step. */
#ifndef DEMSIM_DOMAIN_GHOSTS_H
#define DEMSIM_DOMAIN_GHOSTS_H

#include <stddef.h>

struct dem_sim;
typedef struct dem_ghosts dem_ghosts_t;

dem_ghosts_t *dem_ghosts_create(struct dem_sim *sim, char *err, size_t errlen);
void dem_ghosts_destroy(dem_ghosts_t **g);
/* Collective: decides which owned particles each other rank needs and receives theirs (ids,
 * radii, positions, velocities, angular velocities), appended after the owned particles.
 * Reorders the owned particles (the ones sent go last) and so invalidates the slots' local
 * indices: the next dem_ghosts_need_search() returns 1. */
int dem_ghosts_register(dem_ghosts_t *g, struct dem_sim *sim, char *err, size_t errlen);
/* Collective, every step: ghosts device -> host, exchange, host -> device. Times the wait
 * (DEM_T_WAIT) and the communication. In two halves: _start queues the copy of the border
 * rows device -> host, _finish waits for it and does the rest; work queued in between (the
 * interior's forces, dem_engine_forces_ahead) does not delay it. */
int dem_ghosts_exchange_start(dem_ghosts_t *g, struct dem_sim *sim, char *err, size_t errlen);
int dem_ghosts_exchange_finish(dem_ghosts_t *g, struct dem_sim *sim, char *err, size_t errlen);
/* The owned particles [0, interior) are sent to no rank, so none of them has a ghost partner
 * (every partner within the cutoff of a particle sits within the ghost layer of it): their
 * forces do not wait for the exchange. 0 on one rank. */
size_t dem_ghosts_interior(const dem_ghosts_t *g, const struct dem_sim *sim);
/* Collective: 1 when any rank's particles (or ghosts) may have used up half the skin, or when
 * the slots' local indices are stale (after a registration). */
int dem_ghosts_need_search(dem_ghosts_t *g, struct dem_sim *sim);
/* Collective, right before a contact search: registers the ghosts again at the current
 * positions, so that every pair within the search cutoff is visible to the search even when
 * particles have drifted since the last repartition. Clears the forced-search flag (the
 * search that follows rebuilds the indices). Does nothing on one rank. */
int dem_ghosts_refresh(dem_ghosts_t *g, struct dem_sim *sim, char *err, size_t errlen);
/* Frees the exchange buffers (the ghosts stay registered): the end of the time loop calls it
 * before the final snapshot, which needs memory of its own. A later exchange allocates them
 * again. */
void dem_ghosts_release(dem_ghosts_t *g);
size_t dem_ghosts_count(const dem_ghosts_t *g);
/* The rank each ghost came from: out[k] for ghost k (stored at index n + k), dem_ghosts_count
 * entries. */
void dem_ghosts_sources(const dem_ghosts_t *g, int *out);
/* What this rank exchanged, summed over the steps of the time loop so far (no collective). */
typedef struct dem_ghosts_stats {
  double steps;       /* steps whose ghosts were exchanged or registered again */
  double ghosts;      /* ghosts held, summed over those steps */
  double bytes;       /* bytes of ghost messages sent plus received (every step's and the registrations') */
  double wan_bytes;   /* bytes of ghost messages sent to another site's ranks (platform.sites) */
  double wan_state_bytes; /* of those, the per-step exchanges' (the registrations' are the rest) */
} dem_ghosts_stats_t;
void dem_ghosts_stats(const dem_ghosts_t *g, dem_ghosts_stats_t *st);
/* s, summed over the steps: the time in the step's MPI calls (the ghost exchange, the search
 * decision, and the ghost registration before a search) split into waiting for the slowest rank
 * and communication (the rest). At the decision, the wait is the slowest rank's computing since
 * the last decision less this rank's, at most the time the decision held it; in a registration
 * before a search, the slowest rank's own work in the registration (its time outside the
 * registration's MPI calls) less this rank's, at most the time those calls held it. */
double dem_ghosts_wait_time(const dem_ghosts_t *g);
double dem_ghosts_comm_time(const dem_ghosts_t *g);
/* s, the last registration's time in its MPI calls (*held) and, of that, its wait for the slowest
 * rank (*wait, as above); both 0 before the first and on one rank */
void dem_ghosts_registration_times(const dem_ghosts_t *g, double *held, double *wait);
double dem_ghosts_layer(const dem_ghosts_t *g);     /* m, width of the ghost layer at the last registration */

#endif
