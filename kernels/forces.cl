/* Contact forces and moments between particles. The contact law (also used for walls, see
 * boundaries.cl), seen from particle i:
 *   normal     Fn = k d^{3/2} + damp_n sqrt(m* k) d^{1/4} d',  k = 4/3 E* sqrt(R*), Fn >= 0
 *   tangential spring xi, turned into the current tangent plane (length kept), xi += v_t dt;
 *              Ft = -k_t xi - gamma_t v_t, k_t = 8 G* sqrt(R* d), gamma_t = damp_t sqrt(m* k_t),
 *              capped at mu Fn (then xi = -(Ft + gamma_t v_t) / k_t)
 *   force on i  -Fn n + Ft,  torque on i  (r_i n) x Ft.
 * Each work-item computes its own particle's side of every contact (no atomics); the pair's
 * other side, computed by the partner, is equal and opposite up to rounding. Slots are summed
 * in slot order (gid order), so the sum does not depend on how particles are distributed. */

/* n (unit, i -> partner), delta (m) > 0, rstar (m), mstar (kg), vr = v_i - v_j (m/s),
 * ws = r_i w_i + r_j w_j (m/s); updates the spring xi (m) and adds to f (N) and t (N m) */
inline void dem_contact(__constant const double *prm, const double *n, double delta, double rstar, double mstar,
                        const double *vr, const double *ws, double ri, double *xi, double *f, double *t)
{
  /* k_t and gamma_t are rewritten with the square roots of the normal part:
   * k_t = 8 G* sqrt(R*) sqrt(delta), gamma_t = damp_t sqrt(6 G* / E*) sqrt(m* k) delta^{1/4} */
  double ddot = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
  double sr = sqrt(rstar);
  double k = prm[DEM_P_KN] * sr;
  double sd = sqrt(delta);
  double qd = sqrt(sd);
  double smk = sqrt(mstar * k);
  double fn = k * delta * sd + prm[DEM_P_DAMPN] * smk * qd * ddot;
  if (fn < 0.0) fn = 0.0;

  double vrel[3];
  vrel[0] = vr[0] + (ws[1] * n[2] - ws[2] * n[1]);
  vrel[1] = vr[1] + (ws[2] * n[0] - ws[0] * n[2]);
  vrel[2] = vr[2] + (ws[0] * n[1] - ws[1] * n[0]);
  double vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2];
  double vt[3];
  for (int c = 0; c < 3; ++c) vt[c] = vrel[c] - vn * n[c];

  double xn = xi[0] * n[0] + xi[1] * n[1] + xi[2] * n[2];
  if (xn != 0.0) {
    double old2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2];
    for (int c = 0; c < 3; ++c) xi[c] = xi[c] - xn * n[c];
    double new2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2];
    if (new2 > 0.0) {
      double s = sqrt(old2 / new2);
      for (int c = 0; c < 3; ++c) xi[c] = xi[c] * s;
    }
  }
  for (int c = 0; c < 3; ++c) xi[c] = xi[c] + vt[c] * prm[DEM_P_DT];

  double kt = prm[DEM_P_KT] * sr * sd;
  double gt = prm[DEM_P_GT] * smk * qd;
  double ft[3];
  for (int c = 0; c < 3; ++c) ft[c] = -kt * xi[c] - gt * vt[c];
  double ft2 = ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2];
  double fmax = prm[DEM_P_MU] * fn;
  if (ft2 > fmax * fmax) {
    double s = fmax / sqrt(ft2);
    double inv_kt = 1.0 / kt;
    for (int c = 0; c < 3; ++c) {
      ft[c] = ft[c] * s;
      xi[c] = -(ft[c] + gt * vt[c]) * inv_kt;
    }
  }
  for (int c = 0; c < 3; ++c) f[c] = f[c] + (ft[c] - fn * n[c]);
  double rn[3];
  for (int c = 0; c < 3; ++c) rn[c] = ri * n[c];
  t[0] = t[0] + (rn[1] * ft[2] - rn[2] * ft[1]);
  t[1] = t[1] + (rn[2] * ft[0] - rn[0] * ft[2]);
  t[2] = t[2] + (rn[0] * ft[1] - rn[1] * ft[0]);
}

inline void dem_spring_load(__global const double *spring, int s, double *xi)
{
  for (int c = 0; c < 3; ++c) xi[c] = spring[3 * s + c];
}

/* writes a spring back; a zero spring is written only when the slot's is not zero already */
inline void dem_spring_zero(__global double *spring, int s)
{
  if (spring[3 * s] != 0.0 || spring[3 * s + 1] != 0.0 || spring[3 * s + 2] != 0.0)
    for (int c = 0; c < 3; ++c) spring[3 * s + c] = 0.0;
}

/* adds the particle-particle contacts of i (wall slots skipped) to f, t; returns contacts */
inline uint dem_forces_pairs(int i, __constant const double *prm, __global const double *pos,
                             __global const double *vel, __global const double *omega,
                             __global const double *radius, __global const int *nbr_count,
                             __global const int *nbr_index, __global double *spring, double *f, double *t)
{
  uint contacts = 0;
  const double mf = prm[DEM_P_MASSF];
  double xi0 = pos[3 * i], xi1 = pos[3 * i + 1], xi2 = pos[3 * i + 2];
  double vi[3], wi[3];
  for (int c = 0; c < 3; ++c) {
    vi[c] = vel[3 * i + c];
    wi[c] = omega[3 * i + c];
  }
  const double ri = radius[i];
  const double mi = mf * ri * ri * ri;
  const int base = i * DEM_MAX_NEIGHBORS;
  const int count = nbr_count[i];
  for (int k = 0; k < count; ++k) {
    int j = nbr_index[base + k];
    if (j < 0) continue; /* walls: boundaries.cl */
    double rj = radius[j];
    double e[3] = {pos[3 * j] - xi0, pos[3 * j + 1] - xi1, pos[3 * j + 2] - xi2};
    double d2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
    double sum = ri + rj;
    /* most listed partners are not touching: decide before paying for the square root */
    double d = d2 < sum * sum ? sqrt(d2) : sum;
    double delta = sum - d;
    if (!(delta > 0.0) || d == 0.0) {
      dem_spring_zero(spring, base + k);
      continue;
    }
    contacts++;
    double inv_d = 1.0 / d;
    double n[3] = {e[0] * inv_d, e[1] * inv_d, e[2] * inv_d};
    double mj = mf * rj * rj * rj;
    double rstar = ri * rj / (ri + rj);
    double mstar = mi * mj / (mi + mj);
    double vr[3], ws[3], xi[3];
    for (int c = 0; c < 3; ++c) {
      vr[c] = vi[c] - vel[3 * j + c];
      ws[c] = ri * wi[c] + rj * omega[3 * j + c];
    }
    dem_spring_load(spring, base + k, xi);
    dem_contact(prm, n, delta, rstar, mstar, vr, ws, ri, xi, f, t);
    for (int c = 0; c < 3; ++c) spring[3 * (base + k) + c] = xi[c];
  }
  return contacts;
}

__kernel void dem_forces(int n, __constant const double *prm, __global const double *pos,
                         __global const double *vel, __global const double *omega, __global const double *radius,
                         __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                         __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2];
  int i = get_global_id(0);
  uint contacts = 0;
  if (i < n) {
    double f[3] = {0.0, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.0};
    contacts = dem_forces_pairs(i, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
    for (int c = 0; c < 3; ++c) {
      force[3 * i + c] = f[c];
      torque[3 * i + c] = t[c];
    }
  }
  dem_group_count(acc, contacts, 0, counters);
}
