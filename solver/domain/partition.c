/* Zoltan partition and particle migration (see partition.h).
 *
 * Design: Zoltan owns the decomposition. Every repartition runs the scenario's partitioner over
 * the owned particles (unit object weights) with the balancing weights as target part sizes.
 * Each partitioner is one descriptor in the table `partitioners` below: its Zoltan method and
 * parameters, and which query functions it needs. They stay in this one file because it is the
 * only one that may call Zoltan; what differs between them is data (the table) and two groups
 * of query functions (geometry; neighbour structure), not control flow.
 *   RCB (the default): geometry = positions, starting from the previous cuts (RCB_REUSE) and
 *     keeping them (KEEP_CUTS), so that Zoltan_RCB_Box answers what a part's box is.
 *   RIB, HSFC: geometry too. Every partitioner's ghosts are found the same way, from the
 *     particles (ghosts.c), not from part boxes.
 *   PHG (LB_METHOD HYPERGRAPH, package PHG): one hyperedge per owned particle, its pins the
 *     particle and every particle its neighbour list names (owned or ghost, by global id), so
 *     that the connectivity (lambda - 1) cut PHG minimises is the number of ghost copies.
 *   GRAPH (LB_METHOD GRAPH, GRAPH_PACKAGE PHG): one edge per neighbour pair, the neighbour's
 *     owner taken from the ghost module (ghosts are copies of other ranks' particles).
 *   Both connectivity partitioners repartition (LB_APPROACH REPARTITION) with
 *   PHG_REPART_MULTIPLIER = the bytes a cut costs until the next repartition (a ghost's state
 *   each step, run.repartition_every steps), against the migration volume in bytes (the
 *   records' sizes, cb_obj_size_multi): the trade-off the user guide describes. Before the
 *   first contact search (or with every particle apart) there are no neighbour lists: RCB, a
 *   second Zoltan_Struct, then balances the parts (and PHG starts from them the next time).
 * Zoltan_Migrate moves the particles through pack/unpack callbacks; a record carries the whole
 * state of a particle, its contact slots included: partners are named by global id (nbr_gid)
 * and each keeps its tangential spring, so the contact history survives the move. The local
 * partner indices (nbr_index) do not survive: the next contact search rebuilds them from the
 * gids (the ghost module forces it).
 *
 * Measured (dem_partition_stats, no collective during the run): Zoltan_LB_Partition's time,
 * migration time and volume, and the edge cut of the neighbour structure at each repartition.
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
#include "base/error.h"
#include "domain/partition.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zoltan.h>

#include "balance/balance.h"
#include "base/clock.h"
#include "base/parallel.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "domain/adjacency.h"
#include "domain/ghosts.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

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

/* How the neighbour structure reaches Zoltan */
typedef enum { CONN_NONE, CONN_HYPERGRAPH, CONN_GRAPH } conn_t;

/* One partitioner: its Zoltan method, its own parameters (after the common ones) and what it
 * reads. */
typedef struct partitioner {
  const char *name;        /* run.partitioner */
  const char *params[8][2];
  conn_t conn;
  int boxes;               /* part boxes for ghosts.c (Zoltan_RCB_Box) */
  int hier;                /* LB_METHOD HIER: RCB across the sites, then RCB within each */
} partitioner_t;

static const partitioner_t partitioners[] = {
  {"RCB", {{"LB_METHOD", "RCB"}, {"RCB_REUSE", "1"}, {"KEEP_CUTS", "1"}, {"RCB_OUTPUT_LEVEL", "0"},
           {"CHECK_GEOM", "0"}}, CONN_NONE, 1, 0},
  {"RIB", {{"LB_METHOD", "RIB"}, {"RIB_OUTPUT_LEVEL", "0"}, {"CHECK_GEOM", "0"}}, CONN_NONE, 0, 0},
  {"HSFC", {{"LB_METHOD", "HSFC"}}, CONN_NONE, 0, 0},
  {"PHG", {{"LB_METHOD", "HYPERGRAPH"}, {"HYPERGRAPH_PACKAGE", "PHG"}, {"LB_APPROACH", "REPARTITION"},
           {"PHG_OUTPUT_LEVEL", "0"}, {"CHECK_HYPERGRAPH", "0"}, {"EDGE_WEIGHT_DIM", "0"}}, CONN_HYPERGRAPH, 0, 0},
  {"GRAPH", {{"LB_METHOD", "GRAPH"}, {"GRAPH_PACKAGE", "PHG"}, {"LB_APPROACH", "REPARTITION"},
             {"PHG_OUTPUT_LEVEL", "0"}, {"CHECK_GRAPH", "0"}, {"EDGE_WEIGHT_DIM", "0"}}, CONN_GRAPH, 0, 0},
  {"HIER", {{"LB_METHOD", "HIER"}, {"HIER_DEBUG_LEVEL", "0"}}, CONN_NONE, 0, 1},
};

struct dem_partition {
  struct Zoltan_Struct *zz; /* NULL on one rank */
  struct Zoltan_Struct *zz_geo; /* connectivity partitioners: RCB, for when there is no neighbour list */
  const partitioner_t *desc;
  int calls;                /* repartitions so far, the set-up one included */
  dem_partition_stats_t stats;
  /* neighbour structure of the owned particles, built for each partition and freed after it */
  dem_adjacency_t adj;
  dem_sim_t *sim;
  int rank, ranks;
  int has_cuts;
  char *exported;           /* per owned particle, during a migration */
  size_t exported_cap;
  int failed;               /* a callback ran out of memory */
  size_t imported;          /* particles unpacked by the last migration */
  size_t compacted;         /* particles its compaction moved down the store (cb_mid_migrate) */
  size_t migrated_bytes;    /* bytes of the records it packed and unpacked */
  size_t packed_bytes;      /* of those, packed (sent) */
  size_t packed_wan_bytes;  /* of those, sent to another site's rank (platform.sites) */
  int hier_part[2];         /* HIER: this rank's site, and its index among its site's ranks */
  /* HIER between cross-site repartitions: RCB over this site's ranks only (its communicator) */
  struct Zoltan_Struct *zz_site;
  MPI_Comm site_comm;
  int *site_ranks;          /* application rank of each rank of the site communicator */
  int n_site_ranks;
  double *site_share;       /* each site's share of the weights at the last cross-site partition */
  int n_sites;
  struct Zoltan_Struct *zz_now; /* the Zoltan_Struct of the repartition under way */
  const int *dest_rank;     /* its processes' application ranks (NULL: the same numbers) */
  const int *imp_procs;     /* the migration in progress: its imports' processes (cb_mid_migrate) */
  int n_imp;
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

/* ---- Zoltan query callbacks: the neighbour structure ----------------------------------- */

/* hypergraph, compressed edge format: one hyperedge per owned particle (the particle, then its
 * partners) */
static void cb_hg_size_cs(void *data, int *num_lists, int *num_pins, int *format, int *ierr)
{
  const dem_partition_t *pt = data;
  size_t n = pt->sim->p->n;
  *num_lists = (int)n;
  *num_pins = (int)(n + pt->adj.first[n]);
  *format = ZOLTAN_COMPRESSED_EDGE;
  *ierr = ZOLTAN_OK;
}

static void cb_hg_cs(void *data, int ngid, int nlists, int npins, int format, ZOLTAN_ID_PTR edge_gids, int *edge_ptr,
                     ZOLTAN_ID_PTR pins, int *ierr)
{
  const dem_partition_t *pt = data;
  const dem_particles_t *p = pt->sim->p;
  (void)ngid; (void)npins; (void)format;
  int k = 0;
  for (int i = 0; i < nlists; i++) {
    edge_gids[i] = (ZOLTAN_ID_TYPE)p->id[i];
    edge_ptr[i] = k;
    pins[k++] = (ZOLTAN_ID_TYPE)p->id[i];
    for (size_t a = pt->adj.first[i]; a < pt->adj.first[i + 1]; a++) pins[k++] = (ZOLTAN_ID_TYPE)pt->adj.gid[a];
  }
  *ierr = ZOLTAN_OK;
}

/* graph: one edge per partner, with the partner's owner */
static void cb_num_edges_multi(void *data, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                               int *num_edges, int *ierr)
{
  const dem_partition_t *pt = data;
  (void)ngid; (void)nlid; (void)gids;
  for (int k = 0; k < num; k++) num_edges[k] = (int)(pt->adj.first[lids[k] + 1] - pt->adj.first[lids[k]]);
  *ierr = ZOLTAN_OK;
}

static void cb_edge_list_multi(void *data, int ngid, int nlid, int num, ZOLTAN_ID_PTR gids, ZOLTAN_ID_PTR lids,
                               int *num_edges, ZOLTAN_ID_PTR nbor_gids, int *nbor_procs, int wdim, float *ewgts,
                               int *ierr)
{
  const dem_partition_t *pt = data;
  (void)ngid; (void)nlid; (void)gids; (void)num_edges; (void)wdim; (void)ewgts;
  size_t q = 0;
  for (int k = 0; k < num; k++)
    for (size_t a = pt->adj.first[lids[k]]; a < pt->adj.first[lids[k] + 1]; a++, q++) {
      nbor_gids[q] = (ZOLTAN_ID_TYPE)pt->adj.gid[a];
      nbor_procs[q] = pt->adj.proc[a];
    }
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
  const int *site = pt->sim->sc->n_site_list ? pt->sim->sc->site : NULL;
  (void)ngid; (void)nlid; (void)gids;
  for (int k = 0; k < num; k++) {
    size_t i = (size_t)lids[k];
    pack_one(p, i, buf + index[k]);
    pt->exported[i] = 1;
    pt->migrated_bytes += (size_t)sizes[k];
    pt->packed_bytes += (size_t)sizes[k];
    int to = pt->dest_rank ? pt->dest_rank[dest[k]] : dest[k];
    dem_parallel_moved(to, (double)sizes[k], 1);
    if (site && site[to] != site[pt->rank]) pt->packed_wan_bytes += (size_t)sizes[k];
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
  (void)ngid; (void)nlid; (void)igids; (void)ilids; (void)iparts; (void)egids; (void)elids;
  (void)eprocs; (void)eparts; (void)nexp;
  pt->imp_procs = iprocs; /* Zoltan's, until Zoltan_Migrate returns: cb_unpack_multi reads them */
  pt->n_imp = nimp;
  /* run by run of kept particles, array by array: a streaming copy (particle by particle and
   * field by field it took 1.4 to 2 times as long: calibrate_cost's compact rows,
   * BENCHMARKS-history.md, "The migration on whole cores") */
  size_t kept = 0;
  for (size_t i = 0; i < p->n;) {
    size_t end = i;
    while (end < p->n && !pt->exported[end]) end++;
    if (kept != i) {
      dem_particles_move_rows(p, kept, i, end - i);
      pt->compacted += end - i;
    }
    kept += end - i;
    i = end + 1; /* past the export that ended the run (or past n) */
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
  for (int k = 0; k < num; k++) {
    pt->migrated_bytes += (size_t)sizes[k];
    /* the k-th import's process, as Zoltan listed them (where the lists match) */
    int from = k < pt->n_imp && pt->imp_procs ? pt->imp_procs[k] : -1;
    if (from >= 0 && pt->dest_rank) from = pt->dest_rank[from];
    dem_parallel_moved(from, (double)sizes[k], 0);
  }
  *ierr = ZOLTAN_OK;
}

/* HIER's two levels: level 0 cuts the domain into the sites (parts = site numbers, target sizes =
 * the sums of their ranks' weights: Zoltan adds them up), level 1 each site into its ranks. */
static int cb_hier_levels(void *data, int *ierr)
{
  (void)data;
  *ierr = ZOLTAN_OK;
  return 2;
}

static int cb_hier_part(void *data, int level, int *ierr)
{
  const dem_partition_t *pt = data;
  *ierr = ZOLTAN_OK;
  return pt->hier_part[level != 0];
}

/* RCB at both levels: one plane between two sites, RCB's usual cuts inside a site.
 * HIER sends a level's objects to the processes Zoltan's export lists name, and the next level
 * takes them as its own: with fewer parts than processes, Zoltan spreads part k over a block of
 * consecutive processes of equal size, which straddles two sites unless the sites are all of
 * one size. At level 0 each site's part therefore lives on its first rank only
 * (NUM_LOCAL_PARTS 1 there, 0 elsewhere; scenario.c numbers the sites in the order of their
 * first ranks, so that part k is site k): its objects all reach the site, and level 1 spreads
 * them over its ranks. */
static void cb_hier_method(void *data, int level, struct Zoltan_Struct *zz, int *ierr)
{
  const dem_partition_t *pt = data;
  char tol[32];
  snprintf(tol, sizeof tol, "%.17g", pt->sim->sc->zoltan_imbalance_tol);
  int bad = Zoltan_Set_Param(zz, "LB_METHOD", "RCB") || Zoltan_Set_Param(zz, "RCB_OUTPUT_LEVEL", "0") ||
            Zoltan_Set_Param(zz, "CHECK_GEOM", "0") || Zoltan_Set_Param(zz, "IMBALANCE_TOL", tol) ||
            Zoltan_Set_Param(zz, "DEBUG_LEVEL", "0");
  if (!bad && level == 0) bad = Zoltan_Set_Param(zz, "NUM_LOCAL_PARTS", pt->hier_part[1] == 0 ? "1" : "0");
  *ierr = bad ? ZOLTAN_FATAL : ZOLTAN_OK;
}

/* ---- life cycle ------------------------------------------------------------------------ */

static int set_param(struct Zoltan_Struct *zz, const char *name, const char *value, char *err, size_t errlen)
{
  if (Zoltan_Set_Param(zz, name, value) != ZOLTAN_OK)
    return dem_fail(err, errlen, "Zoltan rejected parameter %s = %s", name, value);
  return 0;
}

/* A Zoltan_Struct running partitioner d over pt's particles on the ranks of comm. NULL with a
 * message. */
static struct Zoltan_Struct *zoltan_for(dem_partition_t *pt, const partitioner_t *d, MPI_Comm comm, char *err,
                                        size_t errlen)
{
  struct Zoltan_Struct *zz = Zoltan_Create(comm);
  if (!zz) {
    dem_fail(err, errlen, "Zoltan_Create failed");
    return NULL;
  }
  const dem_scenario_t *sc = pt->sim->sc;
  char tol[32], mult[32];
  snprintf(tol, sizeof tol, "%.17g", sc->zoltan_imbalance_tol);
  /* a cut edge costs one ghost's state (STATE_DOUBLES in ghosts.c) each step until the next
   * repartition; a migration costs its record's bytes */
  snprintf(mult, sizeof mult, "%.17g", 72.0 * (double)sc->repartition_every);
  const char *common[][2] = {
    {"NUM_GID_ENTRIES", "1"}, {"NUM_LID_ENTRIES", "1"},
    {"OBJ_WEIGHT_DIM", "0"}, /* every particle weighs 1 */
    {"RETURN_LISTS", "EXPORT"}, {"IMBALANCE_TOL", tol}, {"AUTO_MIGRATE", "FALSE"},
    {d->conn != CONN_NONE ? "PHG_REPART_MULTIPLIER" : NULL, mult},
  };
  /* the method first (LB_METHOD leads each descriptor), then what every method shares */
  int bad = set_param(zz, "DEBUG_LEVEL", "0", err, errlen);
  for (size_t k = 0; !bad && k < 8 && d->params[k][0]; k++) bad = set_param(zz, d->params[k][0], d->params[k][1], err, errlen);
  for (size_t k = 0; !bad && k < sizeof common / sizeof common[0]; k++)
    if (common[k][0]) bad = set_param(zz, common[k][0], common[k][1], err, errlen);
  if (!bad)
    bad = Zoltan_Set_Num_Obj_Fn(zz, cb_num_obj, pt) || Zoltan_Set_Obj_List_Fn(zz, cb_obj_list, pt) ||
          Zoltan_Set_Obj_Size_Multi_Fn(zz, cb_obj_size_multi, pt) || Zoltan_Set_Pack_Obj_Multi_Fn(zz, cb_pack_multi, pt) ||
          Zoltan_Set_Mid_Migrate_PP_Fn(zz, cb_mid_migrate, pt) || Zoltan_Set_Unpack_Obj_Multi_Fn(zz, cb_unpack_multi, pt);
  if (!bad && d->conn == CONN_NONE)
    bad = Zoltan_Set_Num_Geom_Fn(zz, cb_num_geom, pt) || Zoltan_Set_Geom_Multi_Fn(zz, cb_geom_multi, pt);
  if (!bad && d->hier)
    bad = Zoltan_Set_Hier_Num_Levels_Fn(zz, cb_hier_levels, pt) || Zoltan_Set_Hier_Part_Fn(zz, cb_hier_part, pt) ||
          Zoltan_Set_Hier_Method_Fn(zz, cb_hier_method, pt);
  if (!bad && d->conn == CONN_HYPERGRAPH)
    bad = Zoltan_Set_HG_Size_CS_Fn(zz, cb_hg_size_cs, pt) || Zoltan_Set_HG_CS_Fn(zz, cb_hg_cs, pt);
  if (!bad && d->conn == CONN_GRAPH)
    bad = Zoltan_Set_Num_Edges_Multi_Fn(zz, cb_num_edges_multi, pt) ||
          Zoltan_Set_Edge_List_Multi_Fn(zz, cb_edge_list_multi, pt);
  if (bad) {
    if (!err[0]) dem_fail(err, errlen, "Zoltan rejected a query function");
    Zoltan_Destroy(&zz);
    return NULL;
  }
  return zz;
}

/* HIER: the communicator of this rank's site and RCB over it, for the repartitions that keep
 * the sites' shares (collective). 0, or -1 with a message. */
static int site_level_create(dem_partition_t *pt, char *err, size_t errlen)
{
  const int *site = pt->sim->sc->site;
  for (int r = 0; r < pt->ranks; r++)
    if (site[r] + 1 > pt->n_sites) pt->n_sites = site[r] + 1;
  pt->site_ranks = malloc((size_t)pt->ranks * sizeof *pt->site_ranks);
  pt->site_share = calloc((size_t)pt->n_sites, sizeof *pt->site_share);
  pt->site_comm = dem_parallel_comm_split(pt->hier_part[0]);
  if (!pt->site_ranks || !pt->site_share || pt->site_comm == MPI_COMM_NULL)
    return dem_fail(err, errlen, "out of memory (partition, sites)");
  int m = 0;
  for (int r = 0; r < pt->ranks; r++)
    if (site[r] == pt->hier_part[0]) pt->site_ranks[m++] = r;
  pt->n_site_ranks = m;
  pt->zz_site = zoltan_for(pt, &partitioners[0], pt->site_comm, err, errlen);
  return pt->zz_site ? 0 : -1;
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
  pt->site_comm = MPI_COMM_NULL; /* (not 0 in every MPI) */
  for (size_t k = 0; k < sizeof partitioners / sizeof partitioners[0]; k++)
    if (strcmp(partitioners[k].name, sim->sc->partitioner) == 0) pt->desc = &partitioners[k];
  if (!pt->desc) {
    /* scenario.c checks the name: a partitioner it accepts is missing from the table */
    dem_fail(err, errlen, "key 'run.partitioner' = \"%s\": no such partitioner", sim->sc->partitioner);
    free(pt);
    return NULL;
  }
  if (pt->ranks == 1) return pt;
  if (sim->sc->n_site_list) {
    const int *site = sim->sc->site;
    pt->hier_part[0] = site[pt->rank];
    for (int r = 0; r < pt->rank; r++) pt->hier_part[1] += site[r] == site[pt->rank];
  }

  float version = 0;
  if (Zoltan_Initialize(0, NULL, &version) != ZOLTAN_OK) {
    dem_fail(err, errlen, "Zoltan_Initialize failed");
    dem_partition_destroy(&pt);
    return NULL;
  }
  /* a connectivity partitioner keeps RCB (partitioners[0]) for when no neighbour lists exist */
  pt->zz = zoltan_for(pt, pt->desc, dem_parallel_comm(), err, errlen);
  if (pt->zz && pt->desc->conn != CONN_NONE)
    pt->zz_geo = zoltan_for(pt, &partitioners[0], dem_parallel_comm(), err, errlen);
  if (pt->zz && pt->desc->hier && site_level_create(pt, err, errlen)) Zoltan_Destroy(&pt->zz);
  if (!pt->zz || (pt->desc->conn != CONN_NONE && !pt->zz_geo)) {
    dem_partition_destroy(&pt);
    return NULL;
  }
  return pt;
}

void dem_partition_destroy(dem_partition_t **pt)
{
  if (!*pt) return;
  if ((*pt)->zz) Zoltan_Destroy(&(*pt)->zz);
  if ((*pt)->zz_geo) Zoltan_Destroy(&(*pt)->zz_geo);
  if ((*pt)->zz_site) Zoltan_Destroy(&(*pt)->zz_site);
  dem_parallel_comm_free(&(*pt)->site_comm);
  free((*pt)->site_ranks);
  free((*pt)->site_share);
  free((*pt)->exported);
  dem_adjacency_free(&(*pt)->adj);
  free(*pt);
  *pt = NULL;
}

int dem_partition_has_cuts(const dem_partition_t *pt) { return pt->has_cuts; }
int dem_partition_has_boxes(const dem_partition_t *pt) { return pt->desc->boxes; }
const char *dem_partition_name(const dem_partition_t *pt) { return pt->desc->name; }
void dem_partition_stats(const dem_partition_t *pt, dem_partition_stats_t *st) { *st = pt->stats; }

/* The neighbour structure for this partition; `count`: its slots and the cut ones into the stats.
 * 0, or -1 when out of memory (the caller frees it after the partition, also after a failure). */
static int build_adjacency(dem_partition_t *pt, size_t n_ghost, int count)
{
  size_t cut = 0;
  if (dem_adjacency_build(&pt->adj, pt->sim, pt->rank, n_ghost, &cut)) return -1;
  if (count) {
    pt->stats.cut_samples += 1.0;
    pt->stats.pair_slots += (double)pt->adj.first[pt->sim->p->n];
    pt->stats.cut_slots += (double)cut;
  }
  return 0;
}

/* ---- repartition + migration ----------------------------------------------------------- */

/* HIER: 1 when the sites' shares of the weights differ from those of the last cross-site
 * partition (and then records them), or no cross-site partition happened yet. The weights are
 * the same on every rank, so every rank answers the same. */
static int shares_moved(dem_partition_t *pt, const double *weights)
{
  double share[DEM_MAX_HOSTS], sum[DEM_MAX_HOSTS];
  dem_balance_site_shares(weights, pt->sim->sc->site, pt->ranks, share, sum);
  int moved = pt->calls == 0;
  for (int k = 0; k < pt->n_sites; k++) moved |= fabs(share[k] - pt->site_share[k]) > 1e-9 * share[k];
  if (moved) memcpy(pt->site_share, share, (size_t)pt->n_sites * sizeof *share);
  return moved;
}

/* Zoltan_LB_Partition with target part sizes `weights` (collective): the export lists in *e.
 * A connectivity partitioner with no neighbour lists anywhere (before the first contact search,
 * or particles all apart) has nothing to cut but would still have to balance: RCB decides then.
 * 0, or -1 with a message. */
static int partition_lists(dem_partition_t *pt, dem_sim_t *sim, const double *weights, size_t n_ghost,
                           exports_t *e, char *err, size_t errlen)
{
  struct Zoltan_Struct *zz = pt->zz;
  int bad = build_adjacency(pt, n_ghost, pt->calls > 0);
  /* a geometric partitioner only samples the cut: without memory for it, no sample (and no
   * collective here, so that RCB's messages stay what they were) */
  if (pt->desc->conn != CONN_NONE) {
    dem_parallel_max_int(&bad, 1);
    if (bad) return dem_fail(err, errlen, "repartition: out of memory for the neighbour structure");
    long edges = (long)pt->adj.first[sim->p->n];
    dem_parallel_sum_long(&edges, 1);
    if (edges == 0) zz = pt->zz_geo;
  }
  /* HIER: across the sites only when their shares moved (balance.c holds them otherwise) */
  int part = pt->rank, idx = 0, ranks = pt->ranks;
  double particles = (double)sim->total_particles;
  pt->dest_rank = NULL;
  if (pt->desc->hier && !shares_moved(pt, weights)) {
    zz = pt->zz_site;
    part = pt->hier_part[1];
    pt->dest_rank = pt->site_ranks;
    ranks = pt->n_site_ranks;
    particles *= pt->site_share[pt->hier_part[0]];
  }
  pt->zz_now = zz;
  /* target part sizes: this rank states its own part's size (Zoltan gathers them) */
  float size = (float)weights[pt->rank];
  if (Zoltan_LB_Set_Part_Sizes(zz, 1, -1, NULL, NULL, NULL) != ZOLTAN_OK ||
      Zoltan_LB_Set_Part_Sizes(zz, 1, 1, &part, &idx, &size) != ZOLTAN_OK)
    return dem_fail(err, errlen, "Zoltan_LB_Set_Part_Sizes failed (weight %g for rank %d)", weights[pt->rank], pt->rank);

  int changes = 0, ngid = 0, nlid = 0, nimp = 0;
  ZOLTAN_ID_PTR igids = NULL, ilids = NULL;
  int *iprocs = NULL, *iparts = NULL;
  double wall = dem_clock_wall();
  int rc = Zoltan_LB_Partition(zz, &changes, &ngid, &nlid, &nimp, &igids, &ilids, &iprocs, &iparts, &e->n,
                               &e->gids, &e->lids, &e->procs, &e->parts);
  if (pt->calls > 0) pt->stats.wall_partition_s += dem_clock_wall() - wall;
  dem_clock_synced(); /* its collectives, seen when this rank runs */
  dem_work_t w = {.kind = DEM_WORK_PARTITION, .particles = particles, .ranks = ranks};
  dem_clock_charge(&w);
  Zoltan_LB_Free_Part(&igids, &ilids, &iprocs, &iparts);
  bad = rc != ZOLTAN_OK && rc != ZOLTAN_WARN;
  dem_parallel_max_int(&bad, 1);
  if (bad) {
    Zoltan_LB_Free_Part(&e->gids, &e->lids, &e->procs, &e->parts);
    return dem_fail(err, errlen, "Zoltan %s failed (code %d on rank %d)", pt->desc->name, rc, pt->rank);
  }
  pt->has_cuts = 1;
  return 0;
}

/* Zoltan_Migrate of the exports e (collective), in rounds of run.migrate_batch. 0 or -1. */
static int migrate(dem_partition_t *pt, dem_sim_t *sim, exports_t *e, char *err, size_t errlen)
{
  dem_particles_t *p = sim->p;
  int bad = 0, rc = ZOLTAN_OK;
  const long batch = sim->sc->migrate_batch;
  const int nexp = e->n;
  int rounds = 1;
  if (batch > 0) {
    /* every rank takes part in every round (Zoltan_Migrate is collective) */
    rounds = (int)(((long)nexp + batch - 1) / batch);
    if (rounds > 1 && sort_by_lid(e)) bad = 1;
    dem_parallel_max_int(&rounds, 1);
  }
  size_t removed = 0;
  for (int r = 0; r < rounds; r++) {
    long first = batch > 0 ? (long)r * batch : 0, count = (long)nexp - first;
    if (batch > 0 && count > batch) count = batch;
    if (count < 0 || bad) count = 0;
    for (long k = first; k < first + count; k++) e->lids[k] -= (ZOLTAN_ID_TYPE)removed;
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
    double tm = dem_clock_now();
    rc = bad ? ZOLTAN_MEMERR
             : Zoltan_Migrate(pt->zz_now, -1, NULL, NULL, NULL, NULL, (int)count, SLICE(e->gids), SLICE(e->lids),
                              SLICE(e->procs), SLICE(e->parts));
#undef SLICE
    /* its transfers progress only while this rank's container runs (as the ghost exchange's) */
    dem_clock_blocked(dem_clock_now() - tm);
    dem_clock_synced();
    pt->imp_procs = NULL;
    pt->n_imp = 0;
    removed += (size_t)count;
    bad = (rc != ZOLTAN_OK && rc != ZOLTAN_WARN) || pt->failed;
    /* a failed round stops the later ones on every rank (they are collective) */
    if (rounds > 1) dem_parallel_max_int(&bad, 1);
    if (bad) break;
  }
  dem_parallel_max_int(&bad, 1);
  if (bad) return dem_fail(err, errlen, "Zoltan_Migrate failed (code %d on rank %d%s)", rc, pt->rank,
                       pt->failed ? ": out of memory" : "");
  return 0;
}

int dem_partition_repartition(dem_partition_t *pt, dem_sim_t *sim, const double *weights, char *err, size_t errlen)
{
  if (pt->ranks == 1) return 0;
  dem_particles_t *p = sim->p;
  pt->sim = sim;
  if (dem_engine_pull(sim->engine, DEM_F_ALL, 0, p->n))
    return dem_fail(err, errlen, "repartition: device -> host: %s", dem_engine_error(sim->engine));
  /* ghosts belong to the old decomposition (their rows stay readable until the migration
   * appends particles: the neighbour structure names their owners) */
  size_t n_ghost = p->n_ghost;
  p->n_ghost = 0;

  double t0 = dem_clock_now();
  exports_t e = {0, NULL, NULL, NULL, NULL};
  int failed = partition_lists(pt, sim, weights, n_ghost, &e, err, errlen);
  /* the neighbour structure served the partition only (under SMPI every rank's lives in one
   * process: it is not kept through the migration and the time loop) */
  dem_adjacency_free(&pt->adj);
  if (failed) return -1;
  double t1 = dem_clock_now();

  pt->failed = 0;
  pt->imported = 0;
  pt->compacted = 0;
  pt->migrated_bytes = 0;
  pt->packed_bytes = 0;
  pt->packed_wan_bytes = 0;
  int rc = migrate(pt, sim, &e, err, errlen);
  int nexp = e.n;
  Zoltan_LB_Free_Part(&e.gids, &e.lids, &e.procs, &e.parts);
  if (rc) return -1;

  /* the records packed here and unpacked here, the particles the compaction moved (those
   * behind this rank's first export: none when nothing leaves), and the export flags, one
   * byte per particle written and scanned */
  dem_work_t w = {.kind = DEM_WORK_PACK,
                  .bytes = (double)pt->migrated_bytes +
                           (double)dem_particles_bytes_per_particle(p->slots) * (double)pt->compacted +
                           (double)p->n};
  dem_clock_charge(&w);
  if (pt->calls++ > 0) {
    pt->stats.repartitions++;
    pt->stats.partition_s += t1 - t0;
    pt->stats.migrate_s += dem_clock_now() - t1;
    pt->stats.sent_particles += (double)nexp;
    pt->stats.sent_bytes += (double)pt->packed_bytes;
    pt->stats.sent_wan_bytes += (double)pt->packed_wan_bytes;
  }

  if (dem_engine_resize(sim->engine) || dem_engine_push(sim->engine, DEM_F_ALL, 0, p->n))
    return dem_fail(err, errlen, "repartition: host -> device: %s", dem_engine_error(sim->engine));
  return 0;
}

/* ---- part boxes ------------------------------------------------------------------------ */

int dem_partition_part_box(const dem_partition_t *pt, int part, double lo[3], double hi[3])
{
  if (!pt->zz || !pt->has_cuts) {
    for (int a = 0; a < 3; a++) {
      lo[a] = -DBL_MAX;
      hi[a] = DBL_MAX;
    }
    return 0;
  }
  if (!pt->desc->boxes) return -1;
  int ndim = 0;
  int rc = Zoltan_RCB_Box(pt->zz, part, &ndim, &lo[0], &lo[1], &lo[2], &hi[0], &hi[1], &hi[2]);
  return rc == ZOLTAN_OK || rc == ZOLTAN_WARN ? 0 : -1;
}
