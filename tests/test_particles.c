/* The particle store's reordering (dem_particles_permute), slot stride (dem_particles_widen_slots)
 * and lazily resident memory, and the process-wide slots (share.h) that the OpenCL layer and
 * the parameters use to set up once per process. */
#include <stdio.h>
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
    p->nbr_count[i] = (int32_t)(i % ((size_t)p->slots + 1));
    for (int c = 0; c < 3; ++c) {
      p->pos[3 * i + c] = 10.0 * (double)i + c;
      p->vel[3 * i + c] = 20.0 * (double)i + c;
      p->omega[3 * i + c] = 30.0 * (double)i + c;
      p->force[3 * i + c] = 40.0 * (double)i + c;
      p->torque[3 * i + c] = 50.0 * (double)i + c;
    }
    const size_t m = (size_t)p->slots;
    for (size_t k = 0; k < m; ++k) {
      p->nbr_index[i * m + k] = (int32_t)(7 * i + k);
      p->nbr_gid[i * m + k] = (dem_gid_t)(9 * i + k);
      for (int c = 0; c < 3; ++c) p->spring[3 * (i * m + k) + c] = 0.25 * (double)i + (double)k + 0.125 * c;
    }
  }
}

/* every field of particle i of a equals particle j of b, bit for bit; slots: the first `m` of
 * each (a and b may have different strides) */
static int same_slots(const dem_particles_t *a, size_t i, const dem_particles_t *b, size_t j, size_t m)
{
  const size_t sa = (size_t)a->slots, sb = (size_t)b->slots;
  return a->id[i] == b->id[j] && a->radius[i] == b->radius[j] && a->nbr_count[i] == b->nbr_count[j] &&
         !memcmp(a->pos + 3 * i, b->pos + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->vel + 3 * i, b->vel + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->omega + 3 * i, b->omega + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->force + 3 * i, b->force + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->torque + 3 * i, b->torque + 3 * j, 3 * sizeof(double)) &&
         !memcmp(a->nbr_index + sa * i, b->nbr_index + sb * j, m * sizeof(int32_t)) &&
         !memcmp(a->nbr_gid + sa * i, b->nbr_gid + sb * j, m * sizeof(dem_gid_t)) &&
         !memcmp(a->spring + 3 * sa * i, b->spring + 3 * sb * j, 3 * m * sizeof(double));
}

/* all slots of the stride */
static int same(const dem_particles_t *a, size_t i, const dem_particles_t *b, size_t j)
{
  return a->slots == b->slots && same_slots(a, i, b, j, (size_t)a->slots);
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

/* widening the slot stride keeps every particle's used slots (also when the store grows after);
 * beyond DEM_MAX_NEIGHBORS is refused, narrower is nothing to do; copies between strides keep
 * the used slots */
static void test_widen_slots(void)
{
  const size_t n = 41;
  dem_particles_t *p = dem_particles_create(n), *orig = dem_particles_create(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
  CU_ASSERT_EQUAL(p->slots, DEM_INITIAL_SLOTS);
  fill(p, n);
  fill(orig, n);
  p->n = orig->n = n;
  CU_ASSERT_EQUAL(dem_particles_widen_slots(p, DEM_MAX_NEIGHBORS + 1), -1);
  CU_ASSERT_EQUAL(dem_particles_widen_slots(p, p->slots - 1), 0);
  CU_ASSERT_EQUAL(p->slots, orig->slots);
  int ok = 1;
  for (size_t i = 0; i < n; ++i) ok &= same(p, i, orig, i);
  CU_ASSERT(ok);

  CU_ASSERT_EQUAL_FATAL(dem_particles_widen_slots(p, DEM_MAX_NEIGHBORS), 0);
  CU_ASSERT_EQUAL(p->slots, DEM_MAX_NEIGHBORS);
  ok = 1;
  for (size_t i = 0; i < n; ++i) ok &= same_slots(p, i, orig, i, (size_t)orig->slots);
  CU_ASSERT(ok);
  CU_ASSERT_EQUAL_FATAL(dem_particles_reserve(p, 5 * n), 0); /* grows with the wide stride */
  ok = 1;
  for (size_t i = 0; i < n; ++i) ok &= same_slots(p, i, orig, i, (size_t)orig->slots);
  CU_ASSERT(ok);

  /* copy_one from the narrow store into the wide one */
  ok = 1;
  for (size_t i = 0; i < n; ++i) {
    dem_particles_copy_one(p, n - 1 - i, orig, i);
    ok &= same_slots(p, n - 1 - i, orig, i, (size_t)orig->nbr_count[i]);
  }
  CU_ASSERT(ok);
  dem_particles_destroy(&p);
  dem_particles_destroy(&orig);
}

/* resident set size of this process, bytes (Linux /proc/self/statm) */
static double rss_bytes(void)
{
  long pages_total = 0, pages_resident = 0;
  FILE *f = fopen("/proc/self/statm", "r");
  if (!f) return -1.0;
  int got = fscanf(f, "%ld %ld", &pages_total, &pages_resident);
  fclose(f);
  return got == 2 ? (double)pages_resident * 4096.0 : -1.0;
}

/* capacity held in reserve costs no memory: a store for 2,000,000 particles (over 1 GB of
 * arrays) of which 1,000 are written stays within a few MB of resident memory, and reads as
 * zero */
static void test_lazy_memory(void)
{
  double before = rss_bytes();
  CU_ASSERT_FATAL(before > 0.0);
  dem_particles_t *p = dem_particles_create(1000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  fill(p, 1000);
  CU_ASSERT_EQUAL_FATAL(dem_particles_reserve(p, 2000000), 0);
  CU_ASSERT_EQUAL_FATAL(dem_particles_widen_slots(p, DEM_MAX_NEIGHBORS), 0);
  CU_ASSERT(p->radius[1999999] == 0.0 && p->spring[3 * (size_t)DEM_MAX_NEIGHBORS * 2000000 - 1] == 0.0);
  double grown = rss_bytes() - before;
  CU_ASSERT(grown < 8.0e6);
  if (grown >= 8.0e6) fprintf(stderr, "resident memory grew by %.0f bytes\n", grown);
  CU_ASSERT(dem_particles_bytes_per_particle(6) == 136 + 6 * 32);
  dem_particles_destroy(&p);
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
  {"slot stride widens in place", test_widen_slots},
  {"reserved capacity is not resident", test_lazy_memory},
  {"process-wide slots", test_share},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"particle store and shared slots", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
