/* Wall contacts: the six planes of the box, with the contact law of forces.cl for a partner
 * at rest of infinite mass and radius (R* = r_i, m* = m_i), n pointing from the particle to
 * the wall and the contact point at distance r_i. Wall w sits in slots with nbr_index = -1 - w. */

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
    if (j >= 0) continue;
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

__kernel void dem_boundaries(int first, int n, int slots, __constant const double *prm, __global const double *pos,
                             __global const double *vel, __global const double *omega, __global const double *radius,
                             __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                             __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2];
  int i = first + (int)get_global_id(0);
  uint contacts = 0;
  if (i < n) {
    double f[3], t[3];
    for (int c = 0; c < 3; ++c) {
      f[c] = force[3 * i + c];
      t[c] = torque[3 * i + c];
    }
    contacts = dem_boundaries_walls(i, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
    for (int c = 0; c < 3; ++c) {
      force[3 * i + c] = f[c];
      torque[3 * i + c] = t[c];
    }
  }
  dem_group_count(acc, 0, contacts, counters);
}
