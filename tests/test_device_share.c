/* Several ranks of one process on one OpenCL device, as under SMPI: each rank builds its own
 * device (kernel objects, buffers) over the process's shared context and program, binds a store
 * whose size changes at every "repartition" (and grows, as a rank's part does under RW), queues
 * kernels without waiting (whole ranges, and ranges that start at an offset, as the forces run
 * ahead of the ghost exchange), and yields to the other ranks at a barrier between steps, so that
 * the ranks' commands are in flight on the device together. At the end every device is
 * released while the others still hold the program.
 *
 * PoCL 3.1's CPU driver (Debian 12) keeps one cached work-group function per kernel, local size,
 * grid width and global-offset class, takes it when a command starts and gives it back when the
 * command ends; but it looks the item up again at the end by kernel and local size only, so two
 * commands of one kernel in flight at once with different grid widths or offsets release each
 * other's item, and the count of one of them reaches zero with a command still using it
 * (abort: "pocl_release_dlhandle_cache: Assertion `found->ref_count > 0' failed"). Here every
 * step's first force launch is wider than any before it and the second starts at an offset, as
 * in a run whose parts grow at repartitions. This suite crashed that way in 10 of 10 runs before
 * solver/device/device.c launched without offsets and emptied the process's queues before a kernel's
 * first launch wider than all before (8 of 10 with the offsets gone but without that wait).
 *
 * The physics check is a closed form: the particles start at rest and apart, away from the
 * walls; after s whole steps of velocity Verlet under gravity alone, v_z = g (s - 1) dt (the
 * first step only computes forces), to rounding. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dem/params.h"
#include "dem/particles.h"
#include "device/device.h"
#include "device/engine.h"
#include "physics_testing.h"
#include "testing.h"

#define ROUNDS 24 /* repartitions */
#define STEPS 24  /* steps between two repartitions */
#define SPACING 0.01      /* m */
#define DT 1e-6           /* s */

typedef struct {
  dem_params_t prm;
  double vec[DEM_DEVICE_P_COUNT];
  dem_particles_t *p;
  dem_device_t *dev;
  int steps; /* whole steps done on the bound store */
} rank_state_t;

static int check(rank_state_t *r, int rc, const char *what)
{
  if (rc != 0) fprintf(stderr, "device (%s): %s: %s\n", r->dev ? dem_device_name(r->dev) : "-", what,
                       r->dev ? dem_device_error(r->dev) : "");
  return rc;
}

/* a new part for this rank: 40 x 40 x nz particles at rest, apart (0.99 x spacing), lifted off
 * the floor; nz differs between ranks and grows with the round */
static int rank_repartition(rank_state_t *r, int rank, int round)
{
  if (r->dev && check(r, dem_device_finish(r->dev), "finish before the repartition") != 0) return -1;
  dem_particles_destroy(&r->p);
  int nz = 4 + 3 * ((rank + round) % 4) + round;
  r->prm = dem_test_params(DT, 0.005 * SPACING);
  r->p = dem_test_lattice(&r->prm, 40, 40, nz, SPACING, 0.99 * SPACING, 0.0, 0.0, 0.0, 0, 7 + (uint64_t)rank);
  char err[256];
  if (!r->p || dem_params_derive(&r->prm, err, sizeof(err)) != 0) return -1;
  r->prm.box_hi[2] += 4.0 * SPACING;
  for (size_t i = 0; i < r->p->n; ++i) r->p->pos[3 * i + 2] += 2.0 * SPACING;
  for (int d = 0; d < 2; ++d) { /* room beside the lateral walls too */
    r->prm.box_lo[d] -= SPACING;
    r->prm.box_hi[d] += SPACING;
  }
  dem_engine_pack_params(&r->prm, r->vec);
  r->steps = 0;
  if (check(r, dem_device_bind(r->dev, r->p), "bind") != 0) return -1;
  return check(r, dem_device_set_params(r->dev, r->vec), "params");
}

/* one whole step, queued without waiting: the kick-drift (half a kick on the store's second
 * step, as velocity Verlet starts), then the forces in two ranges, the second at a global
 * offset as the forces ahead of the ghost exchange are, each a pair pass and a wall pass (its
 * list, rebuilt after each bind, is empty here: the particles are away from the walls); the
 * first step of a store only computes the forces */
static int rank_step(rank_state_t *r)
{
  size_t n = r->p->n, half = n * (size_t)(r->steps % STEPS + 1) / (STEPS + 2);
  double bytes = 0.0;
  if (r->steps > 0 &&
      check(r, dem_device_kick_drift(r->dev, r->steps == 1 ? 0.5 : 1.0, &bytes), "kick-drift") != 0)
    return -1;
  if (check(r, dem_device_forces_range(r->dev, DEM_DEVICE_FORCES_ALL, 0, half), "forces [0, half)") != 0 ||
      check(r, dem_device_forces_range(r->dev, DEM_DEVICE_WALLS_ALL, 0, half), "walls [0, half)") != 0 ||
      check(r, dem_device_forces_range(r->dev, DEM_DEVICE_FORCES_ALL, half, n), "forces [half, n)") != 0 ||
      check(r, dem_device_forces_range(r->dev, DEM_DEVICE_WALLS_ALL, half, n), "walls [half, n)") != 0)
    return -1;
  r->steps++;
  return 0;
}

/* the last half kick, then v_z of every particle against g (s - 1) dt after s steps (the first
 * only computed forces) */
static double rank_worst_vz(rank_state_t *r)
{
  if (check(r, dem_device_kick(r->dev), "kick") != 0 || check(r, dem_device_finish(r->dev), "finish") != 0)
    return INFINITY;
  double bytes = 0.0;
  if (check(r, dem_device_read(r->dev, DEM_F_VEL, 0, r->p->n, &bytes), "read velocities") != 0) return INFINITY;
  double want = r->prm.gravity[2] * (r->steps - 1) * r->prm.dt, worst = 0.0;
  for (size_t i = 0; i < r->p->n; ++i) {
    double d = fabs(r->p->vel[3 * i + 2] - want) / fabs(want);
    if (d > worst) worst = d;
  }
  return worst;
}

static void test_ranks_share_the_device(void)
{
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  rank_state_t r;
  memset(&r, 0, sizeof(r));
  char err[512];
  r.dev = dem_device_create(-1, -1, "any", err, sizeof(err));
  if (!r.dev) fprintf(stderr, "rank %d: no OpenCL device: %s\n", rank, err);
  CU_ASSERT_PTR_NOT_NULL_FATAL(r.dev);
  int failed = 0;
  double worst = 0.0;
  for (int round = 0; round < ROUNDS && !failed; ++round) {
    failed |= rank_repartition(&r, rank, round) != 0;
    for (int s = 0; s < STEPS && !failed; ++s) {
      failed |= rank_step(&r) != 0;
      MPI_Barrier(MPI_COMM_WORLD); /* the next rank queues its step while this one's runs */
    }
    double w = failed ? INFINITY : rank_worst_vz(&r);
    if (w > worst) worst = w;
  }
  CU_ASSERT_EQUAL(failed, 0);
  printf("\n    rank %d of %d: %d repartitions, worst |v_z - g t| / |g t| = %.2e", rank, size, ROUNDS, worst);
  CU_ASSERT(worst < 1e-12);
  /* ranks drop their devices one after the other while the rest still run kernels */
  for (int k = 0; k < size; ++k) {
    if (k == rank) dem_device_destroy(&r.dev);
    else if (r.dev) failed |= rank_step(&r) != 0;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  CU_ASSERT_EQUAL(failed, 0);
  CU_ASSERT_PTR_NULL(r.dev);
  dem_particles_destroy(&r.p);
}

static CU_TestInfo tests[] = {
  {"ranks build, use and release kernels over repartitions", test_ranks_share_the_device},
  CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
  {"device shared by the ranks of a process", NULL, NULL, NULL, NULL, tests},
  CU_SUITE_INFO_NULL,
};
DEM_TEST_MAIN(suites)
