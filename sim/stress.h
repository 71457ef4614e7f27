/* Co-located load (the study's stress-ng runs) as SimGrid daemon actors. */
#ifndef DEMSIM_SIM_STRESS_H
#define DEMSIM_SIM_STRESS_H

#include "base/clock.h"

#include <stddef.h>

/* Starts s->workers daemon actors on container s->host. Times in *s are counted from now.
 * Returns 0, or -1 with a message naming the stress entry's host and what is wrong. */
int sim_stress_start(const dem_stress_t *s, char *err, size_t errlen);

/* How many stress workers' threads run on `host`'s cores now (those of stress containers that
 * share its cores, property shares_cores_with, while their stress is on); 0 for an unknown host. */
int sim_stress_sharing(const char *host);

#endif
