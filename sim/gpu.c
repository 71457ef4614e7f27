/* The GPU container's device. One container owns the GPU (the study's CN-GPU), so nothing else
 * contends for its flops, its memory or its PCIe link: a kernel or a copy is a fixed duration
 * (sim/clock.c lets it pass as a sleep of the rank: one SimGrid activity). The launch latency is what
 * made the study's GPU container slower than its bandwidth suggests: every step enqueues the
 * kernels and the ghost copies, whatever the number of particles. */
#include "gpu.h"

#include "host.h"

double sim_gpu_kernel_time(const struct sim_host *h, double flops, double bytes)
{
  double tf = flops / h->gpu_flops, tm = bytes / h->gpu_bw;
  return h->launch_latency + (tf > tm ? tf : tm);
}

double sim_gpu_copy_time(const struct sim_host *h, double bytes)
{
  return h->launch_latency + bytes / h->pcie_bw;
}
