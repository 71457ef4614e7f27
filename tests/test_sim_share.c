/* A container with part of its cores' time (platform property cpu_share, the emulator's CFS
 * quota), two ranks on node h of platforms/test-sim.xml: h-whole (all of its core) and h-half
 * (cpu_share 0.5). The same kernel takes twice as long on h-half (sim/membus.c); a blocking MPI
 * wait is held as long again there and not at all on h-whole (dem_clock_blocked, sim/clock.c);
 * a ghost exchange between the two (dem_parallel_xchg_*) costs h-half its wire time twice. */
#include "base/parallel.h"
#include "sim_testing.h"
#include "testing.h"

static int on_half(void) { return strcmp(dem_clock_host(), "h-half") == 0; }

static void test_reads_share(void)
{
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(dem_clock_init(err, sizeof err), 0);
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_share, on_half() ? 0.5 : 1.0, 0.0);
}

/* A compute-bound kernel: 1 Gf/s cores, so its flops dominate; twice the time at half the core. */
static void test_kernel_twice_as_long(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e3, .pairs = 1e3, .contacts = 1e6};
  double t = sim_test_charge(&w), mine[2] = {on_half() ? 0.0 : t, on_half() ? t : 0.0}, both[2];
  MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  SIM_ASSERT_CLOSE(both[1], 2.0 * both[0], 1e-9);
  CU_ASSERT(both[0] > 1e-3);
}

/* dem_clock_blocked(s): h-half is held s more (1/0.5 - 1 = 1), h-whole not at all. */
static void test_blocked_wait_held(void)
{
  double t0 = MPI_Wtime();
  dem_clock_blocked(0.25);
  double held = MPI_Wtime() - t0;
  SIM_ASSERT_CLOSE(held + 1.0, on_half() ? 1.25 : 1.0, 1e-12);
}

/* A two-way exchange of 8 MB: h-whole waits for the wire only; h-half then waits as long again
 * (its MPI progresses only while it runs). Within 3 %: the two leave the barrier, and so start
 * their waits, a message latency apart. */
static void test_exchange_held_on_half(void)
{
  static char out[8000000], in[8000000];
  int me = dem_parallel_rank(), other = 1 - me;
  MPI_Barrier(MPI_COMM_WORLD);
  double t0 = MPI_Wtime();
  dem_parallel_xchg_t *x = dem_parallel_xchg_create(2);
  CU_ASSERT_EQUAL_FATAL(dem_parallel_xchg_recv(x, in, sizeof in, other, 7), 0);
  CU_ASSERT_EQUAL_FATAL(dem_parallel_xchg_send(x, out, sizeof out, other, 7), 0);
  dem_parallel_xchg_wait(x);
  dem_parallel_xchg_destroy(&x);
  double t = MPI_Wtime() - t0, mine[2] = {on_half() ? 0.0 : t, on_half() ? t : 0.0}, both[2];
  MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CU_ASSERT(both[0] > 1e-3);
  SIM_ASSERT_CLOSE(both[1], 2.0 * both[0], 0.03);
}

static CU_TestInfo tests[] = {
  {"the platform's cpu_share is read (0.5 on h-half, 1 on h-whole)", test_reads_share},
  {"a kernel takes twice as long at half the core", test_kernel_twice_as_long},
  {"a blocking wait is held as long again at half the core", test_blocked_wait_held},
  {"a ghost exchange costs the half core its wire time twice", test_exchange_held_on_half},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_share", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
