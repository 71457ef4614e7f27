/* The particle store: structure of arrays, double precision, one array per quantity.
 *
 * Owned particles occupy indices [0, n); ghost copies of other ranks' particles follow at
 * [n, n + n_ghost). Vectors are stored as 3 consecutive doubles per particle (x, y, z), so
 * pos[3*i + 2] is the z coordinate of particle i. Every array is allocated 128 B aligned
 * so that the OpenCL layer can wrap it with CL_MEM_USE_HOST_PTR (zero copy on a
 * CPU device, one device copy on a GPU).
 *
 * Contacts and neighbours: each particle has p->slots slots (the store's slot stride, chosen at
 * run time: it grows, up to DEM_MAX_NEIGHBORS, when a contact search finds a particle with more
 * partners, see dem_particles_widen_slots). Slot k of particle i (index i*p->slots + k, k <
 * nbr_count[i]) holds one partner within the search cutoff (r_i + r_j + skin for particles,
 * r_i + skin for walls):
 *   nbr_index : local index of the partner particle, or -1 - w for wall w (0..5, see dem_wall_t)
 *   nbr_gid   : the partner's global id, or -1 - w for wall w; slots are sorted by nbr_gid
 *               ascending (walls first), which fixes the order in which forces are summed
 *   spring    : the accumulated tangential displacement (m, 3 doubles) of that contact, the
 *               contact history; zero when the pair is not in contact
 * The slots belong to the particle and move with it (migration, restart). Ghosts have no
 * slots of their own (their forces are computed by their owner): their rows of the slot arrays
 * are never written.
 *
 * Memory: every array is an anonymous mapping (starting 384 B x its field index into its
 * first page, so that no two streams agree modulo 4 KiB: see particles.c; zero, and resident
 * only where written), grown with mremap. Capacity kept in reserve (growth margins, ghost rows of the slot
 * arrays, slots beyond the stride) therefore costs address space, not memory: at 500,000
 * particles in a lattice (6 partners each) the store takes 328 bytes per particle where a fixed
 * 12 slots took 520. */
#ifndef DEMSIM_DEM_PARTICLES_H
#define DEMSIM_DEM_PARTICLES_H

#include <stddef.h>
#include <stdint.h>

#ifndef DEM_MAX_NEIGHBORS
#define DEM_MAX_NEIGHBORS 12 /* the most slots a particle may need (kernels keep this many in registers) */
#endif
/* the slot stride of a new store: the partners of a particle in a simple cubic lattice (6
 * particles, or walls in their place); denser packings grow it at their first search */
#define DEM_INITIAL_SLOTS 6

typedef int32_t dem_gid_t; /* global particle id, 0-based; at most 2^31 - 1 particles */

#define DEM_STORE_ARRAYS 11 /* the arrays of the store below, id to spring */

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
  int32_t *nbr_index;  /* slots per particle, see above */
  dem_gid_t *nbr_gid;  /* slots per particle */
  double *spring;      /* m, 3 * slots per particle */
  int slots;           /* slot stride: slots per particle, 1..DEM_MAX_NEIGHBORS */
  /* what has been written, for dem_particles_fresh_bytes: per-particle arrays, the bytes of their
   * rows ever in use; slot arrays, one byte per page (1: written), and the rows a widening moved */
  size_t written[DEM_STORE_ARRAYS];
  unsigned char *page_map[DEM_STORE_ARRAYS];
  size_t page_map_len[DEM_STORE_ARRAYS];
  size_t moved_rows;
} dem_particles_t;

/* Allocates a store able to hold cap particles (owned + ghosts), all fields zero.
 * Returns NULL when out of memory. */
dem_particles_t *dem_particles_create(size_t cap);
/* Frees the store and NULLs the caller's pointer. */
void dem_particles_destroy(dem_particles_t **p);
/* Grows every array to hold at least cap particles, keeping contents. 0 on success. */
int dem_particles_reserve(dem_particles_t *p, size_t cap);
/* Widens the slot stride to `slots` (at most DEM_MAX_NEIGHBORS), moving the used slots of the
 * owned particles [0, n) in place; nothing to do when the stride is that wide already. 0, or -1
 * when out of memory or beyond DEM_MAX_NEIGHBORS (the store is then unchanged). */
int dem_particles_widen_slots(dem_particles_t *p, int slots);
/* Copies particle src of `from` (all fields, slots included) into index dst of `to`; the
 * destination's stride must hold the source's nbr_count slots. */
void dem_particles_copy_one(dem_particles_t *to, size_t dst, const dem_particles_t *from, size_t src);
/* Moves the `count` particles from index src on to index dst within the store (the ranges may
 * overlap): each per-particle array's rows as one block, each slot array's used slots. */
void dem_particles_move_rows(dem_particles_t *p, size_t dst, size_t src, size_t count);
/* Reorders particles [0, n): particle perm[k] moves to index k (perm is a permutation of
 * 0..n-1). In place, cycle by cycle, field by field, with one bit per particle of scratch. 0,
 * or -1 when out of memory (the store is then unchanged). */
int dem_particles_permute(dem_particles_t *p, const size_t *perm, size_t n);
/* Bytes of per-particle storage (all arrays) of a store with `slots` slots per particle, for
 * memory and cost accounting. */
size_t dem_particles_bytes_per_particle(int slots);
/* Bytes of the store's pages written for the first time since the last call: an anonymous
 * mapping's page becomes resident (the OS faults it in and zeroes it) at its first write and
 * stays, and the arrays never shrink. Per-particle arrays: the pages of their owned and ghost
 * rows beyond the most ever in use. Slot arrays, when `slots_written` (a contact search wrote
 * them): the pages holding a used slot of an owned particle (nbr_count[i] slots from the row's
 * start: particles without partners leave their rows untouched), and every page of the rows a
 * widening of the stride moved, that were not written before. For the clock's first-touch
 * charge; the first call after setting up the store marks what the setup wrote. 0 as well when
 * the page map cannot grow (out of memory: nothing is charged). */
size_t dem_particles_fresh_bytes(dem_particles_t *p, int slots_written);

/* Fields of the store, for copies between host and device: a bitmask. */
enum { DEM_F_ID = 1, DEM_F_POS = 2, DEM_F_VEL = 4, DEM_F_OMEGA = 8, DEM_F_FORCE = 16,
       DEM_F_TORQUE = 32, DEM_F_RADIUS = 64, DEM_F_SLOTS = 128, DEM_F_ALL = 255 };
/* The store's per-particle arrays, in this order, as the fields name them: where in
 * dem_particles_t, bytes per particle (per slot when `slotted`: the store has p->slots slots per
 * particle), field flag. The one table of them: the OpenCL buffers (device/device.c), the device
 * server's mirror (device/server.c) and the rows sent to it (below) all follow it. */
enum { DEM_ARRAY_ID, DEM_ARRAY_POS, DEM_ARRAY_VEL, DEM_ARRAY_OMEGA, DEM_ARRAY_FORCE, DEM_ARRAY_TORQUE,
       DEM_ARRAY_RADIUS, DEM_ARRAY_NBR_COUNT, DEM_ARRAY_NBR_INDEX, DEM_ARRAY_NBR_GID, DEM_ARRAY_SPRING,
       DEM_ARRAY_COUNT };
typedef struct dem_particle_array {
  size_t offset;
  size_t bytes;
  unsigned flag;
  const char *name;
  int slotted;
} dem_particle_array_t;
extern const dem_particle_array_t dem_particle_arrays[DEM_ARRAY_COUNT];
/* The rows of particles [first, first + count) of the fields in `fields` (DEM_F_*), packed one
 * field after the other (the table's order), and back: what the remote device's messages carry. */
size_t dem_particles_rows_bytes(const dem_particles_t *p, unsigned fields, size_t count);
void dem_particles_pack_rows(const dem_particles_t *p, unsigned fields, size_t first, size_t count, char *buf);
void dem_particles_unpack_rows(dem_particles_t *p, unsigned fields, size_t first, size_t count, const char *buf);

#endif
