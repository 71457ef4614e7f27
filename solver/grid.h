/* Infinite-grid cell hashing for the contact search.
 *
 * Space is cut into cubes of edge h >= 2 r_max + skin, so every partner of a particle lies in
 * its own cell or one of the 26 around it. The grid is unbounded: cell (cx, cy, cz) is hashed
 * into a power-of-two table of buckets, and a counting sort lists the particles bucket by
 * bucket (cell_start / cell_sorted, int32). Different cells may share a bucket, so a search
 * must check that a candidate really lies in the visited cell; then no pair is seen twice.
 * The binning runs on the host for both backends (cheap, O(n), no per-particle arrays kept:
 * bucket ids are recomputed rather than stored). The OpenCL kernel (kernels/search.cl) uses
 * the same cell and hash formulas: keep them identical. */
#ifndef DEMSIM_SOLVER_GRID_H
#define DEMSIM_SOLVER_GRID_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dem_grid {
  double origin[3];      /* m, a corner of cell (0, 0, 0) */
  double h;              /* m, cell edge */
  uint32_t mask;         /* buckets - 1 */
  size_t buckets;        /* power of two >= 2 * n_total */
  size_t n_total;        /* particles binned (owned + ghosts) */
  int32_t *cell_start;   /* buckets + 1 entries: particles of bucket b are cell_sorted[start[b] .. start[b+1]) */
  int32_t *cell_sorted;  /* n_total particle indices */
  size_t cap_buckets;    /* allocated entries of cell_start, minus one */
  size_t cap_sorted;     /* allocated entries of cell_sorted */
} dem_grid_t;

dem_grid_t *dem_grid_create(void);
void dem_grid_destroy(dem_grid_t **g);

/* Bins particles [0, n_total) at pos (m, 3 per particle) into cells of edge h (m) counted from
 * origin (m). Returns 0; -1 when out of memory or when n_total exceeds int32; -2 when a
 * position is not finite or so far away that its cell number overflows (a blown-up run), with
 * that particle's index in *bad. The arrays are page aligned and only reallocated when they
 * must grow. */
int dem_grid_build(dem_grid_t *g, const double *pos, size_t n_total, double h, const double origin[3], size_t *bad);

static inline int32_t dem_grid_coord(double x, double origin, double h)
{
  return (int32_t)floor((x - origin) / h);
}

static inline uint32_t dem_grid_hash(int32_t cx, int32_t cy, int32_t cz, uint32_t mask)
{
  /* large odd primes, wrapping arithmetic on uint32 (same in kernels/search.cl) */
  return (((uint32_t)cx * 73856093u) ^ ((uint32_t)cy * 19349663u) ^ ((uint32_t)cz * 83492791u)) & mask;
}

#endif
