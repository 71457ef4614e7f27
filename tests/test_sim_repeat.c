/* Determinism: ranks on a-1x, a-1y (one memory bus) and e-dem (with a periodic memory stress
 * on e-stress) run a fixed sequence of kernels, host work and messages twice. Within the run
 * the second pass must take exactly what the first did (nothing else changed), and the program
 * prints every simulated time so that CTest can run it twice and compare the outputs byte for
 * byte (tests/run_twice.cmake). */
#include "sim_testing.h"
#include "testing.h"

#include <stdio.h>

#define STEPS 20

/* One pass: STEPS steps of kernels, a ghost-like exchange and some packing. Fills d[] with the
 * duration of each step on this rank. */
static void pass(double *d)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  static double buf[2][4096];
  MPI_Barrier(MPI_COMM_WORLD);
  for (int s = 0; s < STEPS; s++) {
    double t0 = MPI_Wtime();
    dem_work_t k[3] = {
      {.kind = DEM_WORK_SEARCH, .particles = 1e5 * (rank + 1), .pairs = 2.7e6, .contacts = 6e5},
      {.kind = DEM_WORK_FORCES, .particles = 1e5 * (rank + 1), .pairs = 1.2e6, .contacts = 6e5},
      {.kind = DEM_WORK_INTEGRATE, .particles = 1e5 * (rank + 1)}};
    for (int i = 0; i < 3; i++) CU_ASSERT_EQUAL(dem_clock_charge(&k[i]), 0);
    dem_work_t pack = {.kind = DEM_WORK_PACK, .bytes = sizeof buf[0]};
    CU_ASSERT_EQUAL(dem_clock_charge(&pack), 0);
    MPI_Sendrecv(buf[0], 4096, MPI_DOUBLE, (rank + 1) % size, 0, buf[1], 4096, MPI_DOUBLE,
                 (rank + size - 1) % size, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Barrier(MPI_COMM_WORLD);
    d[s] = MPI_Wtime() - t0;
  }
}

static void test_same_sequence_same_times(void)
{
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  double first[STEPS], second[STEPS];
  pass(first);
  pass(second);
  /* equal up to the rounding of clock differences taken at other absolute times */
  for (int s = 0; s < STEPS; s++) CU_ASSERT(fabs(second[s] - first[s]) <= 1e-12 * MPI_Wtime());

  /* now with a periodic stress on e-stress, which makes the steps differ from each other */
  if (sim_test_on("e-dem")) {
    dem_stress_t st = {.host = "e-stress", .vm = 1, .workers = 2, .bytes = 2e9,
                       .start_s = 0.01, .on_s = 0.02, .off_s = 0.03};
    char err[256] = "";
    CU_ASSERT_EQUAL(dem_clock_start_stress(&st, 1, err, sizeof err), 0);
  }
  pass(second);
  double end = MPI_Wtime();
  if (rank == 0) printf("\n");
  for (int r = 0; r < size; r++) {
    if (r == rank) {
      printf("rank %d on %s:", rank, dem_clock_host());
      for (int s = 0; s < STEPS; s++) printf(" %.17g/%.17g", first[s], second[s]);
      printf(" end %.17g\n", end);
      fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
  }
}

static CU_TestInfo tests[] = {
  {"the same sequence gives the same simulated times", test_same_sequence_same_times},
  CU_TEST_INFO_NULL};
static CU_SuiteInfo suites[] = {{"sim_repeat", NULL, NULL, NULL, NULL, tests}, CU_SUITE_INFO_NULL};
DEM_TEST_MAIN(suites)
