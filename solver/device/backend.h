/* What the engine (engine.h) and its remote backend (remote.h) share: which backend runs the
 * kernels, and the work a kernel call reports. Its own header, so that the remote client needs
 * nothing of the engine that calls it. */
#ifndef DEMSIM_DEVICE_BACKEND_H
#define DEMSIM_DEVICE_BACKEND_H

/* REMOTE: the kernels run on a device server's device, over MPI (remote.h, server.h, device.server) */
typedef enum { DEM_BACKEND_REF, DEM_BACKEND_OPENCL, DEM_BACKEND_REMOTE } dem_backend_t;

/* Work done by the last call, for the clock/cost model (sim/) and for metrics. */
typedef struct dem_engine_work {
  double particles;  /* work-items (owned particles) */
  double pairs;      /* neighbour slots visited */
  double contacts;   /* slots in actual contact (overlap > 0) */
} dem_engine_work_t;

#endif
