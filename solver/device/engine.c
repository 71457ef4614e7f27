/* The compute engine (see engine.h): dispatches each step to the OpenCL kernels (device.c) or
 * to their plain-C references (physics_ref.c), and charges the clock with the work of every
 * kernel and every host<->device copy.
 *
 * Design notes:
 * - Binning for the search is done on the host for both backends (grid.c); with OpenCL the
 *   owned positions are pulled first (the host already holds the ghosts' positions).
 * - Search test: every kick-drift reports the step's largest |v| dt; their sum since the last
 *   search bounds any particle's displacement, and a new search is due when it exceeds skin/2
 *   (two particles closing in on each other then used up the skin at most). In a parallel run
 *   the ghosts' displacements are known only to their owners: OR the answer across ranks.
 * - Fusion: forces, boundaries and external, called in that order, run as two kernels on the
 *   device: the pair pass over all particles (dem_forces_all: pairs and gravity, but not the
 *   gravity of the particles with wall slots) and the wall pass over the wall list (walls, then
 *   gravity, for those particles): same additions in the same order, same bits. The first two
 *   calls only record that they are pending; external launches the fused kernels. Any other
 *   call that depends on their results (pull, push, search, kick, kick-drift) first launches
 *   what is pending on its own, so a caller never sees the difference in results.
 *   dem_engine_finish leaves pending work pending: a caller that times each stage sees the
 *   fused kernels' time under external. In the SMPI build their cost is charged there too, as
 *   one FORCES_ALL charge (not two: the pair pass reads and writes each particle's own data
 *   once) and, when some particle has wall slots, one BOUNDARIES charge for the wall pass over
 *   the wall particles only.
 * - Contact counts for the cost model are counted on the device and read back with the next
 *   kick-drift's counters: the OpenCL backend reports the previous step's contacts.
 * - Waiting: every wait for the device is a round trip through the OpenCL runtime's threads,
 *   and under SMPI all ranks share one host thread, so the engine waits only where the host
 *   needs data: a pull, or the kick-drift's counters when the search test asks for them (queued
 *   with the kernel, taken in by dem_engine_collect). Pushes of ghost rows are queued without
 *   waiting. Under SMPI the stage ends of the step do not wait at all (time is charged, not
 *   measured), and the forces of particles with no ghost partner may start before the ghost
 *   exchange (dem_engine_forces_ahead) while their charge stays with the fused launch. */
#include "device/engine.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "dem/grid.h"
#include "dem/params.h"
#include "dem/particles.h"
#include "dem/physics_ref.h"
#include "device/device.h"
#include "device/remote.h"

enum { DEM_PENDING_FORCES = 1, DEM_PENDING_BOUNDARIES = 2 };

struct dem_engine {
  dem_backend_t backend;
  dem_params_t prm;
  dem_particles_t *p;
  dem_grid_t *grid;
  dem_device_t *dev;          /* NULL for the reference and remote backends */
  dem_remote_t *remote;       /* the remote backend's client (remote.h), else NULL */
  int search_due;             /* 1 until the first search, and after resize / owned positions pushed */
  double disp;                /* m, sum of per-step max |v| dt since the last search */
  double pairs, walls;        /* slots from the last search, of which wall slots */
  double wall_particles;      /* owned particles with wall slots after the last search (the wall list) */
  double contacts, wall_contacts; /* contacts counted by the last force evaluation */
  unsigned pending;           /* DEM_PENDING_* not yet launched (OpenCL) */
  unsigned ref_pending;       /* DEM_PENDING_* computed but not charged yet (reference) */
  double ref_contacts, ref_wall_contacts; /* what the reference's last forces / boundaries counted */
  size_t ahead;               /* owned particles [0, ahead) whose forces run already (forces_ahead) */
  dem_engine_work_t last;
  int measured;               /* device.cost = "measured": kernels are timed (profiling queue) */
  char name[256];
  char err[1024];
};

static int dem_engine_fail(dem_engine_t *e, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->err, sizeof(e->err), fmt, ap);
  va_end(ap);
  return -1;
}

static int dem_engine_device_fail(dem_engine_t *e, const char *what)
{
  return dem_engine_fail(e, "%s: %s", what, dem_device_error(e->dev));
}

/* device.cost = "measured": a kernel's charge carries the device time of the kernels launched
 * since the previous kernel charge (a forces-ahead launch goes with the fused one) */
static void dem_engine_measure(dem_engine_t *e, dem_work_t *w)
{
  if (!e->measured) return;
  switch (w->kind) {
  case DEM_WORK_SEARCH: case DEM_WORK_FORCES: case DEM_WORK_BOUNDARIES: case DEM_WORK_EXTERNAL:
  case DEM_WORK_FORCES_ALL: case DEM_WORK_INTEGRATE:
    w->measured = 1;
    w->measured_s = dem_device_kernel_seconds(e->dev);
    break;
  default: break;
  }
}

static int dem_engine_charge_work(dem_engine_t *e, dem_work_t *w)
{
  dem_engine_measure(e, w);
  if (dem_clock_charge(w) != 0)
    return dem_engine_fail(e, "the clock rejected a charge of %s work", dem_clock_kind_name(w->kind));
  return 0;
}

static int dem_engine_charge(dem_engine_t *e, dem_work_kind_t kind, double particles, double pairs, double contacts,
                             double bytes)
{
  dem_work_t w = {.kind = kind, .particles = particles, .pairs = pairs, .contacts = contacts, .bytes = bytes};
  return dem_engine_charge_work(e, &w);
}

void dem_engine_pack_params(const dem_params_t *prm, double *v)
{
  v[DEM_DEVICE_P_DT] = prm->dt;
  for (int c = 0; c < 3; ++c) {
    v[DEM_DEVICE_P_GRAVITY + c] = prm->gravity[c];
    v[DEM_DEVICE_P_LO + c] = prm->box_lo[c];
    v[DEM_DEVICE_P_HI + c] = prm->box_hi[c];
  }
  v[DEM_DEVICE_P_SKIN] = prm->skin;
  dem_ref_law_t law = dem_ref_law(prm); /* the same constants as the reference */
  v[DEM_DEVICE_P_KN] = law.kn;
  v[DEM_DEVICE_P_KT] = law.kt;
  v[DEM_DEVICE_P_DAMPN] = law.damp_n;
  v[DEM_DEVICE_P_GT] = law.gt;
  v[DEM_DEVICE_P_MU] = law.mu;
  v[DEM_DEVICE_P_MASSF] = dem_ref_mass_factor(prm);
}

/* the kernels index particles with 32-bit ints */
static int dem_engine_check_store(const dem_particles_t *p, char *err, size_t errlen)
{
  if (p->n + p->n_ghost > p->cap) {
    snprintf(err, errlen, "engine: %zu owned + %zu ghost particles exceed the store's capacity %zu", p->n,
             p->n_ghost, p->cap);
    return -1;
  }
  if (p->cap > (size_t)INT32_MAX / (3 * DEM_MAX_NEIGHBORS)) {
    snprintf(err, errlen, "engine: %zu particles on one process exceed what 32-bit slot indices address (%d)",
             p->cap, INT32_MAX / (3 * DEM_MAX_NEIGHBORS));
    return -1;
  }
  return 0;
}

dem_engine_t *dem_engine_create(const dem_engine_opts_t *opts, const dem_params_t *prm, dem_particles_t *p,
                                char *err, size_t errlen)
{
  if (!(prm->e_star > 0.0 && prm->g_star > 0.0)) {
    snprintf(err, errlen, "engine: the parameters' derived constants are not set (call dem_params_derive first)");
    return NULL;
  }
  if (dem_engine_check_store(p, err, errlen) != 0) return NULL;
  dem_engine_t *e = calloc(1, sizeof(*e));
  if (!e) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  e->backend = opts->backend;
  e->prm = *prm;
  e->p = p;
  e->search_due = 1;
  /* what the setup wrote (a restored store has slots in use) is resident: searches charge growth */
  int restored = 0;
  for (size_t i = 0; i < p->n && !restored; ++i) restored = p->nbr_count[i] > 0;
  (void)dem_particles_fresh_bytes(p, restored);
  e->grid = dem_grid_create();
  if (!e->grid) {
    snprintf(err, errlen, "out of memory");
    dem_engine_destroy(&e);
    return NULL;
  }
  if (e->backend == DEM_BACKEND_REMOTE) {
    if (opts->measured) {
      snprintf(err, errlen, "device.cost = \"measured\" times a local device: not with a device server");
      dem_engine_destroy(&e);
      return NULL;
    }
    e->remote = dem_remote_create(prm, p, err, errlen);
    if (!e->remote) dem_engine_destroy(&e);
    return e;
  }
  if (e->backend == DEM_BACKEND_REF) {
    snprintf(e->name, sizeof(e->name), "reference C");
    if (opts->measured) {
      snprintf(err, errlen, "device.cost = \"measured\" times the OpenCL kernels: it needs device.backend = \"opencl\"");
      dem_engine_destroy(&e);
      return NULL;
    }
    return e;
  }
  e->dev = dem_device_create(opts->cl_platform, opts->cl_device, opts->cl_device_type, err, errlen);
  if (!e->dev) {
    dem_engine_destroy(&e);
    return NULL;
  }
  snprintf(e->name, sizeof(e->name), "%s", dem_device_name(e->dev));
  double v[DEM_DEVICE_P_COUNT];
  dem_engine_pack_params(prm, v);
  e->measured = opts->measured != 0;
  if (dem_device_set_params(e->dev, v) != 0 || dem_device_bind(e->dev, p) != 0 ||
      (e->measured && dem_device_profile(e->dev, 1) != 0)) {
    snprintf(err, errlen, "%s", dem_device_error(e->dev));
    dem_engine_destroy(&e);
    return NULL;
  }
  return e;
}

void dem_engine_destroy(dem_engine_t **ep)
{
  if (!ep || !*ep) return;
  dem_remote_destroy(&(*ep)->remote);
  dem_device_destroy(&(*ep)->dev);
  dem_grid_destroy(&(*ep)->grid);
  free(*ep);
  *ep = NULL;
}

const char *dem_engine_error(const dem_engine_t *e) { return e->remote ? dem_remote_error(e->remote) : e->err; }
const char *dem_engine_device_name(const dem_engine_t *e)
{
  return e->remote ? dem_remote_device_name(e->remote) : e->name;
}

int dem_engine_compute_units(const dem_engine_t *e)
{
  if (e->remote) return dem_remote_compute_units(e->remote);
  int units = e->backend == DEM_BACKEND_REF ? 1 : dem_device_compute_units(e->dev);
  return units > 0 ? units : 1;
}
dem_engine_work_t dem_engine_last_work(const dem_engine_t *e)
{
  return e->remote ? dem_remote_last_work(e->remote) : e->last;
}

static int dem_engine_collect(dem_engine_t *e);

/* The wall pass: its particles are those of the wall list; nothing runs when it is empty. */
static int dem_engine_charge_walls(dem_engine_t *e)
{
  if (!(e->wall_particles > 0.0)) return 0;
  dem_work_t w = {.kind = DEM_WORK_BOUNDARIES, .particles = e->wall_particles, .pairs = e->walls,
                  .contacts = e->wall_contacts, .reach = (double)e->p->n};
  return dem_engine_charge_work(e, &w);
}

/* The reference backend charges what the device would: forces, boundaries and external called
 * in that order as the fused step's charges (FORCES_ALL, then BOUNDARIES for the wall pass over
 * the particles with wall slots), each with the previous evaluation's contact counts
 * (the device reads them back with the next kick-drift), so the simulated time does not depend
 * on the backend that computes the physics. Forces or boundaries left alone are charged on
 * their own by the next call that is not part of the sequence. */
static int dem_engine_ref_flush(dem_engine_t *e)
{
  unsigned pending = e->ref_pending;
  e->ref_pending = 0;
  const double n = (double)e->p->n;
  if ((pending & DEM_PENDING_FORCES) &&
      dem_engine_charge(e, DEM_WORK_FORCES, n, e->pairs - e->walls, e->contacts, 0.0) != 0)
    return -1;
  if ((pending & DEM_PENDING_BOUNDARIES) && dem_engine_charge_walls(e) != 0) return -1;
  if (pending & DEM_PENDING_FORCES) e->contacts = e->ref_contacts;
  if (pending & DEM_PENDING_BOUNDARIES) e->wall_contacts = e->ref_wall_contacts;
  return 0;
}

/* launches the force kernels recorded as pending, each on its own */
static int dem_engine_flush(dem_engine_t *e)
{
  unsigned pending = e->pending;
  e->pending = 0;
  if (pending && e->ahead) {
    e->ahead = 0;
    return dem_engine_fail(e, "forces ahead: forces and boundaries must be followed by external (the fused kernel)");
  }
  if (pending && dem_engine_collect(e) != 0) return -1; /* the charges below use the contact counts */
  if ((pending & DEM_PENDING_FORCES) && dem_device_forces(e->dev, DEM_DEVICE_FORCES) != 0)
    return dem_engine_device_fail(e, "forces");
  if ((pending & DEM_PENDING_FORCES) &&
      dem_engine_charge(e, DEM_WORK_FORCES, (double)e->p->n, e->pairs - e->walls, e->contacts, 0.0) != 0)
    return -1;
  if ((pending & DEM_PENDING_BOUNDARIES) && dem_device_forces(e->dev, DEM_DEVICE_BOUNDARIES) != 0)
    return dem_engine_device_fail(e, "boundaries");
  if ((pending & DEM_PENDING_BOUNDARIES) && dem_engine_charge_walls(e) != 0) return -1;
  return 0;
}

/* to_host: pull; otherwise push; async: without waiting for the device */
static int dem_engine_copy(dem_engine_t *e, int to_host, int async, unsigned fields, size_t first, size_t count)
{
  if (e->backend == DEM_BACKEND_REF) return 0; /* the host arrays are the only copy */
  if (e->remote) return dem_remote_copy(e->remote, to_host, fields, first, count); /* always synchronous */
  if (first + count > e->p->cap)
    return dem_engine_fail(e, "%s of particles [%zu, %zu): the store holds %zu", to_host ? "pull" : "push", first,
                           first + count, e->p->cap);
  if (dem_engine_flush(e) != 0) return -1;
  double bytes = 0.0;
  int rc = to_host ? (async ? dem_device_read_async(e->dev, fields, first, count, &bytes)
                            : dem_device_read(e->dev, fields, first, count, &bytes))
           : async ? dem_device_write_async(e->dev, fields, first, count, &bytes)
                   : dem_device_write(e->dev, fields, first, count, &bytes);
  if (rc != 0) return dem_engine_device_fail(e, to_host ? "pull" : "push");
  return dem_engine_charge(e, to_host ? DEM_WORK_COPY_D2H : DEM_WORK_COPY_H2D, (double)count, 0.0, 0.0, bytes);
}

int dem_engine_pull(dem_engine_t *e, unsigned fields, size_t first, size_t count)
{
  return dem_engine_copy(e, 1, 0, fields, first, count);
}

int dem_engine_pull_async(dem_engine_t *e, unsigned fields, size_t first, size_t count)
{
  return dem_engine_copy(e, 1, 1, fields, first, count);
}

int dem_engine_wait_pulls(dem_engine_t *e)
{
  if (e->backend != DEM_BACKEND_OPENCL) return 0;
  if (dem_device_wait_reads(e->dev) != 0) return dem_engine_device_fail(e, "pull");
  return 0;
}

static int dem_engine_push_how(dem_engine_t *e, int async, unsigned fields, size_t first, size_t count)
{
  /* owned particles moved by the host (generation, migration): the neighbour lists are stale */
  if ((fields & (DEM_F_POS | DEM_F_RADIUS | DEM_F_SLOTS)) && first < e->p->n && count > 0) e->search_due = 1;
  return dem_engine_copy(e, 0, async, fields, first, count);
}

int dem_engine_push(dem_engine_t *e, unsigned fields, size_t first, size_t count)
{
  return dem_engine_push_how(e, 0, fields, first, count);
}

int dem_engine_push_async(dem_engine_t *e, unsigned fields, size_t first, size_t count)
{
  return dem_engine_push_how(e, 1, fields, first, count);
}

int dem_engine_resize(dem_engine_t *e)
{
  e->search_due = 1; /* ghost indices changed */
  if (dem_engine_check_store(e->p, e->err, sizeof(e->err)) != 0) return -1;
  if (e->remote) return dem_remote_resize(e->remote);
  if (e->backend == DEM_BACKEND_REF) return 0;
  /* the old buffers may wrap freed arrays by now: work requested before cannot run any more */
  if (e->ahead) {
    e->ahead = 0;
    return dem_engine_fail(e, "resize: forces were started ahead but the store changed before they were completed");
  }
  if (e->pending) {
    e->pending = 0;
    return dem_engine_fail(e, "resize: forces or boundaries were requested but not run before the store changed "
                              "(call external, or pull, before changing the store)");
  }
  if (dem_device_bind(e->dev, e->p) != 0) return dem_engine_device_fail(e, "resize");
  return 0;
}

/* Takes in the counters of the last kick-drift (OpenCL: waits for them unless the host has
 * waited for the device since, as a blocking pull does): the displacement bound and the
 * previous force evaluation's contact counts. */
static int dem_engine_collect(dem_engine_t *e)
{
  if (e->backend == DEM_BACKEND_REF) return 0;
  int fresh = 0;
  float disp = 0.0f;
  unsigned contacts = 0, walls = 0;
  if (dem_device_counters(e->dev, &fresh, &disp, &contacts, &walls) != 0)
    return dem_engine_device_fail(e, "kick-drift counters");
  if (!fresh) return 0;
  e->disp += dem_ref_displacement_bound(disp);
  e->contacts = contacts;
  e->wall_contacts = walls;
  return 0;
}

int dem_engine_kick_drift(dem_engine_t *e, double kick)
{
  if (e->remote) return dem_remote_kick_drift(e->remote, kick);
  dem_particles_t *p = e->p;
  e->last = (dem_engine_work_t){.particles = (double)p->n};
  if (e->backend == DEM_BACKEND_REF) {
    if (dem_engine_ref_flush(e) != 0) return -1;
    e->disp += dem_ref_displacement_bound((float)dem_ref_kick_drift(p, &e->prm, kick));
    return dem_engine_charge(e, DEM_WORK_INTEGRATE, (double)p->n, 0.0, 0.0, 0.0);
  }
  if (dem_engine_flush(e) != 0 || dem_engine_collect(e) != 0) return -1;
  double bytes = 0.0;
  if (dem_device_kick_drift(e->dev, kick, &bytes) != 0) return dem_engine_device_fail(e, "kick-drift");
  if (dem_engine_charge(e, DEM_WORK_INTEGRATE, (double)p->n, 0.0, 0.0, 0.0) != 0) return -1;
  return dem_engine_charge(e, DEM_WORK_COPY_D2H, 0.0, 0.0, 0.0, bytes);
}

int dem_engine_kick(dem_engine_t *e)
{
  if (e->remote) return dem_remote_kick(e->remote);
  e->last = (dem_engine_work_t){.particles = (double)e->p->n};
  if (e->backend == DEM_BACKEND_REF) {
    if (dem_engine_ref_flush(e) != 0) return -1;
    dem_ref_kick(e->p, &e->prm);
  } else if (dem_engine_flush(e) != 0) return -1;
  else if (dem_device_kick(e->dev) != 0) return dem_engine_device_fail(e, "kick");
  return dem_engine_charge(e, DEM_WORK_INTEGRATE, (double)e->p->n, 0.0, 0.0, 0.0);
}

int dem_engine_needs_search(dem_engine_t *e)
{
  if (e->remote) return dem_remote_needs_search(e->remote) != 0; /* a failure: as below */
  /* a failure to read the counters surfaces again at the next call that waits (finish, pull) */
  if (dem_engine_collect(e) != 0) return 1;
  return e->search_due || e->disp > 0.5 * e->prm.skin;
}

/* Widens the store's slot stride to `slots` (the kernels' results do not depend on it): the
 * owned particles come to the host (a GPU may hold newer copies of every field than the host,
 * and new buffers start from the host arrays), the slots move to the new stride, and the store
 * is bound again. */
static int dem_engine_widen_slots(dem_engine_t *e, int slots)
{
  dem_particles_t *p = e->p;
  if (e->backend == DEM_BACKEND_OPENCL && dem_engine_pull(e, DEM_F_ALL, 0, p->n) != 0) return -1;
  if (dem_particles_widen_slots(p, slots) != 0)
    return dem_engine_fail(e, "search: out of memory widening the contact slots of %zu particles to %d", p->n, slots);
  dem_work_t w = {.kind = DEM_WORK_PACK,
                  .bytes = 2.0 * (double)p->n * (double)(dem_particles_bytes_per_particle(slots) -
                                                         dem_particles_bytes_per_particle(0))};
  if (dem_clock_charge(&w) != 0) return dem_engine_fail(e, "the clock rejected a charge of pack work");
  if (e->backend == DEM_BACKEND_REF) return 0;
  /* binding wraps the host arrays again: the device sees the new layout */
  if (dem_device_bind(e->dev, p) != 0) return dem_engine_device_fail(e, "widening the contact slots");
  return 0;
}

/* The memory the search and the steps since the last one wrote for the first time (the store's
 * new rows, the grid's new arrays): its pages were faulted in. device.cost = "measured" times the
 * kernels that wrote the store's rows with their faults: only the grid (host binning) is charged. */
static int dem_engine_charge_fresh(dem_engine_t *e)
{
  double fresh = (double)dem_grid_take_fresh(e->grid);
  size_t store = dem_particles_fresh_bytes(e->p, 1);
  if (!e->measured) fresh += (double)store;
  return fresh > 0.0 ? dem_engine_charge(e, DEM_WORK_FIRST_TOUCH, 0.0, 0.0, 0.0, fresh) : 0;
}

int dem_engine_search(dem_engine_t *e)
{
  if (e->remote) return dem_remote_search(e->remote);
  dem_particles_t *p = e->p;
  if (dem_engine_collect(e) != 0 || dem_engine_ref_flush(e) != 0) return -1; /* the search clears the sum */
  if (e->ahead) {
    e->ahead = 0;
    return dem_engine_fail(e, "search: forces were started ahead on the old neighbour lists");
  }
  const size_t total = p->n + p->n_ghost;
  if (e->backend == DEM_BACKEND_OPENCL && dem_engine_pull(e, DEM_F_POS, 0, p->n) != 0) return -1;

  double r_max = 0.0;
  for (size_t i = 0; i < total; ++i)
    if (p->radius[i] > r_max) r_max = p->radius[i];
  double h = 2.0 * r_max + e->prm.skin;
  if (!(h > 0.0)) return dem_engine_fail(e, "search: cell size %g m (max radius %g m, skin %g m) must be > 0", h,
                                         r_max, e->prm.skin);
  size_t bad = 0;
  int rc = dem_grid_build(e->grid, p->pos, total, h, e->prm.box_lo, &bad);
  if (rc == -2)
    return dem_engine_fail(e, "search: particle %d (%s) is at (%g, %g, %g) m: not finite or too far from the box "
                              "(the run has blown up: time step too large?)",
                           (int)p->id[bad], bad < p->n ? "owned" : "ghost", p->pos[3 * bad], p->pos[3 * bad + 1],
                           p->pos[3 * bad + 2]);
  if (rc != 0) return dem_engine_fail(e, "search: binning %zu particles failed (out of memory or too many)", total);
  if (dem_engine_charge(e, DEM_WORK_BINNING, (double)total, 0.0, 0.0, 0.0) != 0) return -1;

  /* a particle with more partners than the store's slots keeps its old slots: widen them to
   * its count and search again (the others find the same lists), at most a few times a run */
  for (;;) {
    dem_search_result_t r;
    if (e->backend == DEM_BACKEND_REF) {
      r = dem_ref_search(p, &e->prm, e->grid);
    } else {
      double bytes = 0.0;
      if (dem_device_search(e->dev, e->grid, &bytes, &r) != 0) return dem_engine_device_fail(e, "search");
      if (dem_engine_charge(e, DEM_WORK_COPY_H2D, (double)total, 0.0, 0.0, bytes) != 0) return -1;
    }
    e->pairs = r.pairs;
    e->walls = r.walls;
    e->wall_particles = r.wall_particles;
    e->last = (dem_engine_work_t){.particles = (double)p->n, .pairs = e->pairs};
    if (dem_engine_charge(e, DEM_WORK_SEARCH, (double)p->n, e->pairs, 0.0, 0.0) != 0) return -1;
    if (r.overflow)
      return dem_engine_fail(e,
                             "search: particle %d has %d partners within the search cutoff (r_i + r_j + skin), "
                             "more than the %d neighbour slots (DEM_MAX_NEIGHBORS; build with a larger "
                             "DEMSIM_MAX_NEIGHBORS or use a smaller skin)",
                             (int)r.overflow_gid, r.overflow_count, DEM_MAX_NEIGHBORS);
    if (!r.unfit) break;
    if (dem_engine_widen_slots(e, r.unfit) != 0) return -1;
  }
  if (dem_engine_charge_fresh(e) != 0) return -1;
  e->search_due = 0;
  e->disp = 0.0;
  return 0;
}

int dem_engine_forces(dem_engine_t *e)
{
  if (e->remote) return dem_remote_forces(e->remote);
  if (e->backend == DEM_BACKEND_REF) {
    if (dem_engine_ref_flush(e) != 0) return -1;
    dem_force_result_t r = dem_ref_forces(e->p, &e->prm);
    e->last = (dem_engine_work_t){.particles = (double)e->p->n, .pairs = r.pairs, .contacts = r.contacts};
    e->ref_contacts = r.contacts;
    e->ref_pending = DEM_PENDING_FORCES;
    return 0;
  }
  if (dem_engine_flush(e) != 0 || dem_engine_collect(e) != 0) return -1;
  e->pending = DEM_PENDING_FORCES;
  e->last = (dem_engine_work_t){.particles = (double)e->p->n, .pairs = e->pairs - e->walls, .contacts = e->contacts};
  return 0;
}

int dem_engine_boundaries(dem_engine_t *e)
{
  if (e->remote) return dem_remote_boundaries(e->remote);
  if (e->backend == DEM_BACKEND_REF) {
    if (e->ref_pending != DEM_PENDING_FORCES && dem_engine_ref_flush(e) != 0) return -1;
    dem_force_result_t r = dem_ref_boundaries(e->p, &e->prm);
    e->last = (dem_engine_work_t){.particles = e->wall_particles, .pairs = r.pairs, .contacts = r.contacts};
    e->ref_wall_contacts = r.contacts;
    e->ref_pending |= DEM_PENDING_BOUNDARIES;
    return 0;
  }
  e->last = (dem_engine_work_t){.particles = e->wall_particles, .pairs = e->walls, .contacts = e->wall_contacts};
  if (e->pending == DEM_PENDING_FORCES) {
    e->pending |= DEM_PENDING_BOUNDARIES;
    return 0;
  }
  if (dem_engine_flush(e) != 0) return -1;
  e->pending = DEM_PENDING_BOUNDARIES;
  return dem_engine_flush(e);
}

int dem_engine_external(dem_engine_t *e)
{
  if (e->remote) return dem_remote_external(e->remote);
  const double n = (double)e->p->n;
  if (e->backend == DEM_BACKEND_REF && e->ref_pending == (DEM_PENDING_FORCES | DEM_PENDING_BOUNDARIES)) {
    e->ref_pending = 0;
    dem_ref_external(e->p, &e->prm);
    e->last = (dem_engine_work_t){.particles = n};
    if (dem_engine_charge(e, DEM_WORK_FORCES_ALL, n, e->pairs - e->walls, e->contacts, 0.0) != 0 ||
        dem_engine_charge_walls(e) != 0)
      return -1;
    e->contacts = e->ref_contacts;
    e->wall_contacts = e->ref_wall_contacts;
    return 0;
  }
  if (e->backend == DEM_BACKEND_REF) {
    if (dem_engine_ref_flush(e) != 0) return -1;
    dem_ref_external(e->p, &e->prm);
  } else if (e->pending == (DEM_PENDING_FORCES | DEM_PENDING_BOUNDARIES)) {
    e->pending = 0;
    size_t first = e->ahead;
    e->ahead = 0;
    e->last = (dem_engine_work_t){.particles = n};
    /* the pair pass reads and writes each particle's own data once, not three times; each
     * charge follows its launch, so that a measured run times each kernel */
    if (dem_device_forces_range(e->dev, DEM_DEVICE_FORCES_ALL, first, e->p->n) != 0)
      return dem_engine_device_fail(e, "forces");
    if (dem_engine_charge(e, DEM_WORK_FORCES_ALL, n, e->pairs - e->walls, e->contacts, 0.0) != 0) return -1;
    if (dem_device_forces_range(e->dev, DEM_DEVICE_WALLS_ALL, first, e->p->n) != 0)
      return dem_engine_device_fail(e, "boundaries");
    return dem_engine_charge_walls(e);
  } else {
    if (dem_engine_flush(e) != 0) return -1;
    if (dem_device_forces(e->dev, DEM_DEVICE_EXTERNAL) != 0) return dem_engine_device_fail(e, "external");
  }
  e->last = (dem_engine_work_t){.particles = n};
  return dem_engine_charge(e, DEM_WORK_EXTERNAL, n, 0.0, 0.0, 0.0);
}

static int dem_engine_cmp_index(const void *a, const void *b)
{
  int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

long dem_engine_wall_list(dem_engine_t *e, int32_t *list)
{
  if (e->remote) return -1; /* the list stays on the device server */
  if (e->backend == DEM_BACKEND_REF) return (long)dem_ref_wall_list(e->p, list);
  size_t count = 0;
  if (dem_engine_flush(e) != 0) return -1;
  if (dem_device_wall_list(e->dev, list, e->p->n, &count) != 0) return dem_engine_device_fail(e, "wall list");
  if (count > e->p->n) return dem_engine_fail(e, "wall list: %zu entries for %zu particles", count, e->p->n);
  qsort(list, count, sizeof(*list), dem_engine_cmp_index); /* the kernel appends in no particular order */
  return (long)count;
}

int dem_engine_finish(dem_engine_t *e)
{
  if (e->remote) return dem_remote_finish(e->remote);
  if (e->backend == DEM_BACKEND_REF) return 0;
  /* work recorded as pending is not queued yet: it stays pending, so that a caller timing each
   * stage (forces; finish; boundaries; finish; external; finish) still gets the fused kernel,
   * whose time then shows under external */
  if (dem_device_finish(e->dev) != 0) return dem_engine_device_fail(e, "finish");
  return 0;
}

int dem_engine_forces_ahead(dem_engine_t *e, size_t count, size_t *started)
{
  *started = 0;
  /* Only where time is modelled: there the device's real time is nobody's measurement, so the
   * kernel may run while the host does something else (the charge stays with the fused
   * launch, for all particles, where the study's loop has it). Natively the forces stay where
   * the step times them: the rank's load is measured. */
  if (e->backend != DEM_BACKEND_OPENCL || !dem_clock_modelled() || e->pending || e->ahead || e->search_due) return 0;
  if (count > e->p->n) count = e->p->n;
  if (count == 0) return 0;
  if (dem_engine_collect(e) != 0) return -1;
  if (dem_device_forces_range(e->dev, DEM_DEVICE_FORCES_ALL, 0, count) != 0 ||
      dem_device_forces_range(e->dev, DEM_DEVICE_WALLS_ALL, 0, count) != 0)
    return dem_engine_device_fail(e, "forces ahead");
  e->ahead = count;
  *started = count;
  return 0;
}

int dem_engine_stage_end(dem_engine_t *e)
{
  /* under the simulator a stage's time is its charge: waiting would only add a round trip
   * through the OpenCL runtime per stage and rank, and keep one rank's kernels from running
   * while the next rank's host code does */
  return dem_clock_modelled() ? 0 : dem_engine_finish(e);
}

int dem_engine_profile(dem_engine_t *e, int on)
{
  if (e->backend != DEM_BACKEND_OPENCL) return dem_engine_fail(e, "profile: only local OpenCL kernels are timed");
  if (dem_device_profile(e->dev, on) != 0) return dem_engine_device_fail(e, "profile");
  return 0;
}

double dem_engine_kernel_seconds(dem_engine_t *e)
{
  return e->backend != DEM_BACKEND_OPENCL ? 0.0 : dem_device_kernel_seconds(e->dev);
}
