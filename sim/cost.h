/* The cost model: what a piece of reported work (solver/clock.h) asks of the hardware, as
 * floating-point operations and bytes of memory traffic, and where it runs. The coefficients
 * are properties of the code (counted from the kernels and the host-side routines), not of a
 * machine: the machine's rates come from the platform file (sim/host.h). No SimGrid types here,
 * so tests can compute expected times from the same figures. */
#ifndef DEMSIM_SIM_COST_H
#define DEMSIM_SIM_COST_H

#include "clock.h"

typedef enum {
  SIM_ON_DEVICE, /* an OpenCL kernel: all the container's cores, or the GPU */
  SIM_ON_HOST,   /* host code on one core of the container (pack, binning, partition, output) */
  SIM_ON_LINK    /* a host<->device copy: PCIe on a GPU, nothing to move on a CPU device */
} sim_place_t;

typedef struct sim_cost {
  sim_place_t place;
  double flops;  /* FP64 operations */
  double bytes;  /* bytes of memory traffic (DRAM, or HBM on a GPU; PCIe bytes for SIM_ON_LINK) */
} sim_cost_t;

/* Cost of one report. Returns 0, or -1 for an unknown kind or a negative or non-finite count. */
int sim_cost_of(const dem_work_t *w, sim_cost_t *c);

#endif
