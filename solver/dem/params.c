/* Derived material constants and the damping factors that realise a requested restitution.
 *
 * The normal damping alpha: in units where the Hertz contact ODE reads
 *   x'' = -max(0, x^{3/2} + alpha x^{1/4} x'),  x(0) = 0, x'(0) = 1,
 * the restitution depends on alpha only (not on impact velocity, stiffness or mass), because
 * this damping law scales like the elastic term. We integrate the ODE with RK4 and bisect on
 * alpha, once at set-up.
 *
 * The bisection takes about 0.1 s. Under SMPI every rank of the process sets up (SMPI gives
 * each its own copy of the globals, so a static cache would be per rank too): at 64 ranks that
 * was 6 s of CPU before the first step. The answers are therefore kept process-wide, in a
 * slot of share.h; a repeated question gets the same bits without the ODE. */
#include "dem/params.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "base/share.h"

#define DEM_PI 3.14159265358979323846
#define DEM_ALPHA_MAX 20.0 /* restitution(20) ~ 0.02: enough for any realistic material */

static double dem_ode_accel(double x, double v, double alpha)
{
  if (x <= 0.0) return 0.0; /* out of contact (RK4 stages may overshoot slightly) */
  double f = x * sqrt(x) + alpha * sqrt(sqrt(x)) * v;
  return f > 0.0 ? -f : 0.0; /* no attraction */
}

/* restitution of the dimensionless contact for damping alpha */
static double dem_restitution_of(double alpha)
{
  const double h = 1e-4; /* contact lasts ~3.2 time units: ~3e4 RK4 steps */
  double x = 0.0, v = 1.0;
  for (long step = 0; step < 10000000L; ++step) {
    double k1x = v, k1v = dem_ode_accel(x, v, alpha);
    double k2x = v + 0.5 * h * k1v, k2v = dem_ode_accel(x + 0.5 * h * k1x, k2x, alpha);
    double k3x = v + 0.5 * h * k2v, k3v = dem_ode_accel(x + 0.5 * h * k2x, k3x, alpha);
    double k4x = v + h * k3v, k4v = dem_ode_accel(x + h * k3x, k4x, alpha);
    double xn = x + h / 6.0 * (k1x + 2.0 * k2x + 2.0 * k3x + k4x);
    double vn = v + h / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v);
    if (step > 0 && xn <= 0.0) {
      /* linear interpolation of the velocity at the crossing of x = 0 */
      double s = x / (x - xn);
      return -(v + s * (vn - v));
    }
    x = xn;
    v = vn;
  }
  return 0.0;
}

/* process-wide answers of dem_restitution_of (kind 0: alpha -> e) and of the bisection
 * (kind 1: e -> alpha) */
#define DEM_MEMO_SIZE 16
typedef struct dem_params_memo {
  int count;
  int kind[DEM_MEMO_SIZE];
  double in[DEM_MEMO_SIZE], out[DEM_MEMO_SIZE];
} dem_params_memo_t;

static int dem_memo_find(int kind, double in, double *out)
{
  int found = 0;
  dem_share_lock();
  void **slot = dem_share_slot("demsim.params");
  const dem_params_memo_t *m = slot ? *slot : NULL;
  for (int k = 0; m && k < m->count && !found; ++k)
    if (m->kind[k] == kind && m->in[k] == in) {
      *out = m->out[k];
      found = 1;
    }
  dem_share_unlock();
  return found;
}

static void dem_memo_keep(int kind, double in, double out)
{
  dem_share_lock();
  void **slot = dem_share_slot("demsim.params");
  if (slot && !*slot) *slot = calloc(1, sizeof(dem_params_memo_t)); /* lives as long as the process */
  dem_params_memo_t *m = slot ? *slot : NULL;
  if (m && m->count < DEM_MEMO_SIZE) {
    m->kind[m->count] = kind;
    m->in[m->count] = in;
    m->out[m->count] = out;
    m->count++;
  }
  dem_share_unlock();
}

static double dem_restitution_memo(double alpha)
{
  double e;
  if (dem_memo_find(0, alpha, &e)) return e;
  e = dem_restitution_of(alpha);
  dem_memo_keep(0, alpha, e);
  return e;
}

static double dem_damping_bisect(double e);

double dem_params_damping_for_restitution(double e)
{
  if (!(e > 0.0) || e >= 1.0) return 0.0;
  double alpha;
  if (dem_memo_find(1, e, &alpha)) return alpha;
  alpha = dem_damping_bisect(e);
  dem_memo_keep(1, e, alpha);
  return alpha;
}

static double dem_damping_bisect(double e)
{
  double lo = 0.0, hi = DEM_ALPHA_MAX; /* restitution decreases with alpha */
  for (int it = 0; it < 60 && hi - lo > 1e-12; ++it) {
    double mid = 0.5 * (lo + hi);
    if (dem_restitution_of(mid) > e) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

double dem_params_rayleigh_dt(const dem_params_t *p, double r)
{
  double nu = p->mat.poisson;
  double g = p->mat.youngs_modulus / (2.0 * (1.0 + nu));
  return DEM_PI * r * sqrt(p->mat.density / g) / (0.1631 * nu + 0.8766);
}

int dem_params_derive(dem_params_t *p, char *err, size_t errlen)
{
  const dem_material_t *m = &p->mat;
  double e_min = dem_restitution_memo(DEM_ALPHA_MAX);
#define DEM_CHECK(cond, ...) \
  do { if (!(cond)) { snprintf(err, errlen, __VA_ARGS__); return -1; } } while (0)
  DEM_CHECK(m->youngs_modulus > 0.0 && isfinite(m->youngs_modulus),
            "material: youngs_modulus = %g Pa, expected > 0", m->youngs_modulus);
  DEM_CHECK(m->poisson > -1.0 && m->poisson < 0.5,
            "material: poisson = %g, expected in (-1, 0.5)", m->poisson);
  DEM_CHECK(m->restitution >= e_min && m->restitution <= 1.0,
            "material: restitution = %g, expected in [%.3f, 1]", m->restitution, e_min);
  DEM_CHECK(m->friction >= 0.0 && isfinite(m->friction),
            "material: friction = %g, expected >= 0", m->friction);
  DEM_CHECK(m->density > 0.0 && isfinite(m->density),
            "material: density = %g kg/m^3, expected > 0", m->density);
  DEM_CHECK(p->dt > 0.0 && isfinite(p->dt), "dt = %g s, expected > 0", p->dt);
  DEM_CHECK(p->skin >= 0.0 && isfinite(p->skin), "skin = %g m, expected >= 0", p->skin);
  for (int d = 0; d < 3; ++d) {
    DEM_CHECK(isfinite(p->gravity[d]), "gravity[%d] = %g m/s^2 is not finite", d, p->gravity[d]);
    DEM_CHECK(p->box_lo[d] < p->box_hi[d], "box: lo[%d] = %g m must be below hi[%d] = %g m",
              d, p->box_lo[d], d, p->box_hi[d]);
  }
#undef DEM_CHECK
  double nu = m->poisson;
  double g = m->youngs_modulus / (2.0 * (1.0 + nu));
  p->e_star = m->youngs_modulus / (2.0 * (1.0 - nu * nu));
  p->g_star = g / (2.0 * (2.0 - nu));
  p->damp_n = dem_params_damping_for_restitution(m->restitution);
  double le = log(m->restitution);
  double beta = le / sqrt(le * le + DEM_PI * DEM_PI);
  p->damp_t = -2.0 * sqrt(5.0 / 6.0) * beta;
  return 0;
}
