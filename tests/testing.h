/* Shared main() for the CUnit suites. Every test program is an MPI program (under smpirun in
 * the SMPI build, mpirun in the native build) so that one harness serves serial and parallel
 * tests. A test file defines `static CU_TestInfo tests[]` arrays, lists them in a
 * `static CU_SuiteInfo suites[]`, then writes DEM_TEST_MAIN(suites). The program exits with
 * status 1 when any assertion failed on any rank. */
#ifndef DEMSIM_TESTS_TESTING_H
#define DEMSIM_TESTS_TESTING_H

#include <CUnit/Basic.h>
#include <mpi.h>
#include <stdio.h>

static inline int dem_test_run(CU_SuiteInfo *suites, int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (CU_initialize_registry() != CUE_SUCCESS || CU_register_suites(suites) != CUE_SUCCESS) {
    fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  CU_basic_set_mode(rank == 0 ? CU_BRM_VERBOSE : CU_BRM_SILENT);
  CU_basic_run_tests();
  int failed = (int)CU_get_number_of_failures() + (int)CU_get_number_of_tests_failed();
  if (rank != 0 && failed) CU_basic_show_failures(CU_get_failure_list());
  CU_cleanup_registry();
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Finalize();
  return any ? 1 : 0;
}

#define DEM_TEST_MAIN(suites) \
  int main(int argc, char **argv) { return dem_test_run(suites, argc, argv); }

#endif
