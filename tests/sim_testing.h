/* Helpers shared by the sim/ tests: timed charges and the figures they are checked against. */
#ifndef DEMSIM_TESTS_SIM_TESTING_H
#define DEMSIM_TESTS_SIM_TESTING_H

#include "base/clock.h"
#include "cost.h"
#include "host.h"

#include <CUnit/CUnit.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <string.h>

/* A memory-bound kernel: the integrator over n particles (1 Tf/s cores in test-sim.xml make its
 * flops negligible). */
static inline dem_work_t sim_test_kernel(double n)
{
  dem_work_t w = {.kind = DEM_WORK_INTEGRATE, .particles = n};
  return w;
}

static inline double sim_test_bytes(const dem_work_t *w)
{
  sim_cost_t c;
  CU_ASSERT_FATAL(sim_cost_of(w, &c) == 0);
  return c.bytes;
}

/* The compute part of a kernel on this rank's CPU container: flops (divisions and square roots
 * at the divider's rate, scalar code's at its lanes) over its cores, plus the launch latency (sim/clock.c). */
static inline double sim_test_compute(const dem_work_t *w)
{
  sim_cost_t c;
  sim_host_t h;
  char err[256] = "";
  CU_ASSERT_FATAL(sim_cost_of(w, &c) == 0);
  CU_ASSERT_FATAL(sim_host_read(&h, NULL, err, sizeof err) == 0);
  return sim_cost_cpu_flops(&c, h.core_flops, h.divider_rate, h.simd_lanes) / (h.cores * h.core_flops) + h.launch_latency;
}

/* A streaming kernel's charge (the integrator gathers nothing): its compute and its traffic
 * overlap, it takes the larger (sim/membus.c). */
static inline double sim_test_streamed(double compute, double traffic)
{
  return compute > traffic ? compute : traffic;
}

/* Simulated seconds one charge took on this rank. */
static inline double sim_test_charge(const dem_work_t *w)
{
  double t0 = MPI_Wtime();
  CU_ASSERT_EQUAL(dem_clock_charge(w), 0);
  return MPI_Wtime() - t0;
}

/* All ranks line up; those for which `active` is true charge w at the same simulated time
 * (to within the barrier's skew, microseconds). Returns the charge's duration, or 0. */
static inline double sim_test_together(int active, const dem_work_t *w)
{
  MPI_Barrier(MPI_COMM_WORLD);
  double t = active ? sim_test_charge(w) : 0.0;
  MPI_Barrier(MPI_COMM_WORLD);
  return t;
}

static inline int sim_test_on(const char *host) { return strcmp(dem_clock_host(), host) == 0; }

static inline sim_host_t sim_test_self(void)
{
  sim_host_t h;
  char err[256] = "";
  int rc = sim_host_read(&h, NULL, err, sizeof err);
  CU_ASSERT_EQUAL_FATAL(rc, 0);
  return h;
}

/* |got - want| <= rel * |want| + 1e-7 s; prints both figures when not. The absolute part
 * covers SMPI's own clock step: each MPI_Wtime() call advances simulated time by
 * smpi/wtime (10 ns by default). */
static inline int sim_test_close(double got, double want, double rel, const char *what)
{
  int ok = fabs(got - want) <= rel * fabs(want) + 1e-7;
  if (!ok) fprintf(stderr, "[%s] %s: got %.12g, expected %.12g\n", dem_clock_host(), what, got, want);
  return ok;
}
#define SIM_ASSERT_CLOSE(a, b, rel) CU_ASSERT(sim_test_close((a), (b), (rel), #a))

#endif
