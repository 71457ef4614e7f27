/* The OpenCL device layer: the only code that sees CL/cl.h. It selects a platform and device,
 * builds the kernels embedded from the kernels/ folder, wraps the particle store's arrays as
 * buffers (CL_MEM_USE_HOST_PTR: zero copy on a CPU device such as PoCL, one device copy on a
 * GPU), copies particle ranges, and launches the kernels. It knows nothing of the cost model:
 * the engine (engine.c) charges the clock with what each call reports.
 *
 * Every function returns 0, or -1 with a message available from dem_device_error(). */
#ifndef DEMSIM_DEVICE_DEVICE_H
#define DEMSIM_DEVICE_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "dem/physics_ref.h" /* dem_search_result_t: both backends report a search alike */

struct dem_particles;
struct dem_grid;

typedef struct dem_device dem_device_t;

/* Parameter vector passed to every kernel (layout: DEM_P_* in kernels/common.cl). */
enum { DEM_DEVICE_P_DT = 0, DEM_DEVICE_P_GRAVITY = 1, DEM_DEVICE_P_LO = 4, DEM_DEVICE_P_HI = 7,
       DEM_DEVICE_P_SKIN = 10, DEM_DEVICE_P_KN = 11, DEM_DEVICE_P_KT = 12, DEM_DEVICE_P_DAMPN = 13,
       DEM_DEVICE_P_GT = 14, DEM_DEVICE_P_MU = 15, DEM_DEVICE_P_MASSF = 16, DEM_DEVICE_P_COUNT = 17 };

/* The force kernels: three separate ones (the walls' over the wall list only), or the fused
 * step: FORCES_ALL, forces and external over all particles but gravity left out for the
 * particles with wall slots, then WALLS_ALL, their walls and gravity over the wall list (the
 * same additions in the same order as the three, the same results). */
typedef enum { DEM_DEVICE_FORCES, DEM_DEVICE_BOUNDARIES, DEM_DEVICE_EXTERNAL, DEM_DEVICE_FORCES_ALL,
               DEM_DEVICE_WALLS_ALL } dem_device_force_kernel_t;


/* One OpenCL device as `demsim probe` reports it. */
typedef struct dem_device_info {
  char platform[128];      /* CL_PLATFORM_NAME */
  char name[128];          /* CL_DEVICE_NAME */
  const char *type;        /* "cpu", "gpu", "accelerator" or "other" */
  int compute_units;       /* CL_DEVICE_MAX_COMPUTE_UNITS */
  double global_mem_bytes; /* B */
  double max_clock_mhz;    /* MHz, as the driver reports it (PoCL may say 0) */
} dem_device_info_t;

/* Lists up to `max` devices of every platform into out; returns how many there are in all (0
 * when there is no OpenCL platform). */
int dem_device_list(dem_device_info_t *out, int max);

/* platform / device: index, or -1 for the first one (of `type`: "any", "cpu" or "gpu") that
 * exists. Returns NULL with a message in err on failure. */
dem_device_t *dem_device_create(int platform, int device, const char *type, char *err, size_t errlen);
void dem_device_destroy(dem_device_t **d);
const char *dem_device_name(const dem_device_t *d);
/* CL_DEVICE_MAX_COMPUTE_UNITS: the cores (CPU) or multiprocessors (GPU) a kernel runs on. */
int dem_device_compute_units(const dem_device_t *d);
const char *dem_device_error(const dem_device_t *d);

/* (Re)wraps the store's arrays (after creation or any reallocation). The buffers take the
 * host contents. */
int dem_device_bind(dem_device_t *d, struct dem_particles *p);
/* Sets the parameter vector (DEM_DEVICE_P_COUNT doubles). */
int dem_device_set_params(dem_device_t *d, const double *prm);

/* Copies fields (DEM_F_* of dem/particles.h) of particles [first, first + count) device -> host or
 * host -> device (blocking, one wait for all the fields). *bytes receives the amount copied.
 * dem_device_write_async only queues the copy: the host rows must stay as they are until the
 * next dem_device_finish or blocking call (kernels queued after it see the new rows). */
int dem_device_read(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes);
int dem_device_write(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes);
int dem_device_write_async(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes);
/* A read that only queues the copy: the host rows are valid after dem_device_wait_reads (which
 * waits for this copy and what was queued before it, not for what was queued after it) or
 * dem_device_finish. */
int dem_device_read_async(dem_device_t *d, unsigned fields, size_t first, size_t count, double *bytes);
int dem_device_wait_reads(dem_device_t *d);

/* Copies the grid to the device (*bytes: amount copied), runs the search + history kernel over
 * the owned particles, then the wall list kernel, and reads back their outcome (blocking), as
 * dem_ref_search reports it. */
int dem_device_search(dem_device_t *d, const struct dem_grid *g, double *bytes, dem_search_result_t *st);
/* The wall list (kernels/boundaries.cl), rebuilt first when the slots changed since it was
 * written: *count entries, the first min(*count, max) copied to out, in the device's order. */
int dem_device_wall_list(dem_device_t *d, int32_t *out, size_t max, size_t *count);
int dem_device_forces(dem_device_t *d, dem_device_force_kernel_t which);
/* The same over the owned particles [first, end) only. */
int dem_device_forces_range(dem_device_t *d, dem_device_force_kernel_t which, size_t first, size_t end);
/* Runs kick-drift and queues the read of the step counters without waiting for it. */
int dem_device_kick_drift(dem_device_t *d, double kick, double *bytes);
/* The counters read by the last kick-drift (waiting for the device if nothing has waited since):
 * the step's largest (|v| dt)^2 as float (m^2), and the particle and wall contacts counted by
 * force kernels since the kick-drift before. *fresh = 0 (and nothing written) when they were
 * handed out already. */
int dem_device_counters(dem_device_t *d, int *fresh, float *max_disp2, unsigned *contacts, unsigned *wall_contacts);
int dem_device_kick(dem_device_t *d);
int dem_device_finish(dem_device_t *d);

/* Kernel timing, for the calibration tool (validation/calibrate_cost) and device.cost = "measured": while
 * on, every kernel launch waits for its kernel and adds its device time (OpenCL profiling, end -
 * start) to a sum that dem_device_kernel_seconds returns and resets. Switching drains the queue
 * and recreates it with or without CL_QUEUE_PROFILING_ENABLE. */
int dem_device_profile(dem_device_t *d, int on);
double dem_device_kernel_seconds(dem_device_t *d);

#endif
