/* The GPU container g-gpu of platforms/test-sim.xml: 1 Tf/s, 100 GB/s device memory, PCIe
 * 10 GB/s, 10 us per kernel or copy. One rank. */
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

/* Host-side work on the GPU container runs on its host CPU and memory, not on the device. */
static void test_host_work_on_host(void)
{
  sim_host_t h = sim_test_self();
  CU_ASSERT_EQUAL(h.device, SIM_DEVICE_GPU);
  dem_work_t w = {.kind = DEM_WORK_PACK, .bytes = 1e9};
  SIM_ASSERT_CLOSE(sim_test_charge(&w), 2e9 / h.core_bw, 1e-9);
}

static CU_TestInfo tests[] = {
  {"host<->device copies pay PCIe bandwidth and latency", test_copy_pays_pcie},
  {"kernels pay the device roofline and the launch latency", test_kernel_on_device},
  {"host-side work runs on the host", test_host_work_on_host},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_gpu", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
