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
 * A container with part s of its cores' time (sim_membus_share: a CFS quota, cpu_share, and the
 * threads of stress workers on its cores, sim/stress.c) does its work at s of its rate: its
 * flops are 1/s as many, each flow bounded by s of its rate. The scheduler's periods
 * (milliseconds) are short beside a kernel, so on average the work runs a fraction s of the time,
 * its flows on the bus too, spread over the kernel (not in bursts: the other containers' kernels
 * see the bus as loaded on average). Not modelled: a throttled container whose own flows fill
 * the bus (several cores of it streaming) gets the whole bus at s of its rate here, where the
 * quota would leave it the bus s of the time. */
#include "membus.h"

#include "host.h"
#include "stress.h"

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

enum { MAX_FLOWS = 64 };

static double min2(double a, double b) { return a < b ? a : b; }

double sim_membus_share(const struct sim_host *h)
{
  double quota = h->cpu_share > 0.0 && h->cpu_share < 1.0 ? h->cpu_share : 1.0;
  int threads = sim_stress_sharing(h->name), cores = h->cores > 0 ? h->cores : 1;
  return quota * cores / (cores + threads);
}

int sim_membus_run(const struct sim_host *h, double flops, int cores, double traffic,
                   double core_bw, int overlap)
{
  if (cores < 1) cores = 1;
  if (cores > MAX_FLOWS) cores = MAX_FLOWS;
  double s = sim_membus_share(h);
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

double sim_membus_time(const struct sim_host *h, double flops, int cores, double traffic,
                       double core_bw, double u, int overlap)
{
  if (cores < 1) cores = 1;
  double bw = min2(cores * core_bw / sim_host_latency_factor(h, u), h->node_bw);
  double t_flop = flops / (cores * h->core_flops), t_mem = traffic > 0.0 ? traffic / bw : 0.0;
  double t = overlap ? (t_flop > t_mem ? t_flop : t_mem) : t_flop + t_mem;
  return t / sim_membus_share(h);
}
