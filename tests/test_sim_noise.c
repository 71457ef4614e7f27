/* The noise model on a host (sim/noise_sg.cpp), one rank on c-1 (one core of 1e12 flop/s):
 * a computation takes W / speed without noise; with noise.cpu_cv > 0 it takes the time at
 * which the integral of speed x f(t) reaches W, f being the factors of the host's stream for the
 * seed (sim/noise.h), step k over [k dt, (k + 1) dt), repeating every horizon. The simulated time
 * matches that closed form for the seed given and not for another seed, and differs from the
 * noiseless W / speed. With noise.cpu_memory, memory traffic of T bytes started in step k takes
 * T / (core_bw f[k]) (the factor when it starts; without noise T / core_bw). The noise is applied
 * at simulated time 0, as the launcher does (sim_noise_apply: its profiles' dates count from 0;
 * set later, the host's profile stalled the simulation). */
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

/* T bytes of streaming memory traffic alone */
static double charge_bytes(const sim_host_t *h, double bytes)
{
  double t0 = simgrid_get_clock();
  CU_ASSERT_EQUAL(sim_membus_run(h, 0.0, 1, bytes, h->core_bw, 1), 0);
  return simgrid_get_clock() - t0;
}

static void test_noisy_host(void)
{
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(dem_clock_init(err, sizeof err), 0);
  sim_host_t h = sim_test_self();
  const double w = 1.5e12; /* 1.5 s: past the 1 s horizon, so the profile's repetition counts */
  const double plain = w / SPEED, bytes = 0.1 * DT * h.core_bw; /* a tenth of a step, nominal */
  CU_ASSERT_EQUAL_FATAL(simgrid_get_clock(), 0.0);

  dem_noise_t n = {.enabled = 1, .seed = 5, .cpu_cv = 0.3, .cpu_tau = 0.05, .cpu_memory = 1, .dt = DT,
                   .horizon = STEPS * DT};
  CU_ASSERT_EQUAL_FATAL(dem_clock_set_noise(&n, err, sizeof err), 0);
  double f5[STEPS], f6[STEPS];
  sim_noise_factors(5, "cpu:c-1", n.cpu_cv, DT, n.cpu_tau, f5, STEPS);
  sim_noise_factors(6, "cpu:c-1", n.cpu_cv, DT, n.cpu_tau, f6, STEPS);
  /* from time 0, as the ranks' first work */
  const double t0 = 0.0;
  double noisy = charge(&h, w);
  SIM_ASSERT_CLOSE(noisy, predicted_end(f5, t0, w) - t0, 1e-9);
  CU_ASSERT(fabs(noisy - plain) > 1e-3 * plain);
  CU_ASSERT(fabs(noisy - (predicted_end(f6, t0, w) - t0)) > 1e-3 * plain);
  /* and from a time inside a step */
  double t1 = simgrid_get_clock() + 0.3 * DT;
  sg_actor_sleep_until(t1);
  SIM_ASSERT_CLOSE(charge(&h, 0.2e12), predicted_end(f5, t1, 0.2e12) - t1, 1e-9);
  /* the memory streams at the factor of the step they start in (ending within it: f > 0.2 here) */
  double t2 = (floor(simgrid_get_clock() / DT) + 1.05) * DT;
  sg_actor_sleep_until(t2);
  long k = (long)floor(t2 / DT + 1e-9) % STEPS;
  CU_ASSERT_FATAL(f5[k] > 0.2);
  SIM_ASSERT_CLOSE(charge_bytes(&h, bytes), bytes / (h.core_bw * f5[k]), 1e-9);
  CU_ASSERT(fabs(f5[k] - 1.0) > 1e-3);
}

static CU_TestInfo tests[] = {
  {"a computation and its memory streams on a noisy host take the time of its seed's profile", test_noisy_host},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_noise", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
