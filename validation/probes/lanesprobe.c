/* lanesprobe: the FP64 rate of code written in lanes of eight, as this machine's OpenCL device
 * compiles it -- the lanes the kernels' vector code realises (validation/study/hardware.py: over
 * bwprobe's scalar FMA loop, the core's simd_lanes; sim/cost.c: scalar code's flops weigh that
 * many).
 *
 *   build/native/validation/lanesprobe [--seconds S] [--check]
 *
 * One work-item runs 8 independent chains of double8 FMAs (a = fma(a, m, c)), enough to keep two
 * pipelined FMA units busy, held in registers (no memory traffic). Its flops are 8 chains x
 * 8 lanes x 2 per iteration; the best of 5 launches of about S/5 seconds each (default S = 1)
 * is kept. The hardware's own width is not the answer: PoCL's LLVM, for example, compiles for
 * "skylake-avx512" on an AVX-512 core it does not know and then prefers 256-bit vectors, so a
 * double8 is two 4-lane instructions even where the core has 8-lane FMA units; bwprobe's vector
 * loop (gcc, -march=native) would count 8.
 *
 * Before timing, the kernel's 64 results after a few iterations are compared with the same
 * chains in C (fma() is correctly rounded in both, so they agree bit for bit); a difference is
 * exit status 1. --check stops there. Output: one JSON object on stdout, e.g.
 *   {"device": "...", "cl_vector_flops": 5.5e10, "seconds": 0.2, "iterations": 100000000}
 * Bad arguments: exit status 2. */
#define _POSIX_C_SOURCE 200809L
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHAINS 8
#define LANES 8

static const char *src =
    "__kernel void fma8(const int iters, const double m, const double c, __global double *out)\n"
    "{\n"
    "  const double8 l = (double8)(0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0);\n"
    "  double8 a0 = 1.0 + 0.001 * l, a1 = 1.01 + 0.001 * l, a2 = 1.02 + 0.001 * l, a3 = 1.03 + 0.001 * l;\n"
    "  double8 a4 = 1.04 + 0.001 * l, a5 = 1.05 + 0.001 * l, a6 = 1.06 + 0.001 * l, a7 = 1.07 + 0.001 * l;\n"
    "  const double8 vm = (double8)(m), vc = (double8)(c);\n"
    "  for (int i = 0; i < iters; ++i) {\n"
    "    a0 = fma(a0, vm, vc); a1 = fma(a1, vm, vc); a2 = fma(a2, vm, vc); a3 = fma(a3, vm, vc);\n"
    "    a4 = fma(a4, vm, vc); a5 = fma(a5, vm, vc); a6 = fma(a6, vm, vc); a7 = fma(a7, vm, vc);\n"
    "  }\n"
    "  vstore8(a0, 0, out); vstore8(a1, 1, out); vstore8(a2, 2, out); vstore8(a3, 3, out);\n"
    "  vstore8(a4, 4, out); vstore8(a5, 5, out); vstore8(a6, 6, out); vstore8(a7, 7, out);\n"
    "}\n";

/* the multiplier and addend: the chains tend to c / (1 - m) = 1.0, never overflow or denormal */
static const double M = 0.9999999, C = 1e-7;

#define CK(x)                                                \
  do {                                                       \
    cl_int e_ = (x);                                         \
    if (e_ != CL_SUCCESS) {                                  \
      fprintf(stderr, "lanesprobe: %s: error %d\n", #x, e_); \
      exit(1);                                               \
    }                                                        \
  } while (0)

typedef struct {
  cl_context ctx;
  cl_command_queue q;
  cl_kernel k;
  cl_mem out;
  char device[256];
} probe_t;

static double now(void)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void setup(probe_t *p)
{
  cl_platform_id plat;
  cl_device_id dev;
  cl_int e;
  CK(clGetPlatformIDs(1, &plat, NULL));
  CK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
  CK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof p->device, p->device, NULL));
  p->ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &e);
  CK(e);
  p->q = clCreateCommandQueue(p->ctx, dev, 0, &e);
  CK(e);
  cl_program prog = clCreateProgramWithSource(p->ctx, 1, &src, NULL, &e);
  CK(e);
  if (clBuildProgram(prog, 1, &dev, "", NULL, NULL) != CL_SUCCESS) {
    char log[4096] = "";
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
    fprintf(stderr, "lanesprobe: the kernel does not build:\n%s\n", log);
    exit(1);
  }
  p->k = clCreateKernel(prog, "fma8", &e);
  CK(e);
  p->out = clCreateBuffer(p->ctx, CL_MEM_WRITE_ONLY, CHAINS * LANES * sizeof(double), NULL, &e);
  CK(e);
  clReleaseProgram(prog);
}

/* one launch of one work-item, waited for: its wall time, s; the results in out */
static double launch(probe_t *p, int iters, double *out)
{
  size_t one = 1;
  CK(clSetKernelArg(p->k, 0, sizeof iters, &iters));
  CK(clSetKernelArg(p->k, 1, sizeof M, &M));
  CK(clSetKernelArg(p->k, 2, sizeof C, &C));
  CK(clSetKernelArg(p->k, 3, sizeof p->out, &p->out));
  double t0 = now();
  CK(clEnqueueNDRangeKernel(p->q, p->k, 1, NULL, &one, &one, 0, NULL, NULL));
  CK(clFinish(p->q));
  double t = now() - t0;
  CK(clEnqueueReadBuffer(p->q, p->out, CL_TRUE, 0, CHAINS * LANES * sizeof(double), out, 0, NULL, NULL));
  return t;
}

/* the C reference: the same chains, one lane at a time; the number of lanes that differ */
static int compare(int iters, const double *out)
{
  int bad = 0;
  for (int k = 0; k < CHAINS; k++)
    for (int l = 0; l < LANES; l++) {
      double a = (1.0 + 0.01 * k) + 0.001 * l;
      for (int i = 0; i < iters; i++) a = fma(a, M, C);
      if (a != out[k * LANES + l]) {
        if (!bad) fprintf(stderr, "lanesprobe: chain %d lane %d: kernel %.17g, C reference %.17g\n", k, l,
                          out[k * LANES + l], a);
        bad++;
      }
    }
  return bad;
}

static int usage(const char *msg)
{
  if (msg) fprintf(stderr, "lanesprobe: %s\n", msg);
  fprintf(msg ? stderr : stdout,
          "usage: lanesprobe [--seconds S] [--check]\n"
          "  the FP64 rate of 8 double8 FMA chains on one OpenCL work-item (JSON on stdout);\n"
          "  --seconds S  about S seconds of timed launches (default 1; 0.01 to 600)\n"
          "  --check      compare the kernel's results with the C reference and stop\n");
  return msg ? 2 : 0;
}

int main(int argc, char **argv)
{
  double seconds = 1.0;
  int check_only = 0;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--check")) check_only = 1;
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) {
      char *end;
      seconds = strtod(argv[++i], &end);
      if (*end || !(seconds >= 0.01 && seconds <= 600)) return usage("--seconds: expected a number from 0.01 to 600");
    } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) return usage(NULL);
    else return usage("unknown argument");
  }
  probe_t p;
  setup(&p);
  double out[CHAINS * LANES];
  enum { CHECK_ITERS = 1000 };
  launch(&p, CHECK_ITERS, out);
  int bad = compare(CHECK_ITERS, out);
  if (bad) {
    fprintf(stderr, "lanesprobe: %d of %d lanes differ from the C reference\n", bad, CHAINS * LANES);
    return 1;
  }
  if (check_only) {
    printf("{\"device\": \"%s\", \"checked_lanes\": %d}\n", p.device, CHAINS * LANES);
    return 0;
  }
  /* size a launch to a fifth of the time asked for, from a first launch of a million iterations */
  int iters = 1000000;
  double t = launch(&p, iters, out);
  double want = seconds / 5.0 / (t > 0 ? t : 1e-6) * iters;
  iters = want > 2e9 ? 2000000000 : want < 1000 ? 1000 : (int)want;
  double best = 1e300;
  for (int r = 0; r < 5; r++) {
    double s = launch(&p, iters, out);
    if (s < best) best = s;
  }
  double flops = 2.0 * CHAINS * LANES * (double)iters / best;
  printf("{\"device\": \"%s\", \"cl_vector_flops\": %.6g, \"seconds\": %.6g, \"iterations\": %d}\n", p.device, flops,
         best, iters);
  return 0;
}
