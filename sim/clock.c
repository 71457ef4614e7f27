/* solver/base/clock.h for the SMPI build: turns the solver's work reports into simulated time on the
 * container that runs this rank. Under SMPI every rank has its own copy of these globals.
 *
 *   kernel on a CPU container : compute on the container's cores (its divisions and square
 *                               roots at the divider's rate, the kernel launch latency added to
 *                               it), then its cache-line traffic (sim/cost.c) on the
 *                               node's memory bus, one flow per core (sim/membus.c); the
 *                               contact search at the host's measured search_rate and
 *                               search_slot_rate when the platform gives them
 *   kernel on a GPU container : launch latency + device roofline (sim/gpu.c)
 *   host-side work            : the same on one core (a partition at the host's measured
 *                               partition_rate, binning at its binning_rate, the store's
 *                               permutation at its permute_bw, when the platform gives them)
 *   host<->device copy        : PCIe on a GPU; on a CPU device only the enqueue latency
 *   first touch of memory     : the bytes at the host's first_touch_bw (page faults); nothing
 *                               when the platform gives no such figure
 * The cost of each kind of work is in sim/cost.c, the hardware in the platform file.
 *
 * device.cost = "measured" (dem_clock_set_measured): a kernel that arrives with its device time
 * on this machine is charged that time scaled by speed, as SMPI charges a benchmarked block
 * (seconds x smpi/host-speed = flops): the flops this machine's device did in that time run on
 * the container's cores (CPU; the launch latency added as in the model) or at the GPU's rate.
 * The memory of this machine is in the measurement, so no bus traffic is charged: co-located
 * memory stress does not slow such a kernel. Host-side work and copies keep the model. */
#include "base/clock.h"

#include "cost.h"
#include "gpu.h"
#include "heap.h"
#include "host.h"
#include "membus.h"
#include "netfactor.h"
#include "noise.h"
#include "noise_sg.h"
#include "quota.h"
#include "route.h"
#include "stress.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static sim_host_t self;
static sim_quota_t quota; /* self's quota's schedule (self.quota), where it has one */
static int ready;
static double local_flops; /* > 0: device.cost = "measured", flop/s of this machine's device */
static char where[256] = "simulated host (dem_clock_init not called)";

/* The quota's schedule of this rank's container: the first tick half a tick into the first
 * period, the run starting with a period, or, with the noise model, both drawn from the run's seed
 * and the host's name: where the first tick falls in the tick, and where the run starts in the
 * quota's period (the kernel's ticks, the quota's period timer and the run start independently,
 * so a run meets them in any phase) */
static void schedule(int seeded, long seed)
{
  sim_quota_free(&quota);
  self.quota = NULL;
  if (!sim_membus_quota(&self)) return;
  double u = 0.5, v = 0.0;
  if (seeded) {
    char name[sizeof self.name + 8];
    snprintf(name, sizeof name, "tick:%s", self.name);
    sim_rng_t r;
    sim_rng_seed(&r, (uint64_t)seed, name);
    u = sim_rng_uniform(&r);
    v = sim_rng_uniform(&r);
  }
  if (sim_quota_init(&quota, self.cpu_share, self.cpu_period, self.cpu_tick, u * self.cpu_tick) == 0) {
    sim_quota_shift(&quota, v * self.cpu_period);
    self.quota = &quota;
  }
}

int dem_clock_init(char *err, unsigned long errlen)
{
  sim_heap_init(); /* before this rank's particles exist */
  if (sim_netfactor_install(err, errlen)) return -1;
  if (sim_host_read(&self, NULL, err, errlen)) return -1;
  sim_host_describe(&self, where, sizeof where);
  schedule(0, 0);
  ready = 1;
  return 0;
}

void dem_clock_set_seed(const dem_noise_t *n)
{
  if (ready && n && n->enabled) schedule(1, n->seed);
}

int dem_clock_start_stress(const dem_stress_t *s, int count, char *err, unsigned long errlen)
{
  for (int i = 0; i < count; i++)
    if (sim_stress_start(&s[i], err, errlen)) return -1;
  return 0;
}

int dem_clock_set_noise(const dem_noise_t *n, char *err, unsigned long errlen)
{
  static int set;
  if (set || !n || !n->enabled) return 0;
  set = 1;
  return sim_noise_apply(n, err, errlen);
}

/* A fixed duration nobody contends for (GPU kernels and copies, enqueue latencies). */
static int pass(double seconds)
{
  if (seconds > 0.0) sg_actor_sleep_for(seconds);
  return 0;
}

void dem_clock_set_measured(double flops) { local_flops = flops; }

/* device.code_cost: the modelled code's kernels over demsim's (1: demsim's own) */
static double code_cost = 1.0;

void dem_clock_set_code_cost(double factor) { code_cost = factor; }

/* a kernel timed on this machine's device: its flops at this machine's speed, on the modelled device */
static int charge_measured(const sim_host_t *h, double seconds)
{
  double flops = seconds * local_flops;
  if (h->device == SIM_DEVICE_GPU) return pass(h->launch_latency + flops / h->gpu_flops);
  return sim_membus_run(h, flops + h->launch_latency * h->cores * h->core_flops, h->cores, 0.0, h->core_bw, 0);
}

/* compute (flops at the core's rate) and memory traffic of a piece of work on this CPU */
static double cpu_flops(const sim_host_t *h, const sim_cost_t *c)
{
  return sim_cost_cpu_flops(c, h->core_flops, h->divider_rate, h->simd_lanes);
}

static double cpu_traffic(const sim_host_t *h, const sim_cost_t *c)
{
  return sim_cost_cpu_traffic(c, h->cache_line, h->llc_bytes, h->core_bw / h->core_gather_bw);
}

/* new memory: its pages are faulted in at the host's first_touch_bw (nothing when the platform
 * gives no such figure) */
static int first_touch(const sim_host_t *h, double fresh)
{
  return fresh > 0.0 && h->first_touch_bw > 0.0 ? pass(fresh / h->first_touch_bw) : 0;
}

/* the contact search on a CPU whose search was measured (search_rate, search_slot_rate): one core's
 * time for its particles and slots at those rates, times the modelled code's cost; of it, the
 * counted traffic's time on an idle bus is charged as traffic (so that a loaded bus still slows
 * it), the rest as compute */
static int search_measured(const sim_host_t *h, const dem_work_t *w, const sim_cost_t *c)
{
  double t = code_cost * (w->particles / h->search_rate + w->pairs / h->search_slot_rate);
  double traffic = cpu_traffic(h, c), compute = t - traffic / h->core_bw;
  double launch = h->launch_latency * h->cores * h->core_flops;
  return sim_membus_run(h, (compute > 0.0 ? compute : 0.0) * h->core_flops + launch, h->cores, traffic, h->core_bw,
                        sim_cost_streaming(c));
}

int dem_clock_charge(const dem_work_t *w)
{
  if (!ready && dem_clock_init(NULL, 0)) return -1;
  sim_cost_t c;
  if (sim_cost_of(w, &c)) return -1;
  const sim_host_t *h = &self;
  switch (c.place) {
  case SIM_ON_DEVICE: {
    if (w->measured && local_flops > 0.0) return charge_measured(h, w->measured_s * code_cost);
    if (code_cost != 1.0) sim_cost_scale(&c, code_cost);
    if (h->device == SIM_DEVICE_GPU) return pass(sim_gpu_kernel_time(h, &c));
    if (w->kind == DEM_WORK_SEARCH && h->search_rate > 0.0) return search_measured(h, w, &c);
    /* the launch latency is charged as compute: with overlap, traffic longer than both hides it */
    double launch = h->launch_latency * h->cores * h->core_flops;
    return sim_membus_run(h, cpu_flops(h, &c) + launch, h->cores, cpu_traffic(h, &c), h->core_bw, sim_cost_streaming(&c));
  }
  case SIM_ON_HOST:
    /* a partition on a host whose Zoltan was measured: the whole call at that rate */
    if (c.levels > 0.0 && h->partition_rate > 0.0)
      return sim_membus_run(h, c.levels / h->partition_rate * h->core_flops, 1, 0.0, h->core_bw, 1);
    /* binning on a host whose binning was measured: at that rate (a counting sort's scattered
     * counters and stores, which sim/cost.c's streaming count prices at half its time or less) */
    if (w->kind == DEM_WORK_BINNING && h->binning_rate > 0.0)
      return sim_membus_run(h, w->particles / h->binning_rate * h->core_flops, 1, 0.0, h->core_bw, 1);
    /* the store's permutation on a host whose permutation was measured: its bytes at that rate */
    if (w->kind == DEM_WORK_PERMUTE && h->permute_bw > 0.0)
      return sim_membus_run(h, w->bytes / h->permute_bw * h->core_flops, 1, 0.0, h->core_bw, 1);
    if (first_touch(h, c.fresh)) return -1;
    return sim_membus_run(h, cpu_flops(h, &c), 1, cpu_traffic(h, &c), h->core_bw, sim_cost_streaming(&c));
  case SIM_ON_LINK:
    if (h->device == SIM_DEVICE_GPU) return pass(sim_gpu_copy_time(h, c.bytes));
    return pass(h->launch_latency);
  case SIM_ON_STORAGE:
    if (!(h->storage_bw > 0.0)) return -1; /* the platform gives none: the caller names the property */
    return pass(c.bytes / h->storage_bw);
  case SIM_ON_OS:
    return first_touch(h, c.fresh);
  }
  return -1;
}

/* smpi_helpers.h maps clock_gettime to simulated time; the wall clock needs the real one */
#ifdef clock_gettime
#undef clock_gettime
#endif
/* the transfers of the wait in progress (dem_clock_moved): each direction's seconds on its routes'
 * narrowest links */
static double moved_out, moved_in;

/* each peer host's route bandwidth from this host, looked up once: the migration records every
 * particle it packs */
enum { ROUTES_KEPT = 64 };
static struct { char name[128]; double bw; } route_kept[ROUTES_KEPT];
static int n_route_kept;

static double route_bandwidth(const char *peer)
{
  for (int i = 0; i < n_route_kept; i++)
    if (strcmp(route_kept[i].name, peer) == 0) return route_kept[i].bw;
  sg_host_t h = sg_host_by_name(peer);
  double bw = -1.0, lat = 0.0;
  if (h && h != sg_host_self()) sim_route_figures(sg_host_self(), h, &bw, &lat);
  if (n_route_kept < ROUTES_KEPT && strlen(peer) < sizeof route_kept[0].name) {
    snprintf(route_kept[n_route_kept].name, sizeof route_kept[0].name, "%s", peer);
    route_kept[n_route_kept++].bw = bw;
  }
  return bw;
}

void dem_clock_moved(const char *peer, double bytes, int sending)
{
  if (!ready || !peer || !(bytes > 0.0)) return;
  double bw = route_bandwidth(peer);
  if (!(bw > 0.0)) return;
  *(sending ? &moved_out : &moved_in) += bytes / bw;
}

void dem_clock_blocked(double seconds)
{
  double wire = fmax(moved_out, moved_in);
  moved_out = moved_in = 0.0;
  if (!(seconds > 0.0) || !ready) return;
  /* the wait's progress needs the container running: a stress neighbour's share stretches it; a
   * quota lets it run only in its duty cycle, from when the wait began, but for the transfers'
   * time on the wire, which goes on while it is throttled */
  double s = sim_membus_rate(&self), now = simgrid_get_clock();
  if (!self.quota) {
    if (s < 1.0) sg_actor_sleep_for(seconds * (1.0 / s - 1.0));
    return;
  }
  double end = sim_quota_end(self.quota, now - seconds, fmax(seconds - wire, 0.0) / s);
  if (end > now) sg_actor_sleep_until(end);
}

void dem_clock_synced(void)
{
  if (!ready || !self.quota) return;
  double now = simgrid_get_clock(), seen = sim_quota_seen(self.quota, now);
  if (seen > now) sg_actor_sleep_until(seen);
}

int dem_clock_modelled(void) { return 1; }

double dem_clock_now(void) { return simgrid_get_clock(); }

double dem_clock_wall(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *dem_clock_where(void)
{
  if (!ready) dem_clock_init(NULL, 0);
  return where;
}

const char *dem_clock_host(void) { return sg_host_self_get_name(); }
