/* Infinite-grid cell binning for the contact search.
 *
 * Space is cut into cubes of edge h >= 2 r_max + skin, so every partner of a particle lies in
 * its own cell or one of the 26 around it. The grid is unbounded: cell (cx, cy, cz) is numbered
 * row by row inside the box of the binned particles' cells (one cell of margin around it), and
 * that number, modulo a power-of-two table of buckets, is its bucket; a counting sort lists the
 * particles bucket by bucket (cell_start / cell_sorted, int32). So neighbouring cells of a row
 * are neighbouring buckets (a search reads a row of three cells as one run), and cell_sorted is
 * in space order (a search in that order reuses what the previous particle loaded). When the
 * box has more cells than the table has buckets (sparse particles), cells far apart share a
 * bucket, so a search must check that a candidate really lies in the visited row; then no pair
 * is seen twice.
 * The binning runs on the host for both backends (cheap, O(n), no per-particle arrays kept:
 * bucket ids are recomputed rather than stored). The OpenCL kernel (kernels/search.cl) uses
 * the same cell and bucket formulas: keep them identical. */
#ifndef DEMSIM_DEM_GRID_H
#define DEMSIM_DEM_GRID_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dem_grid {
  double origin[3];      /* m, a corner of cell (0, 0, 0) */
  double h;              /* m, cell edge */
  int32_t lo[3];         /* cell numbers of the table's corner: the lowest binned cell - 1 */
  uint32_t stride[2];    /* bucket = ((cx - lo0) + stride0 (cy - lo1) + stride1 (cz - lo2)) & mask */
  uint32_t mask;         /* buckets - 1 */
  size_t buckets;        /* power of two >= 2 * n_total, more (up to 4x) when the box has more cells */
  size_t n_total;        /* particles binned (owned + ghosts) */
  int32_t *cell_start;   /* buckets + 1 entries: particles of bucket b are cell_sorted[start[b] .. start[b+1]) */
  int32_t *cell_sorted;  /* n_total particle indices */
  size_t cap_buckets;    /* allocated entries of cell_start, minus one */
  size_t cap_sorted;     /* allocated entries of cell_sorted */
  size_t fresh;          /* bytes allocated since dem_grid_take_fresh (new memory: its first write faults
                          * its pages in) */
} dem_grid_t;

dem_grid_t *dem_grid_create(void);
void dem_grid_destroy(dem_grid_t **g);
/* Bytes the grid allocated since the last call (its arrays grow, never shrink): new memory, mapped
 * by the OS at its first write (the binning writes all of it). For the clock's first-touch charge. */
size_t dem_grid_take_fresh(dem_grid_t *g);

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

static inline uint32_t dem_grid_bucket_of(const dem_grid_t *g, int32_t cx, int32_t cy, int32_t cz)
{
  /* wrapping arithmetic on uint32 (same in kernels/search.cl) */
  return ((uint32_t)cx - (uint32_t)g->lo[0] + g->stride[0] * ((uint32_t)cy - (uint32_t)g->lo[1]) +
          g->stride[1] * ((uint32_t)cz - (uint32_t)g->lo[2])) &
         g->mask;
}

/* The runs of cell_sorted that hold the row of cells (cx - 1 .. cx + 1, cy, cz): one run when
 * its three buckets are consecutive, three when the table wraps inside it. Fills run[2 k],
 * run[2 k + 1] (first, end) and returns the number of runs. */
static inline int dem_grid_row_runs(const dem_grid_t *g, int32_t cx, int32_t cy, int32_t cz, int32_t run[6])
{
  uint32_t b = dem_grid_bucket_of(g, cx - 1, cy, cz);
  if (b + 2u <= g->mask) {
    run[0] = g->cell_start[b];
    run[1] = g->cell_start[b + 3];
    return 1;
  }
  for (uint32_t k = 0; k < 3; ++k) {
    uint32_t c = (b + k) & g->mask;
    run[2 * k] = g->cell_start[c];
    run[2 * k + 1] = g->cell_start[c + 1];
  }
  return 3;
}

/* 1 when cell (x, y, z) lies in the row (cx - 1 .. cx + 1, cy, cz) */
static inline int dem_grid_in_row(int32_t x, int32_t y, int32_t z, int32_t cx, int32_t cy, int32_t cz)
{
  return (uint32_t)x - (uint32_t)(cx - 1) <= 2u && y == cy && z == cz;
}

#endif
