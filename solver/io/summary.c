/* Every JSON file demsim reads or writes (the only module using jansson): a run's summary.json,
 * and `demsim probe`'s files (bwprobe's output and the kernel runs' summaries read back, a
 * node's measurements as text, DIR/probe.json). */
#include "io/summary.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "base/clock.h"
#include "device/engine.h"
#include "domain/partition.h"
#include "failure/failure.h"
#include "io/probe_record.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

/* The run's time with its lost containers (failure.h): the parts sum to the total. */
static json_t *failure_json(const dem_sim_t *sim)
{
  dem_failure_account_t a;
  if (dem_failure_account(sim->failure, &a)) return NULL;
  json_t *o = json_object(), *losses = json_array();
  for (int i = 0; i < a.log->n_losses; i++) {
    const dem_failure_loss_t *l = &a.log->loss[i];
    json_t *e = json_object();
    json_object_set_new(e, "host", json_string(l->host));
    json_object_set_new(e, "at_s", json_real(l->at));
    json_object_set_new(e, "step", json_integer(l->step));
    json_object_set_new(e, "restarted_from_step", json_integer(l->checkpoint_step));
    json_object_set_new(e, "recompute_s", json_real(l->at - l->kept_until));
    json_array_append_new(losses, e);
  }
  json_object_set_new(o, "losses", losses);
#ifdef DEMSIM_SMPI
  json_object_set_new(o, "restart_latency_parameter_s", json_real(sim->sc->restart_latency));
#endif
  const struct { const char *k; double v; } parts[] = {
    {"setup_s", a.setup}, {"kept_s", a.kept}, {"recompute_s", a.recompute}, {"restart_latency_s", a.restart_latency},
    {"restart_setup_s", a.restart_setup}, {"lost_s", a.recompute + a.restart_latency + a.restart_setup},
    {"total_s", a.total}, {"checkpoint_s", a.checkpoint_s},
    {"checkpoint_cost_s", a.checkpoints ? a.checkpoint_s / a.checkpoints : 0.0}};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) json_object_set_new(o, parts[i].k, json_real(parts[i].v));
  json_object_set_new(o, "checkpoints", json_integer(a.checkpoints));
  return o;
}

/* The partitioner and what it cost (scenarios/README.md, "Partitioners"): the ghost traffic
 * per rank and step, the edge cut, migration volume per repartition, the partition's time. */
static void partitioner_fields(json_t *o, const dem_sim_t *sim, const dem_summary_rank_t *ranks)
{
  double g = 0, gb = 0, gb_max = 0, cut = 0, pairs = 0, sp = 0, sb = 0, pt = 0, mt = 0, wall = 0;
  int reps = 0;
  for (int r = 0; r < sim->ranks; r++) {
    const dem_summary_rank_t *e = &ranks[r];
    g += e->ghosts_per_step;
    gb += e->ghost_bytes_per_step;
    if (e->ghost_bytes_per_step > gb_max) gb_max = e->ghost_bytes_per_step;
    cut += e->cut_slots;
    pairs += e->pair_slots;
    sp += e->sent_particles;
    sb += e->sent_bytes;
    if (r == 0 || e->partition_s < pt) pt = e->partition_s; /* the last to arrive waited least */
    if (e->migrate_s > mt) mt = e->migrate_s;
    if (e->wall_partition_s > wall) wall = e->wall_partition_s;
    if (e->repartitions > reps) reps = e->repartitions;
  }
  double n = (double)sim->ranks;
  json_object_set_new(o, "partitioner", json_string(sim->partition ? dem_partition_name(sim->partition) : sim->sc->partitioner));
  json_object_set_new(o, "ghosts_per_rank_per_step", json_real(g / n));
  json_object_set_new(o, "ghost_bytes_per_rank_per_step", json_real(gb / n));
  json_object_set_new(o, "ghost_bytes_per_rank_per_step_max", json_real(gb_max));
  /* each crossing pair is a slot on both sides */
  json_object_set_new(o, "edge_cut", json_real(cut / 2.0));
  json_object_set_new(o, "edge_cut_fraction", json_real(pairs > 0 ? cut / pairs : 0.0));
  json_object_set_new(o, "migration_particles_per_repartition", json_real(reps > 0 ? sp / reps : 0.0));
  json_object_set_new(o, "migration_bytes_per_repartition", json_real(reps > 0 ? sb / reps : 0.0));
  json_object_set_new(o, "partition_s", json_real(pt));
  json_object_set_new(o, "migration_s", json_real(mt));
  json_object_set_new(o, "wall_partition_s", json_real(wall));
}

/* Two or more sites (platform.sites): what crossed between them, sent bytes summed over the
 * ranks (scenarios/README.md, "Sites"). NULL without sites. */
static json_t *sites_json(const dem_sim_t *sim, const dem_summary_rank_t *ranks)
{
  const dem_scenario_t *sc = sim->sc;
  if (!sc->n_site_list) return NULL;
  double ghost = 0, state = 0, mig = 0, mig_all = 0;
  int n_sites = 0;
  for (int r = 0; r < sim->ranks; r++) {
    ghost += ranks[r].wan_ghost_bytes;
    state += ranks[r].wan_state_bytes;
    mig += ranks[r].wan_migration_bytes;
    mig_all += ranks[r].sent_bytes;
    if (sc->site[r] + 1 > n_sites) n_sites = sc->site[r] + 1;
  }
  double steps = sim->step > 0 ? (double)sim->step : 1.0;
  json_t *o = json_object(), *per = json_array(), *share = json_array();
  const double *w = dem_balance_weights(sim->balance);
  for (int k = 0; k < n_sites; k++) {
    int count = 0;
    double sum = 0;
    for (int r = 0; r < sim->ranks; r++)
      if (sc->site[r] == k) {
        count++;
        sum += w[r];
      }
    json_array_append_new(per, json_integer(count));
    json_array_append_new(share, json_real(sum / sim->ranks));
  }
  json_object_set_new(o, "sites", json_integer(n_sites));
  json_object_set_new(o, "ranks_per_site", per);
  json_object_set_new(o, "final_weight_share", share);
  json_object_set_new(o, "site_threshold_percent", json_real(sc->site_threshold));
  json_object_set_new(o, "site_moves", json_integer(dem_balance_site_moves(sim->balance)));
  json_object_set_new(o, "wan_bytes_per_step", json_real((ghost + mig) / steps));
  json_object_set_new(o, "wan_ghost_state_bytes_per_step", json_real(state / steps));
  json_object_set_new(o, "wan_ghost_registration_bytes", json_real(ghost - state));
  json_object_set_new(o, "wan_migration_bytes", json_real(mig));
  json_object_set_new(o, "migration_bytes", json_real(mig_all));
  return o;
}

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
  json_object_set_new(o, "policy", json_string(dem_balance_policy_name(sim->balance)));
  json_object_set_new(o, "repartitions", json_integer(sim->repartitions));
  json_object_set_new(o, "speed_reports", json_integer(dem_balance_reports(sim->balance)));
  json_object_set_new(o, "lambda_max_percent", json_real(sim->lambda_max));
  json_object_set_new(o, "lambda_final_percent", json_real(sim->lambda_last));
  /* damping: balance.h defines the metric */
  json_object_set_new(o, "weight_oscillation", json_real(dem_balance_weight_oscillation(sim->balance)));
  int n_after;
  const double *after = dem_balance_lambda_after(sim->balance, &n_after);
  json_t *la = json_array();
  for (int k = 0; k < n_after; k++) json_array_append_new(la, json_real(after[k]));
  json_object_set_new(o, "lambda_after_repartition_percent", la);
  partitioner_fields(o, sim, ranks);
  json_t *sites = sites_json(sim, ranks);
  if (sites) json_object_set_new(o, "sites", sites);
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
    json_object_set_new(e, "ghosts_per_step", json_real(ranks[r].ghosts_per_step));
    json_object_set_new(e, "ghost_bytes_per_step", json_real(ranks[r].ghost_bytes_per_step));
    json_object_set_new(e, "edge_cut_slots", json_real(ranks[r].cut_slots));
    json_object_set_new(e, "migrated_particles", json_real(ranks[r].sent_particles));
    json_object_set_new(e, "migrated_bytes", json_real(ranks[r].sent_bytes));
    json_object_set_new(e, "partition_s", json_real(ranks[r].partition_s));
    json_object_set_new(e, "migrate_s", json_real(ranks[r].migrate_s));
    json_array_append_new(per, e);
  }
  json_object_set_new(o, "per_rank", per);
  json_t *failure = failure_json(sim);
  if (failure) json_object_set_new(o, "failure", failure);

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

int dem_summary_read_reals(const char *path, const char *const *keys, double *vals, int n, char *err, size_t errlen)
{
  json_error_t je;
  json_t *o = json_load_file(path, 0, &je);
  if (!o || !json_is_object(o)) {
    snprintf(err, errlen, "%s: not a JSON object (line %d: %s)", path, je.line, je.text);
    json_decref(o);
    return -1;
  }
  for (int i = 0; i < n; i++) {
    json_t *v = json_object_get(o, keys[i]);
    vals[i] = json_is_number(v) ? json_number_value(v) : NAN;
  }
  json_decref(o);
  return 0;
}

/* a figure, or null when it was not measured */
static json_t *real_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }
/* a count (bytes, MHz), or null when unknown */
static json_t *count_or_null(double v) { return isfinite(v) ? json_integer((json_int_t)llround(v)) : json_null(); }

static json_t *probe_cl_devices(const dem_probe_node_t *nd)
{
  json_t *a = json_array();
  for (int i = 0; i < nd->n_cl && i < DEM_PROBE_MAX_CL; i++) {
    const dem_device_info_t *d = &nd->cl[i];
    json_t *e = json_object();
    json_object_set_new(e, "platform", json_string(d->platform));
    json_object_set_new(e, "name", json_string(d->name));
    json_object_set_new(e, "type", json_string(d->type));
    json_object_set_new(e, "compute_units", json_integer(d->compute_units));
    json_object_set_new(e, "global_mem_bytes", count_or_null(d->global_mem_bytes));
    json_object_set_new(e, "max_clock_mhz", count_or_null(d->max_clock_mhz));
    json_array_append_new(a, e);
  }
  return a;
}

char *dem_summary_probe_node(const dem_probe_node_t *nd)
{
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(nd->name));
  json_object_set_new(o, "cores", json_integer(nd->cores));
  json_object_set_new(o, "cpu_model", json_string(nd->cpu_model));
  json_object_set_new(o, "llc_bytes", count_or_null(nd->llc_bytes));
  json_object_set_new(o, "mem_bytes", count_or_null(nd->mem_bytes));
  json_object_set_new(o, "triad_1core_Bps", real_or_null(nd->triad_1core_Bps));
  json_object_set_new(o, "triad_allcore_Bps", real_or_null(nd->triad_allcore_Bps));
  json_object_set_new(o, "triad_1core_stressed_Bps", real_or_null(nd->triad_stressed_Bps));
  json_object_set_new(o, "stress", nd->stress[0] ? json_string(nd->stress) : json_null());
  if (nd->stress_skipped[0]) json_object_set_new(o, "stress_skipped", json_string(nd->stress_skipped));
  json_object_set_new(o, "gather_1core_Bps", real_or_null(nd->gather_1core_Bps));
  json_object_set_new(o, "lattice_1core_Bps", real_or_null(nd->lattice_1core_Bps));
  json_object_set_new(o, "streams_1core_Bps", real_or_null(nd->streams_1core_Bps));
  json_object_set_new(o, "flops_peak_1core", real_or_null(nd->flops_peak_1core));
  json_object_set_new(o, "scalar_flops_1core", real_or_null(nd->scalar_flops_1core));
  json_object_set_new(o, "vector_lanes", count_or_null(nd->vector_lanes));
  json_object_set_new(o, "divider_1core", real_or_null(nd->divider_1core));
  json_t *k = json_array();
  for (int i = 0; i < nd->n_kernel; i++) {
    json_t *e = json_object();
    json_object_set_new(e, "cores", json_integer(nd->kernel[i].cores));
    json_object_set_new(e, "particle_steps_per_s", real_or_null(nd->kernel[i].particle_steps_per_s));
    json_object_set_new(e, "loop_s", real_or_null(nd->kernel[i].loop_s));
    json_array_append_new(k, e);
  }
  json_object_set_new(o, "kernel_rate", k);
  json_object_set_new(o, "opencl_devices", probe_cl_devices(nd));
  json_t *c = json_array();
  for (int i = 0; i < nd->n_commands; i++) json_array_append_new(c, json_string(nd->commands[i]));
  json_object_set_new(o, "commands", c);
  char *text = json_dumps(o, JSON_COMPACT | JSON_REAL_PRECISION(8));
  json_decref(o);
  return text;
}

/* The nodes, in the order of their leaders, each with the ranks it holds. */
static int probe_nodes(const dem_probe_report_t *r, json_t *nodes, char *err, size_t errlen)
{
  const char *text = r->node_text;
  for (int l = 0; l < r->ranks; l++, text += strlen(text) + 1) {
    if (r->leader[l] != l) continue;
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    if (!o) {
      snprintf(err, errlen, "the measurements of rank %d do not read back (%s)", l, je.text);
      return -1;
    }
    json_t *ranks = json_array();
    for (int q = 0; q < r->ranks; q++)
      if (r->leader[q] == l) json_array_append_new(ranks, json_integer(q));
    json_object_set_new(o, "ranks", ranks);
    json_array_append_new(nodes, o);
  }
  return 0;
}

static json_t *probe_pairs(const dem_probe_report_t *r)
{
  const char *name[r->ranks];
  const char *p = r->names;
  for (int q = 0; q < r->ranks; q++, p += strlen(p) + 1) name[q] = p;
  json_t *pairs = json_array();
  const double *t = r->one_way_s;
  for (int a = 0; a < r->ranks; a++)
    for (int b = a + 1; b < r->ranks; b++, t += DEM_PROBE_SIZES) {
      json_t *e = json_object(), *sizes = json_array();
      json_object_set_new(e, "rank_a", json_integer(a));
      json_object_set_new(e, "rank_b", json_integer(b));
      json_object_set_new(e, "node_a", json_string(name[a]));
      json_object_set_new(e, "node_b", json_string(name[b]));
      json_object_set_new(e, "same_node", json_boolean(r->leader[a] == r->leader[b]));
      for (int s = 0; s < DEM_PROBE_SIZES; s++) {
        json_t *z = json_object();
        json_object_set_new(z, "bytes", json_integer(r->sizes[s]));
        json_object_set_new(z, "one_way_s", real_or_null(t[s]));
        json_array_append_new(sizes, z);
      }
      json_object_set_new(e, "sizes", sizes);
      json_object_set_new(e, "latency_s", real_or_null(t[0]));
      double big = t[DEM_PROBE_SIZES - 1];
      json_object_set_new(e, "bandwidth_Bps", real_or_null(big > 0 ? (double)r->sizes[DEM_PROBE_SIZES - 1] / big : NAN));
      json_array_append_new(pairs, e);
    }
  return pairs;
}

int dem_summary_probe_write(const char *path, const dem_probe_report_t *r, char *err, size_t errlen)
{
  json_t *o = json_object(), *opts = json_object(), *nodes = json_array();
  json_object_set_new(o, "format", json_string("demsim-probe-1"));
  json_object_set_new(o, "date", json_string(r->date));
  json_object_set_new(o, "command", json_string(r->command));
  json_object_set_new(o, "demsim", json_string("0.1"));
  json_object_set_new(opts, "particles", json_integer(r->particles));
  json_object_set_new(opts, "steps", json_integer(r->steps));
  json_object_set_new(opts, "quick", json_boolean(r->quick));
  json_object_set_new(o, "options", opts);
  json_object_set_new(o, "nodes", nodes);
  if (probe_nodes(r, nodes, err, errlen)) {
    json_decref(o);
    return -1;
  }
  json_object_set_new(o, "pairs", probe_pairs(r));
  char tmp[4200];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  int rc = json_dump_file(o, tmp, JSON_INDENT(2) | JSON_REAL_PRECISION(8));
  json_decref(o);
  if (rc || rename(tmp, path)) {
    snprintf(err, errlen, "%s: cannot write", path);
    return -1;
  }
  return 0;
}
