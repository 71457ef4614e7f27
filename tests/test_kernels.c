/* Every OpenCL kernel against its plain-C reference (solver/dem/physics_ref.c): each kernel alone on
 * one step from a state with live contact history, then 100 whole steps (where the engine fuses
 * forces, boundaries and external into a pair pass and a wall pass), on a 10,000-particle simple
 * cubic packing with ghosts, once with the particles apart (diameter 0.99 x spacing) and once in
 * contact (1.001 x spacing); and the wall list. Contact sets must be identical; every field must
 * agree within 1e-12 of its largest magnitude. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "physics_testing.h"
#include "testing.h"

#define TOL 1e-12
#define SPACING 0.01 /* m */

static double worst; /* largest relative difference seen by the last comparisons */

typedef struct {
  dem_params_t prm;
  dem_particles_t *a, *b; /* reference store, OpenCL store */
  dem_engine_t *ref, *cl;
  int started;
} twin_t;

static int twin_check(dem_engine_t *e, int rc)
{
  if (rc != 0) fprintf(stderr, "engine (%s): %s\n", dem_engine_device_name(e), dem_engine_error(e));
  return rc;
}

static int step_forces(dem_engine_t *e, int force_search)
{
  if ((force_search || dem_engine_needs_search(e)) && twin_check(e, dem_engine_search(e)) != 0) return -1;
  if (twin_check(e, dem_engine_forces(e)) != 0 || twin_check(e, dem_engine_boundaries(e)) != 0 ||
      twin_check(e, dem_engine_external(e)) != 0)
    return -1;
  return 0;
}

static int step(dem_engine_t *e, double kick, int force_search)
{
  if (twin_check(e, dem_engine_kick_drift(e, kick)) != 0) return -1;
  return step_forces(e, force_search);
}

/* the packing: 25 x 25 x 16 particles, the top layer (625) ghosts. The reference computes the
 * initial forces and runs `warmup` steps (so that contact history is live); then the OpenCL
 * twin is made from a copy of its store. */
static int twin_open_jitter(twin_t *t, double diameter_factor, double jitter, int warmup)
{
  memset(t, 0, sizeof(*t));
  t->prm = dem_test_params(1e-6, 0.005 * SPACING);
  t->a = dem_test_lattice(&t->prm, 25, 25, 16, SPACING, diameter_factor * SPACING, jitter, 0.05, 10.0, 625, 2024);
  char err[512];
  if (!t->a || dem_params_derive(&t->prm, err, sizeof(err)) != 0) return -1;
  dem_engine_opts_t o = {.backend = DEM_BACKEND_REF, .cl_platform = -1, .cl_device = -1, .cl_device_type = "any"};
  t->ref = dem_engine_create(&o, &t->prm, t->a, err, sizeof(err));
  if (!t->ref) return -1;
  if (step_forces(t->ref, 1) != 0) return -1;
  for (int s = 0; s < warmup; ++s)
    if (step(t->ref, s == 0 ? 0.5 : 1.0, 0) != 0) return -1;
  t->started = warmup > 0;
  t->b = dem_test_clone(t->a);
  o.backend = DEM_BACKEND_OPENCL;
  t->cl = dem_engine_create(&o, &t->prm, t->b, err, sizeof(err));
  if (!t->cl) {
    fprintf(stderr, "OpenCL engine: %s\n", err);
    return -1;
  }
  printf("\n    OpenCL device: %s", dem_engine_device_name(t->cl));
  return 0;
}

static int twin_open(twin_t *t, double diameter_factor, int warmup)
{
  return twin_open_jitter(t, diameter_factor, 1e-4 * SPACING, warmup);
}

static void twin_close(twin_t *t)
{
  dem_engine_destroy(&t->ref);
  dem_engine_destroy(&t->cl);
  dem_particles_destroy(&t->a);
  dem_particles_destroy(&t->b);
}

/* pulls the OpenCL state and compares fields (DEM_F_* mask) of the owned particles; returns
 * the number of failed comparisons */
static int twin_compare(twin_t *t, unsigned fields, const char *what)
{
  const dem_particles_t *a = t->a, *b = t->b;
  if (dem_engine_pull(t->cl, fields, 0, b->n) != 0) {
    fprintf(stderr, "pull: %s\n", dem_engine_error(t->cl));
    return 1;
  }
  int bad = 0;
  const size_t n3 = 3 * a->n;
  struct { unsigned flag; const char *name; const double *x, *y; size_t count; } f[] = {
    {DEM_F_POS, "pos", a->pos, b->pos, n3},         {DEM_F_VEL, "vel", a->vel, b->vel, n3},
    {DEM_F_OMEGA, "omega", a->omega, b->omega, n3}, {DEM_F_FORCE, "force", a->force, b->force, n3},
    {DEM_F_TORQUE, "torque", a->torque, b->torque, n3},
  };
  for (size_t k = 0; k < sizeof(f) / sizeof(f[0]); ++k) {
    if (!(fields & f[k].flag)) continue;
    double d = dem_test_rel_diff(f[k].x, f[k].y, f[k].count);
    worst = fmax(worst, d);
    if (d > TOL) {
      fprintf(stderr, "%s: %s differs by %.3g relative\n", what, f[k].name, d);
      bad++;
    }
  }
  if (fields & DEM_F_SLOTS) {
    size_t mismatched = 0, contacts = 0;
    double smax = 0.0, dmax = 0.0;
    for (size_t i = 0; i < a->n; ++i) {
      if (a->nbr_count[i] != b->nbr_count[i]) {
        mismatched++;
        continue;
      }
      for (int k = 0; k < a->nbr_count[i]; ++k) {
        size_t s = i * (size_t)a->slots + (size_t)k, t = i * (size_t)b->slots + (size_t)k;
        if (a->nbr_gid[s] != b->nbr_gid[t] || a->nbr_index[s] != b->nbr_index[t]) mismatched++;
        int live = 0;
        for (int c = 0; c < 3; ++c) {
          smax = fmax(smax, fabs(a->spring[3 * s + c]));
          dmax = fmax(dmax, fabs(a->spring[3 * s + c] - b->spring[3 * t + c]));
          live |= a->spring[3 * s + c] != 0.0;
        }
        contacts += (size_t)live;
      }
    }
    if (smax > 0.0) worst = fmax(worst, dmax / smax);
    if (mismatched) {
      fprintf(stderr, "%s: %zu slots differ\n", what, mismatched);
      bad++;
    }
    if (smax > 0.0 ? dmax > TOL * smax : dmax > 0.0) {
      fprintf(stderr, "%s: springs differ by %.3g relative\n", what, smax > 0.0 ? dmax / smax : dmax);
      bad++;
    }
  }
  return bad;
}

static size_t count_contacts(const dem_particles_t *p)
{
  size_t live = 0;
  for (size_t i = 0; i < p->n; ++i)
    for (int k = 0; k < p->nbr_count[i]; ++k) {
      const double *s = p->spring + 3 * (i * (size_t)p->slots + (size_t)k);
      live += s[0] != 0.0 || s[1] != 0.0 || s[2] != 0.0;
    }
  return live;
}

/* ---- each kernel alone, one step ------------------------------------------------------------ */

static void check_each_kernel(double factor)
{
  twin_t t;
  CU_ASSERT_EQUAL_FATAL(twin_open(&t, factor, 5), 0);
  worst = 0.0;
  /* the step, kernel by kernel, compared after each */
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.ref, 1.0), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.cl, 1.0), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_POS | DEM_F_VEL | DEM_F_OMEGA, "kick-drift"), 0);
  /* the OpenCL store's host copy now equals the device's: push nothing, search both */
  CU_ASSERT_EQUAL_FATAL(dem_engine_search(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_SLOTS, "search"), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.cl), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_FORCE | DEM_F_TORQUE | DEM_F_SLOTS, "forces"), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_boundaries(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_boundaries(t.cl), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_FORCE | DEM_F_TORQUE | DEM_F_SLOTS, "boundaries"), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_external(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_external(t.cl), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_FORCE, "external"), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick(t.cl), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_VEL | DEM_F_OMEGA, "kick"), 0);
  printf("\n    largest relative difference %.3g", worst);
  size_t live = count_contacts(t.a);
  printf("\n    %zu owned, %zu ghosts, %zu contacts with history", t.a->n, t.a->n_ghost, live);
  CU_ASSERT(factor < 1.0 ? live > 0 : live > 2 * t.a->n); /* walls only / a real packing */
  twin_close(&t);
}

static void test_each_kernel_apart(void) { check_each_kernel(0.99); }
static void test_each_kernel_contact(void) { check_each_kernel(1.001); }

/* ---- 100 steps ------------------------------------------------------------------------------ */

static void check_run(double factor)
{
  twin_t t;
  CU_ASSERT_EQUAL_FATAL(twin_open(&t, factor, 0), 0);
  /* the twin got the initial forces with the store; it only lacks its neighbour lists (the
   * search keeps the springs of an unchanged partner list as they are) */
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
  int lag_bad = 0, need_bad = 0, searches = 0;
  double prev_ref_contacts = -1.0;
  for (int s = 0; s < 100; ++s) {
    int force_search = s % 25 == 24; /* besides the displacement test: exercise history carrying */
    double kick = s == 0 ? 0.5 : 1.0;
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.ref, kick), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.cl, kick), 0);
    int need = dem_engine_needs_search(t.ref);
    if (need != dem_engine_needs_search(t.cl)) need_bad++;
    if (need || force_search) {
      CU_ASSERT_EQUAL_FATAL(twin_check(t.ref, dem_engine_search(t.ref)), 0);
      CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
      searches++;
    }
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.cl), 0);
    /* the device counts contacts and reports them with the next step (one-step lag) */
    if (s > 0 && dem_engine_last_work(t.cl).contacts != prev_ref_contacts) lag_bad++;
    CU_ASSERT_EQUAL_FATAL(dem_engine_boundaries(t.cl), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_external(t.cl), 0);
    /* the reference's particle contacts of this step, for the next comparison */
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.ref), 0);
    prev_ref_contacts = dem_engine_last_work(t.ref).contacts;
    CU_ASSERT_EQUAL_FATAL(dem_engine_boundaries(t.ref), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_external(t.ref), 0);
  }
  CU_ASSERT_EQUAL(lag_bad, 0);
  CU_ASSERT_EQUAL(need_bad, 0); /* both backends see the same displacements */
  CU_ASSERT(searches >= 4);
  worst = 0.0;
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_ALL, "100 steps"), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_kick(t.cl), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_VEL | DEM_F_OMEGA, "final kick"), 0);
  printf("\n    %zu contacts with history after 100 steps (%d searches), largest relative difference %.3g",
         count_contacts(t.a), searches, worst);
  twin_close(&t);
}

/* growing the store may move its arrays (mremap moves them when the address space after them
 * is taken): after dem_engine_resize the device works on the grown ones */
static void test_resize(void)
{
  twin_t t;
  CU_ASSERT_EQUAL_FATAL(twin_open(&t, 1.001, 3), 0);
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
  CU_ASSERT_EQUAL_FATAL(step(t.ref, 1.0, 0), 0);
  CU_ASSERT_EQUAL_FATAL(step(t.cl, 1.0, 0), 0);
  /* the host copy must be complete before the store is reallocated */
  CU_ASSERT_EQUAL_FATAL(dem_engine_pull(t.cl, DEM_F_ALL, 0, t.b->n), 0);
  const size_t old_cap = t.b->cap;
  CU_ASSERT_EQUAL_FATAL(dem_particles_reserve(t.a, 2 * t.a->cap), 0);
  CU_ASSERT_EQUAL_FATAL(dem_particles_reserve(t.b, 2 * t.b->cap), 0);
  CU_ASSERT(t.b->cap == 2 * old_cap);
  CU_ASSERT_EQUAL_FATAL(dem_engine_resize(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_resize(t.cl)), 0);
  CU_ASSERT_TRUE(dem_engine_needs_search(t.cl));
  for (int s = 0; s < 10; ++s) {
    CU_ASSERT_EQUAL_FATAL(step(t.ref, 1.0, 0), 0);
    CU_ASSERT_EQUAL_FATAL(step(t.cl, 1.0, 0), 0);
  }
  worst = 0.0;
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_ALL, "after resize"), 0);
  printf("\n    largest relative difference %.3g", worst);
  twin_close(&t);
}

/* forces started ahead for the first half of the particles (what a step does under the
 * simulator while the ghosts are exchanged), the fused launch then covers the rest: the same
 * results as the reference, step after step. Natively the engine starts nothing ahead. */
static void test_forces_ahead(void)
{
  twin_t t;
  CU_ASSERT_EQUAL_FATAL(twin_open(&t, 1.001, 3), 0);
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
  size_t ahead_total = 0, steps_ahead = 0;
  for (int s = 0; s < 20; ++s) {
    int force_search = s == 10;
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.ref, 1.0), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.cl, 1.0), 0);
    int need = dem_engine_needs_search(t.ref) || force_search;
    size_t started = 0;
    if (need) {
      CU_ASSERT_EQUAL_FATAL(twin_check(t.ref, dem_engine_search(t.ref)), 0);
      CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
    } else {
      CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_forces_ahead(t.cl, t.b->n / 2, &started)), 0);
      steps_ahead++;
    }
    ahead_total += started;
    CU_ASSERT_EQUAL_FATAL(step_forces(t.ref, 0), 0);
    CU_ASSERT_EQUAL_FATAL(step_forces(t.cl, 0), 0);
  }
  CU_ASSERT(steps_ahead >= 10);
  CU_ASSERT_EQUAL(ahead_total, dem_clock_modelled() ? steps_ahead * (t.b->n / 2) : 0);
  worst = 0.0;
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_ALL, "forces ahead"), 0);
  printf("\n    %zu of 20 steps started half the forces ahead, largest relative difference %.3g",
         ahead_total ? steps_ahead : 0, worst);
  /* a search with forces started ahead would leave them paired with the old lists: refused */
  if (dem_clock_modelled()) {
    CU_ASSERT_EQUAL_FATAL(dem_engine_kick_drift(t.cl, 1.0), 0);
    size_t started = 0;
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces_ahead(t.cl, t.b->n / 2, &started), 0);
    CU_ASSERT_EQUAL(started, t.b->n / 2);
    CU_ASSERT_NOT_EQUAL(dem_engine_search(t.cl), 0);
  }
  twin_close(&t);
}

/* The wall list (kernels/boundaries.cl: dem_wall_list) against its reference after a search, and
 * after the host replaced slots (as a restart or a migration does): the device rebuilds it before
 * the next wall pass. Here a listed particle loses its slots on the host: were the list stale, the
 * wall pass would add its gravity a second time. */
static void test_wall_list(void)
{
  twin_t t;
  CU_ASSERT_EQUAL_FATAL(twin_open(&t, 0.99, 3), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_search(t.ref), 0);
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
  int32_t *la = calloc(t.a->n, sizeof(int32_t)), *lb = calloc(t.b->n, sizeof(int32_t));
  CU_ASSERT_FATAL(la && lb);
  long na = dem_engine_wall_list(t.ref, la), nb = dem_engine_wall_list(t.cl, lb);
  if (nb < 0) fprintf(stderr, "wall list: %s\n", dem_engine_error(t.cl));
  /* the lattice's faces on the three lower walls (the top layer is ghosts) */
  CU_ASSERT(na > 0 && na < (long)t.a->n);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT(na == nb && memcmp(la, lb, (size_t)na * sizeof(int32_t)) == 0);
  printf("\n    %ld of %zu particles listed after the search", na, t.a->n);

  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_SLOTS, "search"), 0); /* pulls the OpenCL slots */
  const size_t gone = (size_t)la[0];
  t.a->nbr_count[gone] = 0;
  t.b->nbr_count[gone] = 0;
  CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_push(t.cl, DEM_F_SLOTS, 0, t.b->n)), 0);
  /* forces on these slots, no search in between */
  dem_engine_t *both[2] = {t.ref, t.cl};
  for (int k = 0; k < 2; ++k)
    CU_ASSERT_EQUAL_FATAL(twin_check(both[k], dem_engine_forces(both[k])) || dem_engine_boundaries(both[k]) ||
                            twin_check(both[k], dem_engine_external(both[k])), 0);
  CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_FORCE | DEM_F_TORQUE | DEM_F_SLOTS, "slots pushed"), 0);
  na = dem_engine_wall_list(t.ref, la);
  nb = dem_engine_wall_list(t.cl, lb);
  CU_ASSERT_EQUAL(na, nb);
  CU_ASSERT(na == nb && memcmp(la, lb, (size_t)na * sizeof(int32_t)) == 0);
  CU_ASSERT(na > 0 && la[0] != (int32_t)gone);
  free(la);
  free(lb);
  twin_close(&t);
}

static void test_run_apart(void) { check_run(0.99); }
static void test_run_contact(void) { check_run(1.001); }

/* Contact decided at the edge: lattice neighbours exactly one spacing apart up to rounding, with
 * diameters of 1 spacing (half the pairs overlap by rounding alone), 1 -+ 3e-13 (d^2 within the
 * 2^-40 band of the pair pass's test: the square root decides) and 1 -+ 2e-12 (just outside it:
 * decided without the root). The pair pass must find the reference's contacts, no more, no
 * fewer. */
static void test_touching_edge(void)
{
  const double factors[] = {1.0, 1.0 - 3e-13, 1.0 + 3e-13, 1.0 - 2e-12, 1.0 + 2e-12};
  for (size_t k = 0; k < sizeof(factors) / sizeof(factors[0]); ++k) {
    twin_t t;
    CU_ASSERT_EQUAL_FATAL(twin_open_jitter(&t, factors[k], 0.0, 0), 0);
    char what[64];
    snprintf(what, sizeof(what), "diameter %.13f spacings", factors[k]);
    CU_ASSERT_EQUAL_FATAL(twin_check(t.cl, dem_engine_search(t.cl)), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_search(t.ref), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.ref), 0);
    CU_ASSERT_EQUAL_FATAL(dem_engine_forces(t.cl), 0);
    CU_ASSERT_EQUAL(twin_compare(&t, DEM_F_FORCE | DEM_F_TORQUE | DEM_F_SLOTS, what), 0);
    size_t ca = count_contacts(t.a), cb = count_contacts(t.b);
    printf("\n    %s: %zu contacts (reference), %zu (OpenCL)", what, ca, cb);
    CU_ASSERT_EQUAL(ca, cb);
    if (factors[k] > 1.0) CU_ASSERT(ca > 2 * t.a->n);  /* every lattice neighbour */
    if (factors[k] < 1.0) CU_ASSERT(ca < t.a->n / 2); /* none between particles: walls at most */
    twin_close(&t);
  }
}

static CU_TestInfo tests[] = {
  {"contact decided at the edge of touching, as the reference decides it", test_touching_edge},
  {"each kernel, one step, particles apart", test_each_kernel_apart},
  {"each kernel, one step, particles in contact", test_each_kernel_contact},
  {"100 steps, particles apart", test_run_apart},
  {"100 steps, particles in contact", test_run_contact},
  {"store reallocated, engine resized", test_resize},
  {"forces started ahead for half the particles", test_forces_ahead},
  {"wall list, after a search and after slots pushed", test_wall_list},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"OpenCL kernels vs reference", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
