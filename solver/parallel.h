/* The only module that calls MPI (as CoMD's parallel.c): ranks, reductions, gathers and the
 * point-to-point exchange used by the ghosts. Everything else sees plain C types. Under SMPI
 * dem_parallel_wtime() is simulated time, so every timer built on it measures the modelled
 * hardware. */
#ifndef DEMSIM_SOLVER_PARALLEL_H
#define DEMSIM_SOLVER_PARALLEL_H

#include <stddef.h>

int dem_parallel_init(int *argc, char ***argv);
void dem_parallel_finalize(void);
void dem_parallel_abort(int code);
int dem_parallel_rank(void);
int dem_parallel_size(void);
double dem_parallel_wtime(void);
void dem_parallel_barrier(void);
/* In-place reductions over all ranks. */
void dem_parallel_sum_double(double *v, int n);
void dem_parallel_max_double(double *v, int n);
void dem_parallel_min_double(double *v, int n);
void dem_parallel_sum_long(long *v, int n);
void dem_parallel_max_int(int *v, int n);
/* Gathers n doubles from every rank into out (size n * ranks) on root. */
void dem_parallel_gather_double(const double *in, int n, double *out, int root);
/* Gathers a variable number of bytes from every rank into out on root; counts (bytes per rank)
 * and out must be large enough on root (use dem_parallel_gather_counts first). */
void dem_parallel_gather_counts(long mine, long *counts, int root);
void dem_parallel_gatherv_bytes(const void *in, long n, void *out, const long *counts, int root);
void dem_parallel_bcast(void *buf, long bytes, int root);
/* The name of the processor (the SimGrid host under SMPI). */
void dem_parallel_processor_name(char *buf, size_t len);

#endif
