/* Work on a GPU container: kernels on the device, copies over PCIe. */
#ifndef DEMSIM_SIM_GPU_H
#define DEMSIM_SIM_GPU_H

struct sim_host;
struct sim_cost;

/* A kernel: launch latency + max(flops / gpu_flops, streamed / gpu_bw + missed / gpu_gather_bw),
 * where the gathers that miss the device's cache (the reuse window of sim/cost.c against its
 * llc_bytes, cache_line-sized sectors) come at the gather bandwidth. */
double sim_gpu_kernel_time(const struct sim_host *h, const struct sim_cost *c);
/* A host<->device copy: launch latency + bytes / pcie_bw. */
double sim_gpu_copy_time(const struct sim_host *h, double bytes);

#endif
