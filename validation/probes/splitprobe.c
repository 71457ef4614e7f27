/* splitprobe: does a fixed split of a streaming kernel over the CPU cores beat PoCL's own
 * dealing of work-groups? (BENCHMARKS.md, "Two ranks against LIGGGHTS's two ranks")
 *
 *   cc -O2 validation/probes/splitprobe.c -o splitprobe -lOpenCL
 *   ./splitprobe N 0                     one queue on the whole CPU device (PoCL deals the groups)
 *   POCL_AFFINITY=1 ./splitprobe N 1     two sub-devices of one compute unit each
 *                                        (CL_DEVICE_PARTITION_EQUALLY), PoCL's threads pinned,
 *                                        each launch split in two halves by a `first` argument
 *
 * The kernel is a kick-drift of N particles (v += a f, x += b v, three components: 72 B read,
 * 48 B written per particle) launched 2,000 times after 100 of warm-up; prints the time per
 * launch (both halves, waited for). With the split, particle i is on the same core in every
 * launch; without it, on whichever thread took its group. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *src =
    "__kernel void kd(int first, int n, __global const double *restrict f, __global double *restrict v,\n"
    "                 __global double *restrict x)\n"
    "{\n"
    "  int i = first + (int)get_global_id(0);\n"
    "  if (i >= n) return;\n"
    "  for (int c = 0; c < 3; ++c) {\n"
    "    double vv = v[3 * i + c] + 1e-9 * f[3 * i + c];\n"
    "    v[3 * i + c] = vv;\n"
    "    x[3 * i + c] = x[3 * i + c] + 1e-8 * vv;\n"
    "  }\n"
    "}\n";

enum { REPS = 2000, WARM = 100, LOCAL = 1024 };

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#define CK(x)                                              \
  do {                                                     \
    cl_int e_ = (x);                                       \
    if (e_ != CL_SUCCESS) {                                \
      fprintf(stderr, "splitprobe: %s: error %d\n", #x, e_); \
      exit(1);                                             \
    }                                                      \
  } while (0)

static double *host_array(size_t bytes, double fill)
{
  double *a = aligned_alloc(4096, (bytes + 4095) / 4096 * 4096);
  if (!a) {
    fprintf(stderr, "splitprobe: out of memory\n");
    exit(1);
  }
  for (size_t i = 0; i < bytes / sizeof(double); i++) a[i] = fill + (double)i * 1e-12;
  return a;
}

int main(int argc, char **argv)
{
  int n = argc > 1 ? atoi(argv[1]) : 0, split = argc > 2 ? atoi(argv[2]) : -1;
  if (n < 2 || (split != 0 && split != 1)) {
    fprintf(stderr, "usage: splitprobe N 0|1   (N particles >= 2; 1: two sub-devices, a fixed split)\n");
    return 2;
  }
  cl_platform_id p;
  cl_device_id dev, devs[2];
  cl_int e;
  CK(clGetPlatformIDs(1, &p, NULL));
  CK(clGetDeviceIDs(p, CL_DEVICE_TYPE_CPU, 1, &dev, NULL));
  int ndev = 1;
  devs[0] = dev;
  if (split) {
    cl_device_partition_property props[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_uint nsub = 0;
    CK(clCreateSubDevices(dev, props, 2, devs, &nsub));
    ndev = 2;
  }
  cl_context ctx = clCreateContext(NULL, (cl_uint)ndev, devs, NULL, NULL, &e);
  CK(e);
  cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
  CK(e);
  CK(clBuildProgram(prog, (cl_uint)ndev, devs, "", NULL, NULL));
  size_t bytes = 3 * sizeof(double) * (size_t)n;
  double *hf = host_array(bytes, 1.0), *hv = host_array(bytes, 0.0), *hx = host_array(bytes, 0.5);
  cl_mem buf[3];
  double *host[3] = {hf, hv, hx};
  for (int b = 0; b < 3; b++) {
    buf[b] = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, bytes, host[b], &e);
    CK(e);
  }
  cl_kernel k[2];
  cl_command_queue qu[2];
  for (int q = 0; q < ndev; q++) {
    k[q] = clCreateKernel(prog, "kd", &e);
    CK(e);
    qu[q] = clCreateCommandQueue(ctx, devs[q], 0, &e);
    CK(e);
    int first = q * (n / ndev), end = q == ndev - 1 ? n : (q + 1) * (n / ndev);
    CK(clSetKernelArg(k[q], 0, sizeof(int), &first));
    CK(clSetKernelArg(k[q], 1, sizeof(int), &end));
    for (int b = 0; b < 3; b++) CK(clSetKernelArg(k[q], (cl_uint)(2 + b), sizeof(cl_mem), &buf[b]));
  }
  double t0 = 0.0;
  for (int r = 0; r < REPS + WARM; r++) {
    if (r == WARM) t0 = now();
    cl_event ev[2];
    for (int q = 0; q < ndev; q++) {
      size_t count = (size_t)(q == ndev - 1 ? n - q * (n / ndev) : n / ndev);
      size_t global = (count + LOCAL - 1) / LOCAL * LOCAL, local = LOCAL;
      CK(clEnqueueNDRangeKernel(qu[q], k[q], 1, NULL, &global, &local, 0, NULL, &ev[q]));
    }
    CK(clWaitForEvents((cl_uint)ndev, ev));
    for (int q = 0; q < ndev; q++) clReleaseEvent(ev[q]);
  }
  printf("n %d split %d: %.1f us per launch\n", n, split, 1e6 * (now() - t0) / REPS);
  return 0;
}
