/* A container with part of its cores' time (platform property cpu_share, the emulator's CFS
 * quota), two ranks on node h of platforms/test-sim.xml: h-whole (all of its core) and h-half
 * (cpu_share 0.5 per cpu_period 10 ms: it runs in the first 5 ms of every 10, sim/quota.h). Work
 * and blocking MPI waits on h-half end when it has run as long as they took on h-whole
 * (sim/membus.c, dem_clock_blocked in sim/clock.c), less their transfers' time on the wire
 * (dem_clock_moved), and the completion of any other blocking
 * call is seen in its next window (dem_clock_synced); the closed forms below count the periods.
 * The window arithmetic itself (sim_quota_end) against hand-counted cases. */
#include "base/parallel.h"
#include "sim_testing.h"
#include "testing.h"

#include <simgrid/actor.h>

#include "quota.h"
#include "route.h"

#include <math.h>

static int on_half(void) { return strcmp(dem_clock_host(), "h-half") == 0; }

static const double P = 0.01, ON = 0.005; /* h-half's period and its running part */

static void test_reads_share(void)
{
  char err[256] = "";
  CU_ASSERT_EQUAL_FATAL(dem_clock_init(err, sizeof err), 0);
  sim_host_t h = sim_test_self();
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_share, on_half() ? 0.5 : 1.0, 0.0);
  CU_ASSERT_DOUBLE_EQUAL(h.cpu_period, on_half() ? 0.01 : SIM_CFS_PERIOD, 0.0);
}

/* Both ranks wait for the start of a period, plus `into` seconds. */
static void align(double into)
{
  MPI_Barrier(MPI_COMM_WORLD);
  sg_actor_sleep_until((floor(dem_clock_now() / P) + 2.0) * P + into);
}

/* Work that needs d of running from a period's start ends after m whole windows (m = the number
 * of whole ON in d) and the rest: m P + (d - m ON), or (m - 1) P + ON when nothing is left. */
static double from_period_start(double d)
{
  double m = floor(d / ON + 1e-9), rest = d - m * ON;
  return rest > 1e-12 ? m * P + rest : (m - 1.0) * P + ON;
}

/* A compute-bound kernel (1 Gf/s cores) from a period's start: on h-half it ends when h-half has
 * run as long as h-whole took; about twice as long, not exactly (the last window is not waited out). */
static void test_kernel_in_windows(void)
{
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e3, .pairs = 1e3, .contacts = 1e6};
  align(0.0);
  double t = sim_test_charge(&w), mine[2] = {on_half() ? 0.0 : t, on_half() ? t : 0.0}, both[2];
  MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  CU_ASSERT(both[0] > 3.0 * P);
  SIM_ASSERT_CLOSE(both[1], from_period_start(both[0]), 1e-9);
  CU_ASSERT(fabs(both[1] - 2.0 * both[0]) <= P);
}

/* dem_clock_blocked(s) after a wait of s: h-half is held until it has run s since the wait began.
 * A wait of 0.25 s that began at a period's start: 50 windows, so it ends at 49 P + ON = 0.495 s,
 * 0.245 s after the call. A wait of 2 ms called 4 ms into a period (it began at 2 ms, inside the
 * window): done at 4 ms, nothing held. The same called 6 ms into a period (begun at 4 ms): 1 ms
 * runs before the window closes, 1 ms in the next, so it ends at 11 ms: held 5 ms. h-whole: never. */
static void test_blocked_wait_in_windows(void)
{
  static const double into[3] = {0.0, 0.004, 0.006}, waited[3] = {0.25, 0.002, 0.002};
  static const double held_half[3] = {0.245, 0.0, 0.005};
  for (int i = 0; i < 3; i++) {
    align(into[i]);
    double t0 = dem_clock_now();
    dem_clock_blocked(waited[i]);
    double held = dem_clock_now() - t0;
    SIM_ASSERT_CLOSE(held + 1.0, 1.0 + (on_half() ? held_half[i] : 0.0), 1e-9);
  }
}

/* A two-way exchange of 16 MB from a period's start: h-whole waits for the wire only (about
 * 7 ms on the 2.5 GB/s veths); h-half's wait, as long in the simulation, then needs as long of
 * running: P + (d - ON). Within 3 %: the two start their waits a message latency apart. */
static char out_buf[16000000], in_buf[16000000];

/* A two-way exchange of sizeof out_buf from a period's start: both[0] h-whole's time, both[1] h-half's. */
static void exchange_from_period_start(double both[2])
{
  int me = dem_parallel_rank(), other = 1 - me;
  align(0.0);
  double t0 = dem_clock_now();
  dem_parallel_xchg_t *x = dem_parallel_xchg_create(2);
  CU_ASSERT_EQUAL_FATAL(dem_parallel_xchg_recv(x, in_buf, sizeof in_buf, other, 7), 0);
  CU_ASSERT_EQUAL_FATAL(dem_parallel_xchg_send(x, out_buf, sizeof out_buf, other, 7), 0);
  dem_parallel_xchg_wait(x);
  dem_parallel_xchg_destroy(&x);
  double t = dem_clock_now() - t0, mine[2] = {on_half() ? 0.0 : t, on_half() ? t : 0.0};
  MPI_Allreduce(mine, both, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

static void test_exchange_in_windows(void)
{
  double both[2];
  exchange_from_period_start(both);
  if (!(both[0] > ON && both[0] < P)) printf("[%s] the exchange took %g s on h-whole\n", dem_clock_host(), both[0]);
  CU_ASSERT(both[0] > ON && both[0] < P);
  SIM_ASSERT_CLOSE(both[1], from_period_start(both[0]), 0.03);
}

/* The route h-half -> h-whole's narrowest link (B/s): what dem_clock_moved divides bytes by. */
static double route_bandwidth(void)
{
  double bw = 0.0, lat = 0.0;
  sim_route_figures(sg_host_by_name("h-half"), sg_host_by_name("h-whole"), &bw, &lat);
  return bw;
}

/* dem_clock_moved: the transfers' time on the wire passes while h-half is throttled. A wait of
 * 2 ms called 6 ms into a period (begun at 4 ms, 1 ms before the window closes) that moved 1 ms of
 * bytes each way (the larger direction counts, not their sum) needs 1 ms of running: done at 5 ms,
 * nothing held (5 ms without the transfers, test_blocked_wait_in_windows). 3 ms of bytes
 * one way: nothing to run. The record is spent by the wait: the next one is held in full. */
static void test_blocked_wait_with_transfers(void)
{
  double bw = route_bandwidth();
  CU_ASSERT_FATAL(bw > 0.0);
  static const double sent[3] = {1e-3, 3e-3, 0.0}, received[3] = {1e-3, 0.0, 0.0};
  static const double held_half[3] = {0.0, 0.0, 0.005};
  for (int i = 0; i < 3; i++) {
    align(0.006);
    dem_clock_moved(on_half() ? "h-whole" : "h-half", sent[i] * bw, 1);
    dem_clock_moved(on_half() ? "h-whole" : "h-half", received[i] * bw, 0);
    double t0 = dem_clock_now();
    dem_clock_blocked(0.002);
    SIM_ASSERT_CLOSE(dem_clock_now() - t0 + 1.0, 1.0 + (on_half() ? held_half[i] : 0.0), 1e-9);
  }
  /* unknown hosts, a rank's own host and nothing moved record nothing */
  align(0.006);
  dem_clock_moved("no-such-host", 1e9, 1);
  dem_clock_moved(dem_clock_host(), 1e9, 1);
  dem_clock_moved(NULL, 1e9, 0);
  double t0 = dem_clock_now();
  dem_clock_blocked(0.002);
  SIM_ASSERT_CLOSE(dem_clock_now() - t0 + 1.0, 1.0 + (on_half() ? 0.005 : 0.0), 1e-9);
}

/* The exchange of test_exchange_in_windows once the ranks know each other's hosts
 * (dem_parallel_learn_hosts): its 16 MB each way are recorded, their wire time (6.4 ms on the
 * 2.5 GB/s veths) passes while h-half is throttled, and what is left (the latencies) ran in its
 * first window: h-half only sees the end in its next window, at P. */
static void test_exchange_with_hosts(void)
{
  double both[2], wire = sizeof out_buf / route_bandwidth();
  dem_parallel_learn_hosts();
  exchange_from_period_start(both);
  CU_ASSERT(both[0] > wire && both[0] - wire < ON);
  SIM_ASSERT_CLOSE(both[1], P, 1e-9);
}

/* dem_clock_synced after a blocking call: h-half sees its completion while it runs (2 ms into a
 * period: at once), else when its next period starts (6 ms in: held 4 ms); h-whole never held. */
static void test_synced_in_windows(void)
{
  static const double into[2] = {0.002, 0.006}, held_half[2] = {0.0, 0.004};
  for (int i = 0; i < 2; i++) {
    align(into[i]);
    double t0 = dem_clock_now();
    dem_clock_synced();
    SIM_ASSERT_CLOSE(dem_clock_now() - t0 + 1.0, 1.0 + (on_half() ? held_half[i] : 0.0), 1e-9);
  }
}

/* sim_quota_end against hand-counted windows (share 0.25 of a 1 s period: running in [k, k + 0.25)). */
static void test_quota_arithmetic(void)
{
  sim_quota_t q;
  CU_ASSERT_EQUAL_FATAL(sim_quota_init(&q, 0.25, 1.0, 0.0, 0.0), 0);
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 2.6), 0.75, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 2.1), 0.6, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.1, 0.1), 0.2, 1e-12);  /* inside the window */
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.1, 0.2), 1.05, 1e-12); /* 0.15 now, 0.05 next period */
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.5, 0.1), 1.1, 1e-12);  /* posted while throttled */
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.0, 0.5), 1.25, 1e-12); /* two whole windows */
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 3.7, 0.0), 3.7, 1e-12);  /* nothing to run */
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.0, 100.0) / 100.0, 4.0, 0.01); /* on average 1/s */
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 2.1), 2.1, 1e-12); /* running: seen at once */
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 2.6), 3.0, 1e-12); /* throttled: at the next period */
  /* the rank's time 0 half a period into the quota's (throttled until the rank's 0.5) */
  sim_quota_shift(&q, 0.5);
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 0.4), 0.0, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 0.6), 0.1, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.0, 0.1), 0.6, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 0.2), 0.5, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 0.55), 0.55, 1e-12);
  sim_quota_shift(&q, 1.25); /* modulo the period: a quarter in, the window just spent */
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 0.1), 0.0, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.0, 0.25), 1.0, 1e-12);
  sim_quota_free(&q);
  /* bad arguments */
  CU_ASSERT_EQUAL(sim_quota_init(&q, 1.0, 1.0, 0.0, 0.0), -1);
  CU_ASSERT_EQUAL(sim_quota_init(&q, 0.5, 0.0, 0.0, 0.0), -1);
  CU_ASSERT_EQUAL(sim_quota_init(&q, 0.5, 1.0, -0.004, 0.0), -1);
}

/* The kernel's tick (quota.h): half a core per 10 ms, a 4 ms tick, the first tick at 2.6 ms, as
 * this VM's HZ 250 and a phase measured by quota_duty.py. Hand-counted: period 0 has 5 ms, spent at
 * 5 ms, throttled at the tick of 6.6 ms (owes 1.6); period 1 has 3.4 ms from 10 ms, ticks at 10.6
 * and 14.6: throttled at 14.6 (4.6 ms run, owes 1.2); period 2 has 3.8 from 20 ms, ticks at 22.6
 * (2.6 ran) and 26.6: 6.6 ms run, owes 2.8; period 3 has 2.2 from 30 ms: tick 30.6 (0.6), 34.6:
 * 4.6 ms, owes 2.4. Over many periods it runs half the time, in runs of whole ticks' ends. */
static void test_quota_tick(void)
{
  sim_quota_t q;
  CU_ASSERT_EQUAL_FATAL(sim_quota_init(&q, 0.5, 0.010, 0.004, 0.0026), 0);
  static const double on[4] = {0.0066, 0.0046, 0.0066, 0.0046};
  for (size_t k = 0; k < 4; k++) SIM_ASSERT_CLOSE(sim_quota_on(&q, k), on[k], 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 0.012), 0.0066 + 0.002, 1e-12);
  SIM_ASSERT_CLOSE(sim_quota_end(&q, 0.006, 0.003), 0.0124, 1e-12);  /* 0.6 ms now, 2.4 from 10 ms */
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 0.0065), 0.0065, 1e-12);       /* still running at 6.5 ms */
  SIM_ASSERT_CLOSE(sim_quota_seen(&q, 0.0150), 0.0200, 1e-12);       /* throttled from 14.6 ms */
  SIM_ASSERT_CLOSE(sim_quota_ran(&q, 100.0) / 100.0, 0.5, 1e-4);      /* the quota on average */
  int off_tick = 0;
  for (size_t k = 0; k < 10000; k++) { /* every run ends at a tick */
    double t = sim_quota_on(&q, k), r = fmod((double)k * 0.010 + t - 0.0026 + 0.004, 0.004);
    off_tick += !(t == 0.0 || t == 0.010 || r < 1e-9 || r > 0.004 - 1e-9);
  }
  CU_ASSERT_EQUAL(off_tick, 0);
  sim_quota_free(&q);
}

static CU_TestInfo tests[] = {
  {"a quota enforced at the kernel's tick: hand-counted runs", test_quota_tick},
  {"the platform's cpu_share and cpu_period are read", test_reads_share},
  {"a kernel at half the core runs in the quota's windows", test_kernel_in_windows},
  {"a blocking wait at half the core is held to the quota's windows", test_blocked_wait_in_windows},
  {"a ghost exchange at half the core needs as long of running", test_exchange_in_windows},
  {"a wait's transfers pass on the wire while the half core is throttled", test_blocked_wait_with_transfers},
  {"a ghost exchange between known hosts: its wire time passes while throttled", test_exchange_with_hosts},
  {"a blocking call's completion is seen in the half core's window", test_synced_in_windows},
  {"the quota's window arithmetic against hand-counted cases", test_quota_arithmetic},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_share", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
