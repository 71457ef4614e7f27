/* Memory-bandwidth contention done by SimGrid itself (DESIGN.md, "Memory-bandwidth contention").
 *
 * A piece of work on container C of node N is its compute and its memory traffic:
 *  - the flops on C's own host. A SimGrid execution uses at most one core of its host, so the
 *    flops are divided by the cores the work is spread over (the container's cores are pinned);
 *  - the traffic on the `N-membus` host (speed = the node's bandwidth in B/s), as one flow
 *    per core. A DRAM controller serves outstanding misses, and each core has its own: under
 *    saturation a flow's share follows its cores, which SimGrid's max-min sharing gives when each
 *    core is a flow. Every rank and every stress worker of the node puts its flows on that host.
 *  - Loaded latency: one core's bandwidth is its outstanding lines over the DRAM latency
 *    (Little's law), and the latency grows with the bus's utilisation (the node's
 *    `loaded_latency` curve). `core_bw` is measured on an idle node, so it already carries the
 *    latency a core's own traffic causes; the other flows' utilisation, read from the bus when
 *    the work starts, divides it by the curve's factor. So gather-heavy work slows beside a
 *    memory hog before the bus is full.
 * Compute and traffic overlap only in streaming work: a piece that loads nothing through an
 * index (no gathers: the integrators, the external forces, binning, packing) reads and writes
 * its arrays in order, the cores' prefetchers fetch the lines ahead of the arithmetic, and it
 * takes the larger of its compute and its traffic (roofline); its compute and its flows run
 * side by side. A piece with gathers (the force kernels, the search) waits for each partner's
 * line before the arithmetic that uses it, so its compute and its traffic add up. Both were
 * measured on this project's kernels (BENCHMARKS-history.md, "The hardware check after the kernel
 * changes": kick_drift ran in about the larger of the two; the contact kernel slowed beside
 * stress-ng --vm as the sum predicts).
 * A container with part of its cores' time:
 *  - the threads of stress workers on its cores (sim/stress.c) time-share them with the rank:
 *    the scheduler's slices (milliseconds) are short beside a kernel, so the work runs at
 *    s = cores / (cores + threads) of its rate: its flops 1/s as many, each flow bounded by s of
 *    its rate, spread over the kernel (the other containers' kernels see the bus as loaded on
 *    average);
 *  - a CFS quota (cpu_share, cpu_period, cpu_tick: sim/quota.h) is a schedule of runs from each
 *    period's start, which can be as long as a step (the rank's clock keeps it, h->quota): the
 *    work runs at its rate (times the stress share), then the rank is held until the container
 *    has run that long since the work began (sim_quota_end). In its windows the work runs at
 *    cpu_quota_efficiency of its rate, measured on the host (sim/host.h). Not modelled:
 *    its flows leave the bus in the throttled part of the period (here they run in a burst and
 *    the bus is free while the rank is held). */
#include "membus.h"

#include "host.h"
#include "noise_sg.h"
#include "quota.h"
#include "stress.h"

#include <simgrid/actor.h>
#include <simgrid/engine.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

enum { MAX_FLOWS = 64 };

static double min2(double a, double b) { return a < b ? a : b; }

int sim_membus_quota(const struct sim_host *h)
{
  return h->cpu_share > 0.0 && h->cpu_share < 1.0 && h->cpu_period > 0.0;
}

double sim_membus_rate(const struct sim_host *h)
{
  int threads = sim_stress_sharing(h->name), cores = h->cores > 0 ? h->cores : 1;
  return (double)cores / (cores + threads);
}

/* the work's rate in its quota's windows over its free rate (1 without a quota) */
static double quota_efficiency(const struct sim_host *h)
{
  return sim_membus_quota(h) && h->cpu_quota_efficiency > 0.0 ? h->cpu_quota_efficiency : 1.0;
}

double sim_membus_share(const struct sim_host *h)
{
  return (sim_membus_quota(h) ? h->cpu_share : 1.0) * quota_efficiency(h) * sim_membus_rate(h);
}

/* the work's compute and flows at s of the container's rate */
static int run_work(const struct sim_host *h, double flops, int cores, double traffic, double core_bw,
                    int overlap, double s)
{
  int rc = 0;
  sg_exec_t cpu = NULL;
  if (flops > 0.0) {
    cpu = sg_actor_exec_init(flops / (cores * s));
    sg_exec_start(cpu);
    if (!(overlap && traffic > 0.0)) {
      if (sg_exec_wait(cpu) != SG_OK) rc = -1;
      cpu = NULL;
    }
  }
  if (!(traffic > 0.0)) return rc;
  sg_host_t bus = sg_host_by_name(h->membus);
  if (!bus) {
    if (cpu) sg_exec_wait(cpu);
    return -1;
  }
  double u = sg_host_get_load(bus) / sg_host_get_speed(bus);
  double bound = s * core_bw / sim_host_latency_factor(h, u);
  /* noise.cpu_memory: the container's speed factor now (held for the piece: the profile's steps,
   * noise.dt, are longer than most pieces) slows its streams as its arithmetic */
  sg_host_t self = sg_host_self();
  if (sg_host_get_property_value(self, SIM_NOISE_MEMORY)) bound *= sg_host_get_available_speed(self);
  sg_exec_t mem[MAX_FLOWS];
  for (int i = 0; i < cores; i++) {
    mem[i] = sg_actor_exec_init(traffic / cores);
    sg_exec_set_host(mem[i], bus);
    sg_exec_set_bound(mem[i], bound);
    sg_exec_start(mem[i]);
  }
  for (int i = 0; i < cores; i++)
    if (sg_exec_wait(mem[i]) != SG_OK) rc = -1;
  if (cpu && sg_exec_wait(cpu) != SG_OK) rc = -1;
  return rc;
}

/* work that ran from `start` until now at the container's rate: held until its quota has let it
 * run that long (nothing without a quota) */
static void hold_for_quota(const struct sim_host *h, double start)
{
  if (!sim_membus_quota(h)) return;
  /* a host read without its rank's schedule: the quota's own duty cycle (no tick) */
  sim_quota_t flat, *q = h->quota;
  if (!q && sim_quota_init(q = &flat, h->cpu_share, h->cpu_period, 0.0, 0.0)) return;
  double now = simgrid_get_clock(), end = sim_quota_end(q, start, now - start);
  if (end > now) sg_actor_sleep_until(end);
}

int sim_membus_run(const struct sim_host *h, double flops, int cores, double traffic,
                   double core_bw, int overlap)
{
  if (cores < 1) cores = 1;
  if (cores > MAX_FLOWS) cores = MAX_FLOWS;
  double s = sim_membus_rate(h) * quota_efficiency(h), start = simgrid_get_clock();
  int rc = run_work(h, flops, cores, traffic, core_bw, overlap, s);
  hold_for_quota(h, start);
  return rc;
}

double sim_membus_time(const struct sim_host *h, double flops, int cores, double traffic,
                       double core_bw, double u, int overlap)
{
  if (cores < 1) cores = 1;
  double bw = min2(cores * core_bw / sim_host_latency_factor(h, u), h->node_bw);
  double t_flop = flops / (cores * h->core_flops), t_mem = traffic > 0.0 ? traffic / bw : 0.0;
  double t = overlap ? (t_flop > t_mem ? t_flop : t_mem) : t_flop + t_mem;
  return t / sim_membus_share(h);
}
