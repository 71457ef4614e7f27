/* Two sites joined by a WAN (platforms/twosite.xml: 10 ms one way): SMPI's latency factor, fitted
 * on a LAN, multiplies the LAN links of a route but not the wide-area link (sim/netfactor.cpp).
 * Ranks on n1-cn6700-4 and n2-cn6700-4 (site A) and b-n1-cn6700-4 (site B): both routes from
 * rank 0 cross the same LAN links (veth, NIC, NIC, veth), so a small message to site B takes
 * exactly the WAN link's 10 ms longer than one to site A, not the factor times 10 ms. */
#include "sim_testing.h"
#include "testing.h"

#include "netfactor.h"

#define WAN_LATENCY 0.010 /* s, platforms/twosite.xml (make_platforms.py WAN_LATENCY) */

/* the closed form, with the factor of 8-byte messages read from SMPI's table */
static void test_route_factor(void)
{
  char err[256];
  CU_ASSERT_EQUAL_FATAL(sim_netfactor_install(err, sizeof err), 0);
  double f = sim_netfactor_smpi(8.0);
  CU_ASSERT(f >= 1.0);
  CU_ASSERT_DOUBLE_EQUAL(sim_netfactor_route(8.0, 7e-5, 0.0), f, 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(sim_netfactor_route(8.0, 7e-5, 0.01), (f * 7e-5 + 0.01) / (7e-5 + 0.01), 1e-15);
  CU_ASSERT_DOUBLE_EQUAL(sim_netfactor_route(8.0, 0.0, 0.01), 1.0, 1e-15);
}

/* one-way time of an 8-byte message from rank 0 to `peer`, seen by the peer */
static double one_way(int peer)
{
  int rank;
  char buf[8] = {0};
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  double dt = 0.0, out = 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  if (rank == 0) MPI_Send(buf, sizeof buf, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
  if (rank == peer) {
    MPI_Recv(buf, sizeof buf, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    dt = MPI_Wtime() - t0;
  }
  MPI_Allreduce(&dt, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return out;
}

static void test_wan_not_multiplied(void)
{
  char err[256];
  CU_ASSERT_EQUAL_FATAL(sim_netfactor_install(err, sizeof err), 0);
  double lan = one_way(1), wan = one_way(2);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0)
    printf("\n8 B one way: site A %.6g s, site B %.6g s (factor %.4g)\n", lan, wan, sim_netfactor_smpi(8.0));
  CU_ASSERT(lan > 0.0);
  CU_ASSERT_DOUBLE_EQUAL(wan - lan, WAN_LATENCY, 1e-6);
}

static CU_TestInfo tests[] = {
  {"the route's factor: SMPI's on the LAN links only (closed form)", test_route_factor},
  {"a small message across the WAN: the link's latency, not the factor times it", test_wan_not_multiplied},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_wan", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
