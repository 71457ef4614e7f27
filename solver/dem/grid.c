/* Cell numbering and counting sort (see grid.h). */
#include "dem/grid.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEM_PAGE 4096

dem_grid_t *dem_grid_create(void)
{
  return calloc(1, sizeof(dem_grid_t));
}

void dem_grid_destroy(dem_grid_t **g)
{
  if (!g || !*g) return;
  free((*g)->cell_start);
  free((*g)->cell_sorted);
  free(*g);
  *g = NULL;
}

static int dem_grid_grow(dem_grid_t *g, int32_t **arr, size_t *cap, size_t want)
{
  if (want <= *cap && *arr) return 0;
  void *p = NULL;
  size_t bytes = (want ? want : 1) * sizeof(int32_t);
  if (posix_memalign(&p, DEM_PAGE, bytes) != 0) return -1;
  free(*arr);
  *arr = p;
  *cap = want;
  g->fresh += (bytes + DEM_PAGE - 1) / DEM_PAGE * DEM_PAGE;
  return 0;
}

size_t dem_grid_take_fresh(dem_grid_t *g)
{
  size_t fresh = g->fresh;
  g->fresh = 0;
  return fresh;
}

static uint32_t dem_grid_bucket(const dem_grid_t *g, const double *x)
{
  return dem_grid_bucket_of(g, dem_grid_coord(x[0], g->origin[0], g->h), dem_grid_coord(x[1], g->origin[1], g->h),
                            dem_grid_coord(x[2], g->origin[2], g->h));
}

/* The binned particles' lowest and highest cell per axis; -2 (and *bad) when a position is not
 * finite or its cell number would overflow int32 with room for the +-1 neighbours. floor is
 * monotone, so only the extreme coordinates are floored. */
static int dem_grid_extent(const double *pos, size_t n_total, double h, const double origin[3], int32_t lo[3],
                           int32_t hi[3], size_t *bad)
{
  const double limit = 1073741824.0; /* 2^30 cells */
  double qlo[3] = {0.0, 0.0, 0.0}, qhi[3] = {0.0, 0.0, 0.0};
  for (size_t i = 0; i < n_total; ++i)
    for (int c = 0; c < 3; ++c) {
      double q = (pos[3 * i + c] - origin[c]) / h;
      if (!(q > -limit && q < limit)) {
        *bad = i;
        return -2;
      }
      if (i == 0 || q < qlo[c]) qlo[c] = q;
      if (i == 0 || q > qhi[c]) qhi[c] = q;
    }
  for (int c = 0; c < 3; ++c) {
    lo[c] = (int32_t)floor(qlo[c]);
    hi[c] = (int32_t)floor(qhi[c]);
  }
  return 0;
}

/* Sizes the table (2-4 buckets per particle; up to 4x more when the box of cells is larger, so
 * that a compact set of particles has a bucket per cell) and numbers the cells of the box. */
static int dem_grid_table(dem_grid_t *g, size_t n_total, const int32_t lo[3], const int32_t hi[3])
{
  double cells = 1.0;
  for (int c = 0; c < 3; ++c) cells *= (double)hi[c] - (double)lo[c] + 3.0; /* a cell of margin */
  size_t buckets = 64;
  while (buckets < 2 * n_total) buckets *= 2;
  for (int k = 0; k < 2 && (double)buckets < cells; ++k) buckets *= 2;
  /* keep the table when it is already big enough and not oversized: the OpenCL buffers wrap it */
  if (g->cell_start && g->cap_buckets >= buckets && g->cap_buckets <= 4 * buckets) buckets = g->cap_buckets;
  else if (g->cap_buckets != buckets || !g->cell_start) {
    free(g->cell_start);
    g->cell_start = NULL;
    g->cap_buckets = 0;
    size_t cap = 0;
    if (dem_grid_grow(g, &g->cell_start, &cap, buckets + 1) != 0) return -1;
    g->cap_buckets = buckets;
  }
  g->buckets = buckets;
  g->mask = (uint32_t)(buckets - 1);
  for (int c = 0; c < 3; ++c) g->lo[c] = lo[c] - 1;
  uint32_t nx = (uint32_t)(hi[0] - lo[0]) + 3u, ny = (uint32_t)(hi[1] - lo[1]) + 3u;
  g->stride[0] = nx;
  g->stride[1] = nx * ny; /* wraps for huge boxes: then only a hash, which the search allows */
  return 0;
}

int dem_grid_build(dem_grid_t *g, const double *pos, size_t n_total, double h, const double origin[3], size_t *bad)
{
  if (n_total > (size_t)INT32_MAX / 2) return -1;
  int32_t lo[3], hi[3];
  if (dem_grid_extent(pos, n_total, h, origin, lo, hi, bad) != 0) return -2;
  if (dem_grid_table(g, n_total, lo, hi) != 0) return -1;
  if (dem_grid_grow(g, &g->cell_sorted, &g->cap_sorted, n_total) != 0) return -1;
  g->h = h;
  g->n_total = n_total;
  memcpy(g->origin, origin, sizeof(g->origin));

  const size_t buckets = g->buckets;
  int32_t *start = g->cell_start;
  memset(start, 0, (buckets + 1) * sizeof(int32_t));
  for (size_t i = 0; i < n_total; ++i) start[dem_grid_bucket(g, pos + 3 * i) + 1]++;
  for (size_t b = 0; b < buckets; ++b) start[b + 1] += start[b];
  /* place: start[b] is used as the insertion cursor, then shifted back */
  for (size_t i = 0; i < n_total; ++i) g->cell_sorted[start[dem_grid_bucket(g, pos + 3 * i)]++] = (int32_t)i;
  for (size_t b = buckets; b > 0; --b) start[b] = start[b - 1];
  start[0] = 0;
  return 0;
}
