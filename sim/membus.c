/* Memory-bandwidth contention done by SimGrid itself (DESIGN.md, "Memory-bandwidth contention").
 *
 * A piece of work on container C of node N is its compute, then its memory traffic:
 *  - the flops on C's own host. A SimGrid execution uses at most one core of its host, so the
 *    flops are divided by the cores the work is spread over (the container's cores are pinned);
 *  - then the traffic on the `N-membus` host (speed = the node's bandwidth in B/s), as one flow
 *    per core. A DRAM controller serves outstanding misses, and each core has its own: under
 *    saturation a flow's share follows its cores, which SimGrid's max-min sharing gives when each
 *    core is a flow. Every rank and every stress worker of the node puts its flows on that host.
 *  - Loaded latency: one core's bandwidth is its outstanding lines over the DRAM latency
 *    (Little's law), and the latency grows with the bus's utilisation (the node's
 *    `loaded_latency` curve). `core_bw` is measured on an idle node, so it already carries the
 *    latency a core's own traffic causes; the other flows' utilisation, read from the bus when
 *    the work starts, divides it by the curve's factor. So gather-heavy work slows beside a
 *    memory hog before the bus is full.
 * Compute and traffic add up rather than overlap: the DEM kernels load through indices and
 * branch per neighbour, so their misses stall the cores (validation/REPORT.md's hardware check
 * measured both regimes against this). */
#include "membus.h"

#include "host.h"

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

enum { MAX_FLOWS = 64 };

static double min2(double a, double b) { return a < b ? a : b; }

int sim_membus_run(const struct sim_host *h, double flops, int cores, double traffic,
                   double core_bw)
{
  if (cores < 1) cores = 1;
  if (cores > MAX_FLOWS) cores = MAX_FLOWS;
  int rc = 0;
  if (flops > 0.0) {
    sg_exec_t cpu = sg_actor_exec_init(flops / cores);
    sg_exec_start(cpu);
    if (sg_exec_wait(cpu) != SG_OK) rc = -1;
  }
  if (!(traffic > 0.0)) return rc;
  sg_host_t bus = sg_host_by_name(h->membus);
  if (!bus) return -1;
  double u = sg_host_get_load(bus) / sg_host_get_speed(bus);
  double bound = core_bw / sim_host_latency_factor(h, u);
  sg_exec_t mem[MAX_FLOWS];
  for (int i = 0; i < cores; i++) {
    mem[i] = sg_actor_exec_init(traffic / cores);
    sg_exec_set_host(mem[i], bus);
    sg_exec_set_bound(mem[i], bound);
    sg_exec_start(mem[i]);
  }
  for (int i = 0; i < cores; i++)
    if (sg_exec_wait(mem[i]) != SG_OK) rc = -1;
  return rc;
}

double sim_membus_time(const struct sim_host *h, double flops, int cores, double traffic,
                       double core_bw, double u)
{
  if (cores < 1) cores = 1;
  double bw = min2(cores * core_bw / sim_host_latency_factor(h, u), h->node_bw);
  return flops / (cores * h->core_flops) + (traffic > 0.0 ? traffic / bw : 0.0);
}
