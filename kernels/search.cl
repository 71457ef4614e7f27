/* Contact search, infinite-grid cell numbering: collects the partners of particle i (particles,
 * ghosts included, within r_i + r_j + skin; walls within r_i + skin) from its cell and the 26
 * around it, read as 9 rows of three cells (a row's buckets are consecutive), as a gid-sorted
 * list in private memory. The host binned the particles (solver/dem/grid.c); cell and bucket
 * formulas must stay identical to grid.h. The kernel itself, which then carries the contact
 * history, is in history.cl. */

inline int dem_cell_coord(double x, double origin, double h)
{
  return (int)floor((x - origin) / h);
}

/* the bucket of cell (cx, cy, cz): its number in the table's box (corner lo, row strides
 * key.y, key.z) modulo the table (mask key.x); wrapping uint arithmetic, as grid.h */
inline uint dem_cell_bucket(int cx, int cy, int cz, int4 lo, uint4 key)
{
  return ((uint)cx - (uint)lo.x + key.y * ((uint)cy - (uint)lo.y) + key.z * ((uint)cz - (uint)lo.z)) & key.x;
}

/* inserts (g, j) into the gid-sorted list, keeping the DEM_MAX_NEIGHBORS smallest gids;
 * returns the number of partners seen so far */
inline int dem_search_insert(int *gid, int *idx, int count, int g, int j)
{
  int k = count < DEM_MAX_NEIGHBORS ? count : DEM_MAX_NEIGHBORS;
  if (k == DEM_MAX_NEIGHBORS && g > gid[k - 1]) return count + 1;
  if (k == DEM_MAX_NEIGHBORS) k--;
  while (k > 0 && gid[k - 1] > g) {
    gid[k] = gid[k - 1];
    idx[k] = idx[k - 1];
    k--;
  }
  gid[k] = g;
  idx[k] = j;
  return count + 1;
}

/* examines the particles of cell_sorted[s0 .. s1) as partners of i (cell column cx): the run of
 * the row (cx - 1 .. cx + 1, qy, qz), which may also hold other rows' particles */
__attribute__((always_inline)) inline int dem_search_run(int i, int s0, int s1, __global const double *pos, __global const double *radius,
                          __global const int *id, __global const int *cell_sorted, double3 xi, double ri, double skin,
                          double3 o, double h, int cx, int qy, int qz, int *gid, int *idx, int count)
{
  for (int s = s0; s < s1; ++s) {
    int j = cell_sorted[s];
    if (j == i) continue;
    double xj0 = pos[3 * j], xj1 = pos[3 * j + 1], xj2 = pos[3 * j + 2];
    double ex = xj0 - xi.x, ey = xj1 - xi.y, ez = xj2 - xi.z;
    double d2 = ex * ex + ey * ey + ez * ez;
    double cut = ri + radius[j] + skin;
    if (!(d2 < cut * cut)) continue;
    /* a partner of another row sharing these buckets is taken when its own row is visited:
     * checked after the distance, so that only the few candidates within reach pay the three
     * divisions (same partners, same order) */
    if ((uint)(dem_cell_coord(xj0, o.x, h) - (cx - 1)) > 2u || dem_cell_coord(xj1, o.y, h) != qy ||
        dem_cell_coord(xj2, o.z, h) != qz)
      continue;
    count = dem_search_insert(gid, idx, count, id[j], j);
  }
  return count;
}

inline int dem_search_collect(int i, __constant const double *prm, __global const double *pos,
                              __global const double *radius, __global const int *id,
                              __global const int *cell_start, __global const int *cell_sorted, int4 lo, uint4 key,
                              double3 o, double h, int *gid, int *idx)
{
  const double skin = prm[DEM_P_SKIN];
  const double3 xi = (double3)(pos[3 * i], pos[3 * i + 1], pos[3 * i + 2]);
  const double ri = radius[i];
  int count = 0;
  for (int w = 0; w < DEM_WALLS; ++w) {
    double x = (w / 2 == 0) ? xi.x : ((w / 2 == 1) ? xi.y : xi.z);
    if (dem_wall_distance(prm, x, w) < ri + skin) count = dem_search_insert(gid, idx, count, -1 - w, -1 - w);
  }
  int cx = dem_cell_coord(xi.x, o.x, h), cy = dem_cell_coord(xi.y, o.y, h), cz = dem_cell_coord(xi.z, o.z, h);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy) {
      int qy = cy + dy, qz = cz + dz;
      uint b = dem_cell_bucket(cx - 1, qy, qz, lo, key);
      /* the row's three buckets are consecutive (one run) unless the table wraps inside it */
      int runs = b + 2u <= key.x ? 1 : 3;
      for (int r = 0; r < runs; ++r) {
        uint c = (b + (uint)r) & key.x;
        count = dem_search_run(i, cell_start[c], cell_start[runs == 1 ? c + 3 : c + 1], pos, radius, id, cell_sorted,
                               xi, ri, skin, o, h, cx, qy, qz, gid, idx, count);
      }
    }
  return count;
}
