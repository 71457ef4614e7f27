/* Plain-C reference of the DEM kernels (see physics_ref.h). The order of floating-point
 * operations mirrors the kernels/ folder expression by expression; change both together. */
#include "dem/physics_ref.h"

#include <math.h>
#include <string.h>

#include "dem/grid.h"
#include "dem/params.h"

#define DEM_PI 3.14159265358979323846

double dem_ref_mass_factor(const dem_params_t *prm)
{
  return prm->mat.density * (4.0 / 3.0) * DEM_PI;
}

dem_ref_law_t dem_ref_law(const dem_params_t *prm)
{
  dem_ref_law_t law;
  law.dt = prm->dt;
  law.kn = (4.0 / 3.0) * prm->e_star;
  law.kt = 8.0 * prm->g_star;
  law.damp_n = prm->damp_n;
  law.gt = prm->damp_t * sqrt(6.0 * prm->g_star / prm->e_star);
  law.mu = prm->mat.friction;
  return law;
}

/* ---- search + history ------------------------------------------------------------------ */

/* inserts (gid, idx) into the gid-sorted list of count entries, keeping at most the first
 * DEM_MAX_NEIGHBORS; returns the new count of partners seen (may exceed the slots) */
static int dem_ref_insert(dem_gid_t *gid, int32_t *idx, int count, dem_gid_t g, int32_t j)
{
  int k = count < DEM_MAX_NEIGHBORS ? count : DEM_MAX_NEIGHBORS;
  if (k == DEM_MAX_NEIGHBORS && g > gid[k - 1]) return count + 1;
  if (k == DEM_MAX_NEIGHBORS) k--; /* drop the largest */
  while (k > 0 && gid[k - 1] > g) {
    gid[k] = gid[k - 1];
    idx[k] = idx[k - 1];
    k--;
  }
  gid[k] = g;
  idx[k] = j;
  return count + 1;
}

/* wall w: distance (m) from x to its plane, positive inside the box */
static double dem_ref_wall_distance(const dem_params_t *prm, const double *x, int w)
{
  int a = w / 2;
  return (w & 1) ? prm->box_hi[a] - x[a] : x[a] - prm->box_lo[a];
}

dem_search_result_t dem_ref_search(dem_particles_t *p, const dem_params_t *prm, const dem_grid_t *g)
{
  dem_search_result_t res = {0};
  const double skin = prm->skin;
  for (size_t i = 0; i < p->n; ++i) {
    dem_gid_t ngid[DEM_MAX_NEIGHBORS];
    int32_t nidx[DEM_MAX_NEIGHBORS];
    int count = 0;
    const double *xi = p->pos + 3 * i;
    const double ri = p->radius[i];
    for (int w = 0; w < DEM_WALL_COUNT; ++w)
      if (dem_ref_wall_distance(prm, xi, w) < ri + skin) count = dem_ref_insert(ngid, nidx, count, -1 - w, -1 - w);
    int32_t cx = dem_grid_coord(xi[0], g->origin[0], g->h);
    int32_t cy = dem_grid_coord(xi[1], g->origin[1], g->h);
    int32_t cz = dem_grid_coord(xi[2], g->origin[2], g->h);
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy) {
        int32_t qy = cy + dy, qz = cz + dz, run[6];
        int runs = dem_grid_row_runs(g, cx, qy, qz, run);
        for (int r = 0; r < runs; ++r)
          for (int32_t s = run[2 * r]; s < run[2 * r + 1]; ++s) {
            int32_t j = g->cell_sorted[s];
            if ((size_t)j == i) continue;
            const double *xj = p->pos + 3 * j;
            /* cells of other rows sharing these buckets: skip, they are visited with their row */
            if (!dem_grid_in_row(dem_grid_coord(xj[0], g->origin[0], g->h), dem_grid_coord(xj[1], g->origin[1], g->h),
                                 dem_grid_coord(xj[2], g->origin[2], g->h), cx, qy, qz))
              continue;
            double ex = xj[0] - xi[0], ey = xj[1] - xi[1], ez = xj[2] - xi[2];
            double d2 = ex * ex + ey * ey + ez * ez;
            double cut = ri + p->radius[j] + skin;
            if (d2 < cut * cut) count = dem_ref_insert(ngid, nidx, count, p->id[j], j);
          }
      }
    if (count > DEM_MAX_NEIGHBORS && !res.overflow) {
      res.overflow = 1;
      res.overflow_gid = p->id[i];
      res.overflow_count = count;
    }
    int used = count < DEM_MAX_NEIGHBORS ? count : DEM_MAX_NEIGHBORS;
    if (used > p->slots) { /* slots left as they were: the caller widens them and searches again */
      if (used > res.unfit) res.unfit = used;
      continue;
    }

    /* history: both lists are gid-sorted, so one merge walk finds each kept partner's spring */
    double nspring[3 * DEM_MAX_NEIGHBORS];
    const size_t base = i * (size_t)p->slots;
    int old_count = p->nbr_count[i];
    int m = 0;
    for (int k = 0; k < used; ++k) {
      while (m < old_count && p->nbr_gid[base + m] < ngid[k]) m++;
      int keep = m < old_count && p->nbr_gid[base + m] == ngid[k];
      for (int c = 0; c < 3; ++c) nspring[3 * k + c] = keep ? p->spring[3 * (base + m) + c] : 0.0;
    }
    for (int k = 0; k < used; ++k) {
      p->nbr_gid[base + k] = ngid[k];
      p->nbr_index[base + k] = nidx[k];
      for (int c = 0; c < 3; ++c) p->spring[3 * (base + k) + c] = nspring[3 * k + c];
    }
    p->nbr_count[i] = used;
    res.pairs += used;
    for (int k = 0; k < used; ++k) res.walls += ngid[k] < 0;
  }
  res.wall_particles = (double)dem_ref_wall_list(p, NULL);
  return res;
}

size_t dem_ref_wall_list(const dem_particles_t *p, int32_t *list)
{
  size_t count = 0;
  for (size_t i = 0; i < p->n; ++i) {
    if (!(p->nbr_count[i] > 0 && p->nbr_index[i * (size_t)p->slots] < 0)) continue;
    if (list) list[count] = (int32_t)i;
    count++;
  }
  return count;
}

int dem_ref_brute_neighbors(const dem_particles_t *p, const dem_params_t *prm, size_t i, dem_gid_t *gids, int max)
{
  int32_t idx[DEM_MAX_NEIGHBORS];
  dem_gid_t tmp[DEM_MAX_NEIGHBORS];
  int count = 0;
  const double *xi = p->pos + 3 * i;
  const double ri = p->radius[i];
  for (int w = 0; w < DEM_WALL_COUNT; ++w)
    if (dem_ref_wall_distance(prm, xi, w) < ri + prm->skin) count = dem_ref_insert(tmp, idx, count, -1 - w, -1 - w);
  for (size_t j = 0; j < p->n + p->n_ghost; ++j) {
    if (j == i) continue;
    const double *xj = p->pos + 3 * j;
    double ex = xj[0] - xi[0], ey = xj[1] - xi[1], ez = xj[2] - xi[2];
    double d2 = ex * ex + ey * ey + ez * ez;
    double cut = ri + p->radius[j] + prm->skin;
    if (d2 < cut * cut) count = dem_ref_insert(tmp, idx, count, p->id[j], (int32_t)j);
  }
  int used = count < DEM_MAX_NEIGHBORS ? count : DEM_MAX_NEIGHBORS;
  for (int k = 0; k < used && k < max; ++k) gids[k] = tmp[k];
  return count;
}

/* ---- contact law ----------------------------------------------------------------------- */

/* One contact seen from particle i. n (unit, from i to the partner), overlap delta > 0 (m),
 * rstar (m), mstar (kg), vr = v_i - v_j (m/s), ws = r_i w_i + r_j w_j (m/s), ri (m).
 * Updates the spring xi (m) and adds the force (N) and torque (N m) on i. */
static void dem_ref_contact(const dem_ref_law_t *law, const double n[3], double delta, double rstar, double mstar,
                            const double vr[3], const double ws[3], double ri, double xi[3], double f[3],
                            double t[3])
{
  /* normal: Hertz + damping, never attractive */
  double ddot = vr[0] * n[0] + vr[1] * n[1] + vr[2] * n[2];
  double sr = sqrt(rstar);
  double k = law->kn * sr;
  double sd = sqrt(delta);
  double smkq = sqrt(mstar * k * sd); /* sqrt(m* k) delta^(1/4), for both dampings */
  double fn = k * delta * sd + law->damp_n * smkq * ddot;
  if (fn < 0.0) fn = 0.0;

  /* tangential relative velocity at the contact point */
  double vrel[3] = {vr[0] + (ws[1] * n[2] - ws[2] * n[1]), vr[1] + (ws[2] * n[0] - ws[0] * n[2]),
                    vr[2] + (ws[0] * n[1] - ws[1] * n[0])};
  double vn = vrel[0] * n[0] + vrel[1] * n[1] + vrel[2] * n[2];
  double vt[3] = {vrel[0] - vn * n[0], vrel[1] - vn * n[1], vrel[2] - vn * n[2]};

  /* the spring follows the rotating tangent plane, keeping its length (nothing to do when it
   * already lies in the plane: the result would be the same bits) */
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
  for (int c = 0; c < 3; ++c) xi[c] = xi[c] + vt[c] * law->dt;

  /* k_t = 8 G* sqrt(R* delta), gamma_t = damp_t sqrt(m* k_t), rewritten with the roots above */
  double kt = law->kt * sr * sd;
  double gt = law->gt * smkq;
  double ft[3];
  for (int c = 0; c < 3; ++c) ft[c] = -kt * xi[c] - gt * vt[c];
  double ft2 = ft[0] * ft[0] + ft[1] * ft[1] + ft[2] * ft[2];
  double fmax = law->mu * fn;
  if (ft2 > fmax * fmax) {
    /* sliding: Coulomb cap, and the spring shrinks to what the capped force implies */
    double s = fmax / sqrt(ft2);
    double inv_kt = 1.0 / kt;
    for (int c = 0; c < 3; ++c) {
      ft[c] = ft[c] * s;
      xi[c] = -(ft[c] + gt * vt[c]) * inv_kt;
    }
  }
  for (int c = 0; c < 3; ++c) f[c] = f[c] + (ft[c] - fn * n[c]);
  double rn[3] = {ri * n[0], ri * n[1], ri * n[2]};
  t[0] = t[0] + (rn[1] * ft[2] - rn[2] * ft[1]);
  t[1] = t[1] + (rn[2] * ft[0] - rn[0] * ft[2]);
  t[2] = t[2] + (rn[0] * ft[1] - rn[1] * ft[0]);
}

static void dem_ref_zero_spring(double *xi)
{
  if (xi[0] != 0.0 || xi[1] != 0.0 || xi[2] != 0.0) xi[0] = xi[1] = xi[2] = 0.0;
}

dem_force_result_t dem_ref_forces(dem_particles_t *p, const dem_params_t *prm)
{
  dem_force_result_t res = {0};
  const double mf = dem_ref_mass_factor(prm);
  const dem_ref_law_t law = dem_ref_law(prm);
  for (size_t i = 0; i < p->n; ++i) {
    double f[3] = {0.0, 0.0, 0.0}, t[3] = {0.0, 0.0, 0.0};
    const double *xi = p->pos + 3 * i, *vi = p->vel + 3 * i, *wi = p->omega + 3 * i;
    const double ri = p->radius[i];
    const double mi = dem_ref_mass(mf, ri);
    const size_t base = i * (size_t)p->slots;
    for (int k = 0; k < p->nbr_count[i]; ++k) {
      int32_t j = p->nbr_index[base + k];
      if (j < 0) continue; /* walls: dem_ref_boundaries */
      res.pairs += 1.0;
      double *spring = p->spring + 3 * (base + k);
      const double *xj = p->pos + 3 * j, *vj = p->vel + 3 * j, *wj = p->omega + 3 * j;
      const double rj = p->radius[j];
      double e[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
      double d2 = e[0] * e[0] + e[1] * e[1] + e[2] * e[2];
      double sum = ri + rj;
      /* most listed partners are not touching: decide before paying for the square root */
      double d = d2 < sum * sum ? sqrt(d2) : sum;
      double delta = sum - d;
      if (!(delta > 0.0) || d == 0.0) {
        dem_ref_zero_spring(spring);
        continue;
      }
      res.contacts += 1.0;
      double inv_d = 1.0 / d;
      double n[3] = {e[0] * inv_d, e[1] * inv_d, e[2] * inv_d};
      double mj = dem_ref_mass(mf, rj);
      /* R* and m* with one division */
      double rsum = ri + rj, msum = mi + mj;
      double q = 1.0 / (rsum * msum);
      double rstar = ri * rj * msum * q;
      double mstar = mi * mj * rsum * q;
      double vr[3] = {vi[0] - vj[0], vi[1] - vj[1], vi[2] - vj[2]};
      double ws[3] = {ri * wi[0] + rj * wj[0], ri * wi[1] + rj * wj[1], ri * wi[2] + rj * wj[2]};
      dem_ref_contact(&law, n, delta, rstar, mstar, vr, ws, ri, spring, f, t);
    }
    memcpy(p->force + 3 * i, f, sizeof(f));
    memcpy(p->torque + 3 * i, t, sizeof(t));
  }
  return res;
}

dem_force_result_t dem_ref_boundaries(dem_particles_t *p, const dem_params_t *prm)
{
  dem_force_result_t res = {0};
  const double mf = dem_ref_mass_factor(prm);
  const dem_ref_law_t law = dem_ref_law(prm);
  for (size_t i = 0; i < p->n; ++i) {
    double *f = p->force + 3 * i, *t = p->torque + 3 * i;
    const double *xi = p->pos + 3 * i, *vi = p->vel + 3 * i, *wi = p->omega + 3 * i;
    const double ri = p->radius[i];
    const size_t base = i * (size_t)p->slots;
    for (int k = 0; k < p->nbr_count[i]; ++k) {
      int32_t j = p->nbr_index[base + k];
      if (j >= 0) continue;
      res.pairs += 1.0;
      int w = -1 - j;
      double *spring = p->spring + 3 * (base + k);
      double delta = ri - dem_ref_wall_distance(prm, xi, w);
      if (!(delta > 0.0)) {
        dem_ref_zero_spring(spring);
        continue;
      }
      res.contacts += 1.0;
      /* n points from the particle to the wall; the wall is at rest, of infinite mass and radius */
      double n[3] = {0.0, 0.0, 0.0};
      n[w / 2] = (w & 1) ? 1.0 : -1.0;
      double vr[3] = {vi[0], vi[1], vi[2]};
      double ws[3] = {ri * wi[0], ri * wi[1], ri * wi[2]};
      dem_ref_contact(&law, n, delta, ri, dem_ref_mass(mf, ri), vr, ws, ri, spring, f, t);
    }
  }
  return res;
}

void dem_ref_external(dem_particles_t *p, const dem_params_t *prm)
{
  const double mf = dem_ref_mass_factor(prm);
  for (size_t i = 0; i < p->n; ++i) {
    double m = dem_ref_mass(mf, p->radius[i]);
    for (int c = 0; c < 3; ++c) p->force[3 * i + c] = p->force[3 * i + c] + m * prm->gravity[c];
  }
}

double dem_ref_kick_drift(dem_particles_t *p, const dem_params_t *prm, double kick)
{
  const double mf = dem_ref_mass_factor(prm);
  const double dt = prm->dt;
  float dmax2 = 0.0f;
  for (size_t i = 0; i < p->n; ++i) {
    double r = p->radius[i];
    double m = dem_ref_mass(mf, r);
    double inertia = 0.4 * m * r * r;
    double sv = kick * dt / m, sw = kick * dt / inertia;
    double *v = p->vel + 3 * i, *w = p->omega + 3 * i, *x = p->pos + 3 * i;
    for (int c = 0; c < 3; ++c) {
      v[c] = v[c] + sv * p->force[3 * i + c];
      w[c] = w[c] + sw * p->torque[3 * i + c];
      x[c] = x[c] + dt * v[c];
    }
    float d2 = (float)(dt * dt * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
    if (d2 > dmax2) dmax2 = d2;
  }
  return (double)dmax2;
}

void dem_ref_kick(dem_particles_t *p, const dem_params_t *prm)
{
  const double mf = dem_ref_mass_factor(prm);
  const double dt = prm->dt;
  for (size_t i = 0; i < p->n; ++i) {
    double r = p->radius[i];
    double m = dem_ref_mass(mf, r);
    double inertia = 0.4 * m * r * r;
    double sv = 0.5 * dt / m, sw = 0.5 * dt / inertia;
    for (int c = 0; c < 3; ++c) {
      p->vel[3 * i + c] = p->vel[3 * i + c] + sv * p->force[3 * i + c];
      p->omega[3 * i + c] = p->omega[3 * i + c] + sw * p->torque[3 * i + c];
    }
  }
}
