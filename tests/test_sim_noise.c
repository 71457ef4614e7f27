/* The noise model on a host (sim/noise_sg.cpp), one rank on c-1 (one core of 1e12 flop/s):
 * a computation takes W / speed without noise; with noise.cpu_cv > 0 it takes the time at
 * which the integral of speed x f(t) reaches W, f being the factors of the host's stream for the
 * seed (sim/noise.h), step k over [k dt, (k + 1) dt), repeating every horizon. The simulated time
 * matches that closed form for the seed given and not for another seed, and differs from the
 * noiseless time. A SimGrid host takes one speed profile per run, so the noiseless time is
 * taken first. */
#include "membus.h"
#include "noise.h"
#include "sim_testing.h"
#include "testing.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>

#include <stdlib.h>

enum { STEPS = 100 };
static const double DT = 0.01, SPEED = 1e12;

/* the end of W flops started at t0 on a host whose speed is SPEED x f[k mod STEPS] */
static double predicted_end(const double *f, double t0, double w)
{
  double t = t0;
  for (;;) {
    long k = (long)floor(t / DT + 1e-9);
    double step_end = (double)(k + 1) * DT, rate = SPEED * f[k % STEPS], can = rate * (step_end - t);
    if (can >= w) return t + w / rate;
    w -= can;
    t = step_end;
  }
}

static double charge(const sim_host_t *h, double flops)
{
  double t0 = simgrid_get_clock();
  CU_ASSERT_EQUAL(sim_membus_run(h, flops, 1, 0.0, h->core_bw, 0), 0);
  return simgrid_get_clock() - t0;
}

static void test_noisy_host(void)
{
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(dem_clock_init(err, sizeof err), 0);
  sim_host_t h = sim_test_self();
  const double w = 1.5e12; /* 1.5 s: past the 1 s horizon, so the profile's repetition counts */
  double plain = charge(&h, w);
  SIM_ASSERT_CLOSE(plain, w / SPEED, 1e-9);

  dem_noise_t n = {.enabled = 1, .seed = 5, .cpu_cv = 0.3, .cpu_tau = 0.05, .dt = DT, .horizon = STEPS * DT};
  CU_ASSERT_EQUAL_FATAL(dem_clock_set_noise(&n, err, sizeof err), 0);
  double f5[STEPS], f6[STEPS];
  sim_noise_factors(5, "cpu:c-1", n.cpu_cv, DT, n.cpu_tau, f5, STEPS);
  sim_noise_factors(6, "cpu:c-1", n.cpu_cv, DT, n.cpu_tau, f6, STEPS);
  /* start on a step's boundary, as the ranks' first work does at time 0 */
  double t0 = ceil(simgrid_get_clock() / DT) * DT;
  sg_actor_sleep_until(t0);
  double noisy = charge(&h, w);
  SIM_ASSERT_CLOSE(noisy, predicted_end(f5, t0, w) - t0, 1e-9);
  CU_ASSERT(fabs(noisy - plain) > 1e-3 * plain);
  CU_ASSERT(fabs(noisy - (predicted_end(f6, t0, w) - t0)) > 1e-3 * plain);
  /* and from a time inside a step */
  double t1 = simgrid_get_clock() + 0.3 * DT;
  sg_actor_sleep_until(t1);
  SIM_ASSERT_CLOSE(charge(&h, 0.2e12), predicted_end(f5, t1, 0.2e12) - t1, 1e-9);
}

static CU_TestInfo tests[] = {
  {"a computation on a noisy host takes the time of its seed's profile", test_noisy_host},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_noise", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
