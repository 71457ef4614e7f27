/* OpenCL host code (see device.h). Design notes:
 * - Buffers use CL_MEM_USE_HOST_PTR over the particle store's arrays (128 B aligned): PoCL runs
 *   the kernels in place, a GPU driver keeps a device copy. Host and device copies are made
 *   consistent only by explicit blocking reads/writes of the same host range (the spec allows
 *   this for USE_HOST_PTR buffers once the in-order queue has drained).
 * - One in-order queue, no events: the per-step host sync is the kick-drift's tiny read of the
 *   step counters (displacement for the search test, contact counts for the cost model); two
 *   sets of counters alternate so that no separate clearing command is needed.
 * - Kernel timing (dem_device_profile, for validation/calibrate_cost and runs with
 *   device.cost = "measured"): the queue is recreated with profiling enabled and every launch
 *   then waits for its kernel's event; other runs never switch it on, so their queue stays
 *   event-free.
 * - The work-group size is given explicitly because the force kernels sum their contact counts
 *   in local memory; the global size is rounded up and every kernel checks i < n. On a CPU
 *   device it is 1024 (or what the device or the kernel allows): PoCL runs a work-group as one
 *   task on one of its threads, and with groups of 64 the cost of scheduling them was a third
 *   of a step without contacts (bench-apart: 2.9e7 particle-steps/s with 64, 4.3e7 with 1024,
 *   interleaved runs); on a GPU it is 64, a few warps, which keeps many groups resident.
 * - One context and one built program per device per process, shared by every dem_device_t of
 *   the process (reference counted, in a slot of share.h). Under SMPI all ranks live in one
 *   process and SMPI privatises the application's globals, so without the shared slot each
 *   rank created its own context and built its own program: at 64 ranks that was 64 builds
 *   (seconds of start-up) and some 110 MB. What a rank computes is unchanged: each rank keeps
 *   its own queue, kernel objects (their arguments are per rank) and buffers; the ranks take
 *   turns on the OpenCL API (one OS thread, or the share lock while creating, launching and
 *   dropping).
 * - One work-group function per kernel in the process, for PoCL 3.1 (Debian 12). Its CPU driver
 *   caches a compiled work-group function per kernel, local size, grid width class and zero or
 *   non-zero global offset; a command takes its item when it starts and gives it back when it
 *   ends, but the give-back looks the item up again by kernel and local size only
 *   (lib/CL/devices/common.c, pocl_release_dlhandle_cache; upstream PoCL 6.0 hands the item
 *   itself back). With two items of one kernel in use by commands in flight on several queues
 *   at once, a command gives back another's item and the process aborts ("Assertion
 *   `found->ref_count > 0' failed"): case 1 died at its first repartition under SMPI, where a
 *   rank's part grows past every earlier grid and the forces ahead ran at an offset. So:
 *   (1) no launch has a global offset: the force kernels take their first particle as an
 *   argument; (2) the widest grid each kernel ran in the process is kept in the shared slot,
 *   and a launch wider than that (PoCL then makes a new item, which every later launch of the
 *   kernel takes, as it is found first and fits them all) waits until every queue of the
 *   process is empty. That happens a few times a run (the first launches, a part that grew);
 *   otherwise the ranks' kernels run side by side as before (one queue for the whole process
 *   instead cost 20-30 % of wall time on case 1 and 8-rank runs). tests/test_device_share
 *   crashed in 10 of 10 runs before. */
#define CL_TARGET_OPENCL_VERSION 120
#include "device/device.h"
#include "scenario/hostmap.h"

#include <CL/cl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/share.h"
#include "dem/grid.h"
#include "dem/particles.h"

extern const char dem_kernel_source[];
extern const size_t dem_kernel_source_len;

/* the OpenCL buffers wrap the store's arrays, one buffer per entry of dem_particle_arrays (dem/particles.h) */

#define DEM_COUNTERS 4 /* uints per set of step counters (kernels/common.cl) */
#define DEM_WALL_GROUP 8 /* wall list entries per work-item of the wall pass (kernels/boundaries.cl) */
#define DEM_WALL_LOCAL 64 /* work-items per group of the wall pass, at most (see dem_device_kernels) */

enum { K_SEARCH, K_WALL_LIST, K_FORCES, K_BOUNDARIES, K_EXTERNAL, K_FORCES_ALL, K_KICK_DRIFT, K_KICK, K_COUNT };
static const char *dem_kernel_names[K_COUNT] = {"dem_search", "dem_wall_list", "dem_forces", "dem_boundaries",
                                                "dem_external", "dem_forces_all", "dem_kick_drift", "dem_kick"};

/* the context and program of one device, shared by the process (see the top of this file) */
typedef struct dem_cl_shared {
  cl_device_id device;
  cl_context ctx;
  cl_program program;
  unsigned long source_hash; /* of the kernel source and build options it was built from */
  int users;
  struct dem_device *devices; /* its users, linked by their next_user */
  size_t widest[K_COUNT];     /* the widest grid each kernel ran on (work-items), see the top */
  struct dem_cl_shared *next;
} dem_cl_shared_t;

#define DEM_CL_SHARE_SLOT "demsim.opencl"

struct dem_device {
  cl_platform_id platform;
  cl_device_id device;
  dem_cl_shared_t *shared;
  struct dem_device *next_user; /* the next user of shared */
  cl_context ctx;     /* shared->ctx */
  cl_command_queue queue;
  cl_program program; /* shared->program */
  cl_kernel kernels[K_COUNT];
  size_t max_local;   /* work-group size: 1024 on a CPU, 64 on a GPU, or the device limit */
  cl_mem bufs[DEM_ARRAY_COUNT];
  cl_mem params;      /* DEM_DEVICE_P_COUNT doubles */
  cl_mem counters[2]; /* two sets of DEM_COUNTERS uints used on alternate steps, see common.cl */
  int parity;         /* the set the force kernels fill now */
  cl_mem status;      /* 8 ints, see DEM_S_* in common.cl */
  cl_mem walls;       /* the wall list (boundaries.cl): owned particles with wall slots, bound_cap ints */
  int wall_count;     /* its entries */
  int walls_valid;    /* 0 once the slots may have changed since it was written (bind, slots pushed) */
  cl_mem cell_start, cell_sorted;
  const int32_t *cell_start_host, *cell_sorted_host; /* what the grid buffers wrap */
  size_t cell_start_len, cell_sorted_len;             /* entries */
  dem_particles_t *p;
  size_t bound_cap;
  int bound_slots;     /* slot stride of the bound store */
  size_t local[K_COUNT]; /* work-group size of each kernel */
  int profiling;         /* dem_device_profile: time every kernel */
  int queued;            /* commands were queued since the queue was last seen empty */
  cl_uint counts[DEM_COUNTERS]; /* the step counters, read by the last kick-drift's queued copy */
  int counts_pending;    /* that copy has not been handed out yet (dem_device_counters) */
  cl_event read_done;    /* the last queued read of dem_device_read_async, until waited for */
  double kernel_s;       /* s, device time of the kernels timed since dem_device_kernel_seconds */
  char name[256];
  char err[1024];
};

static int dem_device_fail(dem_device_t *d, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(d->err, sizeof(d->err), fmt, ap);
  va_end(ap);
  return -1;
}

#define DEM_CL(d, call)                                                                 \
  do {                                                                                  \
    cl_int rc_ = (call);                                                                \
    if (rc_ != CL_SUCCESS) return dem_device_fail(d, "OpenCL error %d in %s (%s:%d)", (int)rc_, #call, \
                                                  __FILE__, __LINE__);                  \
  } while (0)

static void dem_release_mem(cl_mem *m)
{
  if (*m) clReleaseMemObject(*m);
  *m = NULL;
}

/* Under a host map each rank is pinned to its container's cores (mpirun's rankfile) and the
 * launcher exports DEMSIM_CU_FROM_AFFINITY=1: PoCL then gets exactly those cores as compute units
 * (dem_pocl_thread_limit, unless the user set a limit), read before PoCL first looks at it. */
static void dem_device_cu_from_affinity(void)
{
  const char *on = getenv("DEMSIM_CU_FROM_AFFINITY");
  if (!on || strcmp(on, "1") != 0) return;
  char cpus[256];
  int n = dem_hostmap_affinity(cpus, sizeof cpus);
  if (n >= 1) dem_pocl_thread_limit(n, 0);
}

/* PoCL's CPU kernel compiler turns each kernel into a loop over the work-items of a group; by
 * default ("loopvec") it then runs LLVM's loop and SLP vectorizers over that loop. On the
 * contact kernel the SLP vectorizer turns the eight lanes' element-by-element loads into
 * vgatherdpd, slower on these AMD EPYC cores than the loads and inserts it replaces; the
 * streaming kernels do not vectorise across work-items either way (AoS rows of three). "loops"
 * (PoCL's documented POCL_WORK_GROUP_METHOD: the same loops without the vectorizers) runs the
 * contact kernel 20 % faster, the others alike, same bits (BENCHMARKS-history.md "The contact lanes in
 * registers"). Set before PoCL first reads it, unless the user chose; other drivers ignore it. */
static void dem_device_pocl_method(void)
{
  setenv("POCL_WORK_GROUP_METHOD", "loops", 0);
}

static int dem_device_select(dem_device_t *d, int platform, int device, const char *type)
{
  dem_device_cu_from_affinity();
  dem_device_pocl_method();
  cl_device_type want = CL_DEVICE_TYPE_ALL;
  if (!type || strcmp(type, "any") == 0) want = CL_DEVICE_TYPE_ALL;
  else if (strcmp(type, "cpu") == 0) want = CL_DEVICE_TYPE_CPU;
  else if (strcmp(type, "gpu") == 0) want = CL_DEVICE_TYPE_GPU;
  else return dem_device_fail(d, "OpenCL device type '%s': expected any, cpu or gpu", type);

  cl_uint np = 0;
  cl_int rc = clGetPlatformIDs(0, NULL, &np);
  if (rc != CL_SUCCESS || np == 0) return dem_device_fail(d, "no OpenCL platform found (error %d)", (int)rc);
  cl_platform_id plats[16];
  if (np > 16) np = 16;
  DEM_CL(d, clGetPlatformIDs(np, plats, NULL));
  if (platform >= (int)np) return dem_device_fail(d, "OpenCL platform %d requested, %u available", platform, np);
  for (cl_uint pi = 0; pi < np; ++pi) {
    if (platform >= 0 && (int)pi != platform) continue;
    cl_uint nd = 0;
    rc = clGetDeviceIDs(plats[pi], want, 0, NULL, &nd);
    if (rc == CL_DEVICE_NOT_FOUND || nd == 0) continue;
    if (rc != CL_SUCCESS) return dem_device_fail(d, "clGetDeviceIDs on platform %u: error %d", pi, (int)rc);
    cl_device_id devs[16];
    if (nd > 16) nd = 16;
    DEM_CL(d, clGetDeviceIDs(plats[pi], want, nd, devs, NULL));
    if (device >= (int)nd)
      return dem_device_fail(d, "OpenCL device %d requested on platform %u, %u of type %s available", device, pi,
                             nd, type ? type : "any");
    d->platform = plats[pi];
    d->device = devs[device >= 0 ? device : 0];
    return 0;
  }
  return dem_device_fail(d, "no OpenCL device of type %s%s", type ? type : "any",
                         platform >= 0 ? " on the requested platform" : "");
}

/* FNV-1a over the kernel source and the build options */
static unsigned long dem_source_hash(const char *opts)
{
  unsigned long h = 1469598103934665603UL;
  for (size_t i = 0; i < dem_kernel_source_len; ++i) h = (h ^ (unsigned char)dem_kernel_source[i]) * 1099511628211UL;
  for (const char *c = opts; *c; ++c) h = (h ^ (unsigned char)*c) * 1099511628211UL;
  return h;
}

/* Builds the program into d->program on d->ctx. */
static int dem_device_build_program(dem_device_t *d, const char *opts)
{
  cl_int rc;
  const char *src = dem_kernel_source;
  size_t len = dem_kernel_source_len;
  d->program = clCreateProgramWithSource(d->ctx, 1, &src, &len, &rc);
  if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateProgramWithSource: error %d", (int)rc);
  rc = clBuildProgram(d->program, 1, &d->device, opts, NULL, NULL);
  if (rc != CL_SUCCESS) {
    size_t log_len = 0;
    clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_len);
    char *log = malloc(log_len + 1);
    if (log) {
      log[0] = '\0';
      clGetProgramBuildInfo(d->program, d->device, CL_PROGRAM_BUILD_LOG, log_len, log, NULL);
      log[log_len] = '\0';
      fprintf(stderr, "demsim: OpenCL build log for %s:\n%s\n", d->name, log);
      free(log);
    }
    return dem_device_fail(d, "building the OpenCL kernels for %s failed (error %d); build log on stderr",
                           d->name, (int)rc);
  }
  return 0;
}

/* Takes the process's context and program for d->device, creating and building them when
 * this is the first user. */
static int dem_device_share_acquire(dem_device_t *d)
{
  char opts[128];
  snprintf(opts, sizeof(opts), "-DDEM_MAX_NEIGHBORS=%d -DDEM_MAX_LOCAL=%zu", DEM_MAX_NEIGHBORS, d->max_local);
  unsigned long hash = dem_source_hash(opts);
  dem_share_lock();
  void **slot = dem_share_slot(DEM_CL_SHARE_SLOT);
  dem_cl_shared_t *s = slot ? *slot : NULL;
  while (s && !(s->device == d->device && s->source_hash == hash)) s = s->next;
  if (s) {
    s->users++;
    d->next_user = s->devices;
    s->devices = d;
    d->shared = s;
    d->ctx = s->ctx;
    d->program = s->program;
    dem_share_unlock();
    return 0;
  }
  s = calloc(1, sizeof(*s));
  if (!s) {
    dem_share_unlock();
    return dem_device_fail(d, "out of memory");
  }
  cl_int rc;
  d->ctx = clCreateContext(NULL, 1, &d->device, NULL, NULL, &rc);
  if (rc != CL_SUCCESS) {
    dem_share_unlock();
    free(s);
    d->ctx = NULL;
    return dem_device_fail(d, "clCreateContext on %s: error %d", d->name, (int)rc);
  }
  if (dem_device_build_program(d, opts) != 0) {
    dem_share_unlock();
    free(s);
    if (d->program) clReleaseProgram(d->program);
    clReleaseContext(d->ctx);
    d->program = NULL;
    d->ctx = NULL;
    return -1;
  }
  *s = (dem_cl_shared_t){.device = d->device, .ctx = d->ctx, .program = d->program, .source_hash = hash,
                         .users = 1, .devices = d};
  if (slot) { /* a full share table only costs this device its own context */
    s->next = *slot;
    *slot = s;
  }
  d->shared = s;
  dem_share_unlock();
  return 0;
}

/* Drops d's use of the shared context and program; the last user releases them. */
static void dem_device_share_release(dem_device_t *d)
{
  dem_cl_shared_t *s = d->shared;
  d->shared = NULL;
  d->ctx = NULL;
  d->program = NULL;
  if (!s) return;
  dem_share_lock();
  for (dem_device_t **u = &s->devices; *u; u = &(*u)->next_user)
    if (*u == d) {
      *u = d->next_user;
      break;
    }
  d->next_user = NULL;
  if (--s->users == 0) {
    void **slot = dem_share_slot(DEM_CL_SHARE_SLOT);
    for (dem_cl_shared_t **q = slot ? (dem_cl_shared_t **)slot : NULL; q && *q; q = &(*q)->next)
      if (*q == s) {
        *q = s->next;
        break;
      }
    clReleaseProgram(s->program);
    clReleaseContext(s->ctx);
    free(s);
  }
  dem_share_unlock();
}

/* This device's own kernel objects from the shared program, and their work-group sizes. */
static int dem_device_kernels(dem_device_t *d)
{
  cl_int rc;
  for (int k = 0; k < K_COUNT; ++k) {
    d->kernels[k] = clCreateKernel(d->program, dem_kernel_names[k], &rc);
    if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateKernel(%s): error %d", dem_kernel_names[k], (int)rc);
    /* 64 work-items, or fewer where the device or this kernel's register needs cap it */
    size_t max_k = 0;
    DEM_CL(d, clGetKernelWorkGroupInfo(d->kernels[k], d->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof(max_k), &max_k,
                                       NULL));
    d->local[k] = max_k < d->max_local ? max_k : d->max_local;
    /* the wall pass has a work-item per eight listed particles, a few per cent of the particles:
     * in groups of 1024 a rank's list made one or two groups, and the pass ran on one core */
    if (k == K_BOUNDARIES && d->local[k] > DEM_WALL_LOCAL) d->local[k] = DEM_WALL_LOCAL;
    if (d->local[k] == 0) d->local[k] = 1;
  }
  return 0;
}

static int dem_device_setup(dem_device_t *d, int platform, int device, const char *type)
{
  if (dem_device_select(d, platform, device, type) != 0) return -1;
  char dev_name[200] = "", plat_name[200] = "";
  DEM_CL(d, clGetDeviceInfo(d->device, CL_DEVICE_NAME, sizeof(dev_name) - 1, dev_name, NULL));
  DEM_CL(d, clGetPlatformInfo(d->platform, CL_PLATFORM_NAME, sizeof(plat_name) - 1, plat_name, NULL));
  snprintf(d->name, sizeof(d->name), "%s (%s)", dev_name, plat_name);
  size_t ext_len = 0;
  DEM_CL(d, clGetDeviceInfo(d->device, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len));
  char *exts = malloc(ext_len + 1);
  if (!exts) return dem_device_fail(d, "out of memory");
  cl_int rc = clGetDeviceInfo(d->device, CL_DEVICE_EXTENSIONS, ext_len, exts, NULL);
  exts[ext_len] = '\0';
  int fp64 = rc == CL_SUCCESS && strstr(exts, "cl_khr_fp64") != NULL;
  free(exts);
  if (!fp64) return dem_device_fail(d, "OpenCL device %s lacks cl_khr_fp64 (double precision)", d->name);
  size_t max_wg = 0;
  DEM_CL(d, clGetDeviceInfo(d->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(max_wg), &max_wg, NULL));
  cl_device_type kind = 0;
  DEM_CL(d, clGetDeviceInfo(d->device, CL_DEVICE_TYPE, sizeof(kind), &kind, NULL));
  size_t want = (kind & CL_DEVICE_TYPE_CPU) ? 1024 : 64;
  d->max_local = max_wg < want ? max_wg : want;

  if (dem_device_share_acquire(d) != 0) return -1;
  d->queue = clCreateCommandQueue(d->ctx, d->device, 0, &rc);
  if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateCommandQueue on %s: error %d", d->name, (int)rc);
  if (dem_device_kernels(d) != 0) return -1;

  d->params = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY, DEM_DEVICE_P_COUNT * sizeof(double), NULL, &rc);
  if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateBuffer(params): error %d", (int)rc);
  for (int k = 0; k < 2; ++k) {
    d->counters[k] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, DEM_COUNTERS * sizeof(cl_uint), NULL, &rc);
    if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateBuffer(counters): error %d", (int)rc);
  }
  d->status = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, 8 * sizeof(cl_int), NULL, &rc);
  if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateBuffer(status): error %d", (int)rc);
  cl_uint zero = 0;
  for (int k = 0; k < 2; ++k)
    DEM_CL(d, clEnqueueFillBuffer(d->queue, d->counters[k], &zero, sizeof(zero), 0, DEM_COUNTERS * sizeof(cl_uint), 0,
                                  NULL, NULL));
  d->queued = 1;
  return 0;
}

dem_device_t *dem_device_create(int platform, int device, const char *type, char *err, size_t errlen)
{
  dem_device_t *d = calloc(1, sizeof(*d));
  if (!d) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (dem_device_setup(d, platform, device, type) != 0) {
    snprintf(err, errlen, "%s", d->err);
    dem_device_destroy(&d);
    return NULL;
  }
  return d;
}

void dem_device_destroy(dem_device_t **dp)
{
  if (!dp || !*dp) return;
  dem_device_t *d = *dp;
  if (d->queue) clFinish(d->queue);
  if (d->read_done) clReleaseEvent(d->read_done);
  for (int b = 0; b < DEM_ARRAY_COUNT; ++b) dem_release_mem(&d->bufs[b]);
  dem_release_mem(&d->params);
  dem_release_mem(&d->counters[0]);
  dem_release_mem(&d->counters[1]);
  dem_release_mem(&d->status);
  dem_release_mem(&d->walls);
  dem_release_mem(&d->cell_start);
  dem_release_mem(&d->cell_sorted);
  for (int k = 0; k < K_COUNT; ++k)
    if (d->kernels[k]) clReleaseKernel(d->kernels[k]);
  if (d->queue) clReleaseCommandQueue(d->queue);
  dem_device_share_release(d);
  free(d);
  *dp = NULL;
}

const char *dem_device_name(const dem_device_t *d) { return d->name; }

int dem_device_compute_units(const dem_device_t *d)
{
  cl_uint units = 0;
  if (clGetDeviceInfo(d->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, NULL) != CL_SUCCESS) return 0;
  return (int)units;
}
const char *dem_device_error(const dem_device_t *d) { return d->err; }

static void *dem_store_array(const dem_particles_t *p, int b)
{
  return *(void *const *)((const char *)p + dem_particle_arrays[b].offset);
}

/* bytes per particle of buffer b in the bound store */
static size_t dem_row_bytes(const dem_device_t *d, int b)
{
  return dem_particle_arrays[b].bytes * (dem_particle_arrays[b].slotted ? (size_t)d->bound_slots : 1);
}

int dem_device_bind(dem_device_t *d, dem_particles_t *p)
{
  DEM_CL(d, clFinish(d->queue));
  d->queued = 0;
  if (dem_device_wait_reads(d) != 0) return -1;
  for (int b = 0; b < DEM_ARRAY_COUNT; ++b) dem_release_mem(&d->bufs[b]);
  d->p = p;
  d->bound_cap = p->cap;
  d->bound_slots = p->slots;
  for (int b = 0; b < DEM_ARRAY_COUNT; ++b) {
    cl_int rc;
    d->bufs[b] = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, p->cap * dem_row_bytes(d, b),
                                dem_store_array(p, b), &rc);
    if (rc != CL_SUCCESS)
      return dem_device_fail(d, "clCreateBuffer(%s, %zu particles) on %s: error %d", dem_particle_arrays[b].name, p->cap,
                             d->name, (int)rc);
  }
  /* the wall list is the device's own (a GPU keeps it in its memory): never copied, rebuilt from
   * the slots when needed, so neither the store nor the remote protocol carries it */
  dem_release_mem(&d->walls);
  d->walls_valid = 0;
  d->wall_count = 0;
  cl_int rc;
  d->walls = clCreateBuffer(d->ctx, CL_MEM_READ_WRITE, (p->cap ? p->cap : 1) * sizeof(cl_int), NULL, &rc);
  if (rc != CL_SUCCESS)
    return dem_device_fail(d, "clCreateBuffer(wall list, %zu particles) on %s: error %d", p->cap, d->name, (int)rc);
  return 0;
}

int dem_device_set_params(dem_device_t *d, const double *prm)
{
  DEM_CL(d, clEnqueueWriteBuffer(d->queue, d->params, CL_TRUE, 0, DEM_DEVICE_P_COUNT * sizeof(double), prm, 0,
                                 NULL, NULL));
  d->queued = 0; /* blocking: the in-order queue is empty */
  return 0;
}

/* Copies the rows of every field asked for. Every field's copy is queued; with `wait` a read's
 * last copy blocks (the queue is in order, so all have landed when it returns) and a write
 * ends with a finish. Without: a read keeps the event of its last copy (dem_device_wait_reads),
 * a write returns at once and the host rows must stay unchanged until the next wait. One wait
 * per copy, not one per field: every wait costs the host a round trip through the OpenCL
 * runtime's worker threads. */
static int dem_device_copy(dem_device_t *d, int to_host, int wait, unsigned fields, size_t first, size_t count,
                           double *bytes)
{
  *bytes = 0.0;
  if (count == 0) return 0;
  if (first + count > d->bound_cap)
    return dem_device_fail(d, "copy of particles [%zu, %zu) beyond the %zu bound on the device", first,
                           first + count, d->bound_cap);
  if (!to_host && (fields & DEM_F_SLOTS) && first < d->p->n) d->walls_valid = 0; /* the wall list may be stale */
  int last = -1;
  for (int b = 0; b < DEM_ARRAY_COUNT; ++b)
    if (fields & dem_particle_arrays[b].flag) last = b;
  for (int b = 0; b <= last; ++b) {
    if (!(fields & dem_particle_arrays[b].flag)) continue;
    size_t off = first * dem_row_bytes(d, b), len = count * dem_row_bytes(d, b);
    char *host = (char *)dem_store_array(d->p, b) + off;
    cl_bool block = to_host && wait && b == last ? CL_TRUE : CL_FALSE;
    cl_event *done = to_host && !wait && b == last ? &d->read_done : NULL;
    if (to_host) DEM_CL(d, clEnqueueReadBuffer(d->queue, d->bufs[b], block, off, len, host, 0, NULL, done));
    else DEM_CL(d, clEnqueueWriteBuffer(d->queue, d->bufs[b], block, off, len, host, 0, NULL, NULL));
    *bytes += (double)len;
  }
  d->queued = !(to_host && wait);
  if (!to_host && wait) return dem_device_finish(d);
  return 0;
}

int dem_device_read(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes)
{
  return dem_device_copy(d, 1, 1, fields, first, count, bytes);
}

int dem_device_read_async(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes)
{
  if (dem_device_wait_reads(d) != 0) return -1; /* one read in flight at a time */
  return dem_device_copy(d, 1, 0, fields, first, count, bytes);
}

int dem_device_wait_reads(dem_device_t *d)
{
  if (!d->read_done) return 0;
  cl_int rc = clWaitForEvents(1, &d->read_done);
  clReleaseEvent(d->read_done);
  d->read_done = NULL;
  if (rc != CL_SUCCESS) return dem_device_fail(d, "waiting for a device -> host copy on %s: error %d", d->name, (int)rc);
  return 0;
}

int dem_device_write(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes)
{
  return dem_device_copy(d, 0, 1, fields, first, count, bytes);
}

int dem_device_write_async(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes)
{
  return dem_device_copy(d, 0, 0, fields, first, count, bytes);
}

/* sets kernel arguments from a list of (size, pointer) pairs */
static int dem_device_args(dem_device_t *d, int k, int nargs, const size_t *sizes, const void *const *vals)
{
  for (int a = 0; a < nargs; ++a) {
    cl_int rc = clSetKernelArg(d->kernels[k], (cl_uint)a, sizes[a], vals[a]);
    if (rc != CL_SUCCESS)
      return dem_device_fail(d, "clSetKernelArg(%s, %d): error %d", dem_kernel_names[k], a, (int)rc);
  }
  return 0;
}

/* Enqueues kernel k over `global` work-items, first waiting until every queue of the process is
 * empty when no launch of k in the process was as wide (see the top of this file). */
static cl_int dem_device_enqueue(dem_device_t *d, int k, size_t global, size_t local, cl_event *ev)
{
  dem_cl_shared_t *s = d->shared;
  dem_share_lock();
  cl_int rc = CL_SUCCESS;
  if (s && global > s->widest[k]) {
    for (dem_device_t *u = s->devices; u && rc == CL_SUCCESS; u = u->next_user)
      if (u->queue) rc = clFinish(u->queue);
    if (rc == CL_SUCCESS) s->widest[k] = global;
  }
  if (rc == CL_SUCCESS) rc = clEnqueueNDRangeKernel(d->queue, d->kernels[k], 1, NULL, &global, &local, 0, NULL, ev);
  dem_share_unlock();
  return rc;
}

/* work-items for particles [first, end): the force kernels take first as their first argument
 * and end as their `n`; no launch has a global offset (see the top of this file) */
static int dem_device_launch_range(dem_device_t *d, int k, size_t first, size_t end)
{
  size_t n = end - first;
  if (n == 0 && k != K_KICK_DRIFT) return 0;
  /* kick-drift: eight particles per work-item (integrator.cl); it clears the other counters
   * (its first work-item), even over no particles */
  if (k == K_KICK_DRIFT) n = n == 0 ? 1 : (n + 7) / 8;
  size_t local = d->local[k];
  size_t global = (n + local - 1) / local * local;
  cl_event ev = NULL;
  cl_int rc = dem_device_enqueue(d, k, global, local, d->profiling ? &ev : NULL);
  if (rc != CL_SUCCESS)
    return dem_device_fail(d, "launching %s over %zu particles on %s: error %d", dem_kernel_names[k], n, d->name,
                           (int)rc);
  d->queued = 1;
  if (!d->profiling) return 0;
  cl_ulong t0 = 0, t1 = 0;
  rc = clWaitForEvents(1, &ev);
  if (rc == CL_SUCCESS) rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t0), &t0, NULL);
  if (rc == CL_SUCCESS) rc = clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(t1), &t1, NULL);
  clReleaseEvent(ev);
  if (rc != CL_SUCCESS) return dem_device_fail(d, "timing %s on %s: error %d", dem_kernel_names[k], d->name, (int)rc);
  d->kernel_s += 1e-9 * (double)(t1 - t0);
  return 0;
}

static int dem_device_launch(dem_device_t *d, int k) { return dem_device_launch_range(d, k, 0, d->p->n); }

int dem_device_profile(dem_device_t *d, int on)
{
  on = on != 0;
  if (on == d->profiling) return 0;
  DEM_CL(d, clFinish(d->queue));
  cl_int rc;
  cl_command_queue q = clCreateCommandQueue(d->ctx, d->device, on ? CL_QUEUE_PROFILING_ENABLE : 0, &rc);
  if (rc != CL_SUCCESS)
    return dem_device_fail(d, "clCreateCommandQueue(%s) on %s: error %d", on ? "profiling" : "plain", d->name,
                           (int)rc);
  clReleaseCommandQueue(d->queue);
  d->queue = q;
  d->profiling = on;
  d->kernel_s = 0.0;
  return 0;
}

double dem_device_kernel_seconds(dem_device_t *d)
{
  double s = d->kernel_s;
  d->kernel_s = 0.0;
  return s;
}

/* (re)wraps one grid array when the grid reallocated it, then copies its contents */
static int dem_device_grid_array(dem_device_t *d, cl_mem *buf, const int32_t **wrapped, size_t *wrapped_len,
                                 const int32_t *host, size_t len, size_t cap, double *bytes)
{
  if (*buf == NULL || *wrapped != host || *wrapped_len != cap) {
    dem_release_mem(buf);
    cl_int rc;
    *buf = clCreateBuffer(d->ctx, CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR, cap * sizeof(int32_t), (void *)host, &rc);
    if (rc != CL_SUCCESS) return dem_device_fail(d, "clCreateBuffer(grid, %zu entries): error %d", cap, (int)rc);
    *wrapped = host;
    *wrapped_len = cap;
  }
  if (len) {
    DEM_CL(d, clEnqueueWriteBuffer(d->queue, *buf, CL_TRUE, 0, len * sizeof(int32_t), host, 0, NULL, NULL));
    d->queued = 0; /* blocking: the in-order queue is empty */
  }
  *bytes += (double)(len * sizeof(int32_t));
  return 0;
}

/* Queues the wall list kernel over the bound slots; status[DEM_S_WALL_PARTICLES] must be 0. */
static int dem_device_launch_wall_list(dem_device_t *d)
{
  cl_int n = (cl_int)d->p->n, slots = d->bound_slots;
  const size_t m = sizeof(cl_mem);
  const size_t sizes[] = {sizeof(n), sizeof(slots), m, m, m, m};
  const void *const vals[] = {&n, &slots, &d->bufs[DEM_ARRAY_NBR_COUNT], &d->bufs[DEM_ARRAY_NBR_INDEX], &d->walls, &d->status};
  if (dem_device_args(d, K_WALL_LIST, 6, sizes, vals) != 0) return -1;
  return dem_device_launch(d, K_WALL_LIST);
}

int dem_device_search(dem_device_t *d, const dem_grid_t *g, double *bytes, dem_search_result_t *st)
{
  memset(st, 0, sizeof(*st));
  *bytes = 0.0;
  size_t sorted_cap = g->cap_sorted ? g->cap_sorted : 1;
  if (dem_device_grid_array(d, &d->cell_start, &d->cell_start_host, &d->cell_start_len, g->cell_start,
                            g->buckets + 1, g->cap_buckets + 1, bytes) != 0 ||
      dem_device_grid_array(d, &d->cell_sorted, &d->cell_sorted_host, &d->cell_sorted_len, g->cell_sorted,
                            g->n_total, sorted_cap, bytes) != 0)
    return -1;
  cl_int zero = 0;
  DEM_CL(d, clEnqueueFillBuffer(d->queue, d->status, &zero, sizeof(zero), 0, 8 * sizeof(cl_int), 0, NULL, NULL));
  d->queued = 1;
  cl_int n = (cl_int)d->p->n, n_total = (cl_int)g->n_total;
  cl_int4 lo = {{g->lo[0], g->lo[1], g->lo[2], 0}};
  cl_uint4 key = {{g->mask, g->stride[0], g->stride[1], 0}};
  cl_double ox = g->origin[0], oy = g->origin[1], oz = g->origin[2], h = g->h;
  cl_int slots = d->bound_slots;
  const size_t m = sizeof(cl_mem);
  const size_t sizes[] = {sizeof(n), sizeof(n_total), m, m, m, m, m, m, sizeof(lo), sizeof(key), sizeof(ox),
                          sizeof(oy), sizeof(oz), sizeof(h), sizeof(slots), m, m, m, m, m};
  const void *const vals[] = {&n, &n_total, &d->params, &d->bufs[DEM_ARRAY_POS], &d->bufs[DEM_ARRAY_RADIUS],
                              &d->bufs[DEM_ARRAY_ID], &d->cell_start, &d->cell_sorted, &lo, &key, &ox, &oy, &oz, &h,
                              &slots, &d->bufs[DEM_ARRAY_NBR_COUNT], &d->bufs[DEM_ARRAY_NBR_INDEX],
                              &d->bufs[DEM_ARRAY_NBR_GID], &d->bufs[DEM_ARRAY_SPRING], &d->status};
  /* over every binned particle, in cell_sorted order: the kernel skips the ghosts */
  if (dem_device_args(d, K_SEARCH, 20, sizes, vals) != 0 ||
      dem_device_launch_range(d, K_SEARCH, 0, g->n_total) != 0 || dem_device_launch_wall_list(d) != 0)
    return -1;
  cl_int s[8];
  DEM_CL(d, clEnqueueReadBuffer(d->queue, d->status, CL_TRUE, 0, sizeof(s), s, 0, NULL, NULL));
  d->queued = 0; /* blocking: the in-order queue is empty */
  *bytes += sizeof(s);
  st->overflow = s[0];
  st->overflow_gid = s[1];
  st->overflow_count = s[2];
  st->pairs = s[3];
  st->walls = s[4];
  st->unfit = s[5];
  st->wall_particles = s[6];
  d->wall_count = s[6];
  d->walls_valid = 1;
  return 0;
}

/* Rebuilds the wall list when the slots may have changed since it was written (the store was
 * bound again, or the host pushed owned slots): waits for its length. After a search it is
 * current, and this costs nothing. */
static int dem_device_walls_current(dem_device_t *d)
{
  if (d->walls_valid) return 0;
  cl_int count = 0;
  const size_t at = 6 * sizeof(cl_int); /* DEM_S_WALL_PARTICLES */
  DEM_CL(d, clEnqueueFillBuffer(d->queue, d->status, &count, sizeof(count), at, sizeof(count), 0, NULL, NULL));
  d->queued = 1;
  if (dem_device_launch_wall_list(d) != 0) return -1;
  DEM_CL(d, clEnqueueReadBuffer(d->queue, d->status, CL_TRUE, at, sizeof(count), &count, 0, NULL, NULL));
  d->queued = 0; /* blocking: the in-order queue is empty */
  d->wall_count = count;
  d->walls_valid = 1;
  return 0;
}

int dem_device_wall_list(dem_device_t *d, int32_t *out, size_t max, size_t *count)
{
  if (dem_device_walls_current(d) != 0) return -1;
  *count = (size_t)d->wall_count;
  size_t take = *count < max ? *count : max;
  if (!take) return 0;
  DEM_CL(d, clEnqueueReadBuffer(d->queue, d->walls, CL_TRUE, 0, take * sizeof(cl_int), out, 0, NULL, NULL));
  d->queued = 0; /* blocking: the in-order queue is empty */
  return 0;
}

/* The wall pass over the listed particles in [first, end); with gravity: the fused step's */
static int dem_device_walls(dem_device_t *d, int gravity, size_t first, size_t end)
{
  if (dem_device_walls_current(d) != 0) return -1;
  if (d->wall_count == 0) return 0;
  cl_int count = d->wall_count, i0 = (cl_int)first, n = (cl_int)end, g = gravity, slots = d->bound_slots;
  const size_t m = sizeof(cl_mem), c = sizeof(cl_int);
  const size_t sizes[] = {c, c, c, c, c, m, m, m, m, m, m, m, m, m, m, m, m};
  const void *const vals[] = {&count, &i0, &n, &g, &slots, &d->params, &d->walls, &d->bufs[DEM_ARRAY_POS],
                              &d->bufs[DEM_ARRAY_VEL], &d->bufs[DEM_ARRAY_OMEGA], &d->bufs[DEM_ARRAY_RADIUS], &d->bufs[DEM_ARRAY_NBR_COUNT],
                              &d->bufs[DEM_ARRAY_NBR_INDEX], &d->bufs[DEM_ARRAY_SPRING], &d->bufs[DEM_ARRAY_FORCE], &d->bufs[DEM_ARRAY_TORQUE],
                              &d->counters[d->parity]};
  if (dem_device_args(d, K_BOUNDARIES, 17, sizes, vals) != 0) return -1;
  return dem_device_launch_range(d, K_BOUNDARIES, 0, ((size_t)count + DEM_WALL_GROUP - 1) / DEM_WALL_GROUP);
}

int dem_device_forces(dem_device_t *d, dem_device_force_kernel_t which)
{
  return dem_device_forces_range(d, which, 0, d->p->n);
}

int dem_device_forces_range(dem_device_t *d, dem_device_force_kernel_t which, size_t first, size_t end)
{
  if (first > end || end > d->p->n)
    return dem_device_fail(d, "force kernel over particles [%zu, %zu) of %zu", first, end, d->p->n);
  cl_int i0 = (cl_int)first, n = (cl_int)end;
  if (which == DEM_DEVICE_EXTERNAL) {
    const size_t sizes[] = {sizeof(i0), sizeof(n), sizeof(cl_mem), sizeof(cl_mem), sizeof(cl_mem)};
    const void *const vals[] = {&i0, &n, &d->params, &d->bufs[DEM_ARRAY_RADIUS], &d->bufs[DEM_ARRAY_FORCE]};
    if (dem_device_args(d, K_EXTERNAL, 5, sizes, vals) != 0) return -1;
    return dem_device_launch_range(d, K_EXTERNAL, first, end);
  }
  if (which == DEM_DEVICE_BOUNDARIES || which == DEM_DEVICE_WALLS_ALL)
    return dem_device_walls(d, which == DEM_DEVICE_WALLS_ALL, first, end);
  int k = which == DEM_DEVICE_FORCES ? K_FORCES : K_FORCES_ALL;
  cl_int slots = d->bound_slots;
  const size_t m = sizeof(cl_mem);
  const size_t sizes[] = {sizeof(i0), sizeof(n), sizeof(slots), m, m, m, m, m, m, m, m, m, m, m};
  const void *const vals[] = {&i0, &n, &slots, &d->params, &d->bufs[DEM_ARRAY_POS], &d->bufs[DEM_ARRAY_VEL], &d->bufs[DEM_ARRAY_OMEGA],
                              &d->bufs[DEM_ARRAY_RADIUS], &d->bufs[DEM_ARRAY_NBR_COUNT], &d->bufs[DEM_ARRAY_NBR_INDEX],
                              &d->bufs[DEM_ARRAY_SPRING], &d->bufs[DEM_ARRAY_FORCE], &d->bufs[DEM_ARRAY_TORQUE], &d->counters[d->parity]};
  if (dem_device_args(d, k, 14, sizes, vals) != 0) return -1;
  return dem_device_launch_range(d, k, first, end);
}

int dem_device_kick_drift(dem_device_t *d, double kick, double *bytes)
{
  cl_int n = (cl_int)d->p->n;
  cl_double k = kick;
  cl_mem *now = &d->counters[d->parity], *next = &d->counters[1 - d->parity];
  const size_t m = sizeof(cl_mem);
  const size_t sizes[] = {sizeof(n), m, sizeof(k), m, m, m, m, m, m, m, m};
  const void *const vals[] = {&n, &d->params, &k, &d->bufs[DEM_ARRAY_RADIUS], &d->bufs[DEM_ARRAY_FORCE], &d->bufs[DEM_ARRAY_TORQUE],
                              &d->bufs[DEM_ARRAY_POS], &d->bufs[DEM_ARRAY_VEL], &d->bufs[DEM_ARRAY_OMEGA], now, next};
  if (dem_device_args(d, K_KICK_DRIFT, 11, sizes, vals) != 0 || dem_device_launch(d, K_KICK_DRIFT) != 0) return -1;
  /* queued, not waited for: the counters arrive with the next wait, usually the one of the
   * search test (dem_device_counters), not with a wait of their own */
  DEM_CL(d, clEnqueueReadBuffer(d->queue, *now, CL_FALSE, 0, sizeof(d->counts), d->counts, 0, NULL, NULL));
  d->queued = 1;
  d->counts_pending = 1;
  d->parity = 1 - d->parity;
  *bytes = sizeof(d->counts);
  return 0;
}

int dem_device_counters(dem_device_t *d, int *fresh, float *max_disp2, unsigned *contacts, unsigned *wall_contacts)
{
  *fresh = d->counts_pending;
  if (!d->counts_pending) return 0;
  if (dem_device_finish(d) != 0) return -1;
  d->counts_pending = 0;
  memcpy(max_disp2, &d->counts[0], sizeof(*max_disp2));
  *contacts = d->counts[1];
  *wall_contacts = d->counts[2];
  return 0;
}

int dem_device_kick(dem_device_t *d)
{
  cl_int n = (cl_int)d->p->n;
  const size_t m = sizeof(cl_mem);
  const size_t sizes[] = {sizeof(n), m, m, m, m, m, m};
  const void *const vals[] = {&n, &d->params, &d->bufs[DEM_ARRAY_RADIUS], &d->bufs[DEM_ARRAY_FORCE], &d->bufs[DEM_ARRAY_TORQUE],
                              &d->bufs[DEM_ARRAY_VEL], &d->bufs[DEM_ARRAY_OMEGA]};
  if (dem_device_args(d, K_KICK, 7, sizes, vals) != 0) return -1;
  return dem_device_launch(d, K_KICK);
}

int dem_device_finish(dem_device_t *d)
{
  if (!d->queued) return 0; /* nothing queued since the last wait: the queue is empty */
  DEM_CL(d, clFinish(d->queue));
  d->queued = 0;
  return dem_device_wait_reads(d); /* done by now: only releases the event */
}

int dem_device_list(dem_device_info_t *out, int max)
{
  dem_device_pocl_method();
  cl_platform_id plats[16];
  cl_uint np = 0;
  if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS) return 0;
  if (np > 16) np = 16;
  int n = 0;
  for (cl_uint p = 0; p < np; p++) {
    cl_device_id devs[64];
    cl_uint nd = 0;
    if (clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 64, devs, &nd) != CL_SUCCESS) continue;
    if (nd > 64) nd = 64;
    for (cl_uint i = 0; i < nd; i++, n++) {
      if (n >= max) continue;
      dem_device_info_t *o = &out[n];
      cl_device_type type = 0;
      cl_uint cu = 0, mhz = 0;
      cl_ulong mem = 0;
      memset(o, 0, sizeof *o);
      clGetPlatformInfo(plats[p], CL_PLATFORM_NAME, sizeof o->platform - 1, o->platform, NULL);
      clGetDeviceInfo(devs[i], CL_DEVICE_NAME, sizeof o->name - 1, o->name, NULL);
      clGetDeviceInfo(devs[i], CL_DEVICE_TYPE, sizeof type, &type, NULL);
      clGetDeviceInfo(devs[i], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof cu, &cu, NULL);
      clGetDeviceInfo(devs[i], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL);
      clGetDeviceInfo(devs[i], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof mhz, &mhz, NULL);
      o->type = (type & CL_DEVICE_TYPE_GPU) ? "gpu"
              : (type & CL_DEVICE_TYPE_CPU) ? "cpu"
              : (type & CL_DEVICE_TYPE_ACCELERATOR) ? "accelerator" : "other";
      o->compute_units = (int)cu;
      o->global_mem_bytes = (double)mem;
      o->max_clock_mhz = (double)mhz;
    }
  }
  return n;
}
