/* The cost model: what a piece of reported work (solver/base/clock.h) asks of the hardware, as
 * floating-point operations and bytes of memory traffic, and where it runs. The coefficients
 * are properties of the code (counted from the kernels and the host-side routines), not of a
 * machine: the machine's rates come from the platform file (sim/host.h). No SimGrid types here,
 * so tests can compute expected times from the same figures. */
#ifndef DEMSIM_SIM_COST_H
#define DEMSIM_SIM_COST_H

#include "base/clock.h"

typedef enum {
  SIM_ON_DEVICE, /* an OpenCL kernel: all the container's cores, or the GPU */
  SIM_ON_HOST,   /* host code on one core of the container (pack, binning, partition, output) */
  SIM_ON_LINK,   /* a host<->device copy: PCIe on a GPU, nothing to move on a CPU device */
  SIM_ON_STORAGE, /* the container's storage: `bytes` at its bandwidth */
  SIM_ON_OS       /* the container's operating system: `bytes` of fresh memory mapped at their first
                   * write (page faults), at the host's first_touch_bw */
} sim_place_t;

typedef struct sim_cost {
  sim_place_t place;
  double flops;     /* FP64 operations */
  double bytes;     /* bytes the code loads and stores (PCIe bytes for SIM_ON_LINK) */
  double rfo;       /* of those, bytes stored to data not loaded first: on a write-back cache
                     * each such line is read before it is written (write-allocate) */
  double gathered;  /* of `bytes`, partner data loaded through an index (neighbour gathers) */
  double gathers;   /* how many such data: on a cache miss each brings a whole line */
  double particles; /* particles of the rank the gathers reach into (their reuse window) */
  double window;    /* bytes the gathers reach into: what must stay in the cache for them to hit */
  double divsqrt;   /* of `flops`, FP64 divisions and square roots (lanes): the divider's work */
  double scalar;    /* of `flops` less `divsqrt`, those of scalar code: one FP64 lane per instruction
                     * (sim_cost_cpu_flops) */
  double levels;    /* particle-levels of a PARTITION (this rank's share x (bisection levels + 1)) */
  double fresh;     /* bytes of new memory the work writes first (page faults): FIRST_TOUCH's bytes,
                     * Zoltan's scratch of a PARTITION; charged at the host's first_touch_bw */
} sim_cost_t;

/* Cost of one report. Returns 0, or -1 for an unknown kind or a negative or non-finite count. */
int sim_cost_of(const dem_work_t *w, sim_cost_t *c);

/* The same work done by a code that costs `factor` times as much (device.code_cost): its
 * operations and the traffic they cause (flops, divsqrt, scalar, bytes, rfo, gathered, gathers,
 * fresh) x factor; the reuse windows (particles, window), which are the data's, stay. */
void sim_cost_scale(sim_cost_t *c, double factor);

/* Bytes a piece of work moves between a CPU's last-level cache and DRAM, with cache lines of
 * `line` bytes and `cache` bytes of last-level cache for this work, in stream-equivalent bytes:
 *   traffic = (bytes - gathered) + rfo + miss x gathers x line x miss_weight
 * A missed gather is latency bound: a core streams core_bw but gathers missed lines at only
 * core_gather_bw, so a missed line weighs miss_weight = core_bw / core_gather_bw streamed lines.
 * The particles are stored in lattice (cell) order, so a partner's data are those of a particle
 * streamed nearby: a gathered datum is in the cache when the reuse window, two planes of the
 * rank's block (2 n^(2/3) particles of SIM_GATHER_PARTICLE_BYTES each), fits in it; else the
 * part of the window that does not fit misses: miss = max(0, 1 - cache / window). The wall pass
 * (BOUNDARIES) reaches through its list into particles scattered over the rank's store right
 * after the pair pass streamed all of them: its window is the rank's particles (dem_work_t.reach)
 * x the pair pass's streamed bytes per particle. */
double sim_cost_cpu_traffic(const sim_cost_t *c, double line, double cache, double miss_weight);
/* The fraction of gathers into the data of n particles that miss `cache` bytes of cache. */
double sim_cost_miss_fraction(double n, double cache);
/* The fraction of gathers into a window of `window` bytes that miss `cache` bytes of cache. */
double sim_cost_window_miss(double window, double cache);
/* The reuse window (bytes) of gathers into the data of n particles. */
double sim_cost_reuse_window(double n);
/* The compute of a piece of work on a CPU core, in flops at the core's rate core_flops (flop/s):
 *   flops - divsqrt + divsqrt x core_flops / divider_rate + (lanes - 1) x scalar
 * The core's rate is that of the DEM kernels written in lanes of eight (KERNEL_FLOPS_PER_CYCLE,
 * platforms/make_platforms.py). Scalar code (the contact search, the host's binning, the
 * external forces: a work-item per particle, branches per candidate) does one FP64 lane per
 * instruction, so its operations take `lanes` times as long, where lanes (platform property
 * simd_lanes) is how many times longer scalar code takes than the kernels' code in lanes for the
 * same flops: at most the width of the core's vector datapath in doubles (4 on a 256-bit one,
 * the study's platforms), measured where a probe can (a probed core's C reference pair pass over
 * the kernel's: 2.6 on a Zen 5 core whose datapath carries 8; platforms/README.md). lanes <= 1:
 * no such distinction (a GPU's threads are scalar and its rate is theirs).
 * A core's divider (divisions and square roots, divider_rate lanes/s, platform property
 * divider_rate) is not pipelined like its adders and multipliers: a division costs several
 * times an ordinary flop, and how many times differs between cores (Haswell's divider takes
 * 2.6x Skylake's cycles per lane for this code's mix). divider_rate <= 0: divisions and square
 * roots cost one flop each, like the rest. */
double sim_cost_cpu_flops(const sim_cost_t *c, double core_flops, double divider_rate, double lanes);
/* 1 when the work gathers nothing through an index (the integrators, the external forces,
 * binning, packing): its traffic streams, prefetched behind its compute, so the two overlap
 * (sim/membus.c); 0 for work with gathers, whose compute and traffic add up. */
int sim_cost_streaming(const sim_cost_t *c);
/* Partner data one particle offers to gathers: pos 24, radius 8, vel 24, omega 24 B. */
#define SIM_GATHER_PARTICLE_BYTES 80.0

#endif
