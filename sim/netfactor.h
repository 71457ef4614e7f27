/* SMPI's latency factor applied to the LAN part of a route only: links with the property
 * wide_area = "1" (the WAN links of platforms/make_platforms.py) keep their latency as given.
 * netfactor.cpp explains why. The factor's table is the platform's root zone property lat_factor
 * ("SIZE:FACTOR;..." as smpi/lat-factor, which SMPI does not accept beside the callback) where it
 * has one, else smpi/lat-factor. */
#ifndef DEMSIM_SIM_NETFACTOR_H
#define DEMSIM_SIM_NETFACTOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Installs the route-aware factor in SimGrid's network model (once per process; later calls do
 * nothing). 0, or -1 with a message (smpi/lat-factor unreadable). */
int sim_netfactor_install(char *err, size_t errlen);
/* The factor for a message of `size` bytes (the table as read by the install). */
double sim_netfactor_smpi(double size);
/* The MPI stack's time (s) for a message of `size` bytes beyond SMPI's overheads: the band of the
 * root zone's property stack_time ("SIZE:BASE:PER_BYTE;...": above SIZE, BASE + PER_BYTE x size)
 * that holds it, 0 below the first or without the property (as read by the install). The factor
 * of a route of latency L > 0 is raised by it over L. */
double sim_netfactor_stack(double size);
/* The factor of a route whose LAN links add up to lan_latency and whose wide-area links to
 * wan_latency (s): f(size) x lan + wan over lan + wan; SMPI's own factor without a WAN. */
double sim_netfactor_route(double size, double lan_latency, double wan_latency);

#ifdef __cplusplus
}
#endif

#endif
