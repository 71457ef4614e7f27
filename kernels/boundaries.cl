/* Wall contacts: the six planes of the box, with the contact law of forces.cl for a partner
 * at rest of infinite mass and radius (R* = r_i, m* = m_i), n pointing from the particle to
 * the wall and the contact point at distance r_i. Wall w sits in slots with nbr_index = -1 - w,
 * ahead of the particle slots (dem_has_walls).
 *
 * Only the particles near a wall have wall slots (a few per cent of a packing), so the wall
 * pass runs over a list of them, not over every particle: in a pass over all particles the rare
 * wall contact took a whole SIMD group of work-items through the scalar law, and its code made
 * the pass slower for the others too (the fused force kernel cost 21 ns per particle on one
 * core against 11 for the pair pass alone). dem_wall_list writes the list after each search
 * (and whenever the host has replaced slots since); dem_boundaries runs over it. */

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

/* adds the wall contacts of i to f, t; returns contacts */
inline uint dem_boundaries_walls(int i, int slots, __constant const double *prm, __global const double *pos,
                                 __global const double *vel, __global const double *omega,
                                 __global const double *radius, __global const int *nbr_count,
                                 __global const int *nbr_index, __global double *spring, double *f, double *t)
{
  uint contacts = 0;
  const double ri = radius[i];
  const int base = i * slots;
  const int count = nbr_count[i];
  for (int k = 0; k < count; ++k) {
    int j = nbr_index[base + k];
    if (j >= 0) break; /* the particle slots follow the wall slots */
    int w = -1 - j;
    int a = w / 2;
    double delta = ri - dem_wall_distance(prm, pos[3 * i + a], w);
    if (!(delta > 0.0)) {
      dem_spring_zero(spring, base + k);
      continue;
    }
    contacts++;
    double n[3] = {0.0, 0.0, 0.0};
    n[a] = (w & 1) ? 1.0 : -1.0;
    double vr[3], ws[3], xi[3];
    for (int c = 0; c < 3; ++c) {
      vr[c] = vel[3 * i + c];
      ws[c] = ri * omega[3 * i + c];
    }
    dem_spring_load(spring, base + k, xi);
    dem_contact(prm, n, delta, ri, dem_mass(prm, ri), vr, ws, ri, xi, f, t);
    for (int c = 0; c < 3; ++c) spring[3 * (base + k) + c] = xi[c];
  }
  return contacts;
}

/* The wall pass: one work-item per entry of the list (count entries), for the listed particles
 * in [first, n) only: force, torque += their wall contacts, then, with `gravity` (the fused
 * step, whose pair pass left gravity out for these particles), force += m g. */
__kernel void dem_boundaries(int count, int first, int n, int gravity, int slots, __constant const double *prm,
                             __global const int *walls, __global const double *pos, __global const double *vel,
                             __global const double *omega, __global const double *radius,
                             __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                             __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2];
  int l = (int)get_global_id(0);
  int i = l < count ? walls[l] : -1;
  uint contacts = 0;
  if (i >= first && i < n) {
    double f[3], t[3];
    for (int c = 0; c < 3; ++c) {
      f[c] = force[3 * i + c];
      t[c] = torque[3 * i + c];
    }
    contacts = dem_boundaries_walls(i, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
    if (gravity) dem_external_add(prm, radius[i], f);
    for (int c = 0; c < 3; ++c) {
      force[3 * i + c] = f[c];
      torque[3 * i + c] = t[c];
    }
  }
  dem_group_count(acc, 0, contacts, counters);
}
