/* See route.h. */
#include "route.h"

#include <simgrid/link.h>
#include <xbt/dynar.h>

void sim_route_figures(sg_host_t a, sg_host_t b, double *bandwidth, double *latency)
{
  xbt_dynar_t links = xbt_dynar_new(sizeof(sg_link_t), NULL);
  sg_host_get_route(a, b, links);
  double bw = -1, lat = 0;
  unsigned int i;
  sg_link_t link;
  xbt_dynar_foreach (links, i, link) {
    double lbw = sg_link_get_bandwidth(link);
    if (bw < 0 || lbw < bw) bw = lbw;
    lat += sg_link_get_latency(link);
  }
  xbt_dynar_free(&links);
  *bandwidth = bw;
  *latency = lat;
}
