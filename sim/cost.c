/* The cost model: flops and bytes per unit of reported work.
 *
 *   flops = a*particles + b*pairs + c*contacts + d*bytes
 *   bytes = same shape, with its own coefficients
 *
 * How the coefficients were counted: from the kernels (the .cl files in kernels/) and
 * solver/dem/grid.c, by reading the source, last recounted after the vectorised contact law, the
 * fused force kernel (dem_forces_all), the squared displacement of kick-drift and the position
 * check of the binning. Bytes are the global-memory loads and stores a work-item issues (doubles
 * 8 B, ints 4 B, vectors 3 doubles) with no cache model between work-items, but a datum one
 * work-item loads twice is counted once: its own particle's data (once per kernel), and a
 * touching partner's index, position and radius that the force kernel reloads when it gathers
 * the contacts it found. Flops are the FP64 operations as the source writes them (+ - * /,
 * sqrt and floor count one each; negation, integer and compare operations none), identical
 * subexpressions counted once. A branch taken only in rare cases is not counted (said where).
 * Next to each coefficient: where it comes from. Recount when the kernels change;
 * validation/calibrate_cost runs every kernel on the local OpenCL device and prints the
 * measured time beside what these figures predict (platforms/README.md has its last output).
 *
 * What the counts mean is the solver's (solver/device/engine.c): for SEARCH, pairs = slots written;
 * for FORCES and FORCES_ALL, particle slots and particle contacts; for BOUNDARIES, the wall pass
 * over the wall list, particles = the listed particles (those with wall slots), pairs = wall
 * slots, contacts = wall contacts. A wall slot costs the FORCES kernels one 4 B index load that
 * is not charged (their reports do not carry it).
 * The candidates a search examines are not reported: they are charged per particle,
 * SEARCH_CANDIDATES of them. The cell edge is 2 r_max + skin, about one lattice spacing, so the
 * 27 cells around a particle hold about 27 particles; cells are numbered row by row inside the
 * particles' box, so a compact set of particles has a bucket per cell and the 9 rows of three
 * buckets hold those cells' particles and few others (solver/dem/grid.h). Counted by
 * validation/calibrate_cost on the benchmark lattices: 24.4 candidates per particle at 8,000,
 * 25.7 at 64,000, 26.1 at 216,000, 26.3 at 512,000 (before the rows, a hashed table: 36-38).
 * A platform that measured its search (search_rate, search_slot_rate: sim/host.h) is charged
 * those rates instead of these counts' compute (sim/clock.c).
 *
 * Scalar code: the search (a work-item per particle, a branch per candidate), the host's binning
 * and the external forces are written one particle at a time, not in lanes of eight like the
 * force, wall and integrator kernels; their flops other than the divider's weigh the core's
 * simd_lanes each (coef_t.scalar, sim_cost_cpu_flops). On one PoCL thread at 512,000 particles
 * they had run 3.0 x (search, binning) and 2.5 x (external) the model that weighed them one
 * each; with 4 lanes: search 0.80 x apart and 1.14 x in contact, binning 1.70 x, external
 * 1.06 x (a Zen 4 core). On a Zen 5 core the weights they fit are 2.9-3.2 (search apart), 5.1
 * (search in contact: a written slot costs more than counted), 4.5 (external), 9.9 (binning),
 * against the 2.6 its platform measures (the C reference's pair pass over the kernel's) and the
 * 8 of its FMA loops (platforms/README.md, simd_lanes).
 *
 * Host-side work runs on one core: packing and output are bandwidth work (a packed or written
 * byte is read once and written once: 2 B of traffic); Zoltan RCB is charged per particle and
 * bisection level (RCB_* below, calibrated against Zoltan itself). */
#include "cost.h"

#include <math.h>
#include <stddef.h>

#define SEARCH_CANDIDATES 26.0

/* Divisions and square roots (each one of the flops above, and each a lane of the divider,
 * sim_cost_cpu_flops), counted from the same source:
 *   the contact law (dem_contact8): sqrt R*, sqrt delta, sqrt(m* k sd), the spring's scale
 *     sqrt(old2 / new2) and its division: 4 square roots and 1 division;
 *   a particle contact: the law, the gather's d = sqrt, 1/d and q = 1/(rsum msum): 5 square
 *     roots and 3 divisions (the scalar pass decides contact without a root, but in a band of
 *     2^-40 around touching: forces.cl, dem_touching);
 *   SEARCH: the own cell's 3 divisions by the cell edge per particle, the candidate's 3 per pair;
 *   INTEGRATE: dt/m and dt/I per particle; BINNING: 3 + 6 divisions per particle. */
#define DIVSQRT_LAW 5.0
#define DIVSQRT_CONTACT 8.0

/* Zoltan RCB, per particle and bisection level (plus one level's worth for building the dots):
 * CALIBRATED. Zoltan of Trilinos 13.2 (Debian), LB_METHOD=RCB, 500,000 particles on the study's
 * lattice, one process cutting 2, 4, 8 and 16 parts, best of 3, on the 2-core development
 * machine: 302, 366, 485 and 433 ns per particle for 1+1 ... 1+4 levels. Part of that is not
 * Zoltan's arithmetic but its scratch: every call allocates its dots afresh, and that machine
 * (a PVM guest) maps new memory at 11 us a 4 KiB page. validation/probes/rcbprobe.c counts the page
 * faults of a call: 6,450-6,600 at 4 to 16 parts, 53 B per particle (RCB_FRESH_BYTES below),
 * 143 ns per particle there. Without them: 159, 223, 342, 290 ns, 80, 74, 86, 58 ns per
 * particle-level, 75 on average. (rcbprobe's own calls, without the solver's weights and
 * callbacks, take 196-213 ns per particle at 4-16 parts, idle, 2026-12-05, of which the faults
 * are 143: the solver's configuration costs more, and its figures are kept.) RCB is not a
 * streaming loop (callbacks, median iterations): its time follows the core's clock, so it is
 * charged as compute: 75 ns x 3.28 GHz (that machine's clock, validation/study/hardware.py's probe) =
 * 246 cycles, in the platforms' flops at KERNEL_FLOPS_PER_CYCLE = 3.10 flops per cycle
 * (platforms/make_platforms.py): 763 flops (681 at 2.77, 600 at 2.41: the cycles are
 * the measurement, the flops follow the constant). Beside it the dots' coordinates, weight and ids are
 * read at every level (48 B), and the scratch is new memory, at the host's first_touch_bw (a
 * bare-metal host maps it ten times faster than that VM). (Charged before as 1,200 flops with
 * the faults inside, and before that as 1,300 B of memory traffic, 120 ns at 11 GB/s.)
 * These figures are one processor's: on an AMD EPYC family 25 (Zen 4) core the solver's call
 * takes about 30 ns a particle-level, faults included (validation/study/hardware.py, 2026-12-05),
 * against about 80 that they charge at that core's rate. A platform that measured its own
 * Zoltan (host property partition_rate, sim/host.h) is charged that instead (sim/clock.c). */
#define RCB_FLOPS_PER_PARTICLE_LEVEL 763.0
#define RCB_FRESH_BYTES_PER_PARTICLE 53.0
#define RCB_BYTES_PER_PARTICLE_LEVEL 48.0

enum { N_COUNTS = 4 }; /* particles, pairs, contacts, bytes */

typedef struct coef {
  sim_place_t place;
  double f[N_COUNTS]; /* flops per particle, pair, contact, byte */
  double b[N_COUNTS]; /* bytes per particle, pair, contact, byte */
  double d[N_COUNTS]; /* of the flops, divisions and square roots (divider lanes) */
  int scalar;         /* 1: scalar code, its flops one lane per instruction (sim_cost_cpu_flops) */
} coef_t;

/* What the hardware moves beside the bytes above (sim_cost_cpu_traffic), per count, from the
 * same reading of the kernels:
 *   rfo: bytes stored without being loaded first (write-allocate reads their lines);
 *   gathered, gathers: partner data loaded through an index, in bytes and in data. */
typedef struct traffic_coef {
  double rfo[N_COUNTS];
  double gathered[N_COUNTS];
  double gathers[N_COUNTS];
} traffic_coef_t;

/* SEARCH: per particle, 9 rows (cell_start[b], [b+3]: one datum each, 72 B) and
 *   SEARCH_CANDIDATES x (cell_sorted 4, pos 24, radius 8) gathered; per slot written, the new
 *   gid, index and spring stored without a load (32 B).
 * FORCES, FORCES_ALL: per particle slot the partner's pos and radius (2 data, 32 B), per
 *   contact its vel and omega (2 data, 48 B); force and torque stored without a load (48 B).
 * BOUNDARIES: every datum of a listed particle is reached through the wall list, one line per
 *   array: per listed particle radius, nbr_count, force and torque loaded and stored (4 lines,
 *   108 B; the list entry itself streams); per wall slot its nbr_index, the particle's pos
 *   component and the spring test (3 lines, 36 B); per wall contact vel and omega (2 lines, 48 B)
 *   and the spring's load and store, on the line the test brought (72 B gathered in all). On one
 *   PoCL thread the pass took 2.3 x its model then without these at 8,000 particles (its data in
 *   the cache), 3.7 x at 64,000, 5.0 x at 216,000 and 5.8 x at 512,000: the misses, about 50 ns
 *   per listed particle at 512,000 (calibrate_cost --sizes 20,40,60,80 --packings apart).
 * BINNING: index stored 4 and bucket table cleared 12 B without a load.
 * PACK, OUTPUT: the copy's destination is written without a load (1 B per byte). */
static const traffic_coef_t traffic[DEM_WORK_KIND_COUNT] = {
  [DEM_WORK_SEARCH] = {{0, 32, 0, 0}, {72 + SEARCH_CANDIDATES * 36, 0, 0, 0}, {18 + SEARCH_CANDIDATES * 3, 0, 0, 0}},
  [DEM_WORK_FORCES] = {{48, 0, 0, 0}, {0, 32, 48, 0}, {0, 2, 2, 0}},
  [DEM_WORK_FORCES_ALL] = {{48, 0, 0, 0}, {0, 32, 48, 0}, {0, 2, 2, 0}},
  [DEM_WORK_BOUNDARIES] = {{0}, {108, 36, 72, 0}, {4, 3, 2, 0}},
  [DEM_WORK_BINNING] = {{16, 0, 0, 0}, {0}, {0}},
  [DEM_WORK_PACK] = {{0, 0, 0, 1}, {0}, {0}},
  [DEM_WORK_OUTPUT] = {{0, 0, 0, 1}, {0}, {0}},
  /* PERMUTE: the read of each moved byte is gathered, a datum (a line on a miss) per piece (a row
   *   of one array; the rows wider than a line, the slots', bring more: not counted). */
  [DEM_WORK_PERMUTE] = {{0}, {0, 0, 0, 1}, {0, 1, 0, 0}},
};

/* The force kernels share three pieces (forces.cl, boundaries.cl, external.cl), counted once:
 *
 * A particle slot, dem_forces_pairs' scalar pass: nbr_index 4, partner radius 8 and pos 24;
 *   when not touching, dem_spring_zero tests the spring (24 loaded; it is written only in the
 *   step the pair separates): 60 B, of which 24 are taken back per contact. 11 flops: e 3,
 *   d^2 5, r_i + r_j 1, its square 1, the band's lower bound 1 (dem_touching; its upper bound
 *   and root only in the band, not counted).
 * A particle contact: partner vel and omega 48, spring loaded 24 and stored 24, less the 24 of
 *   the test it skips: 72 B. 150 flops, per double8 lane:
 *   - gather: e 3, v_i - v_j 3, d 6, r_i + r_j 1, delta 1, 1/d 1, n 3, m_j 3, m_i + m_j 1,
 *     q = 1/(rsum msum) 2, R* 3, m* 3, r_j w_j and the sum 6: 36;
 *   - dem_contact8: v_r.n 5, sqrt R* 1, k 1, sqrt delta 1, sqrt(m* k sd) 3, Fn 5, relative
 *     velocity 12, v_n 5, v_t 6, spring rotation (computed whether used or not, no branches)
 *     xi.n 5, |xi|^2 5, xi - xi.n n 6, its |.|^2 5, scale 2, scaled 3, advance 6; k_t 2,
 *     gamma_t 1, F_t 9, |F_t|^2 5, mu Fn 1, its square 1, force -Fn n + F_t 6, r_i n 3,
 *     torque 9: 108; the Coulomb cap (scale 2, 1/k_t 1, F_t 3, xi 9: 15) runs only in groups
 *     where some contact slides, and is not counted;
 *   - the lanes added into f and t in slot order: 6.
 *   Not counted: the idle lanes of a particle's last group of eight (7 - (m - 1) % 8 of them for
 *   m contacts: they repeat the first contact's arithmetic), and r_i w_i once per group.
 * A wall slot, dem_boundaries_walls8's scalar pass: pos component of the particle 8, nbr_index
 *   4, spring test 24 when not touching: 36 B. 2 flops: wall distance 1, delta 1.
 * A wall contact, a double8 lane of the same law as a particle contact: spring loaded 24 and
 *   stored 24 less the test 24; the particle's vel and omega 48 (loaded per contact; a particle
 *   touching two walls, at an edge of the box, is rare): 72 B. 120 flops: gather m_i 3 and
 *   r_i w_i 3; dem_contact8 108 (above; the spring rotation is computed, and discarded, here
 *   too); the lanes added into f and t 6. Not counted, as for particles: the idle lanes of the
 *   work-item's last group of eight. */
static const coef_t table[DEM_WORK_KIND_COUNT] = {
  /* SEARCH (search.cl, history.cl: dem_search; boundaries.cl: dem_wall_list after it).
   * per particle: its cell_sorted entry 4 B (the work-items go in that order); pos+radius 32;
   *   nbr_count read and written 8; 9 rows (cell_start[b], [b+3]) 72; SEARCH_CANDIDATES x
   *   (cell_sorted 4, pos 24, radius 8) = 936; the wall list's nbr_count and first nbr_index 8
   *   (the entry it writes for a particle with wall slots, 4 B for a few per cent of them, is
   *   not counted): 1060 B.
   *   Flops: own cell 9 (3 x sub, div, floor), 6 walls x 2 (distance, r_i + skin) 12, and
   *   SEARCH_CANDIDATES x 11 (e and d^2 8, cutoff r_i + r_j + skin 2 and its square 1) 286:
   *   307 flops.
   * per pair (a slot written): the candidate's cell, checked only for those within reach 9
   *   flops (a partner of another cell hashed into the bucket pays it too and is dropped: rare,
   *   not counted); partner id 4, old gid and spring for the history carry 28, new gid, index
   *   and spring stored 32: 64 B. */
  [DEM_WORK_SEARCH] = {SIM_ON_DEVICE, {9 + 12 + SEARCH_CANDIDATES * 11, 9, 0, 0},
                       {4 + 32 + 8 + 72 + SEARCH_CANDIDATES * 36 + 8, 64, 0, 0}, {3, 3, 0, 0}, 1},
  /* FORCES (forces.cl: dem_forces).
   * per particle: pos, vel, omega 72 B, radius 8, nbr_count 4 read, force and torque 48 stored:
   *   132 B; 3 flops (m_i).
   * per pair and per contact: a particle slot and a particle contact (above): 60 B, 11 flops;
   *   72 B, 150 flops. */
  [DEM_WORK_FORCES] = {SIM_ON_DEVICE, {3, 11, 150, 0}, {132, 60, 72, 0}, {0, 0, DIVSQRT_CONTACT, 0}},
  /* BOUNDARIES (boundaries.cl: dem_boundaries, the wall pass: one work-item per eight particles
   *   of the wall list, alone or as the second kernel of a step's forces).
   * per particle (listed): its list entry 4 B, radius 8, nbr_count 4, force and torque loaded
   *   and stored 96: 112 B; 0 flops (in a step, the pass adds these particles' gravity, which
   *   the pair pass leaves out: FORCES_ALL charges the gravity of every particle).
   * per pair (a wall slot, above): 36 B, 2 flops.
   * per contact (a wall contact, above): 72 B, 120 flops. */
  [DEM_WORK_BOUNDARIES] = {SIM_ON_DEVICE, {0, 2, 120, 0}, {112, 36, 72, 0}, {0, 0, DIVSQRT_LAW, 0}},
  /* EXTERNAL (external.cl): radius 8 B, force loaded and stored 48: 56 B; 9 flops (mass 3,
   *   3 x (mul, add)). */
  [DEM_WORK_EXTERNAL] = {SIM_ON_DEVICE, {9, 0, 0, 0}, {56, 0, 0, 0}, {0}, 1},
  /* FORCES_ALL (integrator.cl: dem_forces_all, the pair pass of a step: FORCES, then EXTERNAL on
   *   the force still in registers; the wall pass that follows is a BOUNDARIES charge).
   * per particle: as FORCES, 132 B (force and torque stored once, never loaded: the separate
   *   kernels' 56 B of EXTERNAL are not paid; the test for wall slots reads nbr_count, counted,
   *   and the first slot's index, counted with the slots); 12 flops (m_i 3, gravity 9).
   * per pair, contact: as FORCES (60 B, 11 flops; 72 B, 150 flops). */
  [DEM_WORK_FORCES_ALL] = {SIM_ON_DEVICE, {12, 11, 150, 0}, {132, 60, 72, 0}, {0, 0, DIVSQRT_CONTACT, 0}},
  /* INTEGRATE (integrator.cl: dem_kick_drift, the every-step kernel; dem_kick is cheaper):
   *   radius 8, force 24, torque 24 loaded; pos, vel, omega loaded and stored 144: 200 B (the
   *   running maximum all work-items read is one cached word: not counted); 34 flops (m 3,
   *   I 3, the two step factors 3, 3 x (v, w, x updates 6) 18, (|v| dt)^2 7). */
  [DEM_WORK_INTEGRATE] = {SIM_ON_DEVICE, {34, 0, 0, 0}, {200, 0, 0, 0}, {2, 0, 0, 0}},
  /* BINNING (host, solver/dem/grid.c dem_grid_build, a counting sort into 2-4 buckets per particle,
   *   3 on average over particle counts):
   *   per particle: the position check reads pos 24, then two passes read it again 48,
   *   counter increments 16, index stored 4, bucket table cleared 12, prefix sum and shift-back
   *   (a read and a write per bucket each) 48: 152 B; 24 flops (the check 3 x (sub, div), the
   *   bucket computed twice: 3 x (sub, div, floor) each). */
  [DEM_WORK_BINNING] = {SIM_ON_HOST, {24, 0, 0, 0}, {152, 0, 0, 0}, {9, 0, 0, 0}, 1},
  /* COPY_D2H / COPY_H2D: the bytes cross PCIe on a GPU; on a CPU device the store is wrapped
   *   with CL_MEM_USE_HOST_PTR (solver/dem/particles.h), so only the enqueue is paid. */
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
  /* STORAGE: a checkpoint must reach the disk before it counts (it is renamed into place only
   *   then), so each byte crosses the container's storage: 1 B per byte. */
  [DEM_WORK_STORAGE] = {SIM_ON_STORAGE, {0, 0, 0, 0}, {0, 0, 0, 1}},
  /* FIRST_TOUCH: memory the process writes for the first time is mapped by the OS then, a page
   *   fault and a zeroed page per 4 KiB; the host's first_touch_bw says how many such bytes a
   *   second (platforms/README.md). `bytes` is new memory (sim_cost_t.fresh), no traffic. */
  [DEM_WORK_FIRST_TOUCH] = {SIM_ON_OS, {0, 0, 0, 0}, {0, 0, 0, 0}},
  /* SCAN (host, solver/domain/ghosts.c's registration): `bytes` streamed once; per `particles`
   *   a comparison (the layer's largest radius: one a particle; the bounding box: six); per
   *   particle-box test (`pairs`, within()) the first axis's two bounds and two comparisons, 4
   *   scalar flops: the first axis decides for all but the particles near the box. */
  [DEM_WORK_SCAN] = {SIM_ON_HOST, {1, 4, 0, 0}, {0, 0, 0, 1}, {0}, 1},
  /* PERMUTE (host, solver/dem/particles.c dem_particles_permute: cycle by cycle, in place): each
   *   moved row is read from where its cycle's previous place points (scattered over the store)
   *   and written where the previous read was (a line in the cache): 2 B of traffic per byte. */
  [DEM_WORK_PERMUTE] = {SIM_ON_HOST, {0, 0, 0, 0}, {0, 0, 0, 2}},
};

static int bad(double x) { return !isfinite(x) || x < 0.0; }

int sim_cost_of(const dem_work_t *w, sim_cost_t *c)
{
  if (!w || w->kind < 0 || w->kind >= DEM_WORK_KIND_COUNT) return -1;
  if (bad(w->particles) || bad(w->pairs) || bad(w->contacts) || bad(w->bytes) || bad(w->ranks) ||
      bad(w->reach))
    return -1;
  double n[N_COUNTS] = {w->particles, w->pairs, w->contacts, w->bytes};
  const coef_t *k = &table[w->kind];
  const traffic_coef_t *t = &traffic[w->kind];
  *c = (sim_cost_t){.place = k->place, .particles = w->particles, .window = sim_cost_reuse_window(w->particles)};
  if (w->kind == DEM_WORK_BOUNDARIES && w->reach > c->window / table[DEM_WORK_FORCES_ALL].b[0])
    c->window = w->reach * table[DEM_WORK_FORCES_ALL].b[0];
  if (w->kind == DEM_WORK_FIRST_TOUCH) c->fresh = w->bytes;
  /* a permutation's reads reach anywhere in the store: its rows, at the moved rows' width */
  if (w->kind == DEM_WORK_PERMUTE) c->window = w->particles > 0.0 ? w->reach * w->bytes / w->particles : 0.0;
  if (w->kind == DEM_WORK_PARTITION) {
    /* `particles` is the global count: every rank handles its share at each of the
     * ceil(log2(ranks)) bisection levels, plus one pass to build the dots, in scratch that is
     * new memory every call. */
    double ranks = w->ranks >= 1.0 ? w->ranks : 1.0;
    n[0] = w->particles / ranks * (ceil(log2(ranks)) + 1.0);
    c->levels = n[0];
    c->fresh = RCB_FRESH_BYTES_PER_PARTICLE * w->particles / ranks;
  }
  for (int i = 0; i < N_COUNTS; i++) {
    c->flops += k->f[i] * n[i];
    c->bytes += k->b[i] * n[i];
    c->rfo += t->rfo[i] * n[i];
    c->gathered += t->gathered[i] * n[i];
    c->gathers += t->gathers[i] * n[i];
    c->divsqrt += k->d[i] * n[i];
  }
  if (k->scalar) c->scalar = c->flops - c->divsqrt;
  return 0;
}

double sim_cost_cpu_flops(const sim_cost_t *c, double core_flops, double divider_rate, double lanes)
{
  double f = c->flops + (lanes > 1.0 ? (lanes - 1.0) * c->scalar : 0.0);
  if (!(divider_rate > 0.0)) return f;
  return f - c->divsqrt + c->divsqrt * core_flops / divider_rate;
}

double sim_cost_reuse_window(double n)
{
  return n > 0.0 ? 2.0 * pow(n, 2.0 / 3.0) * SIM_GATHER_PARTICLE_BYTES : 0.0;
}

double sim_cost_window_miss(double window, double cache)
{
  return window > cache && window > 0.0 ? 1.0 - cache / window : 0.0;
}

double sim_cost_miss_fraction(double n, double cache)
{
  return sim_cost_window_miss(sim_cost_reuse_window(n), cache);
}

double sim_cost_cpu_traffic(const sim_cost_t *c, double line, double cache, double miss_weight)
{
  double miss = sim_cost_window_miss(c->window, cache);
  return (c->bytes - c->gathered) + c->rfo + miss * c->gathers * line * miss_weight;
}

int sim_cost_streaming(const sim_cost_t *c) { return !(c->gathers > 0.0); }

void sim_cost_scale(sim_cost_t *c, double factor)
{
  double *const extensive[] = {&c->flops, &c->bytes, &c->rfo, &c->gathered, &c->gathers, &c->divsqrt, &c->scalar,
                               &c->fresh};
  for (size_t i = 0; i < sizeof extensive / sizeof extensive[0]; i++) *extensive[i] *= factor;
}
