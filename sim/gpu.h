/* Work on a GPU container: kernels on the device, copies over PCIe. */
#ifndef DEMSIM_SIM_GPU_H
#define DEMSIM_SIM_GPU_H

struct sim_host;

/* A kernel: launch latency + max(flops / gpu_flops, bytes / gpu_bw). */
double sim_gpu_kernel_time(const struct sim_host *h, double flops, double bytes);
/* A host<->device copy: launch latency + bytes / pcie_bw. */
double sim_gpu_copy_time(const struct sim_host *h, double bytes);

#endif
