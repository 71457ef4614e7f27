/* One time step, in the order of the study's parallel algorithm:
 *   1. keep the old weights, measure the load L_i (the COMPUTE timer of the last interval);
 *   2. if Condition(L): new weights, device->host, Zoltan repartition, migration, ghost
 *      registration, host->device;
 *   3. every step: the search decision; ghosts registered again before a search, otherwise
 *      device->host, MPI exchange, host->device;
 *   4. kernels: contact search (when the skin is used up), history, forces, boundaries,
 *      external force, integrator;
 *   5. output steps: device->host and HDF5.
 * Velocity Verlet is split around the force kernels: kick_drift opens the step (positions at
 * t + dt), the closing half kick is folded into the next step's kick_drift, and velocities
 * are synchronised (dem_engine_kick) only when someone needs them. */
#include "run/timestep.h"

#include <stdio.h>

#include "balance/balance.h"
#include "device/engine.h"
#include "domain/ghosts.h"
#include "domain/partition.h"
#include "io/metrics.h"
#include "scenario/state.h"

#define TRY(call, what)                                                                          \
  do {                                                                                           \
    if ((call) != 0) {                                                                           \
      snprintf(err, errlen, "step %ld: %s: %s", sim->step + 1, what, dem_engine_error(sim->engine)); \
      return -1;                                                                                 \
    }                                                                                            \
  } while (0)

/* Contact search when due, then every force kernel: F(t) and T(t) at the current positions. */
static int forces_at_current_positions(dem_sim_t *sim, int search, char *err, unsigned long errlen)
{
  dem_timers_t *t = &sim->timers;
  dem_timer_start(t, DEM_T_COMPUTE);
  if (search) {
    dem_timer_start(t, DEM_T_SEARCH);
    TRY(dem_engine_search(sim->engine), "contact search");
    TRY(dem_engine_stage_end(sim->engine), "contact search");
    sim->searches++;
    dem_timer_stop(t, DEM_T_SEARCH);
  }
  /* contacts, walls and gravity: on OpenCL one fused kernel, launched when the last of the
   * three is requested, so they share one timer */
  dem_timer_start(t, DEM_T_FORCES);
  TRY(dem_engine_forces(sim->engine), "contact forces");
  TRY(dem_engine_boundaries(sim->engine), "boundaries");
  TRY(dem_engine_external(sim->engine), "external force");
  TRY(dem_engine_stage_end(sim->engine), "forces");
  dem_timer_stop(t, DEM_T_FORCES);
  dem_timer_stop(t, DEM_T_COMPUTE);
  return 0;
}

int dem_timestep_prologue(dem_sim_t *sim, char *err, unsigned long errlen)
{
  /* the ghosts registered at set-up carry the initial state; the first search is always due */
  int search = dem_ghosts_need_search(sim->ghosts, sim);
  if (search && dem_ghosts_refresh(sim->ghosts, sim, err, errlen)) return -1;
  return forces_at_current_positions(sim, search, err, errlen);
}

int dem_timestep(dem_sim_t *sim, char *err, unsigned long errlen)
{
  dem_timers_t *t = &sim->timers;

  /* 1-2: load balancing at the physics frequency or when the imbalance is too high */
  if (dem_balance_condition(sim->balance, sim->step)) {
    dem_timer_start(t, DEM_T_REPARTITION);
    if (dem_balance_update_weights(sim->balance, sim->step) ||
        dem_partition_repartition(sim->partition, sim, dem_balance_weights(sim->balance), err, errlen) ||
        dem_ghosts_register(sim->ghosts, sim, err, errlen))
      return -1;
    sim->repartitions++;
    dem_timer_stop(t, DEM_T_REPARTITION);
  }

  /* kick-drift: positions move to t + dt (part of the rank's own load) */
  dem_timer_start(t, DEM_T_COMPUTE);
  dem_timer_start(t, DEM_T_INTEGRATE);
  TRY(dem_engine_kick_drift(sim->engine, sim->kick), "integrator");
  TRY(dem_engine_stage_end(sim->engine), "integrator");
  sim->kick = 1.0;
  dem_timer_stop(t, DEM_T_INTEGRATE);
  dem_timer_stop(t, DEM_T_COMPUTE);

  /* 3: the collective decision to search (skin used up on some rank, or slots stale after a
   * repartition), then the ghosts: before a search they are registered again at the current
   * positions, since particles may have drifted since the repartition (ghosts.c); otherwise
   * device -> host, MPI exchange, host -> device. Outside COMPUTE: L_i excludes waiting.
   * Under the simulator the forces of the particles with no ghost partner start on the device
   * while the host exchanges (their charge stays in step 4). */
  dem_timer_start(t, DEM_T_GHOSTS);
  int search = dem_ghosts_need_search(sim->ghosts, sim);
  if (search) {
    if (dem_ghosts_refresh(sim->ghosts, sim, err, errlen)) return -1;
  } else {
    if (dem_ghosts_exchange_start(sim->ghosts, sim, err, errlen)) return -1;
    size_t started;
    TRY(dem_engine_forces_ahead(sim->engine, dem_ghosts_interior(sim->ghosts, sim), &started), "contact forces");
    if (dem_ghosts_exchange_finish(sim->ghosts, sim, err, errlen)) return -1;
  }
  dem_timer_stop(t, DEM_T_GHOSTS);

  /* 4: the DEM kernels */
  if (forces_at_current_positions(sim, search, err, errlen)) return -1;
  sim->step++;

  /* 5: output and metrics */
  dem_timer_start(t, DEM_T_OUTPUT);
  if (dem_metrics_step(sim->metrics, sim, err, errlen)) return -1;
  dem_timer_stop(t, DEM_T_OUTPUT);
  return 0;
}
