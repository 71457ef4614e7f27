/* What `demsim probe` (run/probe.c) measured, as its writer (summary.c: probe.json) takes it. */
#ifndef DEMSIM_IO_PROBE_RECORD_H
#define DEMSIM_IO_PROBE_RECORD_H

#include "device/device.h"

#define DEM_PROBE_MAX_KERNELS 256  /* kernel runs per node (k cores, k = 1..cores) */
#define DEM_PROBE_MAX_CL 16        /* OpenCL devices listed per node */
#define DEM_PROBE_MAX_COMMANDS 12  /* commands listed per node */
#define DEM_PROBE_SIZES 5          /* ping-pong message sizes */

/* The contact-force kernel (dem_forces_all) on one core, one PoCL thread, by
 * validation/calibrate_cost over its contact lattice, with its counts as the cost model
 * (sim/cost.c) gives them, so that make_platforms.py derives the core's rate for the kernels from
 * it; and the same on every core of the node at once (one process per core). */
typedef struct dem_probe_contact {
  double particles, best_s, median_s, flops, traffic_B, divsqrt, reference_over_kernel;
  double all_median_s; /* s, the mean of the cores' medians when every core runs it at once */
  int all_cores;       /* how many cores ran it at once (0: not measured) */
  /* the host's cell binning (solver/dem/grid.c) of the same lattice, calibrate_cost's "binning"
   * row: its particles, its median on one core and the mean of the cores' medians at once, s */
  double binning_particles, binning_median_s, binning_all_median_s;
  /* the store's permutation (dem_particles_permute) of the same lattice, calibrate_cost's "permute"
   * row: the bytes of the rows it moves, its median on one core and the mean of the cores' medians
   * at once, s */
  double permute_bytes, permute_median_s, permute_all_median_s;
  /* the contact search (dem_search) on one core over calibrate_cost's apart and contact lattices of
   * the same particles, in turns with the contact-force kernel (calibrate_cost --search-turns): each
   * packing's slots written, and the median over the turns of each search's time over the kernel's
   * in the same turn (a change of the host's rate for a while changes a turn's three alike) */
  double search_particles, search_apart_slots, search_contact_slots, search_apart_ratio, search_contact_ratio;
  int search_turns; /* how many turns; 0: not measured */
} dem_probe_contact_t;

/* What the leader of a node measured. A figure not measured is NAN (null in the JSON). */
typedef struct dem_probe_node {
  char name[256];             /* short host name */
  int cores;                  /* online cores this process may run on */
  char cpu_model[256];
  double llc_bytes;           /* B, last-level cache, NAN when unknown */
  double mem_bytes;           /* B, MemTotal */
  double triad_1core_Bps;     /* B/s, bwprobe's bus triad, 1 thread on the first core */
  double triad_allcore_Bps;   /* B/s, 1 thread per core */
  double triad_stressed_Bps;  /* B/s, 1 thread beside a stress-ng --vm worker on the last core */
  char stress[256];           /* the stress command and its core, or "" when not measured */
  char stress_skipped[256];   /* why it was not measured */
  double gather_1core_Bps;    /* B/s, random gathers: lines/s x 64 B */
  double lattice_1core_Bps;   /* B/s, lattice-order gathers */
  double streams_1core_Bps;   /* B/s, kick-drift's pattern: six arrays read, three written back */
  double streams_allcore_Bps; /* B/s, the same with one thread per core, all at once */
  double flops_peak_1core;    /* flop/s, FP64 FMA chains of one thread */
  double scalar_flops_1core;  /* flop/s, the same chains in scalar code (their ratio: the datapath's lanes) */
  double vector_lanes;        /* doubles per vector register of bwprobe's build */
  double divider_1core;       /* lanes/s of FP64 divisions and square roots, one thread */
  double partition_rate;      /* particle-levels/s of Zoltan RCB in the solver's call, 2 ranks on 2 cores */
  double partition_particles; /* particles of the runs that measured it */
  dem_probe_contact_t contact;
  int n_kernel;
  struct { int cores; double particle_steps_per_s, loop_s; } kernel[DEM_PROBE_MAX_KERNELS];
  int n_cl;
  dem_device_info_t cl[DEM_PROBE_MAX_CL];
  int n_commands;
  char commands[DEM_PROBE_MAX_COMMANDS][512];
} dem_probe_node_t;

/* Rank 0's view of the whole probe, for the writer (summary.c). */
typedef struct dem_probe_report {
  char date[32];          /* UTC, ISO 8601 */
  char command[4096];
  long particles, steps;
  int quick;
  int ranks;
  const long *leader;     /* per rank: the lowest rank of its node */
  const char *node_text;  /* per rank, one after the other: the leader's node JSON, "" otherwise */
  const char *names;      /* per rank, one after the other: its host name */
  const long *sizes;      /* B, the DEM_PROBE_SIZES ping-pong message sizes */
  const double *one_way_s; /* per pair (i < j, in order) and size: s */
} dem_probe_report_t;

#endif
