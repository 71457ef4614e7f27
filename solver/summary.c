#include "summary.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "balance.h"
#include "clock.h"
#include "engine.h"
#include "scenario.h"
#include "simulation.h"

int dem_summary_write(const char *path, const dem_sim_t *sim, const dem_summary_rank_t *ranks, char *err,
                      size_t errlen)
{
  const dem_scenario_t *sc = sim->sc;
  double sim_s = sim->sim_loop_end - sim->sim_loop_start;
  double wall_loop = sim->wall_loop_end - sim->wall_loop_start;
  double psteps = (double)sim->total_particles * (double)sim->step;
  json_t *o = json_object();
  json_object_set_new(o, "scenario", json_string(sc->name));
  json_object_set_new(o, "scenario_file", json_string(sc->file));
#ifdef DEMSIM_SMPI
  json_object_set_new(o, "build", json_string("smpi"));
#else
  json_object_set_new(o, "build", json_string("native"));
#endif
  json_object_set_new(o, "device", json_string(dem_engine_device_name(sim->engine)));
  json_object_set_new(o, "particles", json_integer(sim->total_particles));
  json_object_set_new(o, "steps", json_integer(sim->step));
  json_object_set_new(o, "ranks", json_integer(sim->ranks));
  json_object_set_new(o, "dt_s", json_real(sim->prm.dt));
  json_object_set_new(o, "physical_time_s", json_real(sim->prm.dt * (double)sim->step));
  json_object_set_new(o, "wall_s", json_real(dem_clock_wall() - sim->wall_start));
  json_object_set_new(o, "wall_loop_s", json_real(wall_loop));
  json_object_set_new(o, "sim_time_s", json_real(sim_s));
  json_object_set_new(o, "particle_steps_per_s", json_real(sim_s > 0 ? psteps / sim_s : 0.0));
  json_object_set_new(o, "wall_particle_steps_per_s", json_real(wall_loop > 0 ? psteps / wall_loop : 0.0));
  json_object_set_new(o, "particles_start", json_integer(sim->particles_start));
  json_object_set_new(o, "particles_end", json_integer(sim->particles_end));
  json_object_set_new(o, "kinetic_energy_start_J", json_real(sim->ke_start));
  json_object_set_new(o, "kinetic_energy_end_J", json_real(sim->ke_end));
  json_object_set_new(o, "restarted_from_step", json_integer(sim->restart_step));
  json_object_set_new(o, "contact_searches", json_integer(sim->searches));
  json_object_set_new(o, "policy", json_string(dem_balance_policy_name(dem_balance_policy(sim->balance))));
  json_object_set_new(o, "repartitions", json_integer(sim->repartitions));
  json_object_set_new(o, "lambda_max_percent", json_real(sim->lambda_max));
  json_object_set_new(o, "lambda_final_percent", json_real(sim->lambda_last));
  json_t *timers = json_object();
  for (int h = 0; h < DEM_T_COUNT; h++) {
    const char *name = dem_timer_name((dem_timer_t)h);
    while (*name == ' ') name++;
    json_object_set_new(timers, name, json_real(sim->timers.total[h]));
  }
  json_object_set_new(o, "rank0_timers_s", timers);
  json_t *per = json_array();
  for (int r = 0; r < sim->ranks; r++) {
    json_t *e = json_object();
    json_object_set_new(e, "rank", json_integer(ranks[r].rank));
    json_object_set_new(e, "host", json_string(ranks[r].host));
    json_object_set_new(e, "processor", json_string(ranks[r].processor));
    json_object_set_new(e, "cpus", json_string(ranks[r].cpus));
    json_object_set_new(e, "load_s", json_real(ranks[r].load_s));
    json_object_set_new(e, "wait_s", json_real(ranks[r].wait_s));
    json_object_set_new(e, "comm_s", json_real(ranks[r].comm_s));
    json_object_set_new(e, "weight", json_real(ranks[r].weight));
    json_object_set_new(e, "particles", json_integer(ranks[r].particles));
    json_object_set_new(e, "ghosts", json_integer(ranks[r].ghosts));
    json_array_append_new(per, e);
  }
  json_object_set_new(o, "per_rank", per);

  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int rc = json_dump_file(o, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
  json_decref(o);
  if (rc) {
    snprintf(err, errlen, "%s: cannot write", tmp);
    return -1;
  }
  if (rename(tmp, path)) {
    snprintf(err, errlen, "%s: cannot rename to %s", tmp, path);
    return -1;
  }
  return 0;
}
