/* The cost model: flops and bytes per unit of reported work.
 *
 *   flops = a*particles + b*pairs + c*contacts + d*bytes
 *   bytes = same shape, with its own coefficients
 *
 * How the coefficients were counted: from the kernels (the .cl files in kernels/, as of the
 * commit that added them) and solver/grid.c, by reading the source. Bytes are every global-memory
 * load and store a work-item issues (doubles 8 B, ints 4 B, vectors 3 doubles), with no cache
 * model, except that a particle's own data is counted once per kernel. Flops are the FP64
 * operations (+ - * /, sqrt and floor count one each; integer and compare operations none).
 * Next to each coefficient: where it comes from. Recount when the kernels change
 * (tests/test_sim_host.c only checks the arithmetic, not the figures).
 *
 * What `pairs` and `contacts` mean is the solver's (solver/engine.c): for SEARCH, pairs = slots
 * written; for FORCES, particle slots and particle contacts; for BOUNDARIES, wall slots and wall
 * contacts. The candidates a search examines are not reported: they are charged per particle,
 * SEARCH_CANDIDATES of them (the cell edge is 2 r_max + skin, about one lattice spacing, so the
 * 27 cells around a particle hold about 27 particles).
 *
 * Host-side work runs on one core: packing and output are bandwidth work (a packed or written
 * byte is read once and written once: 2 B of traffic); Zoltan RCB is charged per particle and
 * bisection level (RCB_* below, calibrated against Zoltan itself). */
#include "cost.h"

#include <math.h>

#define SEARCH_CANDIDATES 27.0

/* Zoltan RCB, per particle and bisection level (plus one level's worth for building the dots):
 * CALIBRATED. Zoltan of Trilinos 13.2 (Debian), LB_METHOD=RCB, 500,000 particles on the study's
 * lattice, one process cutting 2, 4, 8 and 16 parts, best of 3, on the 2-core development
 * machine: 302, 366, 485 and 433 ns per particle for 1+1 ... 1+4 levels, about 120 ns per
 * particle-level. RCB is not a streaming loop (callbacks, allocations, median iterations), so
 * the cost is expressed as equivalent memory traffic: 120 ns x 11 GB/s (platforms/local.xml's
 * per-core bandwidth) = 1300 B, with a few flops per dot per median pass beside it. */
#define RCB_FLOPS_PER_PARTICLE_LEVEL 40.0
#define RCB_BYTES_PER_PARTICLE_LEVEL 1300.0

typedef struct coef {
  sim_place_t place;
  double f[4]; /* flops per particle, pair, contact, byte */
  double b[4]; /* bytes per particle, pair, contact, byte */
} coef_t;

static const coef_t table[DEM_WORK_KIND_COUNT] = {
  /* SEARCH (search.cl, history.cl: dem_search).
   * per particle: pos+radius 32 B; nbr_count read and written 8; 27 buckets (cell_start[b],
   *   [b+1]) 216; SEARCH_CANDIDATES x (cell_sorted 4, pos 24, radius 8) = 972: 1228 B.
   *   Flops: own cell 9 (3 x sub, div, floor), 6 walls x 2 (distance, r_i + skin) 12, and
   *   SEARCH_CANDIDATES x 21 (the partner's cell 9, d^2 8, cutoff 4) 567: 588 flops.
   * per pair (a slot written): partner id 4, old gid and spring for the history carry 28,
   *   new gid, index and spring stored 32: 64 B; 0 flops (integer work). */
  [DEM_WORK_SEARCH] = {SIM_ON_DEVICE, {9 + 12 + SEARCH_CANDIDATES * 21, 0, 0, 0},
                       {32 + 8 + 216 + SEARCH_CANDIDATES * 36, 64, 0, 0}},
  /* FORCES (forces.cl: dem_forces_pairs).
   * per particle: pos, vel, omega 72 B, radius 8, nbr_count 4 read, force and torque 48 stored:
   *   132 B; 3 flops (mass).
   * per pair (a particle slot): nbr_index 4, partner radius 8 and pos 24, spring 24 (loaded,
   *   or tested by dem_spring_zero): 60 B; 11 flops (separation 3, distance 6, overlap 2).
   * per contact: partner vel+omega 48 B, spring stored 24: 72 B; 144 flops (normal 3, m_j 3,
   *   R* 3, m* 3, v_r 3, ws 9; dem_contact: 120 = normal speed 5, k 3, sqrt 1, Fn 9, relative
   *   velocity 12, v_n 5, v_t 6, spring rotation 5+5+6+5+2+3, advance 6, k_t 4, gamma_t 3,
   *   F_t 9, |F_t|^2 5, cap 2, force 9, r n 3, torque 12). */
  [DEM_WORK_FORCES] = {SIM_ON_DEVICE, {3, 11, 144, 0}, {132, 60, 72, 0}},
  /* BOUNDARIES (boundaries.cl).
   * per particle: radius 8, nbr_count 4, force and torque loaded and stored 96: 108 B; 0 flops.
   * per pair (a wall slot): nbr_index 4, spring 24: 28 B; 2 flops (wall distance, overlap).
   * per contact: vel+omega 48 B, spring stored 24: 72 B; 126 flops (ws 3, mass 3, dem_contact
   *   120). */
  [DEM_WORK_BOUNDARIES] = {SIM_ON_DEVICE, {0, 2, 126, 0}, {108, 28, 72, 0}},
  /* EXTERNAL (external.cl): radius 8 B, force loaded and stored 48: 56 B; 9 flops (mass 3,
   *   3 x (mul, add)). */
  [DEM_WORK_EXTERNAL] = {SIM_ON_DEVICE, {9, 0, 0, 0}, {56, 0, 0, 0}},
  /* INTEGRATE (integrator.cl: dem_kick_drift, the every-step kernel; dem_kick is cheaper):
   *   radius 8, force 24, torque 24 loaded; pos, vel, omega loaded and stored 144: 200 B;
   *   35 flops (m 3, I 3, the two step factors 4, 3 x (v, w, x updates 6) 18, |v| dt 7). */
  [DEM_WORK_INTEGRATE] = {SIM_ON_DEVICE, {35, 0, 0, 0}, {200, 0, 0, 0}},
  /* BINNING (host, solver/grid.c dem_grid_build, a counting sort into 2-4 buckets per particle):
   *   per particle: bucket table cleared 8 B, two passes reading pos 48, counter increments 16,
   *   index stored 4, prefix sum and shift-back over 2 buckets 32: 108 B; 18 flops (the bucket,
   *   computed twice: 3 x sub, div, floor). */
  [DEM_WORK_BINNING] = {SIM_ON_HOST, {18, 0, 0, 0}, {108, 0, 0, 0}},
  /* COPY_D2H / COPY_H2D: the bytes cross PCIe on a GPU; on a CPU device the store is wrapped
   *   with CL_MEM_USE_HOST_PTR (solver/particles.h), so only the enqueue is paid. */
  [DEM_WORK_COPY_D2H] = {SIM_ON_LINK, {0, 0, 0, 0}, {0, 0, 0, 1}},
  [DEM_WORK_COPY_H2D] = {SIM_ON_LINK, {0, 0, 0, 0}, {0, 0, 0, 1}},
  /* PACK: each byte read once and written once. */
  [DEM_WORK_PACK] = {SIM_ON_HOST, {0, 0, 0, 0}, {0, 0, 0, 2}},
  /* PARTITION: `particles` is turned into particle-levels (see sim_cost_of). */
  [DEM_WORK_PARTITION] = {SIM_ON_HOST, {RCB_FLOPS_PER_PARTICLE_LEVEL, 0, 0, 0},
                          {RCB_BYTES_PER_PARTICLE_LEVEL, 0, 0, 0}},
  /* OUTPUT: HDF5 copies the data into its buffers and the page cache (the disk write is
   *   asynchronous): 2 B of traffic per byte written. */
  [DEM_WORK_OUTPUT] = {SIM_ON_HOST, {0, 0, 0, 0}, {0, 0, 0, 2}},
};

static int bad(double x) { return !isfinite(x) || x < 0.0; }

int sim_cost_of(const dem_work_t *w, sim_cost_t *c)
{
  if (!w || w->kind < 0 || w->kind >= DEM_WORK_KIND_COUNT) return -1;
  if (bad(w->particles) || bad(w->pairs) || bad(w->contacts) || bad(w->bytes) || bad(w->ranks))
    return -1;
  double n[4] = {w->particles, w->pairs, w->contacts, w->bytes};
  if (w->kind == DEM_WORK_PARTITION) {
    /* `particles` is the global count: every rank handles its share at each of the
     * ceil(log2(ranks)) bisection levels, plus one pass to build the dots. */
    double ranks = w->ranks >= 1.0 ? w->ranks : 1.0;
    n[0] = w->particles / ranks * (ceil(log2(ranks)) + 1.0);
  }
  const coef_t *k = &table[w->kind];
  c->place = k->place;
  c->flops = 0.0;
  c->bytes = 0.0;
  for (int i = 0; i < 4; i++) {
    c->flops += k->f[i] * n[i];
    c->bytes += k->b[i] * n[i];
  }
  return 0;
}
