/* Velocity Verlet, split in two kernels, and the fused force kernel.
 *   dem_kick_drift : v += kick dt F/m, w += kick dt T/I, x += dt v; also the largest (|v| dt)^2
 *                    of the step (squared: no root per particle), for the host's conservative "search needed" test: a 32-bit
 *                    atomic_max on the float's bits (non-negative floats order like their bit
 *                    patterns)
 *   dem_kick       : v += dt/2 F/m, w += dt/2 T/I (synchronises velocities)
 *   dem_forces_all : the pair pass of a step's forces: forces + external in one pass over the
 *                    particles, except for the particles with wall slots, whose gravity the
 *                    wall pass adds after their walls (boundaries.cl: dem_boundaries over the
 *                    wall list). Each particle gets the same additions in the same order as
 *                    from the three separate kernels (pairs, walls, gravity), so the same bits,
 *                    with fewer launches and memory passes. */

__kernel void dem_kick_drift(int n, __constant const double *prm, double kick, __global const double *radius,
                             __global const double *force, __global const double *torque, __global double *pos,
                             __global double *vel, __global double *omega, volatile __global uint *counters,
                             volatile __global uint *next_counters)
{
  int i = get_global_id(0);
  /* the other set of counters is used by the following force kernels and the next step */
  if (i < DEM_COUNTERS) next_counters[i] = 0;
  if (i >= n) return;
  const double dt = prm[DEM_P_DT];
  double r = radius[i];
  double m = dem_mass(prm, r);
  double inertia = 0.4 * m * r * r;
  double sv = kick * dt / m, sw = kick * dt / inertia;
  double v[3];
  for (int c = 0; c < 3; ++c) {
    v[c] = vel[3 * i + c] + sv * force[3 * i + c];
    vel[3 * i + c] = v[c];
    omega[3 * i + c] = omega[3 * i + c] + sw * torque[3 * i + c];
    pos[3 * i + c] = pos[3 * i + c] + dt * v[c];
  }
  /* the running maximum is read first, so only a few work-items ever issue the atomic: no
   * barrier, no work-group reduction, cheap on CPU and GPU alike */
  uint d2 = as_uint((float)(dt * dt * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2])));
  if (d2 > counters[DEM_C_DISP]) atomic_max(&counters[DEM_C_DISP], d2);
}

__kernel void dem_kick(int n, __constant const double *prm, __global const double *radius,
                       __global const double *force, __global const double *torque, __global double *vel,
                       __global double *omega)
{
  int i = get_global_id(0);
  if (i >= n) return;
  const double dt = prm[DEM_P_DT];
  double r = radius[i];
  double m = dem_mass(prm, r);
  double inertia = 0.4 * m * r * r;
  double sv = 0.5 * dt / m, sw = 0.5 * dt / inertia;
  for (int c = 0; c < 3; ++c) {
    vel[3 * i + c] = vel[3 * i + c] + sv * force[3 * i + c];
    omega[3 * i + c] = omega[3 * i + c] + sw * torque[3 * i + c];
  }
}

__kernel void dem_forces_all(int first, int n, int slots, __constant const double *prm, __global const double *pos,
                             __global const double *vel, __global const double *omega, __global const double *radius,
                             __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                             __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2];
  int i = first + (int)get_global_id(0);
  uint contacts = 0;
  if (i < n) {
    double f[3] = {0.0, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.0};
    contacts = dem_forces_pairs(i, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
    if (!dem_has_walls(i, slots, nbr_count, nbr_index)) dem_external_add(prm, radius[i], f);
    for (int c = 0; c < 3; ++c) {
      force[3 * i + c] = f[c];
      torque[3 * i + c] = t[c];
    }
  }
  dem_group_count(acc, contacts, 0, counters);
}
