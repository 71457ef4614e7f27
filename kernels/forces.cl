/* Contact forces and moments between particles. The contact law (also used for walls, see
 * boundaries.cl), seen from particle i (the scalar form is the C reference's dem_ref_contact):
 *   normal     Fn = k d^{3/2} + damp_n sqrt(m* k) d^{1/4} d',  k = 4/3 E* sqrt(R*), Fn >= 0
 *   tangential spring xi, turned into the current tangent plane (length kept), xi += v_t dt;
 *              Ft = -k_t xi - gamma_t v_t, k_t = 8 G* sqrt(R* d), gamma_t = damp_t sqrt(m* k_t),
 *              capped at mu Fn (then xi = -(Ft + gamma_t v_t) / k_t)
 *   force on i  -Fn n + Ft,  torque on i  (r_i n) x Ft.
 * Each work-item computes its own particle's side of every contact (no atomics); the pair's
 * other side, computed by the partner, is equal and opposite up to rounding. Slots are summed
 * in slot order (gid order), so the sum does not depend on how particles are distributed. */

/* 1 when two spheres with centre distance sqrt(d2) and radii summing to sum overlap, exactly as
 * the reference decides it (solver/dem/physics_ref.c: delta = sum - sqrt(d2) > 0 and d2 != 0), but
 * without the square root outside a band of 2^-40 around sum^2: below it the rounded root is
 * certainly less than sum, above it certainly more (both products carry at most 2^-53 of
 * rounding, the root another 2^-53). The lanes compute the root of the touching ones anyway. */
inline int dem_touching(double d2, double sum)
{
  const double p = sum * sum;
  if (d2 == 0.0) return 0;
  if (d2 < p * (1.0 - 0x1p-40)) return 1;
  if (d2 > p * (1.0 + 0x1p-40)) return 0;
  return sum - sqrt(d2) > 0.0; /* NaN: 0, as the reference */
}

/* writes a spring back; a zero spring is written only when the slot's is not zero already */
inline void dem_spring_zero(__global double *spring, int s)
{
  if (spring[3 * s] != 0.0 || spring[3 * s + 1] != 0.0 || spring[3 * s + 2] != 0.0)
    for (int c = 0; c < 3; ++c) spring[3 * s + c] = 0.0;
}

/* The contact law on eight contacts at once (double8 lanes), for CPU devices whose compilers
 * turn it into SIMD square roots and divisions: the law is one long chain of dependent square
 * roots and divisions, bound by their latency, so a particle's contacts (about 6 in a packing)
 * go through it together, in one pass rather than two of four. Each
 * lane performs exactly the operations of the scalar law (solver/dem/physics_ref.c: dem_ref_contact),
 * so results are the same bits; branches
 * become selects, and the caller adds the lanes' forces in slot order. Inputs: unit normal n,
 * overlap delta, R*, m*, v_i - v_j, r_i w_i + r_j w_j, the lever arm r_i (one particle's in
 * the pair pass, each lane's own in the wall pass), spring xi (updated in place); outputs:
 * force (fo) and torque (to) contributions on i. Inlined: called out of line, its double8
 * arguments went through memory (BENCHMARKS-history.md "Kick-drift in lanes of eight; ... the contact law
 * inlined": the pair pass -4 %). */
__attribute__((always_inline)) inline void dem_contact8(__constant const double *prm, const double8 *n, double8 delta,
                                                       double8 rstar, double8 mstar, const double8 *vr,
                                                       const double8 *ws, double8 ri, double8 *xi, double8 *fo,
                                                       double8 *to)
{
  double8 ddot = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
  double8 sr = sqrt(rstar);
  double8 k = prm[DEM_P_KN] * sr;
  double8 sd = sqrt(delta);
  double8 smkq = sqrt(mstar * k * sd); /* sqrt(m* k) delta^(1/4), for both dampings */
  double8 fn = k * delta * sd + prm[DEM_P_DAMPN] * smkq * ddot;
  fn = select(fn, (double8)(0.0), fn < 0.0);

  double8 vrel[3];
  vrel[0] = vr[0] + (ws[1] * n[2] - ws[2] * n[1]);
  vrel[1] = vr[1] + (ws[2] * n[0] - ws[0] * n[2]);
  vrel[2] = vr[2] + (ws[0] * n[1] - ws[1] * n[0]);
  double8 vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2];
  double8 vt[3];
  for (int c = 0; c < 3; ++c) vt[c] = vrel[c] - vn * n[c];

  double8 xn = xi[0] * n[0] + xi[1] * n[1] + xi[2] * n[2];
  double8 old2 = xi[0] * xi[0] + xi[1] * xi[1] + xi[2] * xi[2];
  double8 xr[3];
  for (int c = 0; c < 3; ++c) xr[c] = xi[c] - xn * n[c];
  double8 new2 = xr[0] * xr[0] + xr[1] * xr[1] + xr[2] * xr[2];
  long8 rot = xn != 0.0;
  long8 scale = rot & (new2 > 0.0);
  double8 s = sqrt(old2 / select((double8)(1.0), new2, scale));
  for (int c = 0; c < 3; ++c) {
    double8 turned = select(xr[c], xr[c] * s, scale);
    xi[c] = select(xi[c], turned, rot);
    xi[c] = xi[c] + vt[c] * prm[DEM_P_DT];
  }

  double8 kt = prm[DEM_P_KT] * sr * sd;
  double8 gt = prm[DEM_P_GT] * smkq;
  double8 ft[3];
  for (int c = 0; c < 3; ++c) ft[c] = -kt * xi[c] - gt * vt[c];
  double8 ft2 = ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2];
  double8 fmax = prm[DEM_P_MU] * fn;
  long8 cap = ft2 > fmax * fmax;
  /* sliding contacts are few: most groups skip the cap's square root and two divisions */
  if (any(cap)) {
    double8 sc = fmax / sqrt(select((double8)(1.0), ft2, cap));
    double8 inv_kt = 1.0 / kt;
    for (int c = 0; c < 3; ++c) {
      double8 ftc = ft[c] * sc;
      double8 xic = -(ftc + gt * vt[c]) * inv_kt;
      ft[c] = select(ft[c], ftc, cap);
      xi[c] = select(xi[c], xic, cap);
    }
  }
  for (int c = 0; c < 3; ++c) fo[c] = ft[c] - fn * n[c];
  double8 rn[3];
  for (int c = 0; c < 3; ++c) rn[c] = ri * n[c];
  to[0] = rn[1] * ft[2] - rn[2] * ft[1];
  to[1] = rn[2] * ft[0] - rn[0] * ft[2];
  to[2] = rn[0] * ft[1] - rn[1] * ft[0];
}

/* adds the particle-particle contacts of i (wall slots skipped) to f, t; returns contacts.
 * First a scalar pass sorts the slots into touching partners and others (whose springs are
 * cleared); then the touching ones go through the law eight at a time. The partners' data are
 * built into lanes in registers from element loads: written to a private array and read back as
 * vectors they waited on store forwarding, and PoCL's SLP vectorizer (off under the "loops"
 * work-group method, solver/device/device.c) makes gathers of them (BENCHMARKS-history.md "The contact lanes in
 * registers"). What the scalar pass itself computed, each touching partner's radius and
 * separation, it leaves in private arrays read as vectors long after (-1.3 %). */
inline uint dem_forces_pairs(int i, int slots, __constant const double *prm, __global const double *pos,
                             __global const double *vel, __global const double *omega,
                             __global const double *radius, __global const int *nbr_count,
                             __global const int *nbr_index, __global double *spring, double *f, double *t)
{
  const double mf = prm[DEM_P_MASSF];
  const double xi0 = pos[3 * i], xi1 = pos[3 * i + 1], xi2 = pos[3 * i + 2];
  const double ri = radius[i];
  const double mi = mf * ri * ri * ri;
  const int base = i * slots;
  const int count = nbr_count[i];
  int touching[DEM_MAX_NEIGHBORS], partner[DEM_MAX_NEIGHBORS];
  double rpart[(DEM_MAX_NEIGHBORS + 7) & ~7], ep[3][(DEM_MAX_NEIGHBORS + 7) & ~7];
  int m = 0;
  for (int k = 0; k < count; ++k) {
    int j = nbr_index[base + k];
    if (j < 0) continue; /* walls: boundaries.cl */
    double rj = radius[j];
    double e0 = pos[3 * j] - xi0, e1 = pos[3 * j + 1] - xi1, e2 = pos[3 * j + 2] - xi2;
    double d2 = e0 * e0 + e1 * e1 + e2 * e2;
    if (!dem_touching(d2, ri + rj)) dem_spring_zero(spring, base + k);
    else {
      touching[m] = k;
      partner[m] = j;
      ep[0][m] = e0;
      ep[1][m] = e1;
      ep[2][m] = e2;
      rpart[m++] = rj;
    }
  }
  /* idle lanes of the last group read the first contact's radius and separation */
  for (int q = m; q < ((m + 7) & ~7); ++q) {
    rpart[q] = rpart[0];
    ep[0][q] = ep[0][0];
    ep[1][q] = ep[1][0];
    ep[2][q] = ep[2][0];
  }
  const double vi0 = vel[3 * i], vi1 = vel[3 * i + 1], vi2 = vel[3 * i + 2];
  const double wi0 = omega[3 * i], wi1 = omega[3 * i + 1], wi2 = omega[3 * i + 2];
  /* sums in registers: on a CPU device every address space is one, so the compiler must assume
   * that each spring store may change f[] and t[], and would reload and store them per contact */
  double f0 = f[0], f1 = f[1], f2 = f[2], t0 = t[0], t1 = t[1], t2 = t[2];
  for (int k0 = 0; k0 < m; k0 += 8) {
    /* eight contacts into lanes, loaded element by element into registers (idle lanes repeat
     * the first contact and are ignored) */
    int j3[8], s3[8];
    for (int l = 0; l < 8; ++l) {
      int q = k0 + l < m ? k0 + l : k0;
      j3[l] = 3 * partner[q];
      s3[l] = 3 * (base + touching[q]);
    }
#define DEM_LANES(a, idx, c)                                                                      \
  (double8)(a[idx[0] + c], a[idx[1] + c], a[idx[2] + c], a[idx[3] + c], a[idx[4] + c], a[idx[5] + c], \
            a[idx[6] + c], a[idx[7] + c])
    double8 e0 = vload8(0, ep[0] + k0), e1 = vload8(0, ep[1] + k0), e2 = vload8(0, ep[2] + k0);
    double8 rj = vload8(0, rpart + k0);
    double8 d = sqrt(e0 * e0 + e1 * e1 + e2 * e2);
    double8 delta = (ri + rj) - d;
    double8 inv_d = 1.0 / d;
    double8 n[3] = {e0 * inv_d, e1 * inv_d, e2 * inv_d};
    double8 mj = mf * rj * rj * rj;
    /* R* and m* with one division */
    double8 rsum = ri + rj, msum = mi + mj;
    double8 q = 1.0 / (rsum * msum);
    double8 rstar = ri * rj * msum * q;
    double8 mstar = mi * mj * rsum * q;
    double8 vr[3] = {vi0 - DEM_LANES(vel, j3, 0), vi1 - DEM_LANES(vel, j3, 1), vi2 - DEM_LANES(vel, j3, 2)};
    double8 ws[3] = {ri * wi0 + rj * DEM_LANES(omega, j3, 0), ri * wi1 + rj * DEM_LANES(omega, j3, 1),
                     ri * wi2 + rj * DEM_LANES(omega, j3, 2)};
    double8 xi[3] = {DEM_LANES(spring, s3, 0), DEM_LANES(spring, s3, 1), DEM_LANES(spring, s3, 2)};
#undef DEM_LANES
    double8 fo[3], to[3];
    dem_contact8(prm, n, delta, rstar, mstar, vr, ws, (double8)(ri), xi, fo, to);
    /* in slot order, as the reference sums them: lane by lane, each lane named (a lane read
     * through a private array waited for its store) */
#define DEM_LANE_ADD(L)                                                                           \
  if (k0 + L < m) {                                                                               \
    f0 = f0 + fo[0].s##L, f1 = f1 + fo[1].s##L, f2 = f2 + fo[2].s##L;                           \
    t0 = t0 + to[0].s##L, t1 = t1 + to[1].s##L, t2 = t2 + to[2].s##L;                           \
    spring[s3[L]] = xi[0].s##L, spring[s3[L] + 1] = xi[1].s##L, spring[s3[L] + 2] = xi[2].s##L; \
  }
    DEM_LANE_ADD(0)
    DEM_LANE_ADD(1)
    DEM_LANE_ADD(2)
    DEM_LANE_ADD(3)
    DEM_LANE_ADD(4)
    DEM_LANE_ADD(5)
    DEM_LANE_ADD(6)
    DEM_LANE_ADD(7)
#undef DEM_LANE_ADD
  }
  f[0] = f0, f[1] = f1, f[2] = f2;
  t[0] = t0, t[1] = t1, t[2] = t2;
  return (uint)m;
}

__kernel void dem_forces(int first, int n, int slots, __constant const double *prm, __global const double *pos,
                         __global const double *vel, __global const double *omega, __global const double *radius,
                         __global const int *nbr_count, __global const int *nbr_index, __global double *spring,
                         __global double *force, __global double *torque, volatile __global uint *counters)
{
  __local uint acc[2 * DEM_MAX_LOCAL];
  int i = first + (int)get_global_id(0);
  uint contacts = 0;
  if (i < n) {
    double f[3] = {0.0, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.0};
    contacts = dem_forces_pairs(i, slots, prm, pos, vel, omega, radius, nbr_count, nbr_index, spring, f, t);
    for (int c = 0; c < 3; ++c) {
      force[3 * i + c] = f[c];
      torque[3 * i + c] = t[c];
    }
  }
  dem_group_count(acc, contacts, 0, counters);
}
