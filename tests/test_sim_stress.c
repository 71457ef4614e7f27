/* Co-located stress (platforms/test-sim.xml): ranks on d-dem, e-dem and f-dem; the stress runs
 * on the other container of each node (d-stress, e-stress, f-stress). Nodes d, e, f: 10 GB/s
 * memory bus, 3 GB/s per core, 2-core containers. A DEM kernel alone draws 2 x 3 = 6 GB/s.
 * Node k: k-stress shares k-dem's core. */
#include "sim_testing.h"
#include "membus.h"
#include "stress.h"
#include "testing.h"

#include <stdio.h>

#define N 3e7 /* particles: 6e9 B of integrator traffic, 1 s alone at 6 GB/s */

static dem_stress_t stress(const char *host, int vm, double on_s, double off_s)
{
  dem_stress_t s = {.vm = vm, .workers = 2, .bytes = 2e9, .start_s = 0.0, .on_s = on_s,
                    .off_s = off_s};
  snprintf(s.host, sizeof s.host, "%s", host);
  return s;
}

static void start(const dem_stress_t *s)
{
  char err[256] = "";
  int rc = dem_clock_start_stress(s, 1, err, sizeof err);
  if (rc) fprintf(stderr, "%s\n", err);
  CU_ASSERT_EQUAL(rc, 0);
}

/* stress-ng --cpu 2 on d-stress: its cores are not d-dem's, so d-dem is exactly as fast. */
static void test_cpu_stress_changes_nothing(void)
{
  if (!sim_test_on("d-dem")) return;
  dem_work_t w = sim_test_kernel(N);
  double before = sim_test_charge(&w);
  dem_stress_t s = stress("d-stress", 0, 0.0, 0.0);
  start(&s);
  double after = sim_test_charge(&w);
  SIM_ASSERT_CLOSE(before, sim_test_streamed(sim_test_compute(&w), sim_test_bytes(&w) / 6e9), 1e-9);
  CU_ASSERT_DOUBLE_EQUAL(after, before, 1e-12);
}

/* stress-ng --vm 2 on e-stress: four flows on e-membus (10 GB/s), each bounded at one core's
 * 3 GB/s: the DEM kernel's two cores and the two workers. Max-min gives each 2.5 GB/s, the DEM
 * kernel 5 GB/s: its traffic takes 1.2 times as long as alone (6 GB/s). */
static void test_vm_stress_takes_maxmin_share(void)
{
  if (!sim_test_on("e-dem")) return;
  dem_work_t w = sim_test_kernel(N);
  double before = sim_test_charge(&w);
  dem_stress_t s = stress("e-stress", 1, 0.0, 0.0);
  start(&s);
  double after = sim_test_charge(&w);
  double bytes = sim_test_bytes(&w), cpu = sim_test_compute(&w);
  CU_ASSERT(cpu < 0.01 * bytes / 6e9); /* the traffic sets the time */
  SIM_ASSERT_CLOSE(before, sim_test_streamed(cpu, bytes / 6e9), 1e-9);
  SIM_ASSERT_CLOSE(after, sim_test_streamed(cpu, bytes / 5e9), 1e-9);
}

/* A periodic vm stress on f-stress: off for 1 s, then on 2 s / off 3 s. Short kernels (50 ms
 * alone, 60 ms under stress) run back to back for 12 s; every kernel that lies wholly inside an
 * on period takes the stressed time, every one wholly inside an off period the time alone. */
static void test_periodic_stress_follows_schedule(void)
{
  if (!sim_test_on("f-dem")) return;
  dem_work_t w = sim_test_kernel(N / 20);
  double bytes = sim_test_bytes(&w), cpu = sim_test_compute(&w);
  double t_alone = sim_test_streamed(cpu, bytes / 6e9), t_stress = sim_test_streamed(cpu, bytes / 5e9);
  double t0 = MPI_Wtime();
  dem_stress_t s = stress("f-stress", 1, 2.0, 3.0);
  s.start_s = 1.0;
  start(&s);
  int on = 0, off = 0, bad = 0;
  while (MPI_Wtime() - t0 < 12.0) {
    double a = MPI_Wtime() - t0;
    double d = sim_test_charge(&w);
    double b = a + d;
    /* phase within the 5 s period that starts at 1 s; before 1 s: off */
    double pa = a < 1.0 ? -1.0 : fmod(a - 1.0, 5.0), pb = b < 1.0 ? -1.0 : fmod(b - 1.0, 5.0);
    int in_on = pa >= 0.0 && pb >= pa && pb <= 2.0;
    int in_off = b <= 1.0 || (pa >= 2.0 && pb >= pa);
    if (in_on) {
      on++;
      bad += !sim_test_close(d, t_stress, 1e-9, "kernel in an on period");
    } else if (in_off) {
      off++;
      bad += !sim_test_close(d, t_alone, 1e-9, "kernel in an off period");
    }
  }
  CU_ASSERT(on >= 40);   /* 3 on periods of 2 s, ~26 kernels each minus the boundaries */
  CU_ASSERT(off >= 60);  /* 1 s + 2 x 3 s + the tail */
  CU_ASSERT_EQUAL(bad, 0);
}

/* Loaded latency (node l: 10 GB/s bus, 2 GB/s per core, latency 2x at half the bus used and 3x
 * when full): one vm worker on l-stress draws its 2 GB/s, 20 % of the bus, so the latency is
 * 1 + 0.2 / 0.5 = 1.4 x idle and each of l-dem's two cores draws 2 / 1.4 GB/s. The bus is not
 * full (2 + 2.86 of 10 GB/s): max-min alone would change nothing; the kernel's traffic takes
 * 1.4 times as long. */
static void test_loaded_latency_slows_before_saturation(void)
{
  if (!sim_test_on("l-dem")) return;
  dem_work_t w = sim_test_kernel(N);
  double before = sim_test_charge(&w);
  dem_stress_t s = stress("l-stress", 1, 0.0, 0.0);
  s.workers = 1;
  start(&s);
  double after = sim_test_charge(&w);
  double bytes = sim_test_bytes(&w), cpu = sim_test_compute(&w);
  SIM_ASSERT_CLOSE(before, sim_test_streamed(cpu, bytes / 4e9), 1e-9);
  SIM_ASSERT_CLOSE(after, sim_test_streamed(cpu, bytes / (4e9 / 1.4)), 1e-9);
  sim_host_t h = sim_test_self();
  SIM_ASSERT_CLOSE(sim_host_latency_factor(&h, 0.2), 1.4, 1e-12);
  SIM_ASSERT_CLOSE(sim_host_latency_factor(&h, 0.75), 2.5, 1e-12);
  SIM_ASSERT_CLOSE(sim_host_latency_factor(&h, 1.5), 3.0, 1e-12);
  SIM_ASSERT_CLOSE(sim_membus_time(&h, 0.0, 2, bytes, h.core_bw, 0.2, 1), bytes / (4e9 / 1.4), 1e-12);
}

/* A memory stress on k-stress, whose core is k-dem's (property shares_cores_with): the worker's
 * thread and k-dem's share that core, each half of its time, so k-dem's kernel takes twice as
 * long, its compute (1 Gf/s core) and its waits on memory alike (3 GB/s, beside the worker's
 * 1.5 GB/s, its half core's, on a 10 GB/s bus: no contention); a blocking wait is held as long
 * again. A contact kernel (it gathers, so compute and traffic add up: sim/membus.c). */
static void test_stress_on_shared_cores_takes_cpu_time(void)
{
  if (!sim_test_on("k-dem")) return;
  dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = 1e5, .pairs = 6e5, .contacts = 6e5};
  sim_host_t h = sim_test_self();
  sim_cost_t c;
  CU_ASSERT_FATAL(sim_cost_of(&w, &c) == 0);
  double bytes = sim_cost_cpu_traffic(&c, h.cache_line, h.llc_bytes, h.core_bw / h.core_gather_bw);
  double cpu = sim_test_compute(&w);
  double before = sim_test_charge(&w);
  dem_stress_t s = stress("k-stress", 1, 0.0, 0.0);
  s.workers = 1;
  start(&s);
  double after = sim_test_charge(&w);
  CU_ASSERT(cpu > 0.1 * before); /* the compute part matters here */
  SIM_ASSERT_CLOSE(before, cpu + bytes / 3e9, 1e-9);
  SIM_ASSERT_CLOSE(after, 2.0 * (cpu + bytes / 3e9), 1e-9);
  CU_ASSERT_EQUAL(sim_stress_sharing("k-dem"), 1);
  SIM_ASSERT_CLOSE(sim_membus_share(&h), 0.5, 1e-12);
  double t0 = MPI_Wtime();
  dem_clock_blocked(0.1);
  SIM_ASSERT_CLOSE(MPI_Wtime() - t0, 0.1, 1e-9);
}

static CU_TestInfo tests[] = {
  {"CPU stress on a co-located container changes nothing", test_cpu_stress_changes_nothing},
  {"memory stress slows the DEM container to its cores' max-min share", test_vm_stress_takes_maxmin_share},
  {"a periodic memory stress is on and off on schedule", test_periodic_stress_follows_schedule},
  {"loaded latency slows the DEM before the bus is full", test_loaded_latency_slows_before_saturation},
  {"a stress on shared cores takes half the container's time, memory waits too", test_stress_on_shared_cores_takes_cpu_time},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_stress", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
