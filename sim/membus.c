/* Memory-bandwidth contention done by SimGrid itself (DESIGN.md, "Memory-bandwidth contention").
 *
 * A kernel on container C of node N is two activities, started together and both waited for:
 *  - its flops on C's own host. A SimGrid execution uses at most one core of its host, so the
 *    flops are divided by the cores the work is spread over: flops/cores at one core's speed takes
 *    as long as flops at cores x speed, and the container's cores are pinned (nothing else of
 *    this rank runs on them while the kernel does);
 *  - its bytes on the `N-membus` host (speed = the node's bandwidth in B/s), bounded by what
 *    the cores can draw. Every rank and every stress worker of the node puts its traffic on that
 *    one host, and SimGrid's max-min solver shares its speed among them, each flow capped by its
 *    bound.
 * The kernel takes the longer of the two: a roofline whose memory term is contended.
 * Two activities per call keep 10,000 steps x 5 kernels x ranks affordable. */
#include "membus.h"

#include "host.h"

#include <simgrid/actor.h>
#include <simgrid/exec.h>
#include <simgrid/host.h>

int sim_membus_run(const struct sim_host *h, double flops, int cores, double bytes,
                   double bw_bound)
{
  sg_exec_t act[2];
  int n = 0;
  if (flops > 0.0) act[n++] = sg_actor_exec_init(flops / (cores > 0 ? cores : 1));
  if (bytes > 0.0) {
    sg_host_t bus = sg_host_by_name(h->membus);
    if (!bus) return -1;
    sg_exec_t mem = sg_actor_exec_init(bytes);
    sg_exec_set_host(mem, bus);
    sg_exec_set_bound(mem, bw_bound);
    act[n++] = mem;
  }
  for (int i = 0; i < n; i++) sg_exec_start(act[i]);
  int rc = 0;
  for (int i = 0; i < n; i++)
    if (sg_exec_wait(act[i]) != SG_OK) rc = -1;
  return rc;
}
