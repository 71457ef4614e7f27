/* Every JSON file demsim reads or writes (the only module using jansson): a run's summary.json,
 * and `demsim probe`'s files (bwprobe's output and the kernel runs' summaries read back, a
 * node's measurements as text, DIR/probe.json). */
#include "io/summary.h"

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance/balance.h"
#include "base/error.h"
#include "base/clock.h"
#include "device/engine.h"
#include "domain/partition.h"
#include "failure/failure.h"
#include "io/probe_record.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

/* An object or array from a jansson pack format (json_pack: "s:f" a real, "s:I" an integer as
 * json_int_t, "s:s" a string, "s:o" a value it takes); NULL, with the reason on stderr, when
 * the format and the values disagree (a bug: the tests read every key back). */
static json_t *pack(const char *fmt, ...)
{
  va_list ap;
  json_error_t je;
  va_start(ap, fmt);
  json_t *v = json_vpack_ex(&je, 0, fmt, ap);
  va_end(ap);
  if (!v) fprintf(stderr, "demsim: summary.c: %s (%s)\n", je.text, fmt);
  return v;
}

/* The run's time with its lost containers (failure.h): the parts sum to the total. */
static json_t *failure_json(const dem_sim_t *sim, const dem_failure_account_t *acc)
{
  (void)sim; /* its restart latency parameter: SMPI only */
  if (!acc) return NULL;
  const dem_failure_account_t a = *acc;
  json_t *o = json_object(), *losses = json_array();
  for (int i = 0; i < a.log->n_losses; i++) {
    const dem_failure_loss_t *l = &a.log->loss[i];
    json_array_append_new(losses, pack("{s:s, s:f, s:I, s:I, s:f}", "host", l->host, "at_s", l->at, "step",
                                       (json_int_t)l->step, "restarted_from_step", (json_int_t)l->checkpoint_step,
                                       "recompute_s", l->at - l->kept_until));
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
  /* each crossing pair is a slot on both sides: the edge cut is half the cut slots */
  json_object_update_new(o, pack("{s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "partitioner",
                             sim->partition ? dem_partition_name(sim->partition) : sim->sc->partitioner,
                             "ghosts_per_rank_per_step", g / n, "ghost_bytes_per_rank_per_step", gb / n,
                             "ghost_bytes_per_rank_per_step_max", gb_max, "edge_cut", cut / 2.0, "edge_cut_fraction",
                             pairs > 0 ? cut / pairs : 0.0, "migration_particles_per_repartition",
                             reps > 0 ? sp / reps : 0.0, "migration_bytes_per_repartition", reps > 0 ? sb / reps : 0.0,
                             "partition_s", pt, "migration_s", mt, "wall_partition_s", wall));
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
  json_t *per = json_array(), *share = json_array();
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
  return pack("{s:I, s:o, s:o, s:f, s:I, s:f, s:f, s:f, s:f, s:f}", "sites", (json_int_t)n_sites, "ranks_per_site",
              per, "final_weight_share", share, "site_threshold_percent", sc->site_threshold, "site_moves",
              (json_int_t)dem_balance_site_moves(sim->balance), "wan_bytes_per_step", (ghost + mig) / steps,
              "wan_ghost_state_bytes_per_step", state / steps, "wan_ghost_registration_bytes", ghost - state,
              "wan_migration_bytes", mig, "migration_bytes", mig_all);
}

/* Where rank 0's time went, from set-up to the summary (its timers, ghosts.h's wait and
 * communication, partition.h's migration, the checkpoints), the parts summing to total_s: the
 * run's time line after a lost container (failure.total_s), else this invocation's. All ranks
 * end the loop together (a barrier), so the loop's parts of any rank sum to sim_time_s. */
static json_t *breakdown_json(const dem_sim_t *sim, const dem_summary_rank_t *rank0, const dem_failure_account_t *a)
{
  const double *t = sim->timers.total, *t0 = sim->loop_timers.total;
  double loop = sim->sim_loop_end - sim->sim_loop_start, setup = sim->sim_loop_start - sim->sim_setup_start;
  double compute = t[DEM_T_COMPUTE] - t0[DEM_T_COMPUTE], ghosts = t[DEM_T_GHOSTS] - t0[DEM_T_GHOSTS];
  double rep = t[DEM_T_REPARTITION] - t0[DEM_T_REPARTITION], out = t[DEM_T_OUTPUT] - t0[DEM_T_OUTPUT];
  double closing = sim->sim_closed - sim->sim_loop_end, own = sim->sim_closed - sim->sim_setup_start;
  double earlier = a ? a->total - own : 0.0;
  return pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}", "setup_s", setup, "compute_s", compute,
              "ghost_wait_s", sim->loop_wait, "ghost_comm_s", ghosts - sim->loop_wait, "repartition_s",
              rep - rank0->migrate_s, "migration_s", rank0->migrate_s, "checkpoint_s", sim->checkpoint_s, "output_s",
              out - sim->checkpoint_s + closing, "other_s", loop - (compute + ghosts + rep + out), "earlier_attempts_s",
              earlier, "total_s", own + earlier);
}

int dem_summary_write(const char *path, const dem_sim_t *sim, const dem_summary_rank_t *ranks, char *err,
                      size_t errlen)
{
  const dem_scenario_t *sc = sim->sc;
  double sim_s = sim->sim_loop_end - sim->sim_loop_start;
  double wall_loop = sim->wall_loop_end - sim->wall_loop_start;
  /* the steps this invocation ran: from the checkpoint after --restart or a lost container */
  double psteps = (double)sim->total_particles * (double)(sim->step - sim->restart_step);
#ifdef DEMSIM_SMPI
  const char *build = "smpi";
#else
  const char *build = "native";
#endif
  /* weight_oscillation: the damping metric (policy.h defines it) */
  json_t *o = pack("{s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:I, s:f, s:f, s:I, s:I, "
                   "s:s, s:I, s:I, s:f, s:f, s:f}",
                   "scenario", sc->name, "scenario_file", sc->file, "build", build, "device",
                   dem_engine_device_name(sim->engine), "particles", (json_int_t)sim->total_particles, "steps",
                   (json_int_t)sim->step, "ranks", (json_int_t)sim->ranks, "dt_s", sim->prm.dt, "physical_time_s",
                   sim->prm.dt * (double)sim->step, "wall_s", dem_clock_wall() - sim->wall_start, "wall_loop_s",
                   wall_loop, "sim_time_s", sim_s, "particle_steps_per_s", sim_s > 0 ? psteps / sim_s : 0.0,
                   "wall_particle_steps_per_s", wall_loop > 0 ? psteps / wall_loop : 0.0, "particles_start",
                   (json_int_t)sim->particles_start, "particles_end", (json_int_t)sim->particles_end,
                   "kinetic_energy_start_J", sim->ke_start, "kinetic_energy_end_J", sim->ke_end,
                   "restarted_from_step", (json_int_t)sim->restart_step, "contact_searches", (json_int_t)sim->searches,
                   "policy", dem_balance_policy_name(sim->balance), "repartitions", (json_int_t)sim->repartitions,
                   "speed_reports", (json_int_t)dem_balance_reports(sim->balance), "lambda_max_percent",
                   sim->lambda_max, "lambda_final_percent", sim->lambda_last, "weight_oscillation",
                   dem_balance_weight_oscillation(sim->balance));
  if (!o) return dem_fail(err, errlen, "%s: cannot build its JSON", path);
  /* another code modelled (device.code_cost): only then, so that demsim's own runs keep their fields */
  if (sc->code_cost != 1.0) json_object_set_new(o, "code_cost", json_real(sc->code_cost));
  /* the noise model (noise.*): only when enabled, so that runs without noise keep their fields;
   * the native build applies none (real machines bring their own), so its summary claims none */
#ifdef DEMSIM_SMPI
  if (sc->noise.enabled) {
    const dem_noise_t *n = &sc->noise;
    json_object_set_new(o, "noise", json_pack("{s:I, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:f, s:f}", "seed",
                                              (json_int_t)n->seed, "cpu_cv", n->cpu_cv, "cpu_tau_s", n->cpu_tau,
                                              "cpu_memory", n->cpu_memory,
                                              "mem_cv", n->mem_cv, "mem_tau_s", n->mem_tau, "net_cv", n->net_cv,
                                              "net_tau_s", n->net_tau, "dt_s", n->dt, "horizon_s", n->horizon));
  }
#endif
  int n_after;
  const double *after = dem_balance_lambda_after(sim->balance, &n_after);
  json_t *la = json_array();
  for (int k = 0; k < n_after; k++) json_array_append_new(la, json_real(after[k]));
  json_object_set_new(o, "lambda_after_repartition_percent", la);
  partitioner_fields(o, sim, ranks);
  json_object_set_new(o, "setup_s", json_real(sim->sim_loop_start - sim->sim_setup_start));
  json_object_set_new(o, "setup_started_at_s", json_real(sim->sim_setup_start));
  json_object_set_new(o, "steps_run", json_integer((json_int_t)(sim->step - sim->restart_step)));
  dem_failure_account_t account;
  const dem_failure_account_t *acc = dem_failure_account(sim->failure, &account) == 0 ? &account : NULL;
  json_t *parts = breakdown_json(sim, &ranks[0], acc);
  if (parts) json_object_set_new(o, "time_breakdown_s", parts);
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
    const dem_summary_rank_t *e = &ranks[r];
    json_array_append_new(per, pack("{s:I, s:s, s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:I, s:f, s:f, s:f, s:f, s:f, s:f, s:f, "
                                    "s:f, s:f}",
                                    "rank", (json_int_t)e->rank, "host", e->host, "processor", e->processor, "cpus",
                                    e->cpus, "load_s", e->load_s, "wait_s", e->wait_s, "comm_s", e->comm_s, "weight",
                                    e->weight, "particles", (json_int_t)e->particles, "ghosts", (json_int_t)e->ghosts,
                                    "ghosts_per_step", e->ghosts_per_step, "ghost_bytes_per_step",
                                    e->ghost_bytes_per_step, "edge_cut_slots", e->cut_slots, "migrated_particles",
                                    e->sent_particles, "migrated_bytes", e->sent_bytes, "partition_s", e->partition_s,
                                    "migrate_s", e->migrate_s, "step_load_cv", e->step_load_cv, "step_load_acf1",
                                    e->step_load_acf1));
  }
  json_object_set_new(o, "per_rank", per);
  json_t *failure = failure_json(sim, acc);
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
    json_array_append_new(a, pack("{s:s, s:s, s:s, s:I, s:o, s:o}", "platform", d->platform, "name", d->name, "type",
                                  d->type, "compute_units", (json_int_t)d->compute_units, "global_mem_bytes",
                                  count_or_null(d->global_mem_bytes), "max_clock_mhz",
                                  count_or_null(d->max_clock_mhz)));
  }
  return a;
}

char *dem_summary_probe_node(const dem_probe_node_t *nd)
{
  /* "s?": null for NULL; "s*": the key left out for NULL */
  json_t *o = pack("{s:s, s:I, s:s, s:o, s:o, s:o, s:o, s:o, s:s?, s:s*, s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "name",
                   nd->name, "cores", (json_int_t)nd->cores, "cpu_model", nd->cpu_model, "llc_bytes",
                   count_or_null(nd->llc_bytes), "mem_bytes", count_or_null(nd->mem_bytes), "triad_1core_Bps",
                   real_or_null(nd->triad_1core_Bps), "triad_allcore_Bps", real_or_null(nd->triad_allcore_Bps),
                   "triad_1core_stressed_Bps", real_or_null(nd->triad_stressed_Bps), "stress",
                   nd->stress[0] ? nd->stress : NULL, "stress_skipped", nd->stress_skipped[0] ? nd->stress_skipped : NULL,
                   "gather_1core_Bps", real_or_null(nd->gather_1core_Bps), "lattice_1core_Bps",
                   real_or_null(nd->lattice_1core_Bps), "streams_1core_Bps", real_or_null(nd->streams_1core_Bps),
                   "flops_peak_1core", real_or_null(nd->flops_peak_1core), "scalar_flops_1core",
                   real_or_null(nd->scalar_flops_1core), "vector_lanes", count_or_null(nd->vector_lanes),
                   "divider_1core", real_or_null(nd->divider_1core));
  if (!o) return NULL;
  json_t *k = json_array();
  for (int i = 0; i < nd->n_kernel; i++)
    json_array_append_new(k, pack("{s:I, s:o, s:o}", "cores", (json_int_t)nd->kernel[i].cores, "particle_steps_per_s",
                                  real_or_null(nd->kernel[i].particle_steps_per_s), "loop_s",
                                  real_or_null(nd->kernel[i].loop_s)));
  json_object_set_new(o, "kernel_rate", k);
  json_object_set_new(o, "streams_allcore_Bps", real_or_null(nd->streams_allcore_Bps));
  json_object_set_new(o, "partition_rate", real_or_null(nd->partition_rate));
  json_object_set_new(o, "partition_particles", real_or_null(nd->partition_particles));
  json_object_set_new(o, "contact_kernel_1core",
                      isnan(nd->contact.median_s)
                          ? json_null()
                          : pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:o}",
                                 "particles",
                                 count_or_null(nd->contact.particles),
                                 "best_s", real_or_null(nd->contact.best_s), "median_s",
                                 real_or_null(nd->contact.median_s), "flops", real_or_null(nd->contact.flops),
                                 "traffic_B", real_or_null(nd->contact.traffic_B), "divsqrt",
                                 real_or_null(nd->contact.divsqrt), "reference_over_kernel",
                                 real_or_null(nd->contact.reference_over_kernel), "all_cores_median_s",
                                 real_or_null(nd->contact.all_median_s), "all_cores",
                                 (json_int_t)nd->contact.all_cores, "binning_particles",
                                 count_or_null(nd->contact.binning_particles), "binning_median_s",
                                 real_or_null(nd->contact.binning_median_s), "binning_all_cores_median_s",
                                 real_or_null(nd->contact.binning_all_median_s), "permute_bytes",
                                 count_or_null(nd->contact.permute_bytes), "permute_median_s",
                                 real_or_null(nd->contact.permute_median_s), "permute_all_cores_median_s",
                                 real_or_null(nd->contact.permute_all_median_s)));
  json_object_set_new(o, "search_1core",
                      nd->contact.search_turns < 1
                          ? json_null()
                          : pack("{s:o, s:o, s:o, s:o, s:o, s:I}", "particles",
                                 count_or_null(nd->contact.search_particles), "apart_slots",
                                 count_or_null(nd->contact.search_apart_slots), "contact_slots",
                                 count_or_null(nd->contact.search_contact_slots), "apart_over_forces",
                                 real_or_null(nd->contact.search_apart_ratio), "contact_over_forces",
                                 real_or_null(nd->contact.search_contact_ratio), "turns",
                                 (json_int_t)nd->contact.search_turns));
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
      json_t *sizes = json_array();
      for (int s = 0; s < DEM_PROBE_SIZES; s++)
        json_array_append_new(sizes, pack("{s:I, s:o}", "bytes", (json_int_t)r->sizes[s], "one_way_s", real_or_null(t[s])));
      double big = t[DEM_PROBE_SIZES - 1];
      json_array_append_new(pairs, pack("{s:I, s:I, s:s, s:s, s:b, s:o, s:o, s:o}", "rank_a", (json_int_t)a, "rank_b",
                                        (json_int_t)b, "node_a", name[a], "node_b", name[b], "same_node",
                                        r->leader[a] == r->leader[b], "sizes", sizes, "latency_s", real_or_null(t[0]),
                                        "bandwidth_Bps",
                                        real_or_null(big > 0 ? (double)r->sizes[DEM_PROBE_SIZES - 1] / big : NAN)));
    }
  return pairs;
}

int dem_summary_probe_write(const char *path, const dem_probe_report_t *r, char *err, size_t errlen)
{
  json_t *nodes = json_array();
  json_t *o = pack("{s:s, s:s, s:s, s:s, s:{s:I, s:I, s:b}, s:o}", "format", "demsim-probe-1", "date", r->date, "command",
                   r->command, "demsim", "0.1", "options", "particles", (json_int_t)r->particles, "steps",
                   (json_int_t)r->steps, "quick", r->quick, "nodes", nodes);
  if (!o) return dem_fail(err, errlen, "%s: cannot build its JSON", path);
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
