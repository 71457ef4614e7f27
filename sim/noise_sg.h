/* The noise model applied to the platform (noise_sg.cpp; the generator is noise.h). */
#ifndef DEMSIM_SIM_NOISE_SG_H
#define DEMSIM_SIM_NOISE_SG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct dem_noise;
/* Speed profiles on every container host (a host with the property `membus`: noise.cpu_*) and
 * on every memory-bus host it names (noise.mem_*), and every link's bandwidth (noise.net_*),
 * each from its own stream (noise.h). Call once, from one actor, before the resources are used
 * (SimGrid accepts a host's speed profile at run time, but not a link's bandwidth profile once the
 * platform is sealed: a daemon actor sets each link's bandwidth at every time step instead, which
 * needs --cfg=network/optim:Full, as the launcher gives when noise.net_cv > 0: the lazy network
 * model ignores a bandwidth raised at run time). 0, or -1 with a message. */
int sim_noise_apply(const struct dem_noise *n, char *err, size_t errlen);
/* The container-host property sim_noise_apply sets with noise.cpu_memory: the host's speed factor
 * (its profile's value when a piece of work starts) also bounds its memory streams (membus.c). */
#define SIM_NOISE_MEMORY "noise_memory"
/* The number of time steps of a profile: horizon / dt, at least 1. */
size_t sim_noise_steps(double dt, double horizon);

#ifdef __cplusplus
}
#endif

#endif
