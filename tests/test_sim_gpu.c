/* The GPU container g-gpu of platforms/test-sim.xml: 1 Tf/s, 100 GB/s device memory for
 * streams, 10 GB/s for missed gathers in 32 B sectors, 1 MB of L2, PCIe 10 GB/s, 10 us per
 * kernel or copy. One rank. */
#include "sim_testing.h"
#include "testing.h"

/* A host->device copy of B bytes costs B / pcie_bw + latency: 1e9 B take 0.1 s + 10 us. */
static void test_copy_pays_pcie(void)
{
  dem_work_t w = {.kind = DEM_WORK_COPY_H2D, .bytes = 1e9};
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 1e9 / 10e9 + 10e-6, 1e-9);
  w.kind = DEM_WORK_COPY_D2H;
  w.bytes = 4e6;
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 4e6 / 10e9 + 10e-6, 1e-9);
}

/* A kernel: latency + device roofline; an empty one costs the launch latency alone. */
static void test_kernel_on_device(void)
{
  dem_work_t w = sim_test_kernel(1e8);
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 10e-6 + sim_test_bytes(&w) / 100e9, 1e-9);
  dem_work_t empty = sim_test_kernel(0.0);
  SIM_ASSERT_CLOSE(sim_test_charge(&empty), 10e-6, 1e-9);
}

/* Gathers: with few particles the reuse window (2 n^(2/3) x 80 B) fits the 1 MB L2 and the
 * gathered partner data cost nothing beyond the streams; with 1e6 particles the window is
 * 2 x 1e4 x 80 = 1.6 MB, so 1 - 1/1.6 = 37.5 % of the gathers miss, each a 32 B sector at
 * 10 GB/s. Contact forces: pairs and contacts 6 per particle. */
static void test_kernel_gathers(void)
{
  const double n[2] = {1e3, 1e6};
  for (int i = 0; i < 2; i++) {
    dem_work_t w = {.kind = DEM_WORK_FORCES, .particles = n[i], .pairs = 6 * n[i], .contacts = 6 * n[i]};
    sim_cost_t c;
    CU_ASSERT_FATAL(sim_cost_of(&w, &c) == 0);
    CU_ASSERT_DOUBLE_EQUAL(c.gathers, 24 * n[i], 1e-6);          /* 2 per slot + 2 per contact */
    CU_ASSERT_DOUBLE_EQUAL(c.gathered, (6 * 32 + 6 * 48) * n[i], 1e-6);
    double miss = i == 0 ? 0.0 : 1.0 - 1e6 / (2.0 * 1e4 * 80.0);
    double tm = (c.bytes - c.gathered) / 100e9 + miss * c.gathers * 32.0 / 10e9;
    double tf = c.flops / 1e12;
    SIM_ASSERT_CLOSE(sim_test_charge(&w), 10e-6 + (tm > tf ? tm : tf), 1e-9);
  }
}

/* Host-side work on the GPU container runs on its host CPU and memory, not on the device: a
 * pack reads and writes each byte, and the written lines are read first (write-allocate). */
static void test_host_work_on_host(void)
{
  sim_host_t h = sim_test_self();
  CU_ASSERT_EQUAL(h.device, SIM_DEVICE_GPU);
  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = 1e9};
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 3e9 / h.core_bw, 1e-9);
}

/* device.cost = "measured": 10 ms on a device of 4e10 flop/s is 4e8 flops, at the GPU's
 * 1e12 flop/s 0.4 ms, plus the launch latency; copies keep the PCIe model. */
static void test_measured_kernel(void)
{
  dem_clock_set_measured(4e10);
  dem_work_t w = sim_test_kernel(1e8);
  w.measured = 1;
  w.measured_s = 0.01;
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 10e-6 + 4e8 / 1e12, 1e-12);
  dem_work_t copy = {.kind = DEM_WORK_COPY_H2D, .bytes = 1e9};
  SIM_ASSERT_CLOSE(sim_test_charge(&copy), 1e9 / 10e9 + 10e-6, 1e-9);
  dem_clock_set_measured(0.0);
}

static CU_TestInfo tests[] = {
  {"host<->device copies pay PCIe bandwidth and latency", test_copy_pays_pcie},
  {"kernels pay the device roofline and the launch latency", test_kernel_on_device},
  {"gathers cost nothing in the L2, sectors at the gather bandwidth beyond it", test_kernel_gathers},
  {"host-side work runs on the host", test_host_work_on_host},
  {"device.cost = measured: a timed kernel runs its flops at the GPU's rate", test_measured_kernel},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_gpu", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
