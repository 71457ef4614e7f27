/* The contact law against closed forms: Hertz force at a given overlap, restitution of a
 * head-on collision, energy conservation without dissipation, Coulomb sliding on the floor, and
 * free fall (velocity Verlet is exact for a constant force). On the reference backend, and the
 * restitution and free fall also on the OpenCL backend. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dem/params.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "physics_testing.h"
#include "testing.h"

#define PI 3.14159265358979323846

/* a small driver: the time loop of one rank, as timestep.c runs it */
typedef struct {
  dem_engine_t *e;
  dem_particles_t *p;
  dem_params_t prm;
  int started;
} run_t;

static int run_forces(run_t *r)
{
  if (dem_engine_needs_search(r->e) && dem_engine_search(r->e) != 0) return -1;
  if (dem_engine_forces(r->e) != 0 || dem_engine_boundaries(r->e) != 0 || dem_engine_external(r->e) != 0) return -1;
  return 0;
}

static int run_open(run_t *r, dem_backend_t backend, size_t n)
{
  char err[512];
  r->started = 0;
  if (dem_params_derive(&r->prm, err, sizeof(err)) != 0) {
    fprintf(stderr, "params: %s\n", err);
    return -1;
  }
  r->p->n = n;
  dem_engine_opts_t o = {.backend = backend, .cl_platform = -1, .cl_device = -1, .cl_device_type = "any"};
  r->e = dem_engine_create(&o, &r->prm, r->p, err, sizeof(err));
  if (!r->e) {
    fprintf(stderr, "engine: %s\n", err);
    return -1;
  }
  if (run_forces(r) != 0) {
    fprintf(stderr, "engine: %s\n", dem_engine_error(r->e));
    return -1;
  }
  return 0;
}

static int run_step(run_t *r)
{
  int rc = dem_engine_kick_drift(r->e, r->started ? 1.0 : 0.5);
  r->started = 1;
  if (rc == 0) rc = run_forces(r);
  if (rc != 0) fprintf(stderr, "engine: %s\n", dem_engine_error(r->e));
  return rc;
}

static void run_close(run_t *r)
{
  dem_engine_destroy(&r->e);
  dem_particles_destroy(&r->p);
}

static double mass_of(const dem_params_t *prm, double r) { return prm->mat.density * 4.0 / 3.0 * PI * r * r * r; }

/* ---- derived constants and the Hertz normal force -------------------------------------- */

static void test_derived_constants(void)
{
  dem_params_t prm = dem_test_params(1e-8, 5e-5);
  char err[256];
  CU_ASSERT_EQUAL_FATAL(dem_params_derive(&prm, err, sizeof(err)), 0);
  double E = 5e6, nu = 0.45, G = E / (2.0 * (1.0 + nu));
  CU_ASSERT_DOUBLE_EQUAL(prm.e_star, E / (2.0 * (1.0 - nu * nu)), 1e-6);
  CU_ASSERT_DOUBLE_EQUAL(prm.g_star, G / (2.0 * (2.0 - nu)), 1e-6);
  double beta = log(0.3) / sqrt(log(0.3) * log(0.3) + PI * PI);
  CU_ASSERT_DOUBLE_EQUAL(prm.damp_t, -2.0 * sqrt(5.0 / 6.0) * beta, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(dem_params_damping_for_restitution(1.0), 0.0, 0.0);
  CU_ASSERT(dem_params_damping_for_restitution(0.3) > dem_params_damping_for_restitution(0.9));
  CU_ASSERT_DOUBLE_EQUAL(dem_params_rayleigh_dt(&prm, 0.005), PI * 0.005 * sqrt(2500.0 / G) / (0.1631 * nu + 0.8766),
                         1e-15);
  /* out-of-range input is rejected with a message naming the field */
  dem_params_t bad = prm;
  bad.mat.poisson = 0.7;
  CU_ASSERT_EQUAL(dem_params_derive(&bad, err, sizeof(err)), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "poisson"));
  bad = prm;
  bad.mat.restitution = 1.5;
  CU_ASSERT_EQUAL(dem_params_derive(&bad, err, sizeof(err)), -1);
  CU_ASSERT_PTR_NOT_NULL(strstr(err, "restitution"));
}

static void test_hertz_force(void)
{
  run_t r = {.prm = dem_test_params(1e-6, 1e-4)};
  r.prm.gravity[2] = 0.0;
  r.p = dem_particles_create(2);
  const double r1 = 0.005, r2 = 0.003, delta = 2e-5;
  r.p->id[0] = 0;
  r.p->id[1] = 1;
  r.p->radius[0] = r1;
  r.p->radius[1] = r2;
  /* along a skewed direction, to exercise all components */
  double n[3] = {1.0 / sqrt(3.0), 1.0 / sqrt(3.0), -1.0 / sqrt(3.0)};
  for (int c = 0; c < 3; ++c) {
    r.p->pos[c] = 0.5;
    r.p->pos[3 + c] = 0.5 + (r1 + r2 - delta) * n[c];
  }
  CU_ASSERT_EQUAL_FATAL(run_open(&r, DEM_BACKEND_REF, 2), 0);
  double estar = 5e6 / (2.0 * (1.0 - 0.45 * 0.45));
  double rstar = r1 * r2 / (r1 + r2);
  double fn = 4.0 / 3.0 * estar * sqrt(rstar) * pow(delta, 1.5);
  for (int c = 0; c < 3; ++c) {
    CU_ASSERT_DOUBLE_EQUAL(r.p->force[c], -fn * n[c], 1e-12 * fn);
    CU_ASSERT_DOUBLE_EQUAL(r.p->force[3 + c], fn * n[c], 1e-12 * fn);
    CU_ASSERT_DOUBLE_EQUAL(r.p->torque[c], 0.0, 1e-30);
  }
  run_close(&r);

  /* a sphere pressed into the floor: R* = r, force along +z */
  run_t w = {.prm = dem_test_params(1e-6, 1e-4)};
  w.prm.gravity[2] = 0.0;
  w.p = dem_particles_create(1);
  w.p->radius[0] = r1;
  w.p->pos[0] = w.p->pos[1] = 0.5;
  w.p->pos[2] = r1 - delta;
  CU_ASSERT_EQUAL_FATAL(run_open(&w, DEM_BACKEND_REF, 1), 0);
  double fw = 4.0 / 3.0 * estar * sqrt(r1) * pow(delta, 1.5);
  CU_ASSERT_DOUBLE_EQUAL(w.p->force[2], fw, 1e-12 * fw);
  CU_ASSERT_DOUBLE_EQUAL(w.p->force[0], 0.0, 1e-30);
  run_close(&w);
}

/* ---- collisions ------------------------------------------------------------------------ */

/* two equal spheres approaching along x at relative speed 2 v (offset b in y: oblique);
 * runs until they separated and returns the post-collision state in out[] (vel of both) */
static int collide(dem_backend_t backend, double e, double mu, double b, double *vel_before, double *vel_after,
                   double *ke_before, double *ke_after)
{
  run_t r = {.prm = dem_test_params(5e-7, 1e-4)};
  r.prm.gravity[2] = 0.0;
  r.prm.mat.restitution = e;
  r.prm.mat.friction = mu;
  r.p = dem_particles_create(2);
  const double rad = 0.005, v = 0.5;
  for (int i = 0; i < 2; ++i) {
    r.p->id[i] = i;
    r.p->radius[i] = rad;
    r.p->pos[3 * i + 0] = 0.5 + (i ? 1 : -1) * (rad + 2e-5);
    r.p->pos[3 * i + 1] = 0.5 + (i ? 0.5 : -0.5) * b;
    r.p->pos[3 * i + 2] = 0.5;
    r.p->vel[3 * i + 0] = i ? -v : v;
  }
  memcpy(vel_before, r.p->vel, 6 * sizeof(double));
  if (run_open(&r, backend, 2) != 0) return -1;
  *ke_before = dem_test_kinetic_energy(r.p, &r.prm);
  int touched = 0;
  for (int step = 0; step < 100000; ++step) {
    if (run_step(&r) != 0) return -1;
    if (backend == DEM_BACKEND_OPENCL && (step % 50 != 0)) continue;
    if (backend == DEM_BACKEND_OPENCL && dem_engine_pull(r.e, DEM_F_POS | DEM_F_VEL | DEM_F_FORCE, 0, 2) != 0) return -1;
    double dx = r.p->pos[3] - r.p->pos[0], dy = r.p->pos[4] - r.p->pos[1], dz = r.p->pos[5] - r.p->pos[2];
    double d = sqrt(dx * dx + dy * dy + dz * dz);
    if (d < 2 * rad) touched = 1;
    if (touched && d > 2 * rad + 1e-5) break;
  }
  if (!touched) return -1;
  if (dem_engine_kick(r.e) != 0 || dem_engine_pull(r.e, DEM_F_ALL, 0, 2) != 0) return -1;
  memcpy(vel_after, r.p->vel, 6 * sizeof(double));
  *ke_after = dem_test_kinetic_energy(r.p, &r.prm);
  run_close(&r);
  return 0;
}

static void check_restitution(dem_backend_t backend, double e)
{
  double vb[6], va[6], kb, ka;
  CU_ASSERT_EQUAL_FATAL(collide(backend, e, 0.5, 0.0, vb, va, &kb, &ka), 0);
  double measured = -(va[3] - va[0]) / (vb[3] - vb[0]);
  printf("\n    e = %.2f: measured %.5f (%s)", e, measured, backend == DEM_BACKEND_REF ? "reference" : "OpenCL");
  CU_ASSERT_DOUBLE_EQUAL(measured, e, 0.01 * e);
  /* momentum is conserved (equal and opposite forces) */
  CU_ASSERT_DOUBLE_EQUAL(va[0] + va[3], 0.0, 1e-12);
}

static void test_restitution(void)
{
  check_restitution(DEM_BACKEND_REF, 0.3);
  check_restitution(DEM_BACKEND_REF, 0.5);
  check_restitution(DEM_BACKEND_REF, 0.9);
}

static void test_restitution_opencl(void)
{
  check_restitution(DEM_BACKEND_OPENCL, 0.5);
}

static void test_energy_conserved(void)
{
  double vb[6], va[6], kb, ka;
  for (int oblique = 0; oblique < 2; ++oblique) {
    CU_ASSERT_EQUAL_FATAL(collide(DEM_BACKEND_REF, 1.0, 0.0, oblique ? 0.004 : 0.0, vb, va, &kb, &ka), 0);
    printf("\n    %s: relative kinetic energy change %.3g", oblique ? "oblique" : "head-on", (ka - kb) / kb);
    CU_ASSERT_DOUBLE_EQUAL(ka, kb, 1e-6 * kb);
  }
}

/* ---- sliding on the floor ------------------------------------------------------------------ */

static void test_sliding_friction(void)
{
  run_t r = {.prm = dem_test_params(1e-6, 1e-4)};
  r.p = dem_particles_create(1);
  const double rad = 0.005, v0 = 0.1, mu = r.prm.mat.friction, g = 9.81;
  char err[256];
  CU_ASSERT_EQUAL_FATAL(dem_params_derive(&r.prm, err, sizeof(err)), 0);
  double m = mass_of(&r.prm, rad);
  double k = 4.0 / 3.0 * r.prm.e_star * sqrt(rad);
  double delta_eq = pow(m * g / k, 2.0 / 3.0); /* resting on the floor: no bouncing */
  r.p->radius[0] = rad;
  r.p->pos[0] = r.p->pos[1] = 0.5;
  r.p->pos[2] = rad - delta_eq;
  r.p->vel[0] = v0;
  CU_ASSERT_EQUAL_FATAL(run_open(&r, DEM_BACKEND_REF, 1), 0);
  double t_slip = 2.0 * v0 / (7.0 * mu * g); /* slip ends when v = r w */
  int n_slip = (int)(t_slip / r.prm.dt);
  int i1 = n_slip / 10, i2 = n_slip / 2;
  double v1 = 0.0, v2 = 0.0, worst = 0.0;
  for (int step = 1; step <= n_slip + n_slip / 2; ++step) {
    /* the step by hand, to look at the wall force before gravity is added */
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(r.e, step == 1 ? 0.5 : 1.0), 0);
    if (dem_engine_needs_search(r.e)) CU_ASSERT_EQUAL_FATAL(dem_engine_search(r.e), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces(r.e), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_boundaries(r.e), 0);
    double ft = hypot(r.p->force[0], r.p->force[1]), fn = r.p->force[2];
    if (ft - mu * fabs(fn) > worst) worst = ft - mu * fabs(fn);
    CU_ASSERT_EQUAL_FATAL(dem_engine_external(r.e), 0);
    if (step == i1) v1 = r.p->vel[0];
    if (step == i2) v2 = r.p->vel[0];
  }
  double decel = (v1 - v2) / ((i2 - i1) * r.prm.dt);
  printf("\n    deceleration %.6f m/s^2 (mu g = %.6f), final v %.5f, r w %.5f", decel, mu * g, r.p->vel[0],
         rad * r.p->omega[1]);
  CU_ASSERT_DOUBLE_EQUAL(decel, mu * g, 0.01 * mu * g);
  CU_ASSERT(worst <= 1e-12 * mu * m * g);
  /* afterwards it rolls: v = r w, at 5/7 of the initial speed */
  CU_ASSERT_DOUBLE_EQUAL(r.p->vel[0], rad * r.p->omega[1], 0.01 * v0);
  CU_ASSERT_DOUBLE_EQUAL(r.p->vel[0], 5.0 / 7.0 * v0, 0.01 * v0);
  run_close(&r);
}

/* ---- free fall ------------------------------------------------------------------------- */

static void check_free_fall(dem_backend_t backend)
{
  run_t r = {.prm = dem_test_params(1e-4, 1e-4)};
  r.p = dem_particles_create(1);
  const double x0[3] = {0.3, 0.4, 0.8}, v0[3] = {0.1, -0.05, 0.2};
  r.p->radius[0] = 0.005;
  memcpy(r.p->pos, x0, sizeof(x0));
  memcpy(r.p->vel, v0, sizeof(v0));
  CU_ASSERT_EQUAL_FATAL(run_open(&r, backend, 1), 0);
  const int steps = 1000;
  for (int s = 0; s < steps; ++s) CU_ASSERT_EQUAL_FATAL(run_step(&r), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick(r.e), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_pull(r.e, DEM_F_ALL, 0, 1), 0);
  double t = steps * r.prm.dt;
  for (int c = 0; c < 3; ++c) {
    double x = x0[c] + v0[c] * t + 0.5 * r.prm.gravity[c] * t * t;
    double v = v0[c] + r.prm.gravity[c] * t;
    CU_ASSERT_DOUBLE_EQUAL(r.p->pos[c], x, 1e-12);
    CU_ASSERT_DOUBLE_EQUAL(r.p->vel[c], v, 1e-12);
  }
  run_close(&r);
}

static void test_free_fall(void) { check_free_fall(DEM_BACKEND_REF); }
static void test_free_fall_opencl(void) { check_free_fall(DEM_BACKEND_OPENCL); }

static CU_TestInfo tests[] = {
  {"derived constants", test_derived_constants},
  {"Hertz normal force, particle and wall", test_hertz_force},
  {"restitution 0.3, 0.5, 0.9 (reference)", test_restitution},
  {"restitution 0.5 (OpenCL)", test_restitution_opencl},
  {"energy conserved without damping and friction", test_energy_conserved},
  {"sliding decelerates at mu g, |Ft| <= mu Fn", test_sliding_friction},
  {"free fall (reference)", test_free_fall},
  {"free fall (OpenCL)", test_free_fall_opencl},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"contact law", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
