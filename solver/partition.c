/* Zoltan RCB partition and particle migration (see partition.h).
 *
 * Design: Zoltan owns the decomposition. Every repartition runs RCB over the owned particles
 * (geometry = positions, unit object weights) with the balancing weights as target part sizes,
 * starting from the previous cuts (RCB_REUSE) and keeping them (KEEP_CUTS) so that
 * Zoltan_LB_Box_Assign and Zoltan_RCB_Box answer the ghost module's "whose part is near this
 * box?" questions. Zoltan_Migrate moves the particles through pack/unpack callbacks; a record
 * carries the whole state of a particle, its contact slots included: partners are named by
 * global id (nbr_gid) and each keeps its tangential spring, so the contact history survives
 * the move. The local partner indices (nbr_index) do not survive: the next contact search
 * rebuilds them from the gids (the ghost module forces it).
 *
 * Rounds (run.migrate_batch > 0): Zoltan_Migrate packs every export of a rank, sends and
 * receives them all at once; under SMPI, where every rank's buffers live in one process, a
 * repartition that moves many particles at many ranks then peaks far above the time loop (64
 * ranks, 500,000 particles, RW weights: +125 MB). With a batch, the exports go in local-index
 * order, at most `batch` per rank per Zoltan_Migrate, as many rounds as the busiest rank needs;
 * each round compacts the store (mid-migrate callback), which shifts the later exports' local
 * indices down by the number removed so far (all of them lower, in that order). The end state
 * is the same; the messages are not (more, smaller), so 0, one round, is the default.
 *
 * MPI: zoltan.h includes mpi.h itself, and Zoltan_Create needs the communicator: the
 * application's ranks (dem_parallel_comm: without the device servers, if any). Every MPI call
 * lives in parallel.c.
 * Zoltan is only created with more than one rank: a serial run has nothing to partition. */
#include "partition.h"
#include "error.h"

#include <float.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zoltan.h>

#include "clock.h"
#include "engine.h"
#include "parallel.h"
#include "particles.h"
#include "scenario.h"
#include "simulation.h"

/* One migrating particle, packed with memcpy at these byte offsets (no struct padding games):
 * id, nbr_count, radius, pos, vel, omega, force, torque, then its count used slots: nbr_gid[count]
 * and spring[3 * count] (a record's size depends on its count: rec_size). force and torque travel
 * too: velocity Verlet's next kick uses the force of the previous step. */
enum {
  REC_ID = 0,
  REC_COUNT = 4,
  REC_DOUBLES = 8, /* radius, pos[3], vel[3], omega[3], force[3], torque[3] */
  REC_NDOUBLES = 16,
  REC_GID = REC_DOUBLES + 8 * REC_NDOUBLES
};

/* bytes of the record of a particle with count slots in use, a multiple of 8 */
static int rec_size(int32_t count)
{
  return (REC_GID + 28 * count + 7) / 8 * 8;
}

struct dem_partition {
  struct Zoltan_Struct *zz; /* NULL on one rank */
  dem_sim_t *sim;
  int rank, ranks;
  int has_cuts;
  char *exported;           /* per owned particle, during a migration */
  size_t exported_cap;
  int failed;               /* a callback ran out of memory */
  size_t imported;          /* particles unpacked by the last migration */
  size_t migrated_bytes;    /* bytes of the records it packed and unpacked */
  int *procs;               /* one entry per rank, for Zoltan_LB_Box_Assign */
};

/* the export lists, as Zoltan returned them */
typedef struct exports {
  int n;
  ZOLTAN_ID_PTR gids, lids;
  int *procs, *parts;
} exports_t;

static const exports_t *sort_exports; /* qsort's context (set just around the call) */

static int by_lid(const void *a, const void *b)
{
  ZOLTAN_ID_TYPE x = sort_exports->lids[*(const int *)a], y = sort_exports->lids[*(const int *)b];
  return x < y ? -1 : x > y;
}

/* Sorts the export lists by local index (together). 0, or -1 when out of memory. */
static int sort_by_lid(exports_t *e)
{
  size_t n = (size_t)e->n;
  int *order = malloc((n ? n : 1) * sizeof *order);
  ZOLTAN_ID_TYPE *ids = malloc((n ? n : 1) * sizeof *ids);
  int *ints = malloc((n ? n : 1) * sizeof *ints);
  if (!order || !ids || !ints) {
    free(order);
    free(ids);
    free(ints);
    return -1;
  }
  for (int k = 0; k < e->n; k++) order[k] = k;
  sort_exports = e;
  qsort(order, n, sizeof *order, by_lid);
  sort_exports = NULL;
  ZOLTAN_ID_PTR id_lists[2] = {e->gids, e->lids};
  for (int l = 0; l < 2; l++) {
    for (size_t k = 0; k < n; k++) ids[k] = id_lists[l][order[k]];
    memcpy(id_lists[l], ids, n * sizeof *ids);
  }
  int *int_lists[2] = {e->procs, e->parts};
  for (int l = 0; l < 2; l++) {
    if (!int_lists[l]) continue;
    for (size_t k = 0; k < n; k++) ints[k] = int_lists[l][order[k]];
    memcpy(int_lists[l], ints, n * sizeof *ints);
  }
  free(order);
  free(ids);
  free(ints);
  return 0;
}


/* ---- Zoltan query callbacks: the owned particles ---------------------------------------- */

static int cb_num_obj(void *data, int *ierr)
{
  dem_partition_t *pt = data;
  *ierr = ZOLTAN_OK;
  return (int)pt->sim->p->n;
}

static void cb_obj_list(void *data, int ngid, int nlid, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int wdim,
                        float *wgts, int *ierr)
{
  const dem_particles_t *p = ((dem_partition_t *)data)->sim->p;
  (void)ngid; (void)nlid; (void)wdim; (void)wgts;
  for (size_t i = 0; i < p->n; i++) {
    gids[i] = (ZOLTAN_ID_TYPE)p->id[i];
    lids[i] = (ZOLTAN_ID_TYPE)i;
  }
  *ierr = ZOLTAN_OK;
}

static int cb_num_geom(void *data, int *ierr)
{
  (void)data;
  *ierr = ZOLTAN_OK;
  return 3;
}

static void cb_geom_multi(void *data, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids, int dim,
                          double *geom, int *ierr)
{
  const dem_particles_t *p = ((dem_partition_t *)data)->sim->p;
  (void)ngid; (void)nlid; (void)gids; (void)dim;
  for (int k = 0; k < num; k++) memcpy(geom + 3 * k, p->pos + 3 * (size_t)lids[k], 3 * sizeof(double));
  *ierr = ZOLTAN_OK;
}

/* ---- Zoltan migration callbacks -------------------------------------------------------- */

static void cb_obj_size_multi(void *data, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                              int *sizes, int *ierr)
{
  const dem_partition_t *pt = data;
  (void)ngid; (void)nlid; (void)gids;
  for (int k = 0; k < num; k++) sizes[k] = rec_size(pt->sim->p->nbr_count[lids[k]]);
  *ierr = ZOLTAN_OK;
}

static void pack_one(const dem_particles_t *p, size_t i, char *rec)
{
  int32_t count = p->nbr_count[i];
  memcpy(rec + REC_ID, &p->id[i], 4);
  memcpy(rec + REC_COUNT, &count, 4);
  double d[REC_NDOUBLES];
  d[0] = p->radius[i];
  memcpy(d + 1, p->pos + 3 * i, 3 * sizeof(double));
  memcpy(d + 4, p->vel + 3 * i, 3 * sizeof(double));
  memcpy(d + 7, p->omega + 3 * i, 3 * sizeof(double));
  memcpy(d + 10, p->force + 3 * i, 3 * sizeof(double));
  memcpy(d + 13, p->torque + 3 * i, 3 * sizeof(double));
  memcpy(rec + REC_DOUBLES, d, sizeof d);
  const size_t s = (size_t)p->slots;
  memset(rec + REC_GID, 0, (size_t)(rec_size(count) - REC_GID)); /* the padding too */
  memcpy(rec + REC_GID, p->nbr_gid + i * s, 4 * (size_t)count);
  memcpy(rec + REC_GID + 4 * count, p->spring + 3 * i * s, 8 * 3 * (size_t)count);
}

static void unpack_one(dem_particles_t *p, size_t i, const char *rec)
{
  int32_t count;
  memcpy(&p->id[i], rec + REC_ID, 4);
  memcpy(&count, rec + REC_COUNT, 4);
  p->nbr_count[i] = count;
  double d[REC_NDOUBLES];
  memcpy(d, rec + REC_DOUBLES, sizeof d);
  p->radius[i] = d[0];
  memcpy(p->pos + 3 * i, d + 1, 3 * sizeof(double));
  memcpy(p->vel + 3 * i, d + 4, 3 * sizeof(double));
  memcpy(p->omega + 3 * i, d + 7, 3 * sizeof(double));
  memcpy(p->force + 3 * i, d + 10, 3 * sizeof(double));
  memcpy(p->torque + 3 * i, d + 13, 3 * sizeof(double));
  /* the caller made the slots wide enough for count */
  const size_t s = (size_t)p->slots;
  memcpy(p->nbr_gid + i * s, rec + REC_GID, 4 * (size_t)count);
  memcpy(p->spring + 3 * i * s, rec + REC_GID + 4 * count, 8 * 3 * (size_t)count);
}

static void cb_pack_multi(void *data, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                          int *dest, int *sizes, int *index, char *buf, int *ierr)
{
  dem_partition_t *pt = data;
  const dem_particles_t *p = pt->sim->p;
  (void)ngid; (void)nlid; (void)gids; (void)dest;
  for (int k = 0; k < num; k++) {
    size_t i = (size_t)lids[k];
    pack_one(p, i, buf + index[k]);
    pt->exported[i] = 1;
    pt->migrated_bytes += (size_t)sizes[k];
  }
  *ierr = ZOLTAN_OK;
}

/* Between packing and unpacking: remove the exported particles, keeping the order of the
 * others. (num_import is -1 here: Zoltan computed the imports itself.) */
static void cb_mid_migrate(void *data, int ngid, int nlid, int nimp, ZOLTAN_ID_PTR igids, ZOLTAN_ID_PTR ilids,
                           int *iprocs, int *iparts, int nexp, ZOLTAN_ID_PTR egids, ZOLTAN_ID_PTR elids, int *eprocs,
                           int *eparts, int *ierr)
{
  dem_partition_t *pt = data;
  dem_particles_t *p = pt->sim->p;
  (void)ngid; (void)nlid; (void)igids; (void)ilids; (void)iprocs; (void)iparts; (void)egids; (void)elids;
  (void)eprocs; (void)eparts; (void)nexp;
  size_t kept = 0;
  for (size_t i = 0; i < p->n; i++)
    if (!pt->exported[i]) {
      if (kept != i) dem_particles_copy_one(p, kept, p, i);
      kept++;
    }
  p->n = kept;
  *ierr = ZOLTAN_OK;
}

static void cb_unpack_multi(void *data, int ngid, int num, ZOLTAN_ID_PTR gids, int *sizes, int *index, char *buf,
                            int *ierr)
{
  dem_partition_t *pt = data;
  dem_particles_t *p = pt->sim->p;
  (void)ngid; (void)gids;
  size_t need = p->n + (size_t)num;
  /* an arriving particle may have more slots in use than this rank's stride holds */
  int widest = p->slots;
  for (int k = 0; k < num; k++) {
    int32_t count;
    memcpy(&count, buf + index[k] + REC_COUNT, 4);
    if (count > widest) widest = count;
  }
  if ((need > p->cap && dem_particles_reserve(p, need + need / 8 + 16)) || dem_particles_widen_slots(p, widest)) {
    pt->failed = 1;
    *ierr = ZOLTAN_MEMERR;
    return;
  }
  for (int k = 0; k < num; k++) unpack_one(p, p->n++, buf + index[k]);
  pt->imported += (size_t)num;
  for (int k = 0; k < num; k++) pt->migrated_bytes += (size_t)sizes[k];
  *ierr = ZOLTAN_OK;
}

/* ---- life cycle ------------------------------------------------------------------------ */

static int set_param(dem_partition_t *pt, const char *name, const char *value, char *err, size_t errlen)
{
  if (Zoltan_Set_Param(pt->zz, name, value) != ZOLTAN_OK)
    return dem_fail(err, errlen, "Zoltan rejected parameter %s = %s", name, value);
  return 0;
}

dem_partition_t *dem_partition_create(dem_sim_t *sim, char *err, size_t errlen)
{
  dem_partition_t *pt = calloc(1, sizeof *pt);
  if (!pt) {
    dem_fail(err, errlen, "out of memory (partition)");
    return NULL;
  }
  pt->sim = sim;
  pt->rank = sim->rank;
  pt->ranks = sim->ranks;
  if (pt->ranks == 1) return pt;

  pt->procs = malloc((size_t)pt->ranks * sizeof *pt->procs);
  if (!pt->procs) {
    dem_fail(err, errlen, "out of memory (partition)");
    free(pt);
    return NULL;
  }
  float version = 0;
  if (Zoltan_Initialize(0, NULL, &version) != ZOLTAN_OK) {
    dem_fail(err, errlen, "Zoltan_Initialize failed");
    dem_partition_destroy(&pt);
    return NULL;
  }
  pt->zz = Zoltan_Create(dem_parallel_comm());
  if (!pt->zz) {
    dem_fail(err, errlen, "Zoltan_Create failed");
    dem_partition_destroy(&pt);
    return NULL;
  }
  char tol[32];
  snprintf(tol, sizeof tol, "%.17g", sim->sc->zoltan_imbalance_tol);
  const char *params[][2] = {
    {"DEBUG_LEVEL", "0"}, {"LB_METHOD", "RCB"}, {"NUM_GID_ENTRIES", "1"}, {"NUM_LID_ENTRIES", "1"},
    {"OBJ_WEIGHT_DIM", "0"}, /* every particle weighs 1 */
    {"RETURN_LISTS", "EXPORT"}, {"RCB_REUSE", "1"}, {"KEEP_CUTS", "1"}, {"RCB_OUTPUT_LEVEL", "0"},
    {"IMBALANCE_TOL", tol}, {"AUTO_MIGRATE", "FALSE"},
    {"CHECK_GEOM", "0"}, /* Zoltan's self-check of its output: a pass over all dots at every repartition */
  };
  int bad = 0;
  for (size_t k = 0; !bad && k < sizeof params / sizeof params[0]; k++)
    bad = set_param(pt, params[k][0], params[k][1], err, errlen);
  if (!bad)
    bad = Zoltan_Set_Num_Obj_Fn(pt->zz, cb_num_obj, pt) || Zoltan_Set_Obj_List_Fn(pt->zz, cb_obj_list, pt) ||
          Zoltan_Set_Num_Geom_Fn(pt->zz, cb_num_geom, pt) || Zoltan_Set_Geom_Multi_Fn(pt->zz, cb_geom_multi, pt) ||
          Zoltan_Set_Obj_Size_Multi_Fn(pt->zz, cb_obj_size_multi, pt) ||
          Zoltan_Set_Pack_Obj_Multi_Fn(pt->zz, cb_pack_multi, pt) ||
          Zoltan_Set_Mid_Migrate_PP_Fn(pt->zz, cb_mid_migrate, pt) ||
          Zoltan_Set_Unpack_Obj_Multi_Fn(pt->zz, cb_unpack_multi, pt);
  if (bad) {
    if (!err[0]) dem_fail(err, errlen, "Zoltan rejected a query function");
    dem_partition_destroy(&pt);
    return NULL;
  }
  return pt;
}

void dem_partition_destroy(dem_partition_t **pt)
{
  if (!*pt) return;
  if ((*pt)->zz) Zoltan_Destroy(&(*pt)->zz);
  free((*pt)->exported);
  free((*pt)->procs);
  free(*pt);
  *pt = NULL;
}

int dem_partition_has_cuts(const dem_partition_t *pt) { return pt->has_cuts; }

/* ---- repartition + migration ----------------------------------------------------------- */

int dem_partition_repartition(dem_partition_t *pt, dem_sim_t *sim, const double *weights, char *err, size_t errlen)
{
  if (pt->ranks == 1) return 0;
  dem_particles_t *p = sim->p;
  pt->sim = sim;
  if (dem_engine_pull(sim->engine, DEM_F_ALL, 0, p->n))
    return dem_fail(err, errlen, "repartition: device -> host: %s", dem_engine_error(sim->engine));
  p->n_ghost = 0; /* ghosts belong to the old decomposition */

  /* target part sizes: this rank states its own part's size (Zoltan gathers them) */
  int part = pt->rank, idx = 0;
  float size = (float)weights[pt->rank];
  if (Zoltan_LB_Set_Part_Sizes(pt->zz, 1, -1, NULL, NULL, NULL) != ZOLTAN_OK ||
      Zoltan_LB_Set_Part_Sizes(pt->zz, 1, 1, &part, &idx, &size) != ZOLTAN_OK)
    return dem_fail(err, errlen, "Zoltan_LB_Set_Part_Sizes failed (weight %g for rank %d)", weights[pt->rank], pt->rank);

  int changes = 0, ngid = 0, nlid = 0, nimp = 0, nexp = 0;
  ZOLTAN_ID_PTR igids = NULL, ilids = NULL, egids = NULL, elids = NULL;
  int *iprocs = NULL, *iparts = NULL, *eprocs = NULL, *eparts = NULL;
  int rc = Zoltan_LB_Partition(pt->zz, &changes, &ngid, &nlid, &nimp, &igids, &ilids, &iprocs, &iparts, &nexp,
                               &egids, &elids, &eprocs, &eparts);
  dem_work_t w = {.kind = DEM_WORK_PARTITION, .particles = (double)sim->total_particles, .ranks = pt->ranks};
  dem_clock_charge(&w);
  int bad = rc != ZOLTAN_OK && rc != ZOLTAN_WARN;
  dem_parallel_max_int(&bad, 1);
  if (bad) {
    Zoltan_LB_Free_Part(&igids, &ilids, &iprocs, &iparts);
    Zoltan_LB_Free_Part(&egids, &elids, &eprocs, &eparts);
    return dem_fail(err, errlen, "Zoltan RCB failed (code %d on rank %d)", rc, pt->rank);
  }
  pt->has_cuts = 1;

  pt->failed = 0;
  pt->imported = 0;
  pt->migrated_bytes = 0;
  exports_t e = {nexp, egids, elids, eprocs, eparts};
  const long batch = sim->sc->migrate_batch;
  int rounds = 1;
  if (batch > 0) {
    /* every rank takes part in every round (Zoltan_Migrate is collective) */
    rounds = (int)(((long)nexp + batch - 1) / batch);
    if (rounds > 1 && sort_by_lid(&e)) bad = 1;
    dem_parallel_max_int(&rounds, 1);
  }
  size_t removed = 0;
  for (int r = 0; r < rounds; r++) {
    long first = batch > 0 ? (long)r * batch : 0, count = (long)nexp - first;
    if (batch > 0 && count > batch) count = batch;
    if (count < 0 || bad) count = 0;
    for (long k = first; k < first + count; k++) e.lids[k] -= (ZOLTAN_ID_TYPE)removed;
    if (p->n > pt->exported_cap) {
      free(pt->exported);
      pt->exported_cap = p->n + p->n / 4 + 16;
      pt->exported = malloc(pt->exported_cap);
      if (!pt->exported) {
        pt->exported_cap = 0;
        bad = 1;
      }
    }
    if (pt->exported) memset(pt->exported, 0, p->n);
    /* every rank calls Zoltan_Migrate (it is collective), even with nothing to move */
    /* this round's slice of the lists (the lists themselves in one round; none past their end) */
#define SLICE(list) (first == 0 ? (list) : count > 0 ? (list) + first : NULL)
    rc = bad ? ZOLTAN_MEMERR
             : Zoltan_Migrate(pt->zz, -1, NULL, NULL, NULL, NULL, (int)count, SLICE(e.gids), SLICE(e.lids),
                              SLICE(e.procs), SLICE(e.parts));
#undef SLICE
    removed += (size_t)count;
    bad = (rc != ZOLTAN_OK && rc != ZOLTAN_WARN) || pt->failed;
    /* a failed round stops the later ones on every rank (they are collective) */
    if (rounds > 1) dem_parallel_max_int(&bad, 1);
    if (bad) break;
  }
  Zoltan_LB_Free_Part(&igids, &ilids, &iprocs, &iparts);
  Zoltan_LB_Free_Part(&egids, &elids, &eprocs, &eparts);
  dem_parallel_max_int(&bad, 1);
  if (bad) return dem_fail(err, errlen, "Zoltan_Migrate failed (code %d on rank %d%s)", rc, pt->rank,
                       pt->failed ? ": out of memory" : "");

  /* the records packed here and unpacked here, plus compacting the store */
  w = (dem_work_t){.kind = DEM_WORK_PACK,
                   .bytes = (double)pt->migrated_bytes +
                            (double)dem_particles_bytes_per_particle(p->slots) * (double)p->n};
  dem_clock_charge(&w);

  if (dem_engine_resize(sim->engine) || dem_engine_push(sim->engine, DEM_F_ALL, 0, p->n))
    return dem_fail(err, errlen, "repartition: host -> device: %s", dem_engine_error(sim->engine));
  return 0;
}

/* ---- part boxes ------------------------------------------------------------------------ */

int dem_partition_box_ranks(const dem_partition_t *pt, const double lo[3], const double hi[3], int *out, int max)
{
  if (!pt->zz || !pt->has_cuts) return 0;
  /* Zoltan writes up to one entry per rank: into the scratch list, then at most max */
  int n = 0;
  int rc = Zoltan_LB_Box_Assign(pt->zz, lo[0], lo[1], lo[2], hi[0], hi[1], hi[2], pt->procs, &n);
  if (rc != ZOLTAN_OK && rc != ZOLTAN_WARN) return -1;
  if (n > max) n = max;
  memcpy(out, pt->procs, (size_t)n * sizeof *out);
  return n;
}

int dem_partition_part_box(const dem_partition_t *pt, int part, double lo[3], double hi[3])
{
  if (!pt->zz || !pt->has_cuts) {
    for (int a = 0; a < 3; a++) {
      lo[a] = -DBL_MAX;
      hi[a] = DBL_MAX;
    }
    return 0;
  }
  int ndim = 0;
  int rc = Zoltan_RCB_Box(pt->zz, part, &ndim, &lo[0], &lo[1], &lo[2], &hi[0], &hi[1], &hi[2]);
  return rc == ZOLTAN_OK || rc == ZOLTAN_WARN ? 0 : -1;
}
