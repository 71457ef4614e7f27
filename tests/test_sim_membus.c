/* Memory-bus contention (platforms/test-sim.xml): ranks on a-1x, a-1y, b-1x, c-1, c-2, c-4, s-4. */
#include "membus.h"
#include "sim_testing.h"
#include "testing.h"

#include <simgrid/actor.h>

#define N 5e7 /* particles: 1e10 B of integrator traffic, 1 s at 10 GB/s */

/* Alone, a 1-core container of node a saturates a-membus; with its neighbour a-1y on the same
 * bus each gets half of it and its traffic takes twice as long; with b-1x (another node)
 * nothing changes. The integrator streams: its compute and traffic overlap (sim/membus.c). */
static void test_shared_bus_halves(void)
{
  dem_work_t w = sim_test_kernel(N);
  double alone = sim_test_together(sim_test_on("a-1x"), &w);
  double both = sim_test_together(sim_test_on("a-1x") || sim_test_on("a-1y"), &w);
  double apart = sim_test_together(sim_test_on("a-1x") || sim_test_on("b-1x"), &w);
  double cpu = sim_test_compute(&w), mem = sim_test_bytes(&w) / 10e9;
  if (sim_test_on("a-1x")) {
    sim_host_t h = sim_test_self();
    SIM_ASSERT_CLOSE(alone, sim_test_streamed(cpu, sim_test_bytes(&w) / h.node_bw), 1e-9);
    SIM_ASSERT_CLOSE(both, sim_test_streamed(cpu, 2.0 * mem), 1e-4);
    SIM_ASSERT_CLOSE(apart, alone, 1e-4);
  }
  if (sim_test_on("a-1y")) SIM_ASSERT_CLOSE(both, sim_test_streamed(cpu, 2.0 * mem), 1e-4);
  if (sim_test_on("b-1x")) SIM_ASSERT_CLOSE(apart, sim_test_streamed(cpu, mem), 1e-9);
}

/* Node c: 4 GB/s per core, 10 GB/s for the node. 1, 2 and 4 cores draw 4, 8 and 10 GB/s:
 * more cores are faster until the node's bandwidth caps them (speed-ups 2 and 2.5, not 4). */
static void test_cores_until_node_caps(void)
{
  dem_work_t w = sim_test_kernel(N);
  double t[3];
  const char *hosts[3] = {"c-1", "c-2", "c-4"};
  for (int i = 0; i < 3; i++) t[i] = sim_test_together(sim_test_on(hosts[i]), &w);
  double mine = 0.0;
  for (int i = 0; i < 3; i++)
    if (sim_test_on(hosts[i])) mine = t[i];
  double all[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    double x = sim_test_on(hosts[i]) ? mine : 0.0;
    MPI_Allreduce(&x, &all[i], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  }
  double bytes = sim_test_bytes(&w);
  sim_cost_t c;
  CU_ASSERT_FATAL(sim_cost_of(&w, &c) == 0);
  SIM_ASSERT_CLOSE(all[0], sim_test_streamed(c.flops / 1e12, bytes / 4e9), 1e-9);
  SIM_ASSERT_CLOSE(all[1], sim_test_streamed(c.flops / 2e12, bytes / 8e9), 1e-9);
  SIM_ASSERT_CLOSE(all[2], sim_test_streamed(c.flops / 4e12, bytes / 10e9), 1e-9);
  CU_ASSERT(all[0] > all[1] && all[1] > all[2]);
}

/* Host-side work (packing) uses one core: on c-4 it draws one core's 4 GB/s, not 10. A pack
 * reads and writes each byte, and the written lines are read first (write-allocate): 3 B. */
static void test_host_work_uses_one_core(void)
{
  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = 1e9};
  double t = sim_test_together(sim_test_on("c-4"), &w);
  if (sim_test_on("c-4")) SIM_ASSERT_CLOSE(t, 3e9 / 4e9, 1e-9);
}

/* A kernel's compute and traffic add up: s-4 has four 1 Gf/s cores and draws 10 GB/s. */
static void test_compute_bound_uses_all_cores(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e3, .pairs = 1e3, .contacts = 1e8};
  double t = sim_test_together(sim_test_on("s-4"), &w);
  if (sim_test_on("s-4")) {
    sim_cost_t c;
    CU_ASSERT_FATAL(sim_cost_of(&w, &c) == 0);
    CU_ASSERT(c.flops / 4e9 > c.bytes / 10e9); /* compute dominates on s-4 */
    SIM_ASSERT_CLOSE(t, c.flops / 4e9 + sim_cost_cpu_traffic(&c, 64.0, 4.0 * 2097152.0, 1.0) / 10e9, 1e-9);
  }
}

/* Streaming work overlaps its compute and traffic, gathering work adds them (sim/membus.c), on
 * s-4 (four 1 Gf/s cores, 10 GB/s): 4e9 flops take 1 s on the four cores; 5e9 B take 0.5 s and
 * 2e10 B 2 s as four flows of one core's share. Streaming: max(1, 0.5) = 1 s and max(1, 2) = 2 s;
 * gathering: 1.5 s and 3 s. */
static void test_streaming_overlaps_gathering_adds(void)
{
  if (!sim_test_on("s-4")) return;
  sim_host_t h = sim_test_self();
  const double traffic[2] = {5e9, 2e10}, streamed[2] = {1.0, 2.0}, gathered[2] = {1.5, 3.0};
  for (int i = 0; i < 2; i++)
    for (int overlap = 0; overlap < 2; overlap++) {
      double t0 = MPI_Wtime();
      CU_ASSERT_EQUAL(sim_membus_run(&h, 4e9, 4, traffic[i], 10e9, overlap), 0);
      double t = MPI_Wtime() - t0, want = overlap ? streamed[i] : gathered[i];
      SIM_ASSERT_CLOSE(t, want, 1e-9);
      SIM_ASSERT_CLOSE(sim_membus_time(&h, 4e9, 4, traffic[i], 10e9, 0.0, overlap), want, 1e-12);
    }
}

/* A container with half its cores' time (cpu_share 0.5, a CFS quota per 0.1 s: sim/quota.h) runs
 * the same work only in the first 0.05 s of every period, streaming or gathering: on one core of
 * s-4 (1 Gf/s, one flow of 10 GB/s at most: the bus does not cap it), 1e9 flops and 5e9 B need
 * 1 s of running streaming (20 windows) and 1.5 s gathering (30); posted just before a period,
 * they end 19.5 and 29.5 periods later. sim_membus_time gives the average: 2 s and 3 s. */
static void test_cpu_share_stretches_work(void)
{
  if (!sim_test_on("s-4")) return;
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_share, 1.0, 0.0); /* the platform gives none: all of it */
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_period, SIM_CFS_PERIOD, 0.0);
  h.cpu_share = 0.5;
  h.cpu_period = 0.1;
  for (int overlap = 0; overlap < 2; overlap++) {
    sg_actor_sleep_until(ceil(MPI_Wtime() / 0.1 + 1.0) * 0.1 - 1e-6); /* a microsecond before a period */
    double t0 = MPI_Wtime();
    CU_ASSERT_EQUAL(sim_membus_run(&h, 1e9, 1, 5e9, 10e9, overlap), 0);
    double t = MPI_Wtime() - t0;
    SIM_ASSERT_CLOSE(t, overlap ? 1.95 : 2.95, 1e-6);
    SIM_ASSERT_CLOSE(sim_membus_time(&h, 1e9, 1, 5e9, 10e9, 0.0, overlap), overlap ? 2.0 : 3.0, 1e-12);
  }
}

/* The same container whose work runs at 0.8 of its rate in its windows (cpu_quota_efficiency,
 * measured under the quota): 1.25 s of running streaming (25 windows) and 1.875 s gathering (37.5),
 * ending 24.5 and 37.25 periods later; on average 2.5 s and 3.75 s. Without a quota the property
 * changes nothing. */
static void test_quota_efficiency_slows_windows(void)
{
  if (!sim_test_on("s-4")) return;
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_quota_efficiency, 1.0, 0.0); /* the platform gives none */
  h.cpu_quota_efficiency = 0.8;
  SIM_ASSERT_CLOSE(sim_membus_time(&h, 1e9, 1, 5e9, 10e9, 0.0, 0), 1.5, 1e-12); /* no quota: unchanged */
  h.cpu_share = 0.5;
  h.cpu_period = 0.1;
  for (int overlap = 0; overlap < 2; overlap++) {
    sg_actor_sleep_until(ceil(MPI_Wtime() / 0.1 + 1.0) * 0.1 - 1e-6);
    double t0 = MPI_Wtime();
    CU_ASSERT_EQUAL(sim_membus_run(&h, 1e9, 1, 5e9, 10e9, overlap), 0);
    SIM_ASSERT_CLOSE(MPI_Wtime() - t0, overlap ? 2.45 : 3.725, 1e-6);
    SIM_ASSERT_CLOSE(sim_membus_time(&h, 1e9, 1, 5e9, 10e9, 0.0, overlap), overlap ? 2.5 : 3.75, 1e-12);
  }
}

static CU_TestInfo tests[] = {
  {"two ranks on one bus take twice as long, on two nodes not", test_shared_bus_halves},
  {"more cores are faster until the node bandwidth caps them", test_cores_until_node_caps},
  {"host-side work draws one core's bandwidth", test_host_work_uses_one_core},
  {"compute uses every core, then the traffic follows", test_compute_bound_uses_all_cores},
  {"streaming work overlaps compute and traffic, gathering work adds them", test_streaming_overlaps_gathering_adds},
  {"a container with half its cores' time takes twice as long", test_cpu_share_stretches_work},
  {"its quota's efficiency slows the work in its windows", test_quota_efficiency_slows_windows},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_membus", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
