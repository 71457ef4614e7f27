/* The noise model's generator (sim/noise.c) against its closed forms, over long series:
 *  - the standardised OU series z: mean 0, variance 1, lag-k autocorrelation exp(-k dt/tau);
 *  - the speed factor f = exp(s z - s^2/2), s^2 = ln(1 + cv^2): mean 1, coefficient of
 *    variation cv, lag-k autocorrelation (exp(s^2 rho^k) - 1) / cv^2, f > 0;
 *  - streams: the same (seed, name) gives the same series, another seed or name another one.
 * Tolerances: N = 400000 samples at dt/tau = 0.1, whose effective sample size is about
 * N (1 - rho) / (1 + rho) = 19000; a mean's standard error is then 1/sqrt(19000) = 0.007 of the
 * standard deviation, and the tolerances are about 4 to 5 standard errors. */
#include "../sim/noise.h"

#include <CUnit/Basic.h>
#include <math.h>
#include <stdlib.h>

enum { N = 400000 };
static const double DT = 0.01, TAU = 0.1;

static double mean(const double *x, size_t n)
{
  double s = 0.0;
  for (size_t i = 0; i < n; i++) s += x[i];
  return s / (double)n;
}

static double autocorr(const double *x, size_t n, size_t k)
{
  double m = mean(x, n), c0 = 0.0, ck = 0.0;
  for (size_t i = 0; i < n; i++) c0 += (x[i] - m) * (x[i] - m);
  for (size_t i = 0; i + k < n; i++) ck += (x[i] - m) * (x[i + k] - m);
  return (ck / (double)(n - k)) / (c0 / (double)n);
}

static void test_ou_statistics(void)
{
  double *z = malloc(N * sizeof *z);
  CU_ASSERT_FATAL(z != NULL);
  sim_rng_t r;
  sim_rng_seed(&r, 7, "cpu:test");
  sim_noise_ou(&r, DT, TAU, z, N);
  CU_ASSERT(fabs(mean(z, N)) < 0.035);
  double m = mean(z, N), v = 0.0;
  for (size_t i = 0; i < N; i++) v += (z[i] - m) * (z[i] - m);
  CU_ASSERT(fabs(v / N - 1.0) < 0.05);
  for (size_t k = 1; k <= 20; k *= 2)
    CU_ASSERT(fabs(autocorr(z, N, k) - exp(-(double)k * DT / TAU)) < 0.03);
  free(z);
}

static void test_factor_statistics(void)
{
  double *f = malloc(N * sizeof *f);
  CU_ASSERT_FATAL(f != NULL);
  const double cv = 0.2;
  sim_noise_factors(11, "mem:n1-membus", cv, DT, TAU, f, N);
  double m = mean(f, N), v = 0.0, lo = f[0];
  for (size_t i = 0; i < N; i++) {
    v += (f[i] - m) * (f[i] - m);
    lo = f[i] < lo ? f[i] : lo;
  }
  CU_ASSERT(lo > 0.0);
  CU_ASSERT(fabs(m - 1.0) < 0.035 * cv);
  CU_ASSERT(fabs(sqrt(v / N) / m - cv) < 0.05 * cv);
  for (int k = 1; k <= 20; k *= 2)
    CU_ASSERT(fabs(autocorr(f, N, (size_t)k) - sim_noise_factor_autocorr(cv, DT, TAU, k)) < 0.03);
  /* the closed form: 1 at lag 0, close to rho^k for a small cv */
  CU_ASSERT_DOUBLE_EQUAL(sim_noise_factor_autocorr(cv, DT, TAU, 0), 1.0, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(sim_noise_factor_autocorr(0.01, DT, TAU, 5), exp(-0.5), 1e-3);
  free(f);
}

static void test_streams(void)
{
  double a[64], b[64], c[64], d[64], one[64];
  sim_noise_factors(1, "cpu:n1-cn6700-4", 0.1, 0.1, 1.0, a, 64);
  sim_noise_factors(1, "cpu:n1-cn6700-4", 0.1, 0.1, 1.0, b, 64);
  sim_noise_factors(2, "cpu:n1-cn6700-4", 0.1, 0.1, 1.0, c, 64);
  sim_noise_factors(1, "cpu:n2-cn6700-4", 0.1, 0.1, 1.0, d, 64);
  sim_noise_factors(1, "cpu:n1-cn6700-4", 0.0, 0.1, 1.0, one, 64);
  int same = 1, other_seed = 0, other_name = 0, ones = 1;
  for (int i = 0; i < 64; i++) {
    same &= a[i] == b[i];
    other_seed |= a[i] != c[i];
    other_name |= a[i] != d[i];
    ones &= one[i] == 1.0;
  }
  CU_ASSERT(same);
  CU_ASSERT(other_seed);
  CU_ASSERT(other_name);
  CU_ASSERT(ones);
  /* FNV-1a's published value for "a" */
  CU_ASSERT(sim_noise_hash("a") == 0xaf63dc4c8601ec8cULL);
}

int main(void)
{
  if (CU_initialize_registry() != CUE_SUCCESS) return 1;
  CU_pSuite s = CU_add_suite("noise generator", NULL, NULL);
  CU_add_test(s, "OU series: mean 0, variance 1, autocorrelation exp(-k dt/tau)", test_ou_statistics);
  CU_add_test(s, "speed factor: positive, mean 1, cv, lognormal autocorrelation", test_factor_statistics);
  CU_add_test(s, "streams: one per seed and name, deterministic", test_streams);
  CU_basic_set_mode(CU_BRM_VERBOSE);
  CU_basic_run_tests();
  unsigned failed = CU_get_number_of_failures();
  CU_cleanup_registry();
  return failed ? 1 : 0;
}
