/* The compute engine: the study's per-step DEM kernels over a dem_particles_t, run either by
 * the OpenCL kernels (the .cl files in kernels/, via device.c) or by their plain-C references
 * (physics_ref.c). timestep.c only talks to this interface; tests run both and compare.
 *
 * One step, in the study's order (velocity Verlet; v is at t - dt/2 during force evaluation):
 *   dem_engine_kick_drift  : v += kick * dt F/m, w += kick * dt T/I, x += dt v  (kick = 1/2 on the
 *                            first step or after dem_engine_kick synchronised velocities, else 1)
 *   [ghost exchange, in parallel runs]
 *   dem_engine_search      : when dem_engine_needs_search(): rebuild the neighbour slots by cell
 *                            binning (infinite grid, cells numbered row by row) and carry the
 *                            contact history by partner gid
 *   dem_engine_forces      : F, T = particle-particle contacts (Hertz + damping, tangential spring
 *                            + damping capped by Coulomb friction), springs updated
 *   dem_engine_boundaries  : += contacts with the six walls (same law, wall = infinite mass/radius)
 *   dem_engine_external    : += m g
 *   dem_engine_kick        : v += dt/2 F/m (only when velocities must be synchronous: output, end)
 * Every call returns 0, or -1 with a message (dem_engine_error) naming what went wrong. */
#ifndef DEMSIM_DEVICE_ENGINE_H
#define DEMSIM_DEVICE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "device/backend.h"

struct dem_particles;
struct dem_params;


typedef struct dem_engine_opts {
  dem_backend_t backend;
  int cl_platform;   /* OpenCL platform index, -1 = first that has a device */
  int cl_device;     /* device index within the platform, -1 = first */
  const char *cl_device_type; /* "any", "cpu" or "gpu" */
  int measured;      /* device.cost = "measured": time every kernel and report its device time
                        with its charge (OpenCL backend only) */
} dem_engine_opts_t;

typedef struct dem_engine dem_engine_t;


dem_engine_t *dem_engine_create(const dem_engine_opts_t *opts, const struct dem_params *prm,
                                struct dem_particles *p, char *err, size_t errlen);
void dem_engine_destroy(dem_engine_t **e);
/* The kernels' parameter vector (DEM_DEVICE_P_COUNT doubles of device.h) for prm: the same
 * contact-law constants as the reference. */
void dem_engine_pack_params(const struct dem_params *prm, double *v);
const char *dem_engine_error(const dem_engine_t *e);
const char *dem_engine_device_name(const dem_engine_t *e); /* "reference C" or the OpenCL device */
/* The compute units a kernel runs on (OpenCL CL_DEVICE_MAX_COMPUTE_UNITS; 1 for the reference). */
int dem_engine_compute_units(const dem_engine_t *e);

/* Host <-> device. The host arrays of the particle store are authoritative after pull;
 * after the host changed them (generation, migration, ghosts) push them back.
 * first/count select a particle range (e.g. the ghosts only). Fields: a bitmask of DEM_F_*
 * (dem/particles.h). */
int dem_engine_pull(dem_engine_t *e, unsigned fields, size_t first, size_t count);
int dem_engine_push(dem_engine_t *e, unsigned fields, size_t first, size_t count);
/* As push, but returns once the copy is queued: the host rows must stay unchanged until the
 * next dem_engine_finish or pull (the kernels requested after it see the new rows). The ghost
 * exchange pushes this way every step: no wait for the device on that path. */
int dem_engine_push_async(dem_engine_t *e, unsigned fields, size_t first, size_t count);
/* As pull, but returns once the copy is queued: the host rows hold the device's values after
 * dem_engine_wait_pulls (or finish). Work queued after the pull does not delay that wait. */
int dem_engine_pull_async(dem_engine_t *e, unsigned fields, size_t first, size_t count);
int dem_engine_wait_pulls(dem_engine_t *e);
/* Must be called after the store's capacity or its n / n_ghost changed. */
int dem_engine_resize(dem_engine_t *e);

int dem_engine_kick_drift(dem_engine_t *e, double kick);
int dem_engine_kick(dem_engine_t *e);
/* True when some particle may have moved more than skin/2 since the last search (OpenCL: takes
 * in the last kick-drift's counters, waiting for them if nothing has waited since). */
int dem_engine_needs_search(dem_engine_t *e);
int dem_engine_search(dem_engine_t *e);
int dem_engine_forces(dem_engine_t *e);
int dem_engine_boundaries(dem_engine_t *e);
int dem_engine_external(dem_engine_t *e);
/* Starts the fused force kernel on the owned particles [0, count) now, when they have no ghost
 * partner (their inputs are final before the ghost exchange): the forces/boundaries/external
 * calls that follow launch only the rest. Done only where time is modelled (SMPI build) and
 * with OpenCL: there the device works while the host simulates the exchange; elsewhere it does
 * nothing. Between this call and external the store must not change (no resize or search).
 * *started: the particles whose forces were started (0 when nothing was). */
int dem_engine_forces_ahead(dem_engine_t *e, size_t count, size_t *started);
/* Waits for queued work to finish (a no-op for the reference). */
int dem_engine_finish(dem_engine_t *e);
/* The end of a timed stage of the step: dem_engine_finish where the timers read real time (the
 * native build), nothing where time is modelled (the SMPI build: the charges are the time). */
int dem_engine_stage_end(dem_engine_t *e);
/* The wall list the wall pass runs over (kernels/boundaries.cl: the owned particles with wall
 * slots), ascending, into list (room for the owned particles), after what is pending has run;
 * the reference backend's is dem_ref_wall_list of its slots. For tests. Returns the number of
 * entries, or -1: a device failure (with a message), or a remote device (its list stays on its
 * server). */
long dem_engine_wall_list(dem_engine_t *e, int32_t *list);
/* The work done by the most recent kernel call (for the cost model). */
dem_engine_work_t dem_engine_last_work(const dem_engine_t *e);
/* Kernel timing, for the calibration tool (validation/calibrate_cost; a run with
 * dem_engine_opts_t.measured reports it with each kernel's charge instead): dem_engine_profile
 * switches it on or off (OpenCL backend only: -1 on the reference), dem_engine_kernel_seconds
 * returns the device time (s) of the kernels run since its previous call (work still pending,
 * see engine.c on fusion, has not run). */
int dem_engine_profile(dem_engine_t *e, int on);
double dem_engine_kernel_seconds(dem_engine_t *e);

#endif
