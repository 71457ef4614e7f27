/* The GPU container's device. One container owns the GPU (the study's CN-GPU), so nothing else
 * contends for its flops, its memory or its PCIe link: a kernel or a copy is a fixed duration
 * (sim/clock.c lets it pass as a sleep of the rank: one SimGrid activity). The launch latency is what
 * made the study's GPU container slower than its bandwidth suggests: every step enqueues the
 * kernels and the ghost copies, whatever the number of particles.
 *
 * Memory: the data a kernel streams move at gpu_bw (a measured stream rate, not the peak); the
 * neighbour gathers are coalesced when the particles are in lattice order (work-items side by
 * side gather partners side by side) and hit the device's L2 when the reuse window fits, as on
 * a CPU; those that miss move whole sectors at gpu_gather_bw (a measured random-gather rate).
 * No write-allocate: a GPU writes sectors without reading them. */
#include "gpu.h"

#include "cost.h"
#include "host.h"

double sim_gpu_kernel_time(const struct sim_host *h, const struct sim_cost *c)
{
  double miss = sim_cost_window_miss(c->window, h->llc_bytes);
  double tf = c->flops / h->gpu_flops;
  double tm = (c->bytes - c->gathered) / h->gpu_bw + miss * c->gathers * h->cache_line / h->gpu_gather_bw;
  return h->launch_latency + (tf > tm ? tf : tm);
}

double sim_gpu_copy_time(const struct sim_host *h, double bytes)
{
  return h->launch_latency + bytes / h->pcie_bw;
}
