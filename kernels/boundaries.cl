/* Wall contacts: the six planes of the box, with the contact law of forces.cl for a partner
 * at rest of infinite mass and radius (R* = r_i, m* = m_i), n pointing from the particle to
 * the wall and the contact point at distance r_i. Wall w sits in slots with nbr_index = -1 - w,
 * ahead of the particle slots (dem_has_walls).
 *
 * Only the particles near a wall have wall slots (a few per cent of a packing), so the wall
 * pass runs over a list of them, not over every particle: inside the pass over all particles the
 * wall loop and its scalar law made every particle slower (the fused force kernel cost 21 ns per
 * particle on one core against 11 for the pair pass alone, and 67 ns more per wall contact).
 * dem_wall_list writes the list after each search (and whenever the host has replaced slots
 * since); dem_boundaries runs over it, eight listed particles per work-item, their contacts
 * through the double8 law side by side. (A list per work-group, in local memory, with the wall
 * pass after a barrier in the fused kernel, kept the particles' data in cache but cost PoCL more
 * than it saved: 4.3 ms against 3.7 at 216,000 particles apart on one core.) */

/* appends each owned particle that has wall slots to walls[] (in no particular order: every
 * particle's result depends on its own slots only); status[DEM_S_WALL_PARTICLES] counts them
 * and must be 0 before */
__kernel void dem_wall_list(int n, int slots, __global const int *nbr_count, __global const int *nbr_index,
                            __global int *walls, volatile __global int *status)
{
  int i = get_global_id(0);
  if (i >= n || !dem_has_walls(i, slots, nbr_count, nbr_index)) return;
  walls[atomic_inc(&status[DEM_S_WALL_PARTICLES])] = i;
}

#define DEM_WALL_GROUP 8 /* list entries per work-item: one double8 lane each */

/* adds the wall contacts of the particles ids[0, np) (at most DEM_WALL_GROUP) to f[p], t[p];
 * returns contacts. As dem_forces_pairs: a scalar pass sorts the wall slots into touching and
 * others (whose springs are cleared), then the touching ones go through the law eight at a time,
 * here the contacts of eight particles side by side (mostly one each), and are added to their
 * particle in slot order. */
inline uint dem_boundaries_walls8(const int *ids, int np, int slots, __constant const double *prm,
                                  __global const double *pos, __global const double *vel,
                                  __global const double *omega, __global const double *radius,
                                  __global const int *nbr_count, __global const int *nbr_index,
                                  __global double *spring, double (*f)[3], double (*t)[3])
{
  int tp[DEM_WALL_GROUP * DEM_WALLS], ts[DEM_WALL_GROUP * DEM_WALLS]; /* particle, slot */
  double td[DEM_WALL_GROUP * DEM_WALLS];                                     /* overlap */
  int m = 0;
  for (int p = 0; p < np; ++p) {
    const int i = ids[p];
    const double ri = radius[i];
    const int base = i * slots;
    const int count = nbr_count[i];
    for (int k = 0; k < count && k < DEM_WALLS; ++k) {
      int j = nbr_index[base + k];
      if (j >= 0) break; /* the particle slots follow the wall slots */
      int w = -1 - j;
      double delta = ri - dem_wall_distance(prm, pos[3 * i + w / 2], w);
      if (!(delta > 0.0)) {
        dem_spring_zero(spring, base + k);
        continue;
      }
      tp[m] = p;
      ts[m] = base + k;
      td[m] = delta;
      m++;
    }
  }
  for (int k0 = 0; k0 < m; k0 += 8) {
    /* gather eight contacts; idle lanes repeat the first one and are ignored */
    double g[17][8];
    for (int l = 0; l < 8; ++l) {
      int q = k0 + l < m ? k0 + l : k0;
      int i = ids[tp[q]], s = ts[q];
      int w = -1 - nbr_index[s];
      double ri = radius[i];
      for (int c = 0; c < 3; ++c) g[c][l] = c == w / 2 ? ((w & 1) ? 1.0 : -1.0) : 0.0; /* n, to the wall */
      g[3][l] = td[q];
      g[4][l] = ri;
      g[5][l] = dem_mass(prm, ri);
      for (int c = 0; c < 3; ++c) {
        g[6 + c][l] = vel[3 * i + c];
        g[9 + c][l] = ri * omega[3 * i + c];
        g[12 + c][l] = spring[3 * s + c];
      }
    }
    double8 n[3] = {vload8(0, g[0]), vload8(0, g[1]), vload8(0, g[2])};
    double8 ri = vload8(0, g[4]);
    double8 vr[3] = {vload8(0, g[6]), vload8(0, g[7]), vload8(0, g[8])};
    double8 ws[3] = {vload8(0, g[9]), vload8(0, g[10]), vload8(0, g[11])};
    double8 xi[3] = {vload8(0, g[12]), vload8(0, g[13]), vload8(0, g[14])};
    double8 fo[3], to[3];
    /* the wall is at rest, of infinite mass and radius: R* = r_i, m* = m_i */
    dem_contact8(prm, n, vload8(0, g[3]), ri, vload8(0, g[5]), vr, ws, ri, xi, fo, to);
    for (int c = 0; c < 3; ++c) {
      vstore8(fo[c], 0, g[c]);
      vstore8(to[c], 0, g[3 + c]);
      vstore8(xi[c], 0, g[6 + c]);
    }
    for (int l = 0; l < 8 && k0 + l < m; ++l) {
      int q = k0 + l, p = tp[q];
      for (int c = 0; c < 3; ++c) {
        f[p][c] = f[p][c] + g[c][l];
        t[p][c] = t[p][c] + g[3 + c][l];
        spring[3 * ts[q] + c] = g[6 + c][l];
      }
    }
  }
  return (uint)m;
}

/* The wall pass: one work-item per DEM_WALL_GROUP entries of the list (count entries), for the
 * listed particles in [first, n) only: force, torque += their wall contacts, then, with
 * `gravity` (the fused step, whose pair pass left gravity out for these particles), force += m g. */
__kernel void dem_boundaries(int count, int first, int n, int gravity, int slots, __constant const double *prm,
                             __global const int *walls, __global const double *pos, __global const double *vel,
                             __global const double *omega, __global const double *radius,
                             __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                             __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2 * DEM_MAX_LOCAL];
  const int l0 = DEM_WALL_GROUP * (int)get_global_id(0);
  int ids[DEM_WALL_GROUP], np = 0;
  for (int l = l0; l < l0 + DEM_WALL_GROUP && l < count; ++l) {
    int i = walls[l];
    if (i >= first && i < n) ids[np++] = i;
  }
  double f[DEM_WALL_GROUP][3], t[DEM_WALL_GROUP][3];
  for (int p = 0; p < np; ++p)
    for (int c = 0; c < 3; ++c) {
      f[p][c] = force[3 * ids[p] + c];
      t[p][c] = torque[3 * ids[p] + c];
    }
  uint contacts = np ? dem_boundaries_walls8(ids, np, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index,
                                             spring, f, t)
                     : 0;
  for (int p = 0; p < np; ++p) {
    if (gravity) dem_external_add(prm, radius[ids[p]], f[p]);
    for (int c = 0; c < 3; ++c) {
      force[3 * ids[p] + c] = f[p][c];
      torque[3 * ids[p] + c] = t[p][c];
    }
  }
  dem_group_count(acc, 0, contacts, counters);
}
