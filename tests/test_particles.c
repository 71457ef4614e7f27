/* The particle store's reordering (dem_particles_permute, dem_particles_move_rows), slot stride (dem_particles_widen_slots)
 * and lazily resident memory, and the process-wide slots (share.h) that the OpenCL layer and
 * the parameters use to set up once per process. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/share.h"
#include "dem/particles.h"
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

/* moving rows within the store, down (the migration's compaction) and up, over ranges that
 * overlap: every moved particle's fields and used slots arrive bit for bit, the rows outside the
 * destination keep theirs, and a slot past a particle's count is not written */
static void test_move_rows(void)
{
  const size_t n = 50;
  dem_particles_t *p = dem_particles_create(n), *orig = dem_particles_create(n);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
  fill(p, n);
  fill(orig, n);
  const size_t m = (size_t)p->slots, unused_at = 10 * m + m - 1; /* particle 10's last slot */
  p->nbr_gid[unused_at] = 4242; /* a mark where particle 10 (count 10 % (m + 1)) may not write */
  dem_particles_move_rows(p, 7, 13, 20);
  int ok = 1;
  for (size_t k = 0; k < 20; ++k) ok &= same_slots(p, 7 + k, orig, 13 + k, (size_t)orig->nbr_count[13 + k]);
  for (size_t k = 27; k < n; ++k) ok &= same(p, k, orig, k);
  for (size_t k = 0; k < 7; ++k) ok &= same(p, k, orig, k);
  CU_ASSERT(ok);
  if (orig->nbr_count[16] < (int32_t)m) CU_ASSERT_EQUAL(p->nbr_gid[unused_at], 4242); /* 16 moved to 10 */

  fill(p, n);
  dem_particles_move_rows(p, 21, 15, 25); /* up: [15, 40) to [21, 46) */
  ok = 1;
  for (size_t k = 0; k < 25; ++k) ok &= same_slots(p, 21 + k, orig, 15 + k, (size_t)orig->nbr_count[15 + k]);
  for (size_t k = 0; k < 15; ++k) ok &= same(p, k, orig, k);
  CU_ASSERT(ok);
  dem_particles_move_rows(p, 3, 3, 9); /* nothing to do: the store as it was */
  dem_particles_move_rows(p, 3, 8, 0);
  ok = 1;
  for (size_t k = 0; k < 15; ++k) ok &= same(p, k, orig, k);
  CU_ASSERT(ok);
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

/* bytes of whole pages holding `rows` rows of `row` bytes */
static double pages_of(size_t rows, size_t row)
{
  return (double)((rows * row + 4095) / 4096 * 4096);
}

/* writes the first `rows` rows of each per-particle array with nbr_count[i] = count (every
 * `every`-th particle, 0 for the rest), and, when `slots`, the used slots of the owned rows */
static void write_rows(dem_particles_t *p, size_t rows, int slots, int count, size_t every)
{
  const size_t m = (size_t)p->slots;
  memset(p->id, 1, rows * sizeof *p->id);
  memset(p->radius, 1, rows * sizeof *p->radius);
  for (size_t i = 0; i < rows; ++i) p->nbr_count[i] = i % every == 0 ? count : 0;
  double *vec[] = {p->pos, p->vel, p->omega, p->force, p->torque};
  for (int v = 0; v < 5; v++) memset(vec[v], 1, rows * 3 * sizeof(double));
  if (!slots) return;
  for (size_t i = 0; i < p->n; ++i)
    for (size_t k = 0; k < (size_t)p->nbr_count[i]; ++k) {
      p->nbr_index[i * m + k] = 1;
      p->nbr_gid[i * m + k] = 1;
      for (int c = 0; c < 3; ++c) p->spring[3 * (i * m + k) + c] = 1.0;
    }
}

/* first touch (the clock's charge of new memory): the pages of the rows in use beyond the most
 * ever in use, per array, in closed form, and what the OS made resident for them */
static void test_fresh_bytes(void)
{
  const size_t n = 60000, ghosts = 5000, m = 6;
  const size_t per_particle[] = {4, 24, 24, 24, 24, 24, 8, 4}, slotted[] = {4, 4, 24}; /* B per row */
  dem_particles_t *p = dem_particles_create(100000);
  CU_ASSERT_PTR_NOT_NULL_FATAL(p);
  CU_ASSERT_EQUAL_FATAL((size_t)p->slots, m);
  p->n = n;
  double rss0 = rss_bytes();
  write_rows(p, n, 0, 0, 1);
  double expect = 0.0;
  for (int f = 0; f < 8; f++) expect += pages_of(n, per_particle[f]);
  double fresh = (double)dem_particles_fresh_bytes(p, 0);
  CU_ASSERT_DOUBLE_EQUAL(fresh, expect, 0.5);
  CU_ASSERT(fabs(rss_bytes() - rss0 - fresh) < 0.02 * fresh); /* the OS agrees */
  CU_ASSERT_EQUAL(dem_particles_fresh_bytes(p, 0), 0);        /* nothing new */

  /* a search that finds partners for one particle in 1000: one page of each slot array each */
  rss0 = rss_bytes();
  write_rows(p, n, 1, 1, 1000);
  fresh = (double)dem_particles_fresh_bytes(p, 1);
  CU_ASSERT_DOUBLE_EQUAL(fresh, 3.0 * (double)(n / 1000) * 4096.0, 0.5);
  CU_ASSERT(fabs(rss_bytes() - rss0 - fresh) < 0.05 * fresh);
  /* then for every particle, every slot: the slot arrays' rows in whole pages */
  write_rows(p, n, 1, (int)m, 1);
  expect = 0.0;
  for (int f = 0; f < 3; f++) expect += pages_of(n, slotted[f] * m);
  CU_ASSERT_DOUBLE_EQUAL((double)dem_particles_fresh_bytes(p, 1), expect - 3.0 * (double)(n / 1000) * 4096.0, 0.5);

  /* ghost rows: only the per-particle arrays grow */
  p->n_ghost = ghosts;
  expect = 0.0;
  for (int f = 0; f < 8; f++) expect += pages_of(n + ghosts, per_particle[f]) - pages_of(n, per_particle[f]);
  CU_ASSERT_DOUBLE_EQUAL((double)dem_particles_fresh_bytes(p, 1), expect, 0.5);

  /* fewer particles, then as many again: nothing new; a wider stride moves every row */
  p->n = n / 2;
  CU_ASSERT_EQUAL(dem_particles_fresh_bytes(p, 1), 0);
  p->n = n;
  CU_ASSERT_EQUAL(dem_particles_fresh_bytes(p, 1), 0);
  rss0 = rss_bytes();
  CU_ASSERT_EQUAL_FATAL(dem_particles_widen_slots(p, 8), 0);
  expect = 0.0;
  for (int f = 0; f < 3; f++) expect += pages_of(n, slotted[f] * 8) - pages_of(n, slotted[f] * m);
  fresh = (double)dem_particles_fresh_bytes(p, 1);
  CU_ASSERT_DOUBLE_EQUAL(fresh, expect, 0.5);
  CU_ASSERT(fabs(rss_bytes() - rss0 - fresh) < 0.05 * fresh);
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
  {"moving rows keeps fields and used slots, both ways", test_move_rows},
  {"slot stride widens in place", test_widen_slots},
  {"reserved capacity is not resident", test_lazy_memory},
  {"first touch: new rows in whole pages, as the OS maps them", test_fresh_bytes},
  {"process-wide slots", test_share},
  CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
  {"particle store and shared slots", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
