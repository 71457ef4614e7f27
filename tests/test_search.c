/* The contact search (cell hashing, solver/dem/grid.c + the search kernel and its reference)
 * against a brute-force O(n^2) pair finder: random polydisperse configurations with ghosts and
 * particles outside the box, sparse clusters whose cells outnumber the table's buckets, a lattice whose particles sit exactly on cell boundaries and at
 * exactly the cutoff distance, the carrying of contact history, and the neighbour-slot overflow
 * error. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dem/grid.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "dem/physics_ref.h"
#include "device/engine.h"
#include "physics_testing.h"
#include "testing.h"

static dem_engine_t *open_engine(dem_backend_t backend, dem_params_t *prm, dem_particles_t *p)
{
  char err[512];
  if (dem_params_derive(prm, err, sizeof(err)) != 0) {
    fprintf(stderr, "params: %s\n", err);
    return NULL;
  }
  dem_engine_opts_t o = {.backend = backend, .cl_platform = -1, .cl_device = -1, .cl_device_type = "any"};
  dem_engine_t *e = dem_engine_create(&o, prm, p, err, sizeof(err));
  if (!e) fprintf(stderr, "engine: %s\n", err);
  return e;
}

/* compares every owned particle's slots with the brute-force partner list; returns mismatches */
static int check_against_brute(const dem_particles_t *p, const dem_params_t *prm, double *pairs)
{
  int bad = 0;
  *pairs = 0;
  for (size_t i = 0; i < p->n; ++i) {
    dem_gid_t want[DEM_MAX_NEIGHBORS];
    int count = dem_ref_brute_neighbors(p, prm, i, want, DEM_MAX_NEIGHBORS);
    const size_t base = i * (size_t)p->slots;
    int ok = count == p->nbr_count[i] && count <= p->slots;
    for (int k = 0; ok && k < count; ++k) {
      int32_t j = p->nbr_index[base + k];
      ok = p->nbr_gid[base + k] == want[k] && (j < 0 ? j == want[k] : p->id[j] == want[k]) &&
           (j < 0 || (size_t)j < p->n + p->n_ghost);
    }
    if (!ok && bad++ < 5)
      fprintf(stderr, "particle %zu (gid %d): %d slots, brute force finds %d partners\n", i, (int)p->id[i],
              (int)p->nbr_count[i], count);
    *pairs += count;
  }
  return bad;
}

/* opens an engine on p, searches, and compares every owned particle's slots with brute force;
 * returns the engine (the caller destroys it), the partners found in *pairs */
static dem_engine_t *search_checked(dem_backend_t backend, dem_params_t *prm, dem_particles_t *p, double *pairs)
{
  dem_engine_t *e = open_engine(backend, prm, p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL_FATAL(dem_engine_search(e), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_pull(e, DEM_F_SLOTS, 0, p->n), 0);
  CU_ASSERT_EQUAL(check_against_brute(p, prm, pairs), 0);
  return e;
}

/* n particles uniformly in a box of edge L (some outside it), radii in [r/2, r], the last
 * n_ghost of them ghosts, gids shuffled (so that gid order differs from index order) */
static dem_particles_t *random_config(dem_params_t *prm, size_t n, size_t n_ghost, double L, double r, uint64_t seed)
{
  dem_particles_t *p = dem_particles_create(n);
  uint64_t s = seed;
  for (int d = 0; d < 3; ++d) {
    prm->box_lo[d] = 0.0;
    prm->box_hi[d] = L;
  }
  for (size_t i = 0; i < n; ++i) {
    p->id[i] = (dem_gid_t)i;
    p->radius[i] = r * (0.5 + 0.5 * dem_test_rand(&s));
    for (int c = 0; c < 3; ++c) p->pos[3 * i + c] = -0.02 * L + 1.04 * L * dem_test_rand(&s);
  }
  for (size_t i = n - 1; i > 0; --i) { /* Fisher-Yates on the gids */
    size_t j = (size_t)(dem_test_rand(&s) * (double)(i + 1));
    dem_gid_t t = p->id[i];
    p->id[i] = p->id[j];
    p->id[j] = t;
  }
  p->n = n - n_ghost;
  p->n_ghost = n_ghost;
  return p;
}

static void check_random(dem_backend_t backend)
{
  /* 2 to 3 partners per particle on average: 4000 particles of radius <= 0.01 m in a 0.3 m box */
  const double edges[] = {0.36, 0.3};
  for (int t = 0; t < 2; ++t) {
    dem_params_t prm = dem_test_params(1e-6, 0.002);
    dem_particles_t *p = random_config(&prm, 4000, 800, edges[t], 0.01, 12345 + (uint64_t)t);
    dem_engine_t *e = open_engine(backend, &prm, p);
    CU_ASSERT_PTR_NOT_NULL_FATAL(e);
    CU_ASSERT_TRUE(dem_engine_needs_search(e));
    int rc = dem_engine_search(e);
    if (rc != 0) fprintf(stderr, "search: %s\n", dem_engine_error(e));
    CU_ASSERT_EQUAL_FATAL(rc, 0);
    CU_ASSERT_FALSE(dem_engine_needs_search(e));
    CU_ASSERT_EQUAL_FATAL(dem_engine_pull(e, DEM_F_SLOTS, 0, p->n), 0);
    double pairs = 0;
    CU_ASSERT_EQUAL(check_against_brute(p, &prm, &pairs), 0);
    printf("\n    %zu owned + %zu ghosts: %.0f partners found", p->n, p->n_ghost, pairs);
    CU_ASSERT(pairs > 1.5 * (double)p->n); /* the test is not vacuous */
    CU_ASSERT_DOUBLE_EQUAL(dem_engine_last_work(e).pairs, pairs, 0.0);
    dem_engine_destroy(&e);
    dem_particles_destroy(&p);
  }
}

static void test_random_reference(void) { check_random(DEM_BACKEND_REF); }
static void test_random_opencl(void) { check_random(DEM_BACKEND_OPENCL); }

/* particles at x = k h / 2, y = l h, z = m h with h = 2 r_max + skin the cell size, so every
 * coordinate lies on a cell boundary or a cell's middle, and y, z neighbours sit exactly at the
 * cutoff (not partners: the cutoff is strict) */
static void check_boundaries(dem_backend_t backend)
{
  dem_params_t prm = dem_test_params(1e-6, 0.25);
  const double r = 0.5, h = 2 * r + prm.skin; /* 1.25, exact in binary */
  const int nx = 12, ny = 6, nz = 6;
  dem_particles_t *p = dem_particles_create((size_t)nx * ny * nz);
  size_t i = 0;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x, ++i) {
        p->id[i] = (dem_gid_t)((i * 7919) % ((size_t)nx * ny * nz)); /* a permutation */
        p->radius[i] = r;
        p->pos[3 * i] = x * 0.5 * h;
        p->pos[3 * i + 1] = y * h;
        p->pos[3 * i + 2] = z * h;
      }
  for (int d = 0; d < 3; ++d) {
    prm.box_lo[d] = 0.0;
    prm.box_hi[d] = 8.0 * h;
  }
  p->n = i - 2 * nx;
  p->n_ghost = 2 * nx;
  double pairs = 0;
  dem_engine_t *e = search_checked(backend, &prm, p, &pairs);
  /* inner particles have exactly their two x neighbours */
  size_t mid = (size_t)(2 * ny * nx + 2 * nx + 5);
  int particles = 0;
  for (int k = 0; k < p->nbr_count[mid]; ++k) particles += p->nbr_index[mid * (size_t)p->slots + k] >= 0;
  CU_ASSERT_EQUAL(particles, 2);
  dem_engine_destroy(&e);
  dem_particles_destroy(&p);
}

static void test_boundaries_reference(void) { check_boundaries(DEM_BACKEND_REF); }
static void test_boundaries_opencl(void) { check_boundaries(DEM_BACKEND_OPENCL); }

/* Sparse particles: clusters of three touching particles scattered over a region with far more
 * cells than the table has buckets (edge 2 m: the table wraps; 100 m: the cell numbers wrap
 * uint32 too), so that cells far apart share buckets and rows wrap around the table's end. */
static void check_sparse(dem_backend_t backend)
{
  const double edges[] = {2.0, 100.0};
  for (int t = 0; t < 2; ++t) {
    dem_params_t prm = dem_test_params(1e-6, 0.002);
    const double r = 0.01, L = edges[t];
    const size_t clusters = 400, n = 3 * clusters;
    dem_particles_t *p = dem_particles_create(n);
    uint64_t s = 4250 + (uint64_t)t;
    for (int d = 0; d < 3; ++d) {
      prm.box_lo[d] = 0.0;
      prm.box_hi[d] = L;
    }
    for (size_t c = 0, i = 0; c < clusters; ++c) {
      double x[3];
      for (int d = 0; d < 3; ++d) x[d] = L * dem_test_rand(&s);
      for (int k = 0; k < 3; ++k, ++i) {
        p->id[i] = (dem_gid_t)((i * 7919) % n);
        p->radius[i] = r;
        for (int d = 0; d < 3; ++d) p->pos[3 * i + d] = x[d] + (d == k % 3 ? 1.9 * r * (k - 1) : 0.0);
      }
    }
    p->n = n - 30;
    p->n_ghost = 30;
    dem_grid_t *g = dem_grid_create();
    size_t bad = 0;
    CU_ASSERT_EQUAL_FATAL(dem_grid_build(g, p->pos, n, 2 * r + prm.skin, prm.box_lo, &bad), 0);
    double cells = (double)g->stride[0] * (double)g->stride[0] * (double)g->stride[0];
    CU_ASSERT(cells > 10.0 * (double)g->buckets); /* the table wraps: the test is not vacuous */
    int wrapped = 0; /* owned particles with a row wrapping around the table's end */
    for (size_t i = 0; i < p->n; ++i) {
      int32_t c[3], run[6], w = 0;
      for (int d = 0; d < 3; ++d) c[d] = dem_grid_coord(p->pos[3 * i + d], g->origin[d], g->h);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy) w |= dem_grid_row_runs(g, c[0], c[1] + dy, c[2] + dz, run) == 3;
      wrapped += w;
    }
    printf("\n    edge %g m: %.2g cells, %zu buckets, %d particles with a wrapped row", L, cells, g->buckets, wrapped);
    CU_ASSERT(wrapped >= 1);
    dem_grid_destroy(&g);
    double pairs = 0;
    dem_engine_t *e = search_checked(backend, &prm, p, &pairs);
    CU_ASSERT(pairs > 1.2 * (double)p->n); /* most particles have their cluster's partners */
    dem_engine_destroy(&e);
    dem_particles_destroy(&p);
  }
}

static void test_sparse_reference(void) { check_sparse(DEM_BACKEND_REF); }
static void test_sparse_opencl(void) { check_sparse(DEM_BACKEND_OPENCL); }

/* the springs of partners still listed after a new search are kept, new partners start at 0 */
static void check_history(dem_backend_t backend)
{
  dem_params_t prm = dem_test_params(1e-6, 0.002);
  dem_particles_t *p = random_config(&prm, 3000, 300, 0.3, 0.01, 777);
  dem_engine_t *e = open_engine(backend, &prm, p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL_FATAL(dem_engine_search(e), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_pull(e, DEM_F_SLOTS, 0, p->n), 0);
  /* remember the partners, and tag every spring with (own gid, partner gid, 1) */
  int32_t *old_count = malloc(p->n * sizeof(int32_t));
  const size_t old_slots = (size_t)p->slots; /* the second search may widen the stride */
  dem_gid_t *old_gid = malloc(p->n * old_slots * sizeof(dem_gid_t));
  CU_ASSERT_FATAL(old_count && old_gid);
  memcpy(old_count, p->nbr_count, p->n * sizeof(int32_t));
  memcpy(old_gid, p->nbr_gid, p->n * old_slots * sizeof(dem_gid_t));
  for (size_t i = 0; i < p->n; ++i)
    for (int k = 0; k < p->nbr_count[i]; ++k) {
      double *s = p->spring + 3 * (i * old_slots + k);
      s[0] = p->id[i];
      s[1] = p->nbr_gid[i * old_slots + k];
      s[2] = 1.0;
    }
  /* move every particle a little: some pairs leave, some come */
  uint64_t s = 99;
  for (size_t i = 0; i < p->n; ++i)
    for (int c = 0; c < 3; ++c) p->pos[3 * i + c] += 0.004 * (2.0 * dem_test_rand(&s) - 1.0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_push(e, DEM_F_ALL, 0, p->n), 0);
  CU_ASSERT_TRUE(dem_engine_needs_search(e));
  CU_ASSERT_EQUAL_FATAL(dem_engine_search(e), 0);
  CU_ASSERT_EQUAL_FATAL(dem_engine_pull(e, DEM_F_SLOTS, 0, p->n), 0);
  int kept = 0, fresh = 0, bad = 0;
  for (size_t i = 0; i < p->n; ++i)
    for (int k = 0; k < p->nbr_count[i]; ++k) {
      const size_t slot = i * (size_t)p->slots + (size_t)k;
      const double *sp = p->spring + 3 * slot;
      int listed_before = 0;
      for (int m = 0; m < old_count[i]; ++m) listed_before |= old_gid[i * old_slots + m] == p->nbr_gid[slot];
      if (listed_before) {
        kept++;
        bad += sp[0] != p->id[i] || sp[1] != p->nbr_gid[slot];
      } else {
        fresh++;
        bad += sp[0] != 0.0 || sp[1] != 0.0 || sp[2] != 0.0;
      }
    }
  double pairs = 0;
  CU_ASSERT_EQUAL(check_against_brute(p, &prm, &pairs), 0);
  printf("\n    %d springs carried, %d new partners, %d slots per particle", kept, fresh, p->slots);
  CU_ASSERT(p->slots > DEM_INITIAL_SLOTS); /* the searches widened the slots, keeping the springs */
  CU_ASSERT_EQUAL(bad, 0);
  CU_ASSERT(kept > 0 && fresh > 0);
  free(old_count);
  free(old_gid);
  dem_engine_destroy(&e);
  dem_particles_destroy(&p);
}

static void test_history_reference(void) { check_history(DEM_BACKEND_REF); }
static void test_history_opencl(void) { check_history(DEM_BACKEND_OPENCL); }

/* too many partners: an error naming the particle and its count, not a crash or truncation */
static void check_overflow(dem_backend_t backend)
{
  dem_params_t prm = dem_test_params(1e-6, 0.25);
  const double r = 0.5, h = 2 * r + prm.skin;
  const int nx = 6;
  dem_particles_t *p = dem_particles_create((size_t)nx * nx * nx);
  size_t i = 0;
  for (int z = 0; z < nx; ++z)
    for (int y = 0; y < nx; ++y)
      for (int x = 0; x < nx; ++x, ++i) {
        p->id[i] = (dem_gid_t)i;
        p->radius[i] = r;
        p->pos[3 * i] = 2.0 + x * 0.5 * h; /* 18 partners within 1.25 m for inner particles */
        p->pos[3 * i + 1] = 2.0 + y * 0.5 * h;
        p->pos[3 * i + 2] = 2.0 + z * 0.5 * h;
      }
  for (int d = 0; d < 3; ++d) prm.box_hi[d] = 10.0;
  p->n = i;
  dem_engine_t *e = open_engine(backend, &prm, p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(dem_engine_search(e), -1);
  const char *msg = dem_engine_error(e);
  printf("\n    %s", msg);
  int gid = -1, count = -1;
  const char *at = strstr(msg, "particle ");
  CU_ASSERT_PTR_NOT_NULL_FATAL(at);
  CU_ASSERT_EQUAL(sscanf(at, "particle %d has %d partners", &gid, &count), 2);
  CU_ASSERT(gid >= 0 && gid < (int)p->n);
  if (gid >= 0 && gid < (int)p->n) {
    dem_gid_t want[DEM_MAX_NEIGHBORS];
    CU_ASSERT_EQUAL(count, dem_ref_brute_neighbors(p, &prm, (size_t)gid, want, DEM_MAX_NEIGHBORS));
  }
  CU_ASSERT(count > DEM_MAX_NEIGHBORS);
  dem_engine_destroy(&e);
  dem_particles_destroy(&p);
}

/* a blown-up run (NaN position) is reported, not binned into undefined cells */
static void check_blown_up(dem_backend_t backend)
{
  dem_params_t prm = dem_test_params(1e-6, 0.002);
  dem_particles_t *p = random_config(&prm, 500, 50, 0.3, 0.01, 4242);
  p->pos[3 * 17 + 1] = 0.0 / 0.0;
  dem_engine_t *e = open_engine(backend, &prm, p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(e);
  CU_ASSERT_EQUAL(dem_engine_search(e), -1);
  char want[64];
  snprintf(want, sizeof(want), "particle %d (owned)", (int)p->id[17]);
  CU_ASSERT_PTR_NOT_NULL(strstr(dem_engine_error(e), want));
  printf("\n    %s", dem_engine_error(e));
  dem_engine_destroy(&e);
  dem_particles_destroy(&p);
}

static void test_blown_up_reference(void) { check_blown_up(DEM_BACKEND_REF); }
static void test_blown_up_opencl(void) { check_blown_up(DEM_BACKEND_OPENCL); }

static void test_overflow_reference(void) { check_overflow(DEM_BACKEND_REF); }
static void test_overflow_opencl(void) { check_overflow(DEM_BACKEND_OPENCL); }

/* the store the search works on: page-aligned arrays (for CL_MEM_USE_HOST_PTR) that keep their
 * contents when they grow */
static void test_store(void)
{
  dem_particles_t *p = dem_particles_create(10);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  const size_t m = (size_t)p->slots;
  for (size_t i = 0; i < 10; ++i) {
    p->id[i] = (dem_gid_t)(100 + i);
    p->pos[3 * i + 2] = (double)i;
    p->nbr_count[i] = (int32_t)m;
    p->spring[3 * (i * m + m - 1) + 2] = -(double)i;
  }
  CU_ASSERT_EQUAL_FATAL(dem_particles_reserve(p, 5000), 0);
  CU_ASSERT_EQUAL(p->cap, 5000);
  int ok = 1;
  for (size_t i = 0; i < 10; ++i)
    ok &= p->id[i] == (dem_gid_t)(100 + i) && p->pos[3 * i + 2] == (double)i &&
          p->spring[3 * (i * m + m - 1) + 2] == -(double)i;
  CU_ASSERT(ok);
  CU_ASSERT(p->vel[3 * 4999] == 0.0 && p->nbr_count[4999] == 0);
  /* after the remap too: every array 128 B aligned (OpenCL's base address alignment), and no
   * two of kick-drift's six streams at the same offset within a page (they would conflict) */
  const void *streams[] = {p->pos, p->vel, p->omega, p->force, p->torque, p->radius, p->spring, p->nbr_gid};
  int aligned = 1, distinct = 1;
  for (size_t a = 0; a < sizeof streams / sizeof streams[0]; ++a) {
    aligned &= (uintptr_t)streams[a] % 128 == 0;
    for (size_t b = 0; b < a && b < 6; ++b) distinct &= (uintptr_t)streams[a] % 4096 != (uintptr_t)streams[b] % 4096;
  }
  CU_ASSERT(aligned);
  CU_ASSERT(distinct);
  dem_particles_t *q = dem_particles_create(3);
  dem_particles_copy_one(q, 2, p, 7);
  CU_ASSERT(q->id[2] == 107 && q->pos[8] == 7.0 && q->spring[3 * (2 * m + m - 1) + 2] == -7.0);
  CU_ASSERT_EQUAL(dem_particles_bytes_per_particle(p->slots),
                  sizeof(dem_gid_t) + 16 * sizeof(double) + sizeof(int32_t) +
                      m * (sizeof(int32_t) + sizeof(dem_gid_t) + 3 * sizeof(double)));
  dem_particles_destroy(&q);
  dem_particles_destroy(&p);
  CU_ASSERT_PTR_NULL(p);
}

static CU_TestInfo tests[] = {
  {"particle store: aligned, grows keeping contents", test_store},
  {"random, polydisperse, ghosts (reference)", test_random_reference},
  {"random, polydisperse, ghosts (OpenCL)", test_random_opencl},
  {"sparse: cells outnumber the buckets, the table wraps (reference)", test_sparse_reference},
  {"sparse: cells outnumber the buckets, the table wraps (OpenCL)", test_sparse_opencl},
  {"lattice on cell boundaries, at the cutoff (reference)", test_boundaries_reference},
  {"lattice on cell boundaries, at the cutoff (OpenCL)", test_boundaries_opencl},
  {"contact history carried by gid (reference)", test_history_reference},
  {"contact history carried by gid (OpenCL)", test_history_opencl},
  {"slot overflow is an error naming the particle (reference)", test_overflow_reference},
  {"slot overflow is an error naming the particle (OpenCL)", test_overflow_opencl},
  {"non-finite position is an error naming the particle (reference)", test_blown_up_reference},
  {"non-finite position is an error naming the particle (OpenCL)", test_blown_up_opencl},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"contact search", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
