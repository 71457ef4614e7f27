/* rcbprobe: what one Zoltan RCB call costs on this machine, and how much of it is new memory.
 *
 *   mpicc -O2 validation/probes/rcbprobe.c -I/usr/include/trilinos -ltrilinos_zoltan -o rcbprobe
 *   mpirun -np 1 ./rcbprobe [particles]        (default 500,000: the study's lattice, 100 x 100 x 50)
 *
 * One process cuts the lattice into 2, 4, 8 and 16 parts (LB_METHOD=RCB, geometry through the
 * multi-point callback, as solver/domain/partition.c does), three calls each, and prints per call the
 * wall time and the minor page faults it took (getrusage): Zoltan allocates its dots afresh in
 * every call, so each call writes new memory, which the OS maps a page at a time. sim/cost.c's
 * RCB constants come from these figures: the faults x 4 KiB over the particles are the scratch
 * charged at a host's first_touch_bw (RCB_FRESH_BYTES_PER_PARTICLE), the time less the faults
 * at this machine's first-touch rate (validation/probes/bwprobe.c --first-touch) is the compute. */
#include <mpi.h>
#include <zoltan.h>

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static int n_points;
static double *xyz;

static int num_obj(void *d, int *ierr)
{
  (void)d;
  *ierr = ZOLTAN_OK;
  return n_points;
}

static void obj_list(void *d, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim, float *w, int *ierr)
{
  (void)d; (void)ngid; (void)nlid; (void)wdim; (void)w;
  for (int i = 0; i < n_points; i++) gids[i] = lids[i] = (ZOLTAN_ID_TYPE)i;
  *ierr = ZOLTAN_OK;
}

static int num_geom(void *d, int *ierr)
{
  (void)d;
  *ierr = ZOLTAN_OK;
  return 3;
}

static void geom_multi(void *d, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int dim,
                       double *v, int *ierr)
{
  (void)d; (void)ngid; (void)nlid; (void)gids; (void)dim;
  for (int i = 0; i < num; i++)
    for (int c = 0; c < 3; c++) v[3 * i + c] = xyz[3 * lids[i] + c];
  *ierr = ZOLTAN_OK;
}

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static long minor_faults(void)
{
  struct rusage r;
  getrusage(RUSAGE_SELF, &r);
  return r.ru_minflt;
}

int main(int argc, char **argv)
{
  MPI_Init(&argc, &argv);
  float version;
  if (Zoltan_Initialize(argc, argv, &version) != ZOLTAN_OK) return 1;
  n_points = argc > 1 ? atoi(argv[1]) : 500000;
  if (n_points < 1000) {
    fprintf(stderr, "rcbprobe: particles must be at least 1000\n");
    return 2;
  }
  xyz = malloc(3 * (size_t)n_points * sizeof *xyz);
  if (!xyz) return 1;
  for (int i = 0; i < n_points; i++) { /* lattice rows of 100, planes of 100 x 100, 1 cm apart */
    xyz[3 * i] = 0.01 * (i % 100);
    xyz[3 * i + 1] = 0.01 * ((i / 100) % 100);
    xyz[3 * i + 2] = 0.01 * (i / 10000);
  }
  const int parts[] = {2, 4, 8, 16};
  printf("%8s %6s %10s %8s %12s %14s\n", "parts", "call", "ms", "faults", "B/particle", "ns/particle");
  for (int k = 0; k < 4; k++)
    for (int call = 0; call < 3; call++) {
      struct Zoltan_Struct *zz = Zoltan_Create(MPI_COMM_WORLD);
      char np[16];
      snprintf(np, sizeof np, "%d", parts[k]);
      Zoltan_Set_Param(zz, "LB_METHOD", "RCB");
      Zoltan_Set_Param(zz, "NUM_GLOBAL_PARTS", np);
      Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
      Zoltan_Set_Param(zz, "RETURN_LISTS", "EXPORT");
      Zoltan_Set_Num_Obj_Fn(zz, num_obj, NULL);
      Zoltan_Set_Obj_List_Fn(zz, obj_list, NULL);
      Zoltan_Set_Num_Geom_Fn(zz, num_geom, NULL);
      Zoltan_Set_Geom_Multi_Fn(zz, geom_multi, NULL);
      int changes, ngid, nlid, nimp, nexp, *iproc, *ipart, *eproc, *epart;
      ZOLTAN_ID_PTR igid, ilid, egid, elid;
      long f0 = minor_faults();
      double t0 = now();
      int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igid, &ilid, &iproc, &ipart, &nexp, &egid,
                                   &elid, &eproc, &epart);
      double t = now() - t0;
      long faults = minor_faults() - f0;
      if (rc != ZOLTAN_OK) return 1;
      Zoltan_LB_Free_Part(&igid, &ilid, &iproc, &ipart);
      Zoltan_LB_Free_Part(&egid, &elid, &eproc, &epart);
      Zoltan_Destroy(&zz);
      printf("%8d %6d %10.1f %8ld %12.1f %14.0f\n", parts[k], call + 1, 1e3 * t, faults, 4096.0 * faults / n_points,
             1e9 * t / n_points);
    }
  free(xyz);
  MPI_Finalize();
  return 0;
}
