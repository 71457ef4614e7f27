/* Contact search, infinite-grid cell hashing: collects the partners of particle i (particles,
 * ghosts included, within r_i + r_j + skin; walls within r_i + skin) from its cell and the 26
 * around it, as a gid-sorted list in private memory. The host binned the particles
 * (solver/grid.c); cell and hash formulas must stay identical to grid.h. The kernel itself,
 * which then carries the contact history, is in history.cl. */

inline int dem_cell_coord(double x, double origin, double h)
{
  return (int)floor((x - origin) / h);
}

inline uint dem_cell_hash(int cx, int cy, int cz, uint mask)
{
  return ((as_uint(cx) * 73856093u) ^ (as_uint(cy) * 19349663u) ^ (as_uint(cz) * 83492791u)) & mask;
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

inline int dem_search_collect(int i, __constant const double *prm, __global const double *pos,
                              __global const double *radius, __global const int *id,
                              __global const int *cell_start, __global const int *cell_sorted, uint mask,
                              double ox, double oy, double oz, double h, int *gid, int *idx)
{
  const double skin = prm[DEM_P_SKIN];
  const double xi0 = pos[3 * i], xi1 = pos[3 * i + 1], xi2 = pos[3 * i + 2];
  const double ri = radius[i];
  int count = 0;
  for (int w = 0; w < DEM_WALLS; ++w) {
    double x = (w / 2 == 0) ? xi0 : ((w / 2 == 1) ? xi1 : xi2);
    if (dem_wall_distance(prm, x, w) < ri + skin) count = dem_search_insert(gid, idx, count, -1 - w, -1 - w);
  }
  int cx = dem_cell_coord(xi0, ox, h), cy = dem_cell_coord(xi1, oy, h), cz = dem_cell_coord(xi2, oz, h);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        int qx = cx + dx, qy = cy + dy, qz = cz + dz;
        uint b = dem_cell_hash(qx, qy, qz, mask);
        int end = cell_start[b + 1];
        for (int s = cell_start[b]; s < end; ++s) {
          int j = cell_sorted[s];
          if (j == i) continue;
          double xj0 = pos[3 * j], xj1 = pos[3 * j + 1], xj2 = pos[3 * j + 2];
          double ex = xj0 - xi0, ey = xj1 - xi1, ez = xj2 - xi2;
          double d2 = ex * ex + ey * ey + ez * ez;
          double cut = ri + radius[j] + skin;
          if (!(d2 < cut * cut)) continue;
          /* a partner of another cell hashed into the same bucket is taken when its own cell is
           * visited: checked after the distance, so that only the few candidates within reach pay
           * the three divisions (same partners, same order) */
          if (dem_cell_coord(xj0, ox, h) != qx || dem_cell_coord(xj1, oy, h) != qy || dem_cell_coord(xj2, oz, h) != qz)
            continue;
          count = dem_search_insert(gid, idx, count, id[j], j);
        }
      }
  return count;
}
