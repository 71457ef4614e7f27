/* Helpers shared by the physics suites (test_contact_law, test_search, test_kernels): the
 * benchmark material, a simple cubic packing built here (independent of the scenario
 * generator), and field comparisons relative to a field's largest magnitude. */
#ifndef DEMSIM_TESTS_PHYSICS_TESTING_H
#define DEMSIM_TESTS_PHYSICS_TESTING_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dem/params.h"
#include "dem/particles.h"
#include "device/engine.h"

/* the benchmark material: E = 5 MPa, nu = 0.45, e = 0.3, mu = 0.5, 2500 kg/m^3 */
static inline dem_params_t dem_test_params(double dt, double skin)
{
  dem_params_t p;
  memset(&p, 0, sizeof(p));
  p.mat = (dem_material_t){.youngs_modulus = 5e6, .poisson = 0.45, .restitution = 0.3, .friction = 0.5,
                           .density = 2500.0};
  p.dt = dt;
  p.skin = skin;
  p.gravity[2] = -9.81;
  for (int d = 0; d < 3; ++d) {
    p.box_lo[d] = 0.0;
    p.box_hi[d] = 1.0;
  }
  return p;
}

/* xorshift: reproducible on every platform */
static inline double dem_test_rand(uint64_t *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0;
}

/* nx * ny * nz spheres of diameter `diameter` on a simple cubic lattice of spacing `spacing`
 * (m) in the lower half of a box that just holds it laterally; the first layer and the first
 * column touch the walls slightly. Positions jittered by +-jitter (m), random velocities in
 * +-vmax (m/s) and spins in +-wmax (rad/s). The last n_ghost particles are marked as ghosts. */
static inline dem_particles_t *dem_test_lattice(dem_params_t *prm, int nx, int ny, int nz, double spacing,
                                                double diameter, double jitter, double vmax, double wmax,
                                                size_t n_ghost, uint64_t seed)
{
  size_t total = (size_t)nx * ny * nz;
  dem_particles_t *p = dem_particles_create(total);
  if (!p) return NULL;
  double r = 0.5 * diameter;
  double first = r - 1e-4 * diameter; /* slight overlap with the low walls */
  prm->box_lo[0] = prm->box_lo[1] = prm->box_lo[2] = 0.0;
  prm->box_hi[0] = first + (nx - 1) * spacing + r + 0.01 * diameter;
  prm->box_hi[1] = first + (ny - 1) * spacing + r + 0.01 * diameter;
  prm->box_hi[2] = 2.0 * (first + (nz - 1) * spacing + r);
  uint64_t s = seed ? seed : 88172645463325252ull;
  size_t i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i) {
        int idx[3] = {x, y, z};
        p->id[i] = (dem_gid_t)i;
        p->radius[i] = r;
        for (int c = 0; c < 3; ++c) {
          p->pos[3 * i + c] = first + idx[c] * spacing + jitter * (2.0 * dem_test_rand(&s) - 1.0);
          p->vel[3 * i + c] = vmax * (2.0 * dem_test_rand(&s) - 1.0);
          p->omega[3 * i + c] = wmax * (2.0 * dem_test_rand(&s) - 1.0);
        }
      }
  p->n = total - n_ghost;
  p->n_ghost = n_ghost;
  return p;
}

static inline dem_particles_t *dem_test_clone(const dem_particles_t *a)
{
  dem_particles_t *b = dem_particles_create(a->cap);
  if (!b) return NULL;
  for (size_t i = 0; i < a->n + a->n_ghost; ++i) dem_particles_copy_one(b, i, a, i);
  b->n = a->n;
  b->n_ghost = a->n_ghost;
  return b;
}

/* max |a - b| / max |a| over count values (0 when both are all zero) */
static inline double dem_test_rel_diff(const double *a, const double *b, size_t count)
{
  double dmax = 0.0, amax = 0.0;
  for (size_t k = 0; k < count; ++k) {
    double d = fabs(a[k] - b[k]);
    if (d > dmax) dmax = d;
    if (fabs(a[k]) > amax) amax = fabs(a[k]);
  }
  return amax > 0.0 ? dmax / amax : dmax;
}

static inline double dem_test_kinetic_energy(const dem_particles_t *p, const dem_params_t *prm)
{
  double e = 0.0;
  for (size_t i = 0; i < p->n; ++i) {
    double r = p->radius[i];
    double m = prm->mat.density * (4.0 / 3.0) * 3.14159265358979323846 * r * r * r;
    double inertia = 0.4 * m * r * r;
    for (int c = 0; c < 3; ++c)
      e += 0.5 * m * p->vel[3 * i + c] * p->vel[3 * i + c] + 0.5 * inertia * p->omega[3 * i + c] * p->omega[3 * i + c];
  }
  return e;
}

#endif
