/* Process-wide named slots, seen alike by every MPI rank that runs in this process.
 *
 * Under SMPI all simulated ranks run in one OS process, and SMPI gives each rank a private
 * copy of the application's globals: a `static` in the solver is per rank. Some resources are
 * worth having once per process instead (the OpenCL context and the program built for it: see
 * device.c). In the SMPI build this module is a small shared library of its own, outside the
 * privatisation, so its table is the process's; in the native build (one rank per process)
 * it is part of the solver and holds the same things for the one rank.
 *
 * A slot holds one pointer, NULL until set. Callers hold the lock while they look up, create
 * or drop what a slot points to (ranks may run on several OS threads when SimGrid is asked
 * to). */
#ifndef DEMSIM_BASE_SHARE_H
#define DEMSIM_BASE_SHARE_H

void dem_share_lock(void);
void dem_share_unlock(void);
/* The slot called `name` (at most 31 characters), created empty on first use; NULL when
 * the table is full (the caller then keeps its resources to itself). Call under the lock. */
void **dem_share_slot(const char *name);

#endif
