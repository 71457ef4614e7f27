/* The one C heap that every simulated rank of an SMPI run shares (see heap.c). */
#ifndef DEMSIM_SIM_HEAP_H
#define DEMSIM_SIM_HEAP_H

/* Sets the process's allocator up for many ranks in one heap. Idempotent: every rank calls it,
 * the first call does the work. */
void sim_heap_init(void);

#endif
