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
 *                    with fewer launches and memory passes.
 * Written out component by component, with restrict on the arrays a kernel writes: PoCL 3.1's
 * CPU compiler kept the loops over three components rolled and the private arrays f[3], t[3]
 * in memory, a copy per work-item of the group, and assumed that every store may change every
 * array (kick_drift 0.54 -> 0.42 ms, forces_all without partners 0.48 -> 0.34 ms at 50,653
 * particles apart, BENCHMARKS.md "The streaming kernels written out"). */

__kernel void dem_kick_drift(int n, __constant const double *prm, double kick, __global const double *restrict radius,
                             __global const double *restrict force, __global const double *restrict torque,
                             __global double *restrict pos, __global double *restrict vel,
                             __global double *restrict omega, volatile __global uint *counters,
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
  double v0 = vel[3 * i] + sv * force[3 * i];
  double v1 = vel[3 * i + 1] + sv * force[3 * i + 1];
  double v2 = vel[3 * i + 2] + sv * force[3 * i + 2];
  vel[3 * i] = v0;
  vel[3 * i + 1] = v1;
  vel[3 * i + 2] = v2;
  omega[3 * i] = omega[3 * i] + sw * torque[3 * i];
  omega[3 * i + 1] = omega[3 * i + 1] + sw * torque[3 * i + 1];
  omega[3 * i + 2] = omega[3 * i + 2] + sw * torque[3 * i + 2];
  pos[3 * i] = pos[3 * i] + dt * v0;
  pos[3 * i + 1] = pos[3 * i + 1] + dt * v1;
  pos[3 * i + 2] = pos[3 * i + 2] + dt * v2;
  /* the running maximum is read first, so only a few work-items ever issue the atomic: no
   * barrier, no work-group reduction, cheap on CPU and GPU alike */
  uint d2 = as_uint((float)(dt * dt * (v0 * v0 + v1 * v1 + v2 * v2)));
  if (d2 > counters[DEM_C_DISP]) atomic_max(&counters[DEM_C_DISP], d2);
}

__kernel void dem_kick(int n, __constant const double *prm, __global const double *restrict radius,
                       __global const double *restrict force, __global const double *restrict torque,
                       __global double *restrict vel, __global double *restrict omega)
{
  int i = get_global_id(0);
  if (i >= n) return;
  const double dt = prm[DEM_P_DT];
  double r = radius[i];
  double m = dem_mass(prm, r);
  double inertia = 0.4 * m * r * r;
  double sv = 0.5 * dt / m, sw = 0.5 * dt / inertia;
  vel[3 * i] = vel[3 * i] + sv * force[3 * i];
  vel[3 * i + 1] = vel[3 * i + 1] + sv * force[3 * i + 1];
  vel[3 * i + 2] = vel[3 * i + 2] + sv * force[3 * i + 2];
  omega[3 * i] = omega[3 * i] + sw * torque[3 * i];
  omega[3 * i + 1] = omega[3 * i + 1] + sw * torque[3 * i + 1];
  omega[3 * i + 2] = omega[3 * i + 2] + sw * torque[3 * i + 2];
}

__kernel void dem_forces_all(int first, int n, int slots, __constant const double *prm, __global const double *pos,
                             __global const double *vel, __global const double *omega, __global const double *radius,
                             __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                             __global double *restrict force, __global double *restrict torque,
                             volatile __global uint *counters)
{
  __local uint acc[2 * DEM_MAX_LOCAL];
  int i = first + (int)get_global_id(0);
  uint contacts = 0;
  if (i < n) {
    double f0 = 0.0, f1 = 0.0, f2 = 0.0, t0 = 0.0, t1 = 0.0, t2 = 0.0;
    /* a particle with no slot (particles apart) skips the call and its private arrays */
    if (nbr_count[i] > 0) {
      double f[3] = {0.0, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.0};
      contacts = dem_forces_pairs(i, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
      f0 = f[0], f1 = f[1], f2 = f[2], t0 = t[0], t1 = t[1], t2 = t[2];
    }
    if (!dem_has_walls(i, slots, nbr_count, nbr_index)) {
      double m = dem_mass(prm, radius[i]); /* dem_external_add */
      f0 = f0 + m * prm[DEM_P_GRAVITY];
      f1 = f1 + m * prm[DEM_P_GRAVITY + 1];
      f2 = f2 + m * prm[DEM_P_GRAVITY + 2];
    }
    force[3 * i] = f0;
    force[3 * i + 1] = f1;
    force[3 * i + 2] = f2;
    torque[3 * i] = t0;
    torque[3 * i + 1] = t1;
    torque[3 * i + 2] = t2;
  }
  dem_group_count(acc, contacts, 0, counters);
}
