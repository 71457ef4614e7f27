/* Velocity Verlet, split in two kernels, and the fused force kernel.
 *   dem_kick_drift : v += kick dt F/m, w += kick dt T/I, x += dt v; also the largest (|v| dt)^2
 *                    of the step (squared: no root per particle), for the host's conservative "search needed" test: the
 *                    work-group's largest, then a 32-bit atomic_max on the float's bits
 *                    (non-negative floats order like their bit patterns)
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
 * particles apart, BENCHMARKS-history.md "The streaming kernels written out"). */

/* one particle's kick-drift; returns the float bits of its (|v| dt)^2 */
inline uint dem_kick_drift1(int i, __constant const double *prm, double kick, __global const double *restrict radius,
                            __global const double *restrict force, __global const double *restrict torque,
                            __global double *restrict pos, __global double *restrict vel,
                            __global double *restrict omega)
{
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
  return as_uint((float)(dt * dt * (v0 * v0 + v1 * v1 + v2 * v2)));
}

/* the vectors of particles i0 .. i0 + 7 of an array of triples: (x, y, z) from 24 consecutive
 * doubles, and back */
inline void dem_load3x8(__global const double *a, int i0, double8 *x, double8 *y, double8 *z)
{
  double16 lo = vload16(0, a + 3 * i0);
  double8 h = vload8(0, a + 3 * i0 + 16);
  double16 hi = (double16)(h, h);
  *x = shuffle2(lo, hi, (ulong8)(0, 3, 6, 9, 12, 15, 18, 21));
  *y = shuffle2(lo, hi, (ulong8)(1, 4, 7, 10, 13, 16, 19, 22));
  *z = shuffle2(lo, hi, (ulong8)(2, 5, 8, 11, 14, 17, 20, 23));
}

inline void dem_store3x8(__global double *a, int i0, double8 x, double8 y, double8 z)
{
  double16 xy = (double16)(x, y), zz = (double16)(z, z);
  vstore16(shuffle2(xy, zz, (ulong16)(0, 8, 16, 1, 9, 17, 2, 10, 18, 3, 11, 19, 4, 12, 20, 5)), 0, a + 3 * i0);
  vstore8(shuffle2(xy, zz, (ulong8)(13, 21, 6, 14, 22, 7, 15, 23)), 0, a + 3 * i0 + 16);
}

/* particles i0 .. i0 + 7 as eight lanes, the same operations in the same order as
 * dem_kick_drift1 (so the same bits); returns the largest of their (|v| dt)^2 bits */
inline uint dem_kick_drift8(int i0, __constant const double *prm, double kick, __global const double *restrict radius,
                            __global const double *restrict force, __global const double *restrict torque,
                            __global double *restrict pos, __global double *restrict vel,
                            __global double *restrict omega)
{
  const double dt = prm[DEM_P_DT];
  double8 r = vload8(0, radius + i0);
  double8 m = prm[DEM_P_MASSF] * r * r * r; /* dem_mass */
  double8 inertia = 0.4 * m * r * r;
  double8 sv = kick * dt / m, sw = kick * dt / inertia;
  double8 f0, f1, f2, a0, a1, a2;
  dem_load3x8(force, i0, &f0, &f1, &f2);
  dem_load3x8(vel, i0, &a0, &a1, &a2);
  double8 v0 = a0 + sv * f0, v1 = a1 + sv * f1, v2 = a2 + sv * f2;
  dem_store3x8(vel, i0, v0, v1, v2);
  dem_load3x8(torque, i0, &f0, &f1, &f2);
  dem_load3x8(omega, i0, &a0, &a1, &a2);
  dem_store3x8(omega, i0, a0 + sw * f0, a1 + sw * f1, a2 + sw * f2);
  dem_load3x8(pos, i0, &a0, &a1, &a2);
  dem_store3x8(pos, i0, a0 + dt * v0, a1 + dt * v1, a2 + dt * v2);
  uint8 d2 = as_uint8(convert_float8(dt * dt * (v0 * v0 + v1 * v1 + v2 * v2)));
  uint4 d4 = max(d2.lo, d2.hi);
  return max(max(d4.x, d4.y), max(d4.z, d4.w));
}

/* eight particles per work-item, as double8 lanes: PoCL 3.1's CPU compiler does not vectorise
 * the work-group loop of a kernel that writes under a condition (every kernel here: i < n), and
 * one particle per work-item ran as scalar code, its two divisions included (2.8 ms at 512,000
 * particles on one core, 37 GB/s; BENCHMARKS-history.md "Kick-drift in lanes of eight"). The last
 * work-item takes the particles past the last full eight one at a time. */
__kernel void dem_kick_drift(int n, __constant const double *prm, double kick, __global const double *restrict radius,
                             __global const double *restrict force, __global const double *restrict torque,
                             __global double *restrict pos, __global double *restrict vel,
                             __global double *restrict omega, volatile __global uint *counters,
                             volatile __global uint *next_counters)
{
  __local uint part[DEM_MAX_LOCAL];
  const int i0 = 8 * (int)get_global_id(0);
  uint d2 = 0;
  if (i0 + 8 <= n)
    d2 = dem_kick_drift8(i0, prm, kick, radius, force, torque, pos, vel, omega);
  else
    for (int i = i0; i < n; ++i) d2 = max(d2, dem_kick_drift1(i, prm, kick, radius, force, torque, pos, vel, omega));
  /* the step's largest, one atomic per work-group; the other set of counters, used by the
   * following force kernels and the next step, cleared by the first work-item */
  uint g = dem_group_max(part, d2);
  if (get_local_id(0) == 0 && g > counters[DEM_C_DISP]) atomic_max(&counters[DEM_C_DISP], g);
  if (get_global_id(0) == 0)
    for (int c = 0; c < DEM_COUNTERS; ++c) next_counters[c] = 0;
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
