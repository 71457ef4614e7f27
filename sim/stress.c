/* Co-located stress as SimGrid daemon actors, one per stress-ng worker, on the stressed
 * container's host (daemons: the simulation ends when the last MPI rank does).
 *  - vm  (stress-ng --vm N --vm-bytes B): each worker is a stream of executions of B bytes on the
 *        node's memory-bus host, each bounded by one core's bandwidth (a worker is one thread).
 *        They share the bus max-min fairly with the DEM kernels of the other container.
 *  - cpu (stress-ng --cpu N): each worker loops executions on its own container host, one core
 *        each. The DEM container is another host (pinned cores), so it is not slowed: the study's
 *        case 4.
 * A stress container whose cores are also another container's (platform property
 * `shares_cores_with`: that container's host, or a comma-separated list: a host map that puts a
 * noisy neighbour on a rank's cores) time-shares them as the OS scheduler does: each worker is
 * one more always-runnable thread on that host's cores while it is on (counted on the host:
 * sim_stress_sharing), so that container's threads, one per core, get cores / (cores + threads)
 * of their time, for everything they do: computing, waiting on memory and progressing MPI (its
 * ranks poll), which sim/membus.c and dem_clock_blocked stretch by it. The worker gets the same
 * part of its core: a vm worker's bandwidth is bounded by that part of one core's. (Measured on
 * the 2-core development machine, `compare_real.py scenarios/emulated/case1-local.cfg`: the rank
 * beside a stress-ng --vm worker on its core took 2.00 x the other's time for the same particles,
 * computing and memory alike.)
 * Schedule (case 6): idle for start_s, then, when on_s > 0, on for on_s and off for off_s, again
 * and again; when on_s <= 0 the stress is constant. An execution still running when a period
 * ends is cancelled then, so the periods are exact in simulated time. */
#include "stress.h"

#include "host.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct stress_worker {
  sg_host_t target;  /* where the activities run: the membus (vm) or the container (cpu) */
  sg_host_t shares;  /* not NULL: a thread on that host's cores, counted there while on (no activity) */
  double amount;     /* B (vm) or flops (cpu) per activity */
  double bound;      /* B/s cap of one activity (vm), or <= 0: none */
  double t_first;    /* s, simulated time of the first stress period */
  double on_s, off_s;
} stress_worker_t;

/* Runs one activity until it ends or until `until` (< 0: no limit). */
static void run_one(const stress_worker_t *w, double until)
{
  sg_exec_t e = sg_actor_exec_init(w->amount);
  sg_exec_set_host(e, w->target);
  if (w->bound > 0.0) sg_exec_set_bound(e, w->bound);
  sg_exec_start(e);
  if (until < 0.0) {
    sg_exec_wait(e);
  } else if (sg_exec_wait_for(e, until - simgrid_get_clock()) == SG_ERROR_TIMEOUT) {
    sg_exec_cancel(e);
  }
}

/* The threads of stress workers on a host's cores now: its host data (an int, heap memory: one
 * count for every rank of the simulation, whatever SMPI privatises). */
static int *sharing_of(sg_host_t h)
{
  int *n = sg_host_get_data(h);
  if (!n && (n = calloc(1, sizeof *n))) sg_host_set_data(h, n);
  return n;
}

int sim_stress_sharing(const char *host)
{
  sg_host_t h = sg_host_by_name(host);
  const int *n = h ? sg_host_get_data(h) : NULL;
  return n ? *n : 0;
}

/* A thread on w->shares's cores: counted there for `until` - now (< 0: for ever). */
static void share_one(const stress_worker_t *w, double until)
{
  int *n = sharing_of(w->shares);
  if (!n) return;
  ++*n;
  if (until < 0.0) {
    for (;;) sg_actor_sleep_for(1e9);
  }
  sg_actor_sleep_until(until);
  --*n;
}

static void worker_main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
  stress_worker_t w = *(stress_worker_t *)sg_actor_self_get_data();
  free(sg_actor_self_get_data());
  sg_actor_self_set_data(NULL);
  sg_actor_daemonize(sg_actor_self());

  sg_actor_sleep_until(w.t_first);
  if (w.on_s <= 0.0) {
    for (;;) w.shares ? share_one(&w, -1.0) : run_one(&w, -1.0);
  }
  for (double begin = w.t_first;; begin += w.on_s + w.off_s) {
    double end = begin + w.on_s;
    sg_actor_sleep_until(begin);
    if (w.shares) share_one(&w, end);
    while (!w.shares && simgrid_get_clock() < end) run_one(&w, end);
  }
}

static int fail(char *err, size_t errlen, const dem_stress_t *s, const char *what)
{
  if (err && errlen) snprintf(err, errlen, "stress on '%s': %s", s->host, what);
  return -1;
}

static int spawn(const stress_worker_t *proto, const dem_stress_t *s, int i, const char *what, sg_host_t where)
{
  stress_worker_t *w = malloc(sizeof *w);
  if (!w) return -1;
  *w = *proto;
  char name[128];
  snprintf(name, sizeof name, "stress-%s-%s-%d%s", s->vm ? "vm" : "cpu", s->host, i, what);
  sg_actor_t a = sg_actor_init(name, where);
  sg_actor_set_data(a, w);
  sg_actor_start(a, worker_main, 0, NULL);
  return 0;
}

/* The hosts of property `shares_cores_with` ("" or absent: none); -1 when one is unknown. */
static int shared_hosts(sg_host_t h, sg_host_t *out, int max)
{
  const char *v = sg_host_get_property_value(h, "shares_cores_with");
  if (!v || !*v) return 0;
  char buf[1024];
  snprintf(buf, sizeof buf, "%s", v);
  int n = 0;
  for (char *save = NULL, *tok = strtok_r(buf, ", ", &save); tok && n < max; tok = strtok_r(NULL, ", ", &save)) {
    out[n] = sg_host_by_name(tok);
    if (!out[n]) return -1;
    n++;
  }
  return n;
}

int sim_stress_start(const dem_stress_t *s, char *err, size_t errlen)
{
  sim_host_t h;
  char herr[256];
  if (sim_host_read(&h, s->host, herr, sizeof herr)) return fail(err, errlen, s, herr);
  if (s->workers < 1) return fail(err, errlen, s, "needs at least one worker");
  if (s->start_s < 0.0 || (s->on_s > 0.0 && s->off_s < 0.0))
    return fail(err, errlen, s, "start and off times must be >= 0 s");
  if (s->vm && !(s->bytes > 0.0)) return fail(err, errlen, s, "memory stress needs bytes > 0");

  stress_worker_t proto = {
    .target = s->vm ? sg_host_by_name(h.membus) : sg_host_by_name(h.name),
    /* cpu: one second of one core per activity, only to bound the number of activities */
    .amount = s->vm ? s->bytes : h.core_flops,
    .bound = s->vm ? (h.core_bw < h.node_bw ? h.core_bw : h.node_bw) : -1.0,
    .t_first = simgrid_get_clock() + s->start_s,
    .on_s = s->on_s,
    .off_s = s->off_s,
  };
  sg_host_t shared[16];
  int n_shared = shared_hosts(sg_host_by_name(h.name), shared, 16);
  if (n_shared < 0) return fail(err, errlen, s, "property 'shares_cores_with' names a host the platform lacks");
  for (int i = 0; i < s->workers; i++) {
    /* a worker's thread on shared cores: counted on that host (a cpu worker is only that; a vm
     * worker streams memory besides, at its part of the core) */
    stress_worker_t thread = proto, mem = proto;
    if (n_shared > 0) {
      thread.shares = shared[i % n_shared];
      int cores = sg_host_core_count(thread.shares);
      mem.bound *= (double)cores / (cores + (s->workers + n_shared - 1 - i % n_shared) / n_shared);
    }
    const stress_worker_t *first = (n_shared > 0 && !s->vm) ? &thread : &mem;
    if (spawn(first, s, i, "", sg_host_by_name(h.name)) ||
        (n_shared > 0 && s->vm && spawn(&thread, s, i, "-core", thread.shares)))
      return fail(err, errlen, s, "out of memory");
  }
  return 0;
}
