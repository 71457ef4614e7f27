/* A container lost mid-run (see failure.h).
 *
 * How the loss is played. A real loss kills the ranks of the lost container; the others block in
 * their next exchange with them until mpirun, which lost the container's daemon, ends the whole
 * job. The native build does exactly that: the lost ranks SIGKILL themselves. Under SMPI a
 * faithful kill is not available: SimGrid can turn the host off (Host::turn_off kills its actors),
 * but SMPI has no fault tolerance (no ULFM), so the others would wait for ever and the simulation
 * would end as a deadlock, not as a job that mpirun aborted. So every rank learns of the loss at
 * the step boundary (rank 0's clock decides, one broadcast per step, only in runs that declare a
 * failure) and the whole run ends with its own exit status. What is lost is the same: the work
 * after the last checkpoint, counted up to the time of the loss, not to the boundary. */
#define _GNU_SOURCE
#include "failure/failure.h"

#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/clock.h"
#include "base/parallel.h"
#include "scenario/scenario.h"
#include "scenario/state.h"

struct dem_failure {
  int on, rank, attempt;
  const dem_scenario_t *sc;
  double job_t0;          /* native: the real-time clock at the first launch */
  double origin;          /* this attempt's clock (dem_clock_now) at its start */
  double start;           /* this attempt's start on the time line */
  double loop_start;      /* its time loop's start on the time line */
  double next_at;         /* the next loss on the time line (INFINITY: none) */
  char victim[64];        /* the container lost then */
  double kept_until;      /* end of the last checkpoint of this attempt (or the loop start) */
  long checkpoint_step;   /* the state a restart would begin from */
  int written;            /* 1: DIR/checkpoint.h5 holds it */
  dem_failure_log_t log;  /* rank 0: the earlier attempts */
};

/* The clock of the time line: simulated time under SMPI; in the native build the real-time clock,
 * the one clock that successive launches (and machines) share. */
static double line_clock(void)
{
#ifdef DEMSIM_SMPI
  return dem_clock_now();
#else
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
#endif
}

static double line_now(const dem_failure_t *f) { return f->start + (line_clock() - f->origin); }

/* splitmix64: the draws of failure.seed, the same on every platform */
static double uniform(unsigned long long *state)
{
  unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return (double)((z ^ (z >> 31)) >> 11) / 9007199254740992.0;
}

/* The next loss: failure.at in the first attempt; with failure.mtbf the attempt-th pair of draws,
 * an exponential time after this attempt's start (losses are memoryless, so the draw may start
 * afresh at each restart) and one of the containers that run a rank. The last container is never
 * lost: there would be nothing to restart on. */
static void next_loss(dem_failure_t *f)
{
  const dem_scenario_t *sc = f->sc;
  f->next_at = INFINITY;
  if (sc->failure_at > 0 && f->attempt == 0) {
    f->next_at = sc->failure_at;
    snprintf(f->victim, sizeof f->victim, "%s", sc->failure_host);
  } else if (sc->failure_mtbf > 0 && sc->ranks > 1) {
    unsigned long long state = (unsigned long long)sc->failure_seed;
    double u = 0, v = 0;
    for (int k = 0; k <= f->attempt; k++) {
      u = uniform(&state);
      v = uniform(&state);
    }
    f->next_at = f->start - sc->failure_mtbf * log1p(-u);
    snprintf(f->victim, sizeof f->victim, "%s", sc->hosts[(int)(v * sc->ranks) % sc->ranks]);
  }
}

/* Rank 0: starts the record (first launch) or reads it and places this attempt on the time line. */
static int begin_record(dem_failure_t *f, char *err, size_t errlen)
{
  const dem_scenario_t *sc = f->sc;
  if (f->attempt == 0) {
    f->job_t0 = f->origin;
    f->start = 0.0;
    if (dem_failure_log_start(sc->out_dir, f->job_t0) == 0) return 0;
    snprintf(err, errlen, "cannot write %s/failures.txt", sc->out_dir);
    return -1;
  }
  const dem_failure_loss_t *l = NULL;
  if (dem_failure_log_read(sc->out_dir, &f->log) || !(l = dem_failure_log_loss(&f->log, f->attempt - 1))) {
    snprintf(err, errlen, "--attempt %d: %s/failures.txt records no loss that ended attempt %d", f->attempt,
             sc->out_dir, f->attempt - 1);
    return -1;
  }
  f->job_t0 = f->log.job_t0;
#ifdef DEMSIM_SMPI
  f->start = l->at + sc->restart_latency;
#else
  f->start = f->origin - f->job_t0;
#endif
  return 0;
}

dem_failure_t *dem_failure_create(const dem_scenario_t *sc, int attempt, int rank, char *err, size_t errlen)
{
  dem_failure_t *f = calloc(1, sizeof *f);
  if (!f) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  f->sc = sc;
  f->rank = rank;
  f->attempt = attempt;
  f->on = sc->failure_at > 0 || sc->failure_mtbf > 0;
  f->next_at = INFINITY;
  if (!f->on) return f;
  f->origin = line_clock();
  int rc = rank == 0 ? begin_record(f, err, errlen) : 0;
  dem_parallel_max_int(&rc, 1);
  if (rc) {
    if (err[0] == '\0') snprintf(err, errlen, "the failure record could not be read on rank 0");
    free(f);
    return NULL;
  }
  double t[2] = {f->job_t0, f->start};
  dem_parallel_bcast(t, (long)sizeof t, 0);
  f->job_t0 = t[0];
  f->start = t[1];
  next_loss(f);
  return f;
}

void dem_failure_destroy(dem_failure_t **f)
{
  free(*f);
  *f = NULL;
}

void dem_failure_loop_start(dem_failure_t *f, long step)
{
  if (!f || !f->on) return;
  f->loop_start = line_now(f);
  /* a loss during the set-up cuts it short */
  if (f->next_at < f->loop_start) f->loop_start = f->next_at;
  f->kept_until = f->loop_start;
  f->checkpoint_step = step;
  f->written = 0;
  if (f->rank == 0)
    dem_failure_log_append(f->sc->out_dir, "attempt %d start %.17g loop %.17g ranks %d", f->attempt, f->start,
                           f->loop_start, f->sc->ranks);
}

int dem_failure_due(dem_failure_t *f)
{
  if (!f || !f->on || !isfinite(f->next_at)) return 0;
  int due = f->rank == 0 && line_now(f) >= f->next_at;
  dem_parallel_bcast(&due, (long)sizeof due, 0);
  return due;
}

void dem_failure_checkpoint_done(dem_failure_t *f, long step, double cost)
{
  if (!f || !f->on) return;
  f->kept_until = line_now(f);
  f->checkpoint_step = step;
  f->written = 1;
  if (f->rank == 0)
    dem_failure_log_append(f->sc->out_dir, "checkpoint %d step %ld at %.17g cost %.17g", f->attempt, step,
                           f->kept_until, cost);
}

int dem_failure_strike(dem_failure_t *f, long step)
{
  const dem_scenario_t *sc = f->sc;
  int first = -1; /* the lowest rank on the lost container records the loss (rank r runs hosts[r]) */
  for (int r = sc->ranks - 1; r >= 0; r--)
    if (strcmp(sc->hosts[r], f->victim) == 0) first = r;
  if (f->rank == first)
    dem_failure_log_append(sc->out_dir, "failure %d host %s at %.17g step %ld checkpoint_step %ld written %d "
                           "kept_until %.17g", f->attempt, f->victim, f->next_at, step, f->checkpoint_step, f->written,
                           f->kept_until);
#ifndef DEMSIM_SMPI
  fflush(NULL);
  if (strcmp(sc->hosts[f->rank], f->victim) == 0) raise(SIGKILL);
  /* a survivor blocks in its next exchange with the lost ranks until mpirun ends the job */
  dem_parallel_barrier();
#else
  dem_parallel_barrier(); /* the record is written before any rank leaves */
#endif
  return DEM_SIM_HOST_FAILED;
}

int dem_failure_account(dem_failure_t *f, dem_failure_account_t *a)
{
  if (!f || !f->on) return -1;
  dem_failure_log_t *g = &f->log;
  memset(a, 0, sizeof *a);
  a->total = line_now(f);
  if (dem_failure_log_read(f->sc->out_dir, g) || g->n_attempts != f->attempt + 1 || g->n_losses < f->attempt)
    return -1;
  a->log = g;
  a->losses = f->attempt;
  a->checkpoints = g->n_checkpoints;
  a->checkpoint_s = g->checkpoint_s;
  a->setup = g->attempt[0].loop - g->attempt[0].start;
  /* attempt i ended with loss i; attempt i + 1 restarted from its last checkpoint */
  for (int i = 0; i < f->attempt; i++) {
    const dem_failure_loss_t *l = dem_failure_log_loss(g, i);
    if (!l) return -1;
    a->kept += l->kept_until - g->attempt[i].loop;
    a->recompute += l->at - l->kept_until;
    a->restart_latency += g->attempt[i + 1].start - l->at;
    a->restart_setup += g->attempt[i + 1].loop - g->attempt[i + 1].start;
  }
  a->kept += a->total - g->attempt[f->attempt].loop;
  return 0;
}
