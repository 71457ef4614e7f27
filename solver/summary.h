/* DIR/summary.json: what was simulated and how long it took (the only module using jansson). */
#ifndef DEMSIM_SOLVER_SUMMARY_H
#define DEMSIM_SOLVER_SUMMARY_H

#include <stddef.h>

struct dem_sim;

typedef struct dem_summary_rank {
  int rank;
  char host[64];
  char processor[64];            /* MPI_Get_processor_name (the SimGrid host under SMPI) */
  char cpus[64];                 /* CPUs of the rank's affinity mask ("0", "0-1") */
  double load_s, wait_s, comm_s; /* s, summed over the run */
  double weight;
  long particles;                /* owned at the end */
  long ghosts;
} dem_summary_rank_t;

/* Writes path atomically (temporary file + rename). `ranks` has sim->ranks entries. Rank 0 only. */
int dem_summary_write(const char *path, const struct dem_sim *sim, const dem_summary_rank_t *ranks, char *err,
                      size_t errlen);

#endif
