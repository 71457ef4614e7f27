/* SMPI only: two ranks on containers of different speed (platforms/test-sim.xml: b-1x draws
 * 10 GB/s, c-1 4 GB/s; the DEM kernels are memory bound there). The slower container must
 * measure the larger load L_i over the first interval, RW must give it the smaller weight,
 * W_i = 2 - L_i / L_avg from equal weights, and so fewer particles after the repartition;
 * the imbalance of the next interval must be smaller. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testing.h"

#include "balance/balance.h"
#include "base/parallel.h"
#include "base/timers.h"
#include "domain/ghosts.h"
#include "dem/particles.h"
#include "run/simulation.h"
#include "run/timestep.h"
#include "scenario/scenario.h"

/* The two containers' scenario: 4,000 particles in contact, the reference backend (its time is
 * the model's, not this machine's), outputs under TMPDIR. */
static void hetero_scenario(dem_scenario_t *sc, const char *name, const char *policy, long steps, long every)
{
  char err[2048];
  dem_scenario_defaults(sc);
  snprintf(sc->name, sizeof sc->name, "%s", name);
  sc->particles = 4000;
  sc->steps = steps;
  sc->ranks = 2;
  sc->repartition_every = every;
  sc->metrics_every = every < 20 ? every : 20;
  sc->progress = 0;
  snprintf(sc->policy, sizeof sc->policy, "%s", policy);
  snprintf(sc->backend, sizeof sc->backend, "reference");
  const char *tmp = getenv("TMPDIR");
  snprintf(sc->out_dir, sizeof sc->out_dir, "%s/demsim-test-%s", tmp && *tmp ? tmp : "/tmp", name);
  CU_ASSERT_EQUAL_FATAL(dem_scenario_validate(sc, err, sizeof err), 0);
}

static void test_slower_container_gets_fewer(void)
{
  int rank = dem_parallel_rank(), size = dem_parallel_size();
  CU_ASSERT_EQUAL_FATAL(size, 2);
  char err[2048];
  static dem_scenario_t sc;
  static dem_sim_t sim;
  hetero_scenario(&sc, "parallel-hetero", "RW", 41, 20);
  int rc = dem_simulation_setup(&sim, &sc, NULL, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  long n_before = (long)sim.p->n;

  for (long s = 0; s <= sc.repartition_every && rc == 0; s++) rc = dem_timestep(&sim, err, sizeof err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(sim.repartitions, 1);
  double load[2], w[2];
  memcpy(load, dem_balance_loads(sim.balance), sizeof load);
  memcpy(w, dem_balance_weights(sim.balance), sizeof w);
  double lambda1 = dem_balance_lambda(sim.balance);
  long n_after = (long)sim.p->n;
  long counts[2] = {rank == 0 ? n_after : 0, rank == 1 ? n_after : 0};
  dem_parallel_sum_long(counts, 2);

  CU_ASSERT(load[1] > 1.5 * load[0]); /* c-1 is the slower container */
  double avg = 0.5 * (load[0] + load[1]);
  CU_ASSERT_DOUBLE_EQUAL(w[0], 2.0 - load[0] / avg, 1e-12);
  CU_ASSERT_DOUBLE_EQUAL(w[1], 2.0 - load[1] / avg, 1e-12);
  CU_ASSERT(w[1] < w[0]);
  CU_ASSERT(counts[1] < counts[0]);
  double share = (double)counts[1] / (double)(counts[0] + counts[1]);
  CU_ASSERT(fabs(share - w[1] / (w[0] + w[1])) < 0.05);
  if (rank == 1) CU_ASSERT(n_after < n_before);

  for (long s = sc.repartition_every + 1; s < sc.steps && rc == 0; s++) rc = dem_timestep(&sim, err, sizeof err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  CU_ASSERT_EQUAL(sim.repartitions, 2);
  double lambda2 = dem_balance_lambda(sim.balance);
  if (rank == 0)
    printf("\n  loads %.3g s / %.3g s per step (lambda %.1f %%) -> weights %.3f / %.3f -> particles %ld / %ld; "
           "next interval lambda %.1f %% ", load[0], load[1], lambda1, w[0], w[1], counts[0], counts[1], lambda2);
  CU_ASSERT(lambda2 < 0.5 * lambda1);
  dem_simulation_destroy(&sim);
}

/* Wait and communication apart (domain/ghosts.h): under NOW the faster container (b-1x) waits
 * at every step's search decision for the slower one (c-1): over the run its wait is the two
 * loads' difference (all but the last step's forces, which no later decision sees: within 20 %),
 * the slower one waits for nobody (under 5 % of that), and each rank's communication is what
 * the step's MPI calls took besides (positive, and the same order on both ranks: the same
 * messages). */
static void test_wait_and_comm_apart(void)
{
  int rank = dem_parallel_rank();
  char err[2048];
  static dem_scenario_t sc;
  static dem_sim_t sim;
  hetero_scenario(&sc, "parallel-hetero-wait", "NOW", 30, 1000);
  int rc = dem_simulation_setup(&sim, &sc, NULL, err, sizeof err);
  if (rc == 0) rc = dem_simulation_run(&sim, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double v[6] = {0};
  v[3 * rank] = sim.timers.total[DEM_T_COMPUTE];
  v[3 * rank + 1] = dem_ghosts_wait_time(sim.ghosts);
  v[3 * rank + 2] = dem_ghosts_comm_time(sim.ghosts);
  dem_parallel_sum_double(v, 6);
  double diff = v[3] - v[0];
  CU_ASSERT_FATAL(diff > 0.3 * v[3]); /* c-1 is the slower container */
  CU_ASSERT(fabs(v[1] - diff) < 0.2 * diff);
  CU_ASSERT(v[4] < 0.05 * v[1]);
  CU_ASSERT(v[2] > 0.0 && v[5] > 0.0);
  CU_ASSERT(v[2] < 3.0 * v[5] && v[5] < 3.0 * v[2]);
  if (rank == 0)
    printf("\n  loads %.3g / %.3g s, waits %.3g / %.3g s, comm %.3g / %.3g s ", v[0], v[3], v[1], v[4], v[2], v[5]);
  dem_simulation_destroy(&sim);
}

/* The ghost registration before a search (dem_ghosts_refresh) is host work on every rank between
 * meetings: the slower container (c-1) does its passes more slowly, and the faster one waits for
 * it in the registration's MPI calls. Its wait is then what those calls held it beyond what they
 * held the slower one, which waits for nobody (the same messages take the same time both ways):
 * within 20 % of its wait, and the slower one's under 5 % of it. Worked out from each rank's own
 * work instead (the split's rule), so this compares two measures of the same wait. */
static void test_registration_wait(void)
{
  int rank = dem_parallel_rank();
  char err[2048];
  static dem_scenario_t sc;
  static dem_sim_t sim;
  hetero_scenario(&sc, "parallel-hetero-registration", "NOW", 10, 1000);
  int rc = dem_simulation_setup(&sim, &sc, NULL, err, sizeof err);
  if (rc == 0) rc = dem_ghosts_refresh(sim.ghosts, &sim, err, sizeof err);
  if (rc) fprintf(stderr, "rank %d: %s\n", rank, err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  double v[4] = {0};
  dem_ghosts_registration_times(sim.ghosts, &v[2 * rank], &v[2 * rank + 1]);
  dem_parallel_sum_double(v, 4);
  double held_fast = v[0], wait_fast = v[1], held_slow = v[2], wait_slow = v[3];
  if (rank == 0)
    printf("\n  registration: held %.3g / %.3g s, waits %.3g / %.3g s ", held_fast, held_slow, wait_fast, wait_slow);
  CU_ASSERT_FATAL(wait_fast > 0.0);
  CU_ASSERT(wait_fast <= held_fast);
  CU_ASSERT(fabs(wait_fast - (held_fast - held_slow)) < 0.2 * wait_fast);
  CU_ASSERT(wait_slow < 0.05 * wait_fast);
  dem_simulation_destroy(&sim);
}

static CU_TestInfo tests[] = {
  {"a slower container gets a larger load and, under RW, fewer particles", test_slower_container_gets_fewer},
  {"the faster container's wait is the loads' difference; communication apart", test_wait_and_comm_apart},
  {"in the ghost registration the faster container waits for the slower one's passes", test_registration_wait},
  CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
  {"parallel-hetero", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};

DEM_TEST_MAIN(suites)
