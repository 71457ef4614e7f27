/* demsim-routes: what the platform says about the network and the cores between a scenario's
 * containers, for the native build's emulator (`demsim run --emulate`, solver/run/emulator.h),
 * which shapes each pair of containers' traffic with tc and gives each container its cores.
 * The routes come from SimGrid itself (the route it would use in a simulation), not from the
 * XML read by hand: routing (Floyd, Full, clusters, zones) is SimGrid's to compute.
 *
 *   demsim-routes PLATFORM HOST...          one line per ordered pair a != b:
 *                                           "a b bandwidth_Bps latency_s"
 *   demsim-routes --cores PLATFORM HOST...  one line per host: "host cores share period"
 *
 * bandwidth: the smallest bandwidth of the route's links (B/s); latency: the sum of their
 * latencies (s, one way). cores: the host's core count; share: its optional `cpu_share`
 * property (the fraction of each core's time the container gets, as a CFS quota; 1 when absent);
 * period: its optional `cpu_period` (s, the quota's period; SIM_CFS_PERIOD when absent). A host
 * missing from the platform exits with 2. */
#include "host.h"
#include "route.h"

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <smpi/smpi.h>
#include <simgrid/link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xbt/dynar.h>

static void print_cores(sg_host_t h)
{
  const char *share = sg_host_get_property_value(h, "cpu_share");
  const char *period = sg_host_get_property_value(h, "cpu_period");
  double s = share ? strtod(share, NULL) : 1.0, p = period ? strtod(period, NULL) : SIM_CFS_PERIOD;
  printf("%s %d %.6g %.6g\n", sg_host_get_name(h), sg_host_core_count(h), s > 0 && s <= 1 ? s : 1.0,
         p > 0 ? p : SIM_CFS_PERIOD);
}

int main(int argc, char **argv)
{
  int cores = argc > 1 && strcmp(argv[1], "--cores") == 0, first = 1 + cores;
  if (argc < first + 2) {
    fprintf(stderr, "usage: demsim-routes [--cores] PLATFORM HOST...\n");
    return 2;
  }
  int sg_argc = 2;
  char *sg_argv[] = {"demsim-routes", "--log=root.thres:critical", NULL};
  simgrid_init(&sg_argc, sg_argv);
  smpi_init_options(); /* a platform's <config> may set SMPI's own options (smpi/os, smpi/or) */
  simgrid_load_platform(argv[first]);
  simgrid_run(); /* no actors: returns at once, with the platform sealed (Floyd computes its routes then) */
  int n = argc - first - 1;
  char **names = argv + first + 1;
  for (int i = 0; i < n; i++)
    if (!sg_host_by_name(names[i])) {
      fprintf(stderr, "demsim-routes: \"%s\" is not a host of %s\n", names[i], argv[first]);
      return 2;
    }
  for (int i = 0; i < n; i++) {
    if (cores) {
      print_cores(sg_host_by_name(names[i]));
      continue;
    }
    for (int j = 0; j < n; j++) {
      if (i == j) continue;
      double bw, lat;
      sim_route_figures(sg_host_by_name(names[i]), sg_host_by_name(names[j]), &bw, &lat);
      printf("%s %s %.9g %.9g\n", names[i], names[j], bw, lat);
    }
  }
  return 0;
}
