/* The cost model: flops and bytes per unit of reported work.
 *
 *   flops = a*particles + b*pairs + c*contacts + d*bytes
 *   bytes = same shape, with its own coefficients
 *
 * How the coefficients were counted. A kernel costs what its source issues: every global-memory
 * load and store of the data layout of solver/particles.h (doubles; vectors as 3 doubles; ids,
 * counts and slot indices as 4-byte integers; DEM_MAX_NEIGHBORS slots per particle, each with a
 * partner index, a partner gid and a 3-double spring), with no cache model: a partner's data
 * is counted each time a slot reads it. The flop counts are the FP64 operations of the contact
 * law of STUDY.md (Hertz + viscous normal force, tangential spring + damping capped by Coulomb
 * friction), a square root or division counting as one. Per kernel, the count is written next
 * to the coefficient as loads+stores (B) and operations. The kernels (the .cl files in kernels/) were being
 * written at the same time as this table: recount when they change (tests/test_sim_cost.c pins
 * the current figures so that a change is a deliberate one).
 *
 * Host-side work runs on one core: packing, copies on a CPU device, output and binning are
 * bandwidth work (a packed or written byte is read once and written once: 2 B of traffic);
 * Zoltan RCB is charged per particle and bisection level (see PARTITION below). */
#include "cost.h"

#include <math.h>

#ifndef DEM_MAX_NEIGHBORS
#define DEM_MAX_NEIGHBORS 12
#endif
#define SLOTS ((double)DEM_MAX_NEIGHBORS)

/* Zoltan RCB, per particle and bisection level (an estimate, not measured): building the dots
 * from the query callbacks and moving them to their side of the cut copies about 100 B of dot
 * data (coordinates, weight, global and local ids, part) and reads it back once (+20 B of
 * coordinate reads by the median search); the median search loops over the dots about 10 times
 * per cut (Zoltan's find_median converges in a few tens of passes on uniform data), each pass a
 * compare and a weighted sum: ~4 flops per dot per pass. */
#define RCB_FLOPS_PER_PARTICLE_LEVEL 40.0
#define RCB_BYTES_PER_PARTICLE_LEVEL 220.0

typedef struct coef {
  sim_place_t place;
  double f[4]; /* flops per particle, pair, contact, byte */
  double b[4]; /* bytes per particle, pair, contact, byte */
} coef_t;

static const coef_t table[DEM_WORK_KIND_COUNT] = {
  /* SEARCH: per particle: pos+radius 32 B, 27 cell (start, count) pairs 216 B, the old slots
   *   for the history carry-over (nbr_count 4 + SLOTS*(gid 4 + spring 24)), new nbr_count 4;
   *   10 flops (cell coordinates: 3 sub + 3 mul + 3 floor + 1 hash).
   * per pair (a candidate in the 27 cells): partner pos+radius+id 36 B; 12 flops (3 sub, 3 mul,
   *   2 add for d^2, 2 add for the cutoff, 1 mul to square it, 1 compare).
   * per contact (a slot filled): nbr_index + nbr_gid + carried spring = 32 B stored; 0 flops. */
  [DEM_WORK_SEARCH] = {SIM_ON_DEVICE, {10, 12, 0, 0}, {32 + 216 + 4 + SLOTS * 28 + 4, 36, 32, 0}},
  /* FORCES: per particle: pos, vel, omega, radius 80 B + nbr_count 4 + force, torque stored 48;
   *   5 flops (mass from radius).
   * per pair (a slot visited): nbr_index 4 + partner pos+radius 32 = 36 B; 11 flops (distance:
   *   3 sub, 3 mul, 2 add, 1 sqrt; overlap: 2 add).
   * per contact: partner vel+omega 48 B, spring load+store 48 B = 96 B; 140 flops (normal 3,
   *   R* 3, m* 8, Hertz stiffness 5, elastic 2, damping 6, relative velocity at the contact
   *   point 21, its normal and tangential parts 11, spring rotated to the tangent plane 11 and
   *   advanced 6, k_t 4, tangential force 17, Coulomb cap 18, force and torque 27). */
  [DEM_WORK_FORCES] = {SIM_ON_DEVICE, {5, 11, 140, 0}, {132, 36, 96, 0}},
  /* BOUNDARIES: per particle: pos, vel, omega, radius 80 B, force and torque loaded and stored
   *   96 B, nbr_count 4 = 180 B; 23 flops (6 walls: 3 each for the gap test; mass 5).
   * per pair (a wall slot visited): nbr_index 4 B; 0 flops beyond the gap test.
   * per contact: spring load+store 48 B; 110 flops (the particle law with an infinite partner). */
  [DEM_WORK_BOUNDARIES] = {SIM_ON_DEVICE, {23, 0, 110, 0}, {180, 4, 48, 0}},
  /* EXTERNAL: per particle: radius 8 B, force loaded and stored 48 B; 11 flops (mass 5, 3 mul,
   *   3 add). */
  [DEM_WORK_EXTERNAL] = {SIM_ON_DEVICE, {11, 0, 0, 0}, {56, 0, 0, 0}},
  /* INTEGRATE: per particle: pos, vel, omega, force, torque, radius loaded 128 B, pos, vel, omega
   *   stored 72 B; 34 flops (m 5, I 3, 1/m and 1/I 2, v += k dt F/m 9, w 9, x += dt v 6). */
  [DEM_WORK_INTEGRATE] = {SIM_ON_DEVICE, {34, 0, 0, 0}, {200, 0, 0, 0}},
  /* BINNING (host, counting sort): per particle: pos 24 B, cell id stored 4, histogram
   *   increment 8, scatter (cell id 4, counter 8, index 4) = 52 B; 14 flops (3 sub, 3 mul,
   *   3 floor, hash 5). */
  [DEM_WORK_BINNING] = {SIM_ON_HOST, {14, 0, 0, 0}, {52, 0, 0, 0}},
  /* COPY_D2H / COPY_H2D: the bytes cross PCIe on a GPU; on a CPU device the store is wrapped
   *   with CL_MEM_USE_HOST_PTR (solver/particles.h), so only the enqueue is paid. */
  [DEM_WORK_COPY_D2H] = {SIM_ON_LINK, {0, 0, 0, 0}, {0, 0, 0, 1}},
  [DEM_WORK_COPY_H2D] = {SIM_ON_LINK, {0, 0, 0, 0}, {0, 0, 0, 1}},
  /* PACK: each byte read once and written once. */
  [DEM_WORK_PACK] = {SIM_ON_HOST, {0, 0, 0, 0}, {0, 0, 0, 2}},
  /* PARTITION: `particles` is set below to particle-levels (see sim_cost_of). */
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
