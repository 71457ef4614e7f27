/* Set-up, loop and closing outputs of a run (see simulation.h). */
#define _GNU_SOURCE
#include "base/error.h"
#include "base/files.h"
#include "run/simulation.h"
#include "scenario/hostmap.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "balance/balance.h"
#include "base/clock.h"
#include "base/parallel.h"
#include "base/progress.h"
#include "dem/particles.h"
#include "device/engine.h"
#include "domain/ghosts.h"
#include "domain/partition.h"
#include "failure/failure.h"
#include "io/checkpoint.h"
#include "io/metrics.h"
#include "io/output.h"
#include "io/snapshot.h"
#include "io/summary.h"
#include "run/cli.h"
#include "run/safety.h"
#include "run/timestep.h"
#include "scenario/packing.h"
#include "scenario/scenario.h"



double dem_simulation_kinetic_energy(dem_sim_t *sim)
{
  const dem_particles_t *p = sim->p;
  double rho = sim->prm.mat.density, ke = 0.0;
  for (size_t i = 0; i < p->n; i++) {
    double r = p->radius[i];
    double m = rho * 4.0 / 3.0 * M_PI * r * r * r, inertia = 0.4 * m * r * r;
    const double *v = p->vel + 3 * i, *w = p->omega + 3 * i;
    ke += 0.5 * m * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * inertia * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
  }
  dem_parallel_sum_double(&ke, 1);
  return ke;
}

/* Synchronises velocities (closing half kick) and brings the owned particles to the host. */
static int sync_to_host(dem_sim_t *sim, char *err, size_t errlen)
{
  if (sim->kick == 1.0) {
    if (dem_engine_kick(sim->engine) || dem_engine_finish(sim->engine))
      return dem_fail(err, errlen, "synchronising velocities: %s", dem_engine_error(sim->engine));
    sim->kick = 0.5;
  }
  if (dem_engine_pull(sim->engine, DEM_F_ALL, 0, sim->p->n))
    return dem_fail(err, errlen, "device -> host: %s", dem_engine_error(sim->engine));
  return 0;
}

/* The initial decomposition of a fresh start: rank `rank` of `ranks` takes a block of lattice
 * sites [lo, hi) (site indices per axis; sites with ids >= lat->count are absent), cut as
 * Zoltan's RCB cuts equal parts: recursive bisection of the longest axis at the plane that
 * best splits the sites in proportion to the parts on each side. The first repartition then
 * moves a few planes of particles, not nearly all of them: contiguous id ranges are thin
 * slabs, and at 64 ranks migrating every particle at once took some 400 MB of transient
 * buffers and most of the set-up time. Returns the sites in the block. */
static long lattice_row_sites(const dem_lattice_t *lat, long x0, long x1, long iy, long iz)
{
  long base = lat->nx * (iy + lat->ny * iz), end = lat->count - base < x1 ? lat->count - base : x1;
  return end > x0 ? end - x0 : 0;
}

static long lattice_block(const dem_lattice_t *lat, int rank, int ranks, long lo[3], long hi[3])
{
  lo[0] = lo[1] = lo[2] = 0;
  hi[0] = lat->nx, hi[1] = lat->ny, hi[2] = lat->nz;
  long p0 = 0, p1 = ranks;
  long longest = lat->nx > lat->ny ? lat->nx : lat->ny;
  if (lat->nz > longest) longest = lat->nz;
  long *planes = calloc((size_t)longest + 1, sizeof *planes);
  if (!planes) return -1;
  while (p1 - p0 > 1) {
    int d = 0;
    for (int a = 1; a < 3; a++)
      if (hi[a] - lo[a] > hi[d] - lo[d]) d = a;
    /* sites per plane along d (for x, a difference array over each row's run) */
    memset(planes, 0, ((size_t)longest + 1) * sizeof *planes);
    long total = 0;
    for (long iz = lo[2]; iz < hi[2]; iz++)
      for (long iy = lo[1]; iy < hi[1]; iy++) {
        long len = lattice_row_sites(lat, lo[0], hi[0], iy, iz);
        if (len == 0) continue;
        total += len;
        if (d == 0) {
          planes[lo[0]]++;
          planes[lo[0] + len]--;
        } else {
          planes[d == 1 ? iy : iz] += len;
        }
      }
    if (d == 0)
      for (long c = lo[0] + 1; c < hi[0]; c++) planes[c] += planes[c - 1];
    long nlo = (p1 - p0) / 2;
    double target = (double)total * (double)nlo / (double)(p1 - p0);
    long cut = lo[d], below = 0;
    while (cut < hi[d] && fabs((double)(below + planes[cut]) - target) <= fabs((double)below - target))
      below += planes[cut++];
    if (rank < p0 + nlo) {
      hi[d] = cut;
      p1 = p0 + nlo;
    } else {
      lo[d] = cut;
      p0 += nlo;
    }
  }
  free(planes);
  long n = 0;
  for (long iz = lo[2]; iz < hi[2]; iz++)
    for (long iy = lo[1]; iy < hi[1]; iy++) n += lattice_row_sites(lat, lo[0], hi[0], iy, iz);
  return n;
}

/* Generates the block's sites, row by row (runs of consecutive ids along x). */
static int generate_block(const dem_scenario_t *sc, const dem_lattice_t *lat, const long lo[3], const long hi[3],
                          dem_particles_t *p)
{
  for (long iz = lo[2]; iz < hi[2]; iz++)
    for (long iy = lo[1]; iy < hi[1]; iy++) {
      long len = lattice_row_sites(lat, lo[0], hi[0], iy, iz);
      if (len > 0 && dem_packing_generate(sc, lat, lat->nx * (iy + lat->ny * iz) + lo[0], len, p)) return -1;
    }
  return 0;
}

/* Brings velocities and particles to the host, then writes one frame of DIR/name.h5. */
static int write_particles(dem_sim_t *sim, const char *name, int create, char *err, size_t errlen)
{
  if (sync_to_host(sim, err, errlen)) return -1;
  return dem_snapshot_write(sim, name, create, err, errlen);
}

/* the run's fields before anything is set up: its clocks, its rank, its scenario */
static void start_fields(dem_sim_t *sim, const dem_scenario_t *sc)
{
  memset(sim, 0, sizeof *sim);
  sim->wall_start = dem_clock_wall();
  sim->sim_setup_start = dem_clock_now();
  sim->sc = sc;
  sim->prm = sc->params;
  sim->rank = dem_parallel_rank();
  sim->ranks = dem_parallel_size();
  sim->kick = 0.5;
  sim->log = sim->rank == 0 && sc->progress ? stdout : NULL;
  dem_timers_reset(&sim->timers);
  dem_parallel_processor_name(sim->host, sizeof sim->host);
}

int dem_simulation_setup(dem_sim_t *sim, const dem_scenario_t *sc, const dem_cli_t *cli, char *err, size_t errlen)
{
  start_fields(sim, sc);
  if (sc->ranks != sim->ranks)
    return dem_fail(err, errlen, "%s: key 'run.ranks' = %d but %d MPI processes were started", sc->file, sc->ranks, sim->ranks);
  if (dem_clock_init(err, errlen)) return -1;
  dem_clock_set_seed(&sc->noise);
  /* the noise model's profiles, before any rank's work uses the resources they vary */
  if (sim->rank == 0 && dem_clock_set_noise(&sc->noise, err, errlen)) return -1;
  if (sim->rank == 0 && dem_files_make_dirs(sc->out_dir))
    return dem_fail(err, errlen, "key 'output.dir' = \"%s\": cannot create it: %s", sc->out_dir, strerror(errno));
  dem_parallel_barrier();
  dem_parallel_learn_hosts();
  sim->failure = dem_failure_create(sc, cli ? cli->attempt : 0, sim->rank, err, errlen);
  if (!sim->failure) return -1;

  dem_lattice_t lat;
  if (dem_scenario_lattice(sc, &lat, err, errlen)) return -1;
  sim->total_particles = lat.count;
  long first = lat.count * sim->rank / sim->ranks, last = lat.count * (sim->rank + 1) / sim->ranks;
  long lo[3], hi[3], block = 0;
  if (!(cli && cli->restart) && sim->ranks > 1) {
    block = lattice_block(&lat, sim->rank, sim->ranks, lo, hi);
    if (block < 0) return dem_fail(err, errlen, "out of memory");
    first = 0;
    last = block;
  }
  sim->p = dem_particles_create((size_t)(last - first) + 16);
  if (!sim->p) return dem_fail(err, errlen, "out of memory for %ld particles", last - first);
  double *weights = calloc((size_t)sim->ranks, sizeof *weights);
  if (!weights) return dem_fail(err, errlen, "out of memory");
  if (cli && cli->restart) {
    int rc = dem_checkpoint_restore(sim, cli->restart, weights, err, errlen);
    if (rc) {
      free(weights);
      return rc;
    }
  } else if (sim->ranks > 1 ? generate_block(sc, &lat, lo, hi, sim->p)
                              : dem_packing_generate(sc, &lat, first, last - first, sim->p)) {
    free(weights);
    return dem_fail(err, errlen, "out of memory generating %ld particles", last - first);
  }

  dem_engine_opts_t eo = {.backend = sc->server[0] ? DEM_BACKEND_REMOTE
                                     : strcmp(sc->backend, "reference") == 0 ? DEM_BACKEND_REF : DEM_BACKEND_OPENCL,
                          .cl_platform = sc->cl_platform, .cl_device = sc->cl_device,
                          .cl_device_type = sc->cl_device_type,
                          .measured = strcmp(sc->device_cost, "measured") == 0};
  sim->engine = dem_engine_create(&eo, &sim->prm, sim->p, err, errlen);
  if (!sim->engine) return -1;
  if (eo.measured) dem_clock_set_measured(sc->local_speed * (double)dem_engine_compute_units(sim->engine));
  dem_clock_set_code_cost(sc->code_cost);
  sim->balance = dem_balance_create(sc, sim);
  if (!sim->balance) return dem_fail(err, errlen, "out of memory (balance)");
  if (cli && cli->restart) dem_balance_restore(sim->balance, weights, sim->step);
  free(weights);
  sim->partition = dem_partition_create(sim, err, errlen);
  if (!sim->partition) return -1;
  sim->ghosts = dem_ghosts_create(sim, err, errlen);
  if (!sim->ghosts) return -1;
  /* the initial decomposition: equal parts */
  if (sim->ranks > 1) {
    if (dem_partition_repartition(sim->partition, sim, dem_balance_weights(sim->balance), err, errlen) ||
        dem_ghosts_register(sim->ghosts, sim, err, errlen))
      return -1;
  }
  sim->metrics = dem_metrics_create(sim, err, errlen);
  if (!sim->metrics) return -1;
  if (sim->rank == 0 && sc->n_stress > 0 && dem_clock_start_stress(sc->stress, sc->n_stress, err, errlen)) return -1;

  /* a restart carries its forces; a fresh start computes F(0) (velocity Verlet) */
  if (!(cli && cli->restart) && dem_timestep_prologue(sim, err, errlen)) return -1;
  long n = (long)sim->p->n;
  dem_parallel_sum_long(&n, 1);
  sim->particles_start = n;
  sim->ke_start = dem_simulation_kinetic_energy(sim);
  if (sim->log) {
    fprintf(sim->log, "demsim: %s: %ld particles (lattice %ld x %ld x %ld, spacing %g m, diameter %g m), %ld steps of "
            "%g s, %d rank%s, policy %s\n", sc->name, sim->total_particles, lat.nx, lat.ny, lat.nz, lat.spacing,
            lat.diameter, sc->steps, sc->params.dt, sim->ranks, sim->ranks > 1 ? "s" : "", sc->policy);
    fprintf(sim->log, "demsim: rank 0 on %s, device: %s\n", dem_clock_where(), dem_engine_device_name(sim->engine));
    if (strcmp(sc->device_cost, "measured") == 0 && dem_clock_modelled())
      fprintf(sim->log, "demsim: kernel time measured on this device (%d compute units x %g flop/s), scaled to each "
              "container's speed\n", dem_engine_compute_units(sim->engine), sc->local_speed);
    if (sc->code_cost != 1.0)
      fprintf(sim->log, dem_clock_modelled() ? "demsim: the modelled code's kernels cost %g x demsim's (device.code_cost)\n"
                                             : "demsim: device.code_cost = %g models another code under SMPI; this run "
                                               "times demsim's own kernels\n", sc->code_cost);
    fflush(sim->log);
  }
  return 0;
}

int dem_simulation_run(dem_sim_t *sim, char *err, size_t errlen)
{
  const dem_scenario_t *sc = sim->sc;
  dem_progress_t prog;
  dem_progress_start(&prog, sim->log, sim->step, sc->steps);
  dem_parallel_barrier();
  sim->wall_loop_start = dem_clock_wall();
  sim->sim_loop_start = dem_clock_now();
  sim->loop_timers = sim->timers;
  sim->loop_wait0 = dem_ghosts_wait_time(sim->ghosts);
  sim->loop_comm0 = dem_ghosts_comm_time(sim->ghosts);
  dem_timer_start(&sim->timers, DEM_T_TOTAL);
  dem_failure_loop_start(sim->failure, sim->step);
  int created = 0;
  while (sim->step < sc->steps) {
    if (dem_failure_due(sim->failure)) return dem_failure_strike(sim->failure, sim->step);
    if (dem_timestep(sim, err, errlen)) return -1;
    if (sc->check_every > 0 && sim->step % sc->check_every == 0) {
      dem_timer_start(&sim->timers, DEM_T_OUTPUT);
      if (sync_to_host(sim, err, errlen)) return -1;
      if (dem_safety_check(sim, sc->overlap_abort, err, errlen)) {
        /* every rank knows: keep the failing state for diagnosis, then stop cleanly */
        char ignored[256];
        write_particles(sim, "failed", 1, ignored, sizeof ignored);
        if (sim->rank == 0) {
          size_t len = strlen(err);
          snprintf(err + len, errlen - len, "; the state at that step is in %s/failed.h5 (+ .xmf)", sc->out_dir);
        }
        return DEM_SIM_FAILED_ALL;
      }
      dem_timer_stop(&sim->timers, DEM_T_OUTPUT);
    }
    if (sc->output_every > 0 && sim->step % sc->output_every == 0 && sim->step < sc->steps) {
      dem_timer_start(&sim->timers, DEM_T_OUTPUT);
      if (write_particles(sim, "particles", !created, err, errlen)) return -1;
      created = 1;
      dem_timer_stop(&sim->timers, DEM_T_OUTPUT);
    }
    if (sc->checkpoint_every > 0 && sim->step % sc->checkpoint_every == 0) {
      dem_timer_start(&sim->timers, DEM_T_OUTPUT);
      double t0 = dem_clock_now();
      int rc = dem_checkpoint_write(sim, err, errlen);
      sim->checkpoint_s += dem_clock_now() - t0;
      /* the ranks agreed on the outcome: a failed write ends the run cleanly, reported once */
      if (rc) return rc == DEM_SIM_HOST_FAILED ? dem_failure_strike(sim->failure, sim->step) : DEM_SIM_FAILED_ALL;
      dem_timer_stop(&sim->timers, DEM_T_OUTPUT);
    }
    dem_progress_update(&prog, sim->step, sim->prm.dt * (double)sim->step, dem_clock_now() - sim->sim_setup_start,
                        sim->lambda_last, sim->repartitions);
  }
  dem_timer_stop(&sim->timers, DEM_T_TOTAL);
  if (dem_engine_finish(sim->engine)) return dem_fail(err, errlen, "%s", dem_engine_error(sim->engine));
  if (dem_failure_due(sim->failure)) return dem_failure_strike(sim->failure, sim->step);
  dem_parallel_barrier();
  sim->sim_loop_end = dem_clock_now();
  sim->wall_loop_end = dem_clock_wall();
  sim->loop_wait = dem_ghosts_wait_time(sim->ghosts) - sim->loop_wait0;
  sim->loop_comm = dem_ghosts_comm_time(sim->ghosts) - sim->loop_comm0;
  dem_progress_end(&prog);
  /* no exchange follows: the ghosts' buffers make room for the snapshot's (under SMPI, where
   * every rank's are in one process, this keeps the snapshot below the time loop's peak) */
  dem_ghosts_release(sim->ghosts);
  if (write_particles(sim, "particles", !created, err, errlen)) return -1;
  return 0;
}

/* Rank 0's closing lines: what ran, in how much time. The particle-steps count the steps this
 * invocation ran (from its checkpoint after a restart); after a lost container the total is the
 * run's time line, as summary.json's failure.total_s. */
static void done_line(const dem_sim_t *sim)
{
  double simt = sim->sim_loop_end - sim->sim_loop_start;
  double psteps = (double)sim->total_particles * (double)(sim->step - sim->restart_step);
  const char *clock = dem_clock_modelled() ? "simulated" : "wall";
  char lost[200] = "";
  dem_failure_account_t a;
  if (dem_failure_account(sim->failure, &a) == 0 && a.losses > 0)
    snprintf(lost, sizeof lost, "; %.4g s %s in all with %d lost container%s (%.4g s lost, failure.total_s)", a.total,
             clock, a.losses, a.losses > 1 ? "s" : "", a.recompute + a.restart_latency + a.restart_setup);
  fprintf(sim->log, "demsim: done: %ld particles x %ld steps (%.3g s of physical time) on %d rank%s in %.4g s %s "
          "time (%.3g particle-steps/s over the %ld steps run%s)%s, %.3g s wall; %d repartitions, lambda max %.1f %%, "
          "final %.1f %%; kinetic energy %.6g J -> %.6g J\n", sim->particles_end, sim->step,
          sim->prm.dt * (double)sim->step, sim->ranks, sim->ranks > 1 ? "s" : "", simt, clock,
          simt > 0 ? psteps / simt : 0.0, sim->step - sim->restart_step, sim->restart_step ? " after the restart" : "",
          lost, dem_clock_wall() - sim->wall_start, sim->repartitions, sim->lambda_max, sim->lambda_last, sim->ke_start,
          sim->ke_end);
  fprintf(sim->log, "demsim: outputs in %s: summary.json, particles.h5 (+ particles.xmf for ParaView), metrics.csv\n",
          sim->sc->out_dir);
}

int dem_simulation_finish(dem_sim_t *sim, char *err, size_t errlen)
{
  dem_balance_finish(sim->balance);
  sim->ke_end = dem_simulation_kinetic_energy(sim);
  long n = (long)sim->p->n;
  dem_parallel_sum_long(&n, 1);
  sim->particles_end = n;
  dem_summary_rank_t mine = {.rank = sim->rank,
                             .load_s = sim->timers.total[DEM_T_COMPUTE],
                             .wait_s = dem_ghosts_wait_time(sim->ghosts),
                             .comm_s = dem_ghosts_comm_time(sim->ghosts),
                             .weight = dem_balance_weights(sim->balance)[sim->rank],
                             .particles = (long)sim->p->n,
                             .ghosts = (long)dem_ghosts_count(sim->ghosts)};
  dem_ghosts_stats_t gs;
  dem_partition_stats_t ps;
  dem_ghosts_stats(sim->ghosts, &gs);
  dem_partition_stats(sim->partition, &ps);
  mine.ghosts_per_step = gs.steps > 0 ? gs.ghosts / gs.steps : 0.0;
  mine.ghost_bytes_per_step = gs.steps > 0 ? gs.bytes / gs.steps : 0.0;
  mine.cut_slots = ps.cut_samples > 0 ? ps.cut_slots / ps.cut_samples : 0.0;
  mine.pair_slots = ps.cut_samples > 0 ? ps.pair_slots / ps.cut_samples : 0.0;
  mine.sent_particles = ps.sent_particles;
  mine.sent_bytes = ps.sent_bytes;
  mine.partition_s = ps.partition_s;
  mine.migrate_s = ps.migrate_s;
  mine.wall_partition_s = ps.wall_partition_s;
  mine.repartitions = ps.repartitions;
  mine.wan_ghost_bytes = gs.wan_bytes;
  mine.wan_state_bytes = gs.wan_state_bytes;
  mine.wan_migration_bytes = ps.sent_wan_bytes;
  dem_metrics_step_spread(sim->metrics, &mine.step_load_cv, &mine.step_load_acf1);
  snprintf(mine.host, sizeof mine.host, "%s", sim->host);
  dem_parallel_processor_name(mine.processor, sizeof mine.processor);
  dem_hostmap_affinity(mine.cpus, sizeof mine.cpus);
  dem_summary_rank_t *all = sim->rank == 0 ? calloc((size_t)sim->ranks, sizeof *all) : NULL;
  long *counts = sim->rank == 0 ? calloc((size_t)sim->ranks, sizeof *counts) : NULL;
  dem_parallel_gather_counts((long)sizeof mine, counts, 0);
  dem_parallel_gatherv_bytes(&mine, (long)sizeof mine, all, counts, 0);
  dem_timers_report(&sim->timers, sim->log); /* collective; prints only where log is set */
  int rc = 0;
  if (sim->rank == 0) {
    char path[DEM_PATH_MAX + 32];
    snprintf(path, sizeof path, "%s/summary.json", sim->sc->out_dir);
    sim->sim_closed = dem_clock_now();
    rc = dem_summary_write(path, sim, all, err, errlen);
    if (rc == 0 && sim->log) done_line(sim);
  }
  free(all);
  free(counts);
  dem_parallel_max_int(&rc, 1);
  return rc ? -1 : 0;
}

void dem_simulation_destroy(dem_sim_t *sim)
{
  if (sim->failure) dem_failure_destroy(&sim->failure);
  dem_metrics_destroy(&sim->metrics);
  dem_ghosts_destroy(&sim->ghosts);
  dem_partition_destroy(&sim->partition);
  dem_balance_destroy(&sim->balance);
  dem_engine_destroy(&sim->engine);
  dem_particles_destroy(&sim->p);
}
