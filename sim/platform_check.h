/* Checks a platform before a run is launched: the file loads in SimGrid, every container a
 * rank or a stress runs on exists and carries the properties sim/ needs. Used by the
 * launcher, so that a bad platform is bad input (exit status 2) rather than a crash inside
 * smpirun. SimGrid stops the process on a malformed file, so the check runs in a child. */
#ifndef DEMSIM_SIM_PLATFORM_CHECK_H
#define DEMSIM_SIM_PLATFORM_CHECK_H

#include <stddef.h>

/* 0, or -1 with a message naming the file and the host/property at fault. server: the
 * device server's container (device.server), or NULL. */
int sim_platform_check(const char *platform, const char (*hosts)[64], int n_hosts, const char *server,
                       const char (*stress)[64], int n_stress, char *err, size_t errlen);

#endif
