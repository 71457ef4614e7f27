/* The particle store: structure of arrays, double precision, one array per quantity.
 *
 * Owned particles occupy indices [0, n); ghost copies of other ranks' particles follow at
 * [n, n + n_ghost). Vectors are stored as 3 consecutive doubles per particle (x, y, z), so
 * pos[3*i + 2] is the z coordinate of particle i. Every array is allocated with page
 * alignment so that the OpenCL layer can wrap it with CL_MEM_USE_HOST_PTR (zero copy on a
 * CPU device, one device copy on a GPU).
 *
 * Contacts and neighbours: each particle has DEM_MAX_NEIGHBORS slots. Slot k of particle i
 * (index i*DEM_MAX_NEIGHBORS + k, k < nbr_count[i]) holds one partner within the search
 * cutoff (r_i + r_j + skin for particles, r_i + skin for walls):
 *   nbr_index : local index of the partner particle, or -1 - w for wall w (0..5, see dem_wall_t)
 *   nbr_gid   : the partner's global id, or -1 - w for wall w; slots are sorted by nbr_gid
 *               ascending (walls first), which fixes the order in which forces are summed
 *   spring    : the accumulated tangential displacement (m, 3 doubles) of that contact, the
 *               contact history; zero when the pair is not in contact
 * The slots belong to the particle and move with it (migration, restart). Ghosts have no
 * slots of their own (their forces are computed by their owner). */
#ifndef DEMSIM_SOLVER_PARTICLES_H
#define DEMSIM_SOLVER_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#ifndef DEM_MAX_NEIGHBORS
#define DEM_MAX_NEIGHBORS 12
#endif

typedef int32_t dem_gid_t; /* global particle id, 0-based; at most 2^31 - 1 particles */

/* the six planar walls of the box, in this order */
typedef enum { DEM_WALL_XMIN, DEM_WALL_XMAX, DEM_WALL_YMIN, DEM_WALL_YMAX, DEM_WALL_ZMIN, DEM_WALL_ZMAX,
               DEM_WALL_COUNT } dem_wall_t;

typedef struct dem_particles {
  size_t n;        /* owned particles */
  size_t n_ghost;  /* ghosts, stored after the owned ones */
  size_t cap;      /* capacity of every per-particle array (owned + ghosts) */
  dem_gid_t *id;   /* global id */
  double *pos;     /* m, 3 per particle */
  double *vel;     /* m/s, 3 per particle */
  double *omega;   /* rad/s, angular velocity, 3 per particle */
  double *force;   /* N, 3 per particle */
  double *torque;  /* N m, 3 per particle */
  double *radius;  /* m */
  int32_t *nbr_count;  /* used slots, per particle */
  int32_t *nbr_index;  /* DEM_MAX_NEIGHBORS per particle, see above */
  dem_gid_t *nbr_gid;  /* DEM_MAX_NEIGHBORS per particle */
  double *spring;      /* m, 3 * DEM_MAX_NEIGHBORS per particle */
} dem_particles_t;

/* Allocates a store able to hold cap particles (owned + ghosts), all fields zero.
 * Returns NULL when out of memory. */
dem_particles_t *dem_particles_create(size_t cap);
/* Frees the store and NULLs the caller's pointer. */
void dem_particles_destroy(dem_particles_t **p);
/* Grows every array to hold at least cap particles, keeping contents. 0 on success. */
int dem_particles_reserve(dem_particles_t *p, size_t cap);
/* Copies particle src of `from` (all fields, slots included) into index dst of `to`. */
void dem_particles_copy_one(dem_particles_t *to, size_t dst, const dem_particles_t *from, size_t src);
/* Reorders particles [0, n): particle perm[k] moves to index k (perm is a permutation of
 * 0..n-1). Field by field through one scratch array of n rows of the widest field, freed
 * before returning: a fraction of what a second store would take. 0, or -1 when out of
 * memory (the store is then unchanged). */
int dem_particles_permute(dem_particles_t *p, const size_t *perm, size_t n);
/* Bytes of per-particle storage (all arrays), for memory accounting. */
size_t dem_particles_bytes_per_particle(void);

#endif
