/* The C heap under SMPI: all simulated ranks are one Linux process, so they share glibc's
 * malloc, whose defaults are tuned for one program.
 *
 * glibc serves a block of at least M_MMAP_THRESHOLD bytes (128 KiB) with its own mmap and
 * unmaps it on free, but raises the threshold to the size of every such block freed, up to
 * 32 MiB. After the first repartition frees Zoltan_Migrate's buffers and the stores' old
 * arrays, every large block (migration buffers, store arrays, ghost and output buffers of 64
 * ranks) comes from the shared brk heap instead, and the holes each rank leaves there as it
 * grows, frees and reallocates stay resident: about 100 MB of free heap pages at 500,000
 * particles on 64 ranks, about nothing on one. Fixing the threshold (mallopt turns its
 * adaptation off) keeps large blocks in their own mappings, returned to the system when freed.
 * Results do not change: only where the bytes live.
 *
 * Not in the native build: there every rank is its own process, with one store of its own. */
#include "heap.h"

/* smpicc puts SMPI's malloc macros in front of every file, and <malloc.h> declares malloc
 * itself: this file allocates nothing, so it drops them */
#undef malloc
#undef calloc
#undef realloc
#undef free
#include <malloc.h>

/* glibc's default, held fixed */
#define SIM_HEAP_MMAP_THRESHOLD (128 * 1024)

void sim_heap_init(void)
{
  /* every rank calls this; a second mallopt with the same value changes nothing */
  mallopt(M_MMAP_THRESHOLD, SIM_HEAP_MMAP_THRESHOLD);
}
