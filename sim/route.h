/* A route between two hosts as SimGrid computes it (Floyd, Full, clusters, zones: SimGrid's
 * routing, not the XML read by hand). */
#ifndef DEMSIM_SIM_ROUTE_H
#define DEMSIM_SIM_ROUTE_H

#include <simgrid/host.h>

/* The route from a to b: its narrowest link's bandwidth (B/s; -1 when it has no link, a host to
 * itself) and its links' summed latency (s, one way). */
void sim_route_figures(sg_host_t a, sg_host_t b, double *bandwidth, double *latency);

#endif
