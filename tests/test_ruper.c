/* RUPER (policy_ruper.c, monitor.c): the arithmetic against hand-computed values, then a run
 * of the study's case 1 at a tiny scale. Under smpirun the ranks run on case 1's containers
 * (platforms/openstack.xml: CN-6700-1 .. -4, about 1.8 x apart in load): the speed reports
 * reach rank 0, whose first checkpoint repartitions in proportion to the speeds, and that one
 * repartition balances the run (no other follows). Under mpirun the ranks share one machine:
 * the run must still agree on every decision and end cleanly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

#include "balance/balance.h"
#include "base/clock.h"
#include "base/timers.h"
#include "policy/policy.h"
#include "run/simulation.h"
#include "run/timestep.h"
#include "scenario/scenario.h"

static void test_targets(void)
{
  /* speeds {1, 3}: {2 x 1/4, 2 x 3/4} */
  double s[2] = {1, 3}, w[2];
  CU_ASSERT_EQUAL(dem_ruper_targets(s, 2, w), 1);
  CU_ASSERT_DOUBLE_EQUAL(w[0], 0.5, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w[1], 1.5, 1e-12);
  /* {2, 2, 4}: 3 x {1/4, 1/4, 1/2} */
  double s3[3] = {2, 2, 4}, w3[3];
  CU_ASSERT_EQUAL(dem_ruper_targets(s3, 3, w3), 1);
  CU_ASSERT_DOUBLE_EQUAL(w3[0], 0.75, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w3[2], 1.5, 1e-12);
  /* a rank without a speed: no targets, w untouched */
  double z[2] = {1, 0}, wz[2] = {7, 7};
  CU_ASSERT_EQUAL(dem_ruper_targets(z, 2, wz), 0);
  CU_ASSERT_EQUAL(wz[0], 7);
}

static void test_remaining(void)
{
  /* done {100, 200} at t = {1, 2}, rates {10, 20}, now 3: predicted done 120 + 220; of 1000,
   * 660 left at 30 per second: 22 s */
  double done[2] = {100, 200}, rate[2] = {10, 20}, t[2] = {1, 2};
  CU_ASSERT_DOUBLE_EQUAL(dem_ruper_remaining(done, rate, t, 2, 3.0, 1000.0), 22.0, 1e-12);
  /* the prediction beyond the total: nothing left */
  CU_ASSERT_DOUBLE_EQUAL(dem_ruper_remaining(done, rate, t, 2, 3.0, 300.0), 0.0, 1e-15);
  /* `now` before a report adds nothing for it: 700 / 30 */
  CU_ASSERT_DOUBLE_EQUAL(dem_ruper_remaining(done, rate, t, 2, 0.5, 1000.0), 700.0 / 30.0, 1e-12);
}

static void test_rebalance_rule(void)
{
  CU_ASSERT_EQUAL(dem_ruper_rebalance(10, 5, 3, 2), 1);
  CU_ASSERT_EQUAL(dem_ruper_rebalance(4, 5, 3, 2), 0);  /* balanced enough */
  CU_ASSERT_EQUAL(dem_ruper_rebalance(5, 5, 3, 2), 0);  /* the threshold itself is not above */
  CU_ASSERT_EQUAL(dem_ruper_rebalance(10, 5, 1, 2), 0); /* too little time left to pay back */
  CU_ASSERT_EQUAL(dem_ruper_rebalance(10, 5, 2, 2), 1);
}

static void test_interval(void)
{
  /* change 1.25, bounds [2, 32] */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(8, 1.5, 1.0, 1.25, 2, 32), 4);  /* faster by 1.5 */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(8, 0.7, 1.0, 1.25, 2, 32), 4);  /* slower: 1/0.7 = 1.43 */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(8, 1.1, 1.0, 1.25, 2, 32), 16); /* steady */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(8, 0.9, 1.0, 1.25, 2, 32), 16);
  CU_ASSERT_EQUAL(dem_ruper_next_interval(3, 2.0, 1.0, 1.25, 2, 32), 2);  /* 1, clamped */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(32, 1.0, 1.0, 1.25, 2, 32), 32); /* 64, clamped */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(8, 1.0, 0.0, 1.25, 2, 32), 8);  /* first report */
  CU_ASSERT_EQUAL(dem_ruper_next_interval(50, 1.0, 0.0, 1.25, 2, 32), 32);
}

/* Imbalance (%) of every rank's COMPUTE time since `since` (its value on this rank). */
static double measured_imbalance(dem_sim_t *sim, double since)
{
  double mine = sim->timers.total[DEM_T_COMPUTE] - since, *all = malloc((size_t)sim->ranks * sizeof *all);
  MPI_Allgather(&mine, 1, MPI_DOUBLE, all, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  double lambda = dem_balance_imbalance(all, sim->ranks);
  free(all);
  return lambda;
}

static void test_case1_one_repartition(void)
{
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  CU_ASSERT_EQUAL_FATAL(size, 4);
  char err[2048], path[1024];
  static dem_scenario_t sc;
  static dem_sim_t sim;
  const char *src = getenv("DEMSIM_SOURCE_DIR"), *tmp = getenv("TMPDIR");
  snprintf(path, sizeof path, "%s/scenarios/case1.cfg", src ? src : ".");
  dem_scenario_defaults(&sc);
  CU_ASSERT_EQUAL_FATAL(dem_scenario_read(&sc, path, err, sizeof err), 0);
  sc.particles = 4000;
  sc.steps = 60;
  sc.repartition_every = 10;
  sc.metrics_every = 10;
  sc.progress = 0;
  sc.noise.enabled = 0; /* the deterministic model: case1.cfg's cloud varies, this checks RUPER's arithmetic */
  snprintf(sc.policy, sizeof sc.policy, "RUPER");
  snprintf(sc.backend, sizeof sc.backend, "reference");
  snprintf(sc.out_dir, sizeof sc.out_dir, "%s/demsim-test-ruper", tmp && *tmp ? tmp : "/tmp");
  CU_ASSERT_EQUAL_FATAL(dem_scenario_validate(&sc, err, sizeof err), 0);
  int rc = dem_simulation_setup(&sim, &sc, NULL, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", sim.rank, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);

  double c0 = sim.timers.total[DEM_T_COMPUTE];
  while (rc == 0 && sim.step < sc.repartition_every) rc = dem_timestep(&sim, err, sizeof err);
  double before = measured_imbalance(&sim, c0);
  /* the first checkpoint (step 10) repartitions from the reports of steps 5 and 10 */
  if (rc == 0) rc = dem_timestep(&sim, err, sizeof err);
  double c1 = sim.timers.total[DEM_T_COMPUTE];
  while (rc == 0 && sim.step < sc.steps) rc = dem_timestep(&sim, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", sim.rank, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double after = measured_imbalance(&sim, c1);
  dem_balance_finish(sim.balance);

  /* every rank holds rank 0's weights */
  double w[4], wmin[4], wmax[4];
  memcpy(w, dem_balance_weights(sim.balance), sizeof w);
  MPI_Allreduce(w, wmin, 4, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(w, wmax, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int i = 0; i < 4; i++) CU_ASSERT_EQUAL(wmin[i], wmax[i]);
  /* rank 0 heard from every rank: at steps 5 and 10, then from step 11 at 5, 10, 20 steps */
  long reports = dem_balance_reports(sim.balance);
  if (sim.rank == 0) CU_ASSERT(reports >= 4 * 4);
  CU_ASSERT(sim.repartitions >= 0 && sim.repartitions <= 5);
  if (dem_clock_modelled()) {
    /* case 1's containers: one repartition balances, and none follows */
    CU_ASSERT(before > 40.0);
    CU_ASSERT(after < 10.0);
    CU_ASSERT_EQUAL(sim.repartitions, 1);
    CU_ASSERT(w[0] < w[3]); /* CN-6700-1 is the slowest, CN-6700-4 the fastest */
  }
  if (sim.rank == 0)
    printf("\n  imbalance %.1f %% before, %.1f %% after; %d repartition(s), %ld reports, weights %.3f %.3f %.3f "
           "%.3f ", before, after, sim.repartitions, reports, w[0], w[1], w[2], w[3]);
  dem_simulation_destroy(&sim);
}

static CU_TestInfo arithmetic[] = {
  {"targets proportional to the speeds", test_targets},
  {"remaining time from the predicted work", test_remaining},
  {"rebalance only when imbalanced and worth it", test_rebalance_rule},
  {"report interval halves on a change, doubles when steady", test_interval},
  CU_TEST_INFO_NULL,
};
static CU_TestInfo run[] = {
  {"case 1 balanced in one repartition", test_case1_one_repartition},
  CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
  {"ruper-arithmetic", NULL, NULL, NULL, NULL, arithmetic},
  {"ruper-case1", NULL, NULL, NULL, NULL, run},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
