/* The particle store's reordering (dem_particles_permute) and the process-wide slots
 * (share.h) that the OpenCL layer and the parameters use to set up once per process. */
#include <stdlib.h>
#include <string.h>

#include "particles.h"
#include "share.h"
#include "testing.h"

/* fills every field of particle i with values derived from (i, field) */
static void fill(dem_particles_t *p, size_t n)
{
  for (size_t i = 0; i < n; ++i) {
    p->id[i] = (dem_gid_t)(1000 + i);
    p->radius[i] = 0.5 + (double)i;
    p->nbr_count[i] = (int32_t)(i % DEM_MAX_NEIGHBORS);
    for (int c = 0; c < 3; ++c) {
      p->pos[3 * i + c] = 10.0 * (double)i + c;
      p->vel[3 * i + c] = 20.0 * (double)i + c;
      p->omega[3 * i + c] = 30.0 * (double)i + c;
      p->force[3 * i + c] = 40.0 * (double)i + c;
      p->torque[3 * i + c] = 50.0 * (double)i + c;
    }
    for (int k = 0; k < DEM_MAX_NEIGHBORS; ++k) {
      p->nbr_index[i * DEM_MAX_NEIGHBORS + k] = (int32_t)(7 * i + (size_t)k);
      p->nbr_gid[i * DEM_MAX_NEIGHBORS + k] = (dem_gid_t)(9 * i + (size_t)k);
      for (int c = 0; c < 3; ++c) p->spring[3 * (i * DEM_MAX_NEIGHBORS + k) + c] = 0.25 * (double)i + k + 0.125 * c;
    }
  }
}

/* every field of particle i of a equals particle j of b, bit for bit */
static int same(const dem_particles_t *a, size_t i, const dem_particles_t *b, size_t j)
{
  const size_t m = DEM_MAX_NEIGHBORS;
  return a->id[i] == b->id[j] && a->radius[i] == b->radius[j] && a->nbr_count[i] == b->nbr_count[j] &&
         !memcmp(a->pos + 3 * i, b->pos + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->vel + 3 * i, b->vel + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->omega + 3 * i, b->omega + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->force + 3 * i, b->force + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->torque + 3 * i, b->torque + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->nbr_index + m * i, b->nbr_index + m * j, m * sizeof(int32_t)) &&
         !memcmp(a->nbr_gid + m * i, b->nbr_gid + m * j, m * sizeof(dem_gid_t)) &&
         !memcmp(a->spring + 3 * m * i, b->spring + 3 * m * j, 3 * m * sizeof(double));
}

static void test_permute(void)
{
  const size_t n = 37, extra = 5; /* particles past n (ghosts) stay where they are */
  dem_particles_t *p = dem_particles_create(n + extra), *orig = dem_particles_create(n + extra);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
  fill(p, n + extra);
  fill(orig, n + extra);
  size_t perm[37];
  for (size_t k = 0; k < n; ++k) perm[k] = (k * 11 + 3) % n; /* 11 is prime to 37: a permutation */
  CU_ASSERT_EQUAL_FATAL(dem_particles_permute(p, perm, n), 0);
  int ok = 1;
  for (size_t k = 0; k < n; ++k) ok &= same(p, k, orig, perm[k]);
  for (size_t k = n; k < n + extra; ++k) ok &= same(p, k, orig, k);
  CU_ASSERT(ok);
  CU_ASSERT_EQUAL(dem_particles_permute(p, perm, 0), 0);
  dem_particles_destroy(&p);
  dem_particles_destroy(&orig);
}

static void test_share(void)
{
  dem_share_lock();
  void **a = dem_share_slot("test.slot");
  CU_ASSERT_PTR_NOT_NULL_FATAL(a);
  CU_ASSERT_PTR_NULL(*a);
  static int value;
  *a = &value;
  CU_ASSERT_PTR_EQUAL(dem_share_slot("test.slot"), a);
  CU_ASSERT_PTR_EQUAL(*dem_share_slot("test.slot"), &value);
  CU_ASSERT_PTR_NOT_EQUAL(dem_share_slot("test.other"), a);
  CU_ASSERT_PTR_NULL(dem_share_slot("a name longer than the thirty-one characters allowed"));
  *a = NULL;
  dem_share_unlock();
}

static CU_TestInfo tests[] = {
  {"permute reorders every field, leaves the rest", test_permute},
  {"process-wide slots", test_share},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"particle store and shared slots", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
