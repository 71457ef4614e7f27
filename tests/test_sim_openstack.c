/* The study's cloud, platforms/openstack.xml: every container reads, kernel times follow the
 * roofline of the platform's figures, and the network separates co-located from remote
 * containers. Ranks on n1-cn6700-1, n1-cn6700-2a (same node), n4-cn6700-4, n6-cn4790-4 and
 * g1-cngpu. */
#include "sim_testing.h"
#include "testing.h"

#include <stdio.h>

/* Every container of the study's cases has all its properties. */
static void test_every_container_reads(void)
{
  const char *shapes[] = {"cn6700-1", "cn6700-2a", "cn6700-2b", "cn6700-3", "cn6700-4"};
  char name[64], err[256];
  sim_host_t h;
  for (int n = 1; n <= 5; n++)
    for (int s = 0; s < 5; s++) {
      snprintf(name, sizeof name, "n%d-%s", n, shapes[s]);
      int rc = sim_host_read(&h, name, err, sizeof err);
      if (rc) fprintf(stderr, "%s\n", err);
      CU_ASSERT_EQUAL(rc, 0);
      CU_ASSERT_STRING_EQUAL(h.node_type, "i7-6700");
      CU_ASSERT_EQUAL(h.device, SIM_DEVICE_CPU);
      CU_ASSERT_DOUBLE_EQUAL(h.simd_lanes, 4.0, 1e-12); /* two 256-bit FMA units */
      CU_ASSERT_DOUBLE_EQUAL(h.partition_rate, 0.0, 0.0); /* Zoltan charged by sim/cost.c's counts */
    }
  const char *others[] = {"n6-cn4790-4", "n7-cn4790-4", "g1-cngpu"};
  for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(sim_host_read(&h, others[i], err, sizeof err), 0);
  CU_ASSERT_EQUAL(h.device, SIM_DEVICE_GPU);
  CU_ASSERT_STRING_EQUAL(h.container, "CN-GPU");
}

/* Time of a kernel alone on a container: compute + launch latency, and its traffic, added for a
 * kernel that gathers, the larger of the two for a streaming one (sim/membus.c). */
static double roofline(const char *host, const dem_work_t *w)
{
  sim_host_t h;
  sim_cost_t c;
  char err[256];
  if (sim_host_read(&h, host, err, sizeof err) || sim_cost_of(w, &c)) return -1.0;
  double compute = sim_cost_cpu_flops(&c, h.core_flops, h.divider_rate, h.simd_lanes) / (h.cores * h.core_flops) + h.launch_latency;
  double bw = h.cores * h.core_bw < h.node_bw ? h.cores * h.core_bw : h.node_bw;
  double traffic = sim_cost_cpu_traffic(&c, h.cache_line, h.llc_bytes, h.core_bw / h.core_gather_bw) / bw;
  return sim_cost_streaming(&c) ? sim_test_streamed(compute, traffic) : compute + traffic;
}

/* The kernel w run at once on containers a and b (the other ranks idle): their times, each
 * checked against the roofline; returns 1 on rank 0 (for printing). */
static int two_containers(const char *a, const char *b, const dem_work_t *w, double *ta, double *tb)
{
  int on_a = sim_test_on(a), on_b = sim_test_on(b);
  double t = sim_test_together(on_a || on_b, w);
  double xa = on_a ? t : 0.0, xb = on_b ? t : 0.0;
  MPI_Allreduce(&xa, ta, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&xb, tb, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  SIM_ASSERT_CLOSE(*ta, roofline(a, w), 1e-6);
  SIM_ASSERT_CLOSE(*tb, roofline(b, w), 1e-6);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank == 0;
}

/* Case 1's containers: the contact-force kernel on CN-6700-1 and on CN-6700-4 takes what the
 * roofline of the platform's figures gives (worked out here from the properties and the cost
 * model, not from the study). The study observed a load ratio of 3.3; the model predicts its
 * own (printed), which validation/REPORT.md sets beside the study's. */
static void test_case1_ratio(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e5, .pairs = 6e5, .contacts = 3e5};
  double t1 = 0, t4 = 0;
  int root = two_containers("n1-cn6700-1", "n4-cn6700-4", &w, &t1, &t4);
  /* more cores help, but the shared memory bus keeps four cores under four times one */
  CU_ASSERT(t1 / t4 > 1.0 && t1 / t4 < 4.0);
  if (root) printf("\ncontact-force kernel, CN-6700-1 / CN-6700-4: %.3g (the study's load ratio: 3.3)\n", t1 / t4);
  /* the GPU container is faster still on the kernel itself */
  double tg = sim_test_together(sim_test_on("g1-cngpu"), &w), xg = tg;
  MPI_Allreduce(&xg, &tg, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CU_ASSERT(tg < t4 / 5.0);
}

/* Case 2's containers: the same kernel on CN-4790-4 (Haswell, 3.6 GHz, DDR3-1866) takes longer
 * than on CN-6700-4 (Skylake, 3.4 GHz, DDR4-2133): a higher clock, but a divider of 7 cycles per
 * lane against 2.67 and less memory bandwidth. Expected times from the roofline above. */
static void test_case2_haswell(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e5, .pairs = 6e5, .contacts = 3e5};
  double th = 0, ts = 0;
  int root = two_containers("n6-cn4790-4", "n4-cn6700-4", &w, &th, &ts);
  CU_ASSERT(th > 1.05 * ts);
  if (root) printf("\ncontact-force kernel, CN-4790-4 / CN-6700-4: %.3g\n", th / ts);
}

/* A partition on a container whose Zoltan was not measured (no partition_rate): sim/cost.c's
 * counts, by hand. 100,000 particles on 4 ranks: a share of 25,000 at 2 bisection levels + 1 =
 * 75,000 particle-levels of 763 flops and 48 B each, and 53 B of new scratch per particle of the
 * share, mapped at the host's first_touch_bw, then the compute and the streamed traffic
 * overlapped (the larger of the two). Charged on rank 0 (n1-cn6700-1) alone. */
static void test_partition_counted(void)
{
  dem_work_t w = {.kind = DEM_WORK_PARTITION, .particles = 1e5, .ranks = 4};
  double t = sim_test_together(sim_test_on("n1-cn6700-1"), &w);
  if (!sim_test_on("n1-cn6700-1")) return;
  sim_host_t h = sim_test_self();
  double compute = 763.0 * 75000.0 / h.core_flops, traffic = 48.0 * 75000.0 / h.core_bw;
  double expected = 53.0 * 25000.0 / h.first_touch_bw + sim_test_streamed(compute, traffic);
  CU_ASSERT(h.first_touch_bw > 0.0);
  SIM_ASSERT_CLOSE(t, expected, 1e-6);
}

/* 1 MB goes through the node's bridge between co-located containers, through two NICs and the
 * 1 Gbps switch (8 ms at least) between nodes. */
static void test_network(void)
{
  static char buf[1 << 20];
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double near = 0, far = 0;
  /* ranks 0 (n1-cn6700-1) and 1 (n1-cn6700-2a) share node n1; rank 2 is n4-cn6700-4 */
  for (int peer = 1; peer <= 2; peer++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    if (rank == 0) MPI_Send(buf, sizeof buf, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    if (rank == peer) {
      MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      double dt = MPI_Wtime() - t0;
      if (peer == 1) near = dt;
      else far = dt;
    }
  }
  double n = 0, f = 0;
  MPI_Allreduce(&near, &n, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&far, &f, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  if (rank == 0) printf("\n1 MB: co-located %.3g s, between nodes %.3g s\n", n, f);
  CU_ASSERT(f > 8e-3 && f < 12e-3);
  CU_ASSERT(n < 2e-3);
}

static CU_TestInfo tests[] = {
  {"every container of the study's cloud reads", test_every_container_reads},
  {"CN-6700-1 vs CN-6700-4: the roofline of the platform's figures (case 1)", test_case1_ratio},
  {"CN-4790-4 vs CN-6700-4: the Haswell container is the slower (case 2)", test_case2_haswell},
  {"co-located containers talk faster than nodes", test_network},
  {"a partition without a measured Zoltan: sim/cost.c's counts", test_partition_counted},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_openstack", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
