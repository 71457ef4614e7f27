/* Numerical safety: NaN/inf, particles outside the box and overlaps beyond a fraction of the
 * radius stop the run with a message naming the particle, the step and the likely cause. */
#ifndef DEMSIM_RUN_SAFETY_H
#define DEMSIM_RUN_SAFETY_H

#include <stddef.h>

struct dem_sim;

/* Collective. Checks the owned particles (host arrays must be current: pull first).
 * Returns 0, or -1 on every rank with the message (naming the lowest bad particle id) in err
 * on rank 0 and a short pointer to it elsewhere. */
int dem_safety_check(struct dem_sim *sim, double overlap_limit, char *err, size_t errlen);

#endif
