/* Contact history and the search kernel. A work-item rebuilds the slots of its own particle
 * only: the new partner list (search.cl) and the springs of partners already listed (matched
 * by gid; both lists are gid-sorted, so one merge walk) are assembled in private memory, then
 * written over the old slots. No per-particle scratch arrays are needed. A particle with more
 * partners than the store's `slots` leaves its slots as they were and reports its count
 * (status[DEM_S_UNFIT], the largest such count): the host widens the slots and searches again,
 * which finds the same lists for the others. More than DEM_MAX_NEIGHBORS is reported through
 * status[DEM_S_OVERFLOW] (the host turns it into an error). */

/* spring (m, 3 per slot) of each new partner: the old one when gid is still listed, else 0 */
inline void dem_history_carry(int i, int slots, __global const int *nbr_count, __global const int *nbr_gid,
                              __global const double *spring, const int *gid, int used, double *nspring)
{
  const int base = i * slots;
  const int old_count = nbr_count[i];
  int m = 0;
  for (int k = 0; k < used; ++k) {
    while (m < old_count && nbr_gid[base + m] < gid[k]) m++;
    int keep = m < old_count && nbr_gid[base + m] == gid[k];
    for (int c = 0; c < 3; ++c) nspring[3 * k + c] = keep ? spring[3 * (base + m) + c] : 0.0;
  }
}

/* Searches particle i and rewrites its slots; returns the slots written (*walls: of which wall
 * slots), 0 when its slots are left as they were. */
inline int dem_search_particle(int i, __constant const double *prm, __global const double *pos,
                               __global const double *radius, __global const int *id,
                               __global const int *cell_start, __global const int *cell_sorted, int4 lo, uint4 key,
                               double3 o, double h, int slots, __global int *nbr_count, __global int *nbr_index,
                               __global int *nbr_gid, __global double *spring, volatile __global int *status,
                               int *walls)
{
  int gid[DEM_MAX_NEIGHBORS], idx[DEM_MAX_NEIGHBORS];
  double nspring[3 * DEM_MAX_NEIGHBORS];
  int count = dem_search_collect(i, prm, pos, radius, id, cell_start, cell_sorted, lo, key, o, h, gid, idx);
  if (count > DEM_MAX_NEIGHBORS && atomic_cmpxchg(&status[DEM_S_OVERFLOW], 0, 1) == 0) {
    status[DEM_S_GID] = id[i];
    status[DEM_S_COUNT] = count;
  }
  int used = count < DEM_MAX_NEIGHBORS ? count : DEM_MAX_NEIGHBORS;
  if (used > slots) {
    atomic_max(&status[DEM_S_UNFIT], used);
    return 0;
  }
  dem_history_carry(i, slots, nbr_count, nbr_gid, spring, gid, used, nspring);
  const int base = i * slots;
  for (int k = 0; k < used; ++k) {
    nbr_gid[base + k] = gid[k];
    nbr_index[base + k] = idx[k];
    for (int c = 0; c < 3; ++c) spring[3 * (base + k) + c] = nspring[3 * k + c];
  }
  nbr_count[i] = used;
  for (int k = 0; k < used; ++k) *walls += gid[k] < 0;
  return used;
}

/* One work-item per binned particle, in cell_sorted order (space order: neighbouring
 * work-items read the same rows); ghosts (index >= n) have nothing to do. The slot counts are
 * summed in the work-group, then added to status once per work-group. */
__kernel void dem_search(int n, int n_total, __constant const double *prm, __global const double *pos,
                         __global const double *radius, __global const int *id,
                         __global const int *cell_start, __global const int *cell_sorted, int4 lo, uint4 key,
                         double ox, double oy, double oz, double h, int slots, __global int *nbr_count,
                         __global int *nbr_index, __global int *nbr_gid, __global double *spring,
                         volatile __global int *status)
{
  __local uint part[2 * DEM_MAX_LOCAL];
  int k = get_global_id(0);
  int i = k < n_total ? cell_sorted[k] : n;
  int used = 0, walls = 0;
  if (i < n)
    used = dem_search_particle(i, prm, pos, radius, id, cell_start, cell_sorted, lo, key, (double3)(ox, oy, oz), h,
                               slots, nbr_count, nbr_index, nbr_gid, spring, status, &walls);
  uint2 s = dem_group_sum2(part, (uint)used, (uint)walls);
  if (s.x) atomic_add(&status[DEM_S_PAIRS], (int)s.x);
  if (s.y) atomic_add(&status[DEM_S_WALLS], (int)s.y);
}
