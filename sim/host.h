/* The hardware one rank runs on, as the platform file describes it (see platforms/openstack.xml).
 * Every container is a SimGrid host whose speed is one core's FP64 rate and whose core count is
 * the container's pinned cores; its physical node has a second host, `<node>-membus`, whose speed
 * is the node's memory bandwidth in bytes/s. The rest are host properties of the container:
 *   container  the study's container name ("CN-6700-4")
 *   node       the physical node ("n1");  node_type  its CPU ("i7-6700")
 *   membus     the name of the node's memory-bus host ("n1-membus")
 *   core_bw    B/s one core can draw from memory on an otherwise idle node
 *   core_gather_bw B/s of missed cache lines one core can gather (random gathers: latency bound)
 *   cache_line B, llc_bytes B: the cache line, and the last-level cache this container can use
 *   device     "cpu" or "gpu": where the DEM kernels run
 *   gpu_flops, gpu_bw, gpu_gather_bw, pcie_bw (FP64 flop/s, B/s, B/s, B/s)    -- device="gpu" only
 *   launch_latency (s)
 *   storage_bw (B/s)  the container's storage, read and written by checkpoints; optional (a run
 *                     that writes none needs no figure)
 *   divider_rate (lanes/s) FP64 divisions and square roots one core's divider completes
 *                     (sim/cost.h: sim_cost_cpu_flops); optional: without it they cost a flop each
 *   first_touch_bw (B/s) fresh memory the container's OS maps per second at its first write (a
 *                     page fault and a zeroed page per 4 KiB); optional: without it first touch
 *                     costs nothing
 *   partition_rate (1/s) particle-levels per second of the solver's Zoltan RCB call on one core
 *                     (the whole call: its arithmetic, traffic and its scratch's page faults),
 *                     measured on this host (validation/study/hardware.py); optional: without it a
 *                     partition is charged by sim/cost.c's counts (RCB_*, calibrated on one host)
 *   binning_rate (1/s) particles per second of the host's cell binning on one core (a counting
 *                     sort: solver/dem/grid.c, the search's and the ghost registration's grid),
 *                     measured on this host (demsim probe: calibrate_cost's binning row); optional:
 *                     without it binning is charged by sim/cost.c's counts
 *   permute_bw (B/s)   bytes per second of rows the host's in-place permutation of the particle
 *                     store moves on one core (solver/dem/particles.c dem_particles_permute: the
 *                     ghost registration's border last), measured on this host (demsim probe:
 *                     calibrate_cost's permute row); optional: without it sim/cost.c's counts
 *   search_rate (1/s), search_slot_rate (1/s)  the contact search (kernels/search.cl) on one core:
 *                     particles per second, each with the candidates around it examined and none
 *                     kept, and slots per second, each neighbour written beyond that; measured on
 *                     this host (demsim probe: calibrate_cost's search rows of the apart and contact
 *                     lattices against its contact-force kernel's, make_platforms.py); optional,
 *                     both or neither: without them the search is charged by sim/cost.c's counts
 *   simd_lanes         how many times longer scalar code takes than code in lanes for the same
 *                     flops, at most the FP64 lanes of the core's vector datapath (4 on a 256-bit
 *                     one): the core's rate is that of code in lanes, scalar code runs at
 *                     1/simd_lanes of it (sim/cost.h: sim_cost_cpu_flops); optional: without
 *                     it, 1 (no difference)
 *   cpu_share         0 < s <= 1: the part of each of its cores' time the container gets, as a CFS
 *                     quota gives it (the emulator sets the same quota: README, "Emulating a
 *                     scenario"): its work and its MPI run only in the running part of every
 *                     period (sim/quota.h, sim/membus.c, dem_clock_blocked, dem_clock_synced);
 *                     optional: without it, 1
 *   cpu_period (s)    the quota's period (cpu.cfs_period_us, which the emulator writes); optional:
 *                     without it SIM_CFS_PERIOD, Linux's default (Docker's --cpus keeps it)
 *   cpu_tick (s)      the host kernel's scheduler tick, 1/CONFIG_HZ, at which a quota is enforced
 *                     (sim/quota.h: the runs end at a tick, the excess owed to the next period);
 *                     optional: without it, the quota's own duty cycle (the first s x cpu_period)
 *   cpu_quota_efficiency  0 < e <= 1: under a quota (cpu_share < 1), the work's rate in its running
 *                     part over its rate on a free core: the same kernel took 1/e as much CPU time
 *                     in a cgroup with the container's quota as free on the same core (measured
 *                     by validation/study/calibration.py quota_sample before each round of an
 *                     emulated comparison; each window begins with the core's caches and clock
 *                     as the gap left them); optional: without it, 1
 * The memory-bus host carries `loaded_latency`: "u0:f0,u1:f1,..." the node's DRAM latency at bus
 * utilisation u (0..1) over its idle latency, rising, piecewise linear (sim_host_latency_factor).
 * This header is free of SimGrid types, so tests can read the same figures. */
#ifndef DEMSIM_SIM_HOST_H
#define DEMSIM_SIM_HOST_H

/* s: Linux's default CFS bandwidth period (kernel/sched/fair.c, default_cfs_period(): 0.1 s;
 * cpu.cfs_period_us = 100000), a container's cpu_period when the platform gives none */
#define SIM_CFS_PERIOD 0.1

#include <stddef.h>

typedef enum { SIM_DEVICE_CPU, SIM_DEVICE_GPU } sim_device_t;

typedef struct sim_host {
  char name[64];          /* the container's SimGrid host */
  char container[32];     /* the study's name of the container */
  char node[32];          /* physical node */
  char node_type[32];     /* its CPU model */
  char membus[64];        /* the node's memory-bus host */
  sim_device_t device;
  int cores;              /* pinned cores of the container */
  double core_flops;      /* flop/s, FP64 rate of one core */
  double core_bw;         /* B/s, memory bandwidth one core can draw */
  double core_gather_bw;  /* B/s of missed lines one core gathers */
  double cache_line;      /* B */
  double llc_bytes;       /* B of last-level cache for this container */
  int lat_points;         /* the loaded-latency curve of the node: points (u, factor) */
  double lat_u[8], lat_f[8];
  double node_bw;         /* B/s, memory bandwidth of the node (speed of the membus host) */
  double gpu_flops;       /* flop/s, FP64 rate of the GPU (device = gpu) */
  double gpu_bw;          /* B/s, GPU memory bandwidth for streamed data (device = gpu) */
  double gpu_gather_bw;   /* B/s, GPU memory bandwidth for gathered data (device = gpu) */
  double pcie_bw;         /* B/s, host<->device copies (device = gpu) */
  double launch_latency;  /* s, per kernel launch or copy enqueued on the GPU (device = gpu) */
  double cpu_share;       /* 0 < s <= 1: the part of its cores' time the container gets (1: all) */
  double cpu_period;      /* s: the period of that quota (CFS bandwidth control) */
  double cpu_tick;        /* s: the host's scheduler tick that enforces it; 0 when the platform has none */
  double cpu_quota_efficiency; /* under that quota, the work's rate in its windows over its free rate (1: alike) */
  struct sim_quota *quota; /* the quota's schedule (sim/quota.h) where the rank's clock keeps one, else NULL */
  double storage_bw;      /* B/s, the container's storage (checkpoints); 0 when the platform has none */
  double divider_rate;    /* lanes/s, one core's divisions and square roots; 0 when the platform has none */
  double first_touch_bw;  /* B/s, fresh memory mapped at first write; 0 when the platform has none */
  double partition_rate;  /* particle-levels/s of a Zoltan RCB call on one core; 0 when the platform has none */
  double binning_rate;    /* particles/s of the host's cell binning on one core; 0 when the platform has none */
  double permute_bw;      /* B/s of rows moved by the store's permutation on one core; 0 when the platform has none */
  double search_rate;     /* particles/s of the contact search on one core; 0 when the platform has none */
  double search_slot_rate; /* slots/s it writes beyond that; 0 when the platform has none */
  double simd_lanes;      /* FP64 lanes of a core's vector datapath; 1 when the platform gives none */
} sim_host_t;

/* Reads the description of the named host (NULL: the calling actor's host). Returns 0, or -1
 * with a message naming the host and the missing or bad property. */
int sim_host_read(sim_host_t *h, const char *name, char *err, size_t errlen);

/* Memory bandwidth (B/s) a kernel spread over all the container's cores can draw:
 * cores x core_bw, at most the node's bandwidth. */
double sim_host_kernel_bw(const sim_host_t *h);

/* The node's DRAM latency at bus utilisation u over its idle latency (1 at u = 0 when the
 * curve starts there; the last point's factor beyond it). */
double sim_host_latency_factor(const sim_host_t *h, double u);

/* "n1-cn6700-4 (CN-6700-4 on node n1, i7-6700, 4 cores, cpu)" */
void sim_host_describe(const sim_host_t *h, char *buf, size_t len);

#endif
