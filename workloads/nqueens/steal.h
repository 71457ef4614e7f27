/* Work stealing over MPI for the N-queens search: per-rank deque, random (RWS) or cluster-aware
 * random (CRWS) stealing, Dijkstra-Safra termination detection. The only file that calls MPI,
 * apart from nqueens.c's start-up and report. */
#ifndef DEMSIM_NQUEENS_STEAL_H
#define DEMSIM_NQUEENS_STEAL_H

#include <stdint.h>

typedef enum { NQ_RWS = 0, NQ_CRWS = 1 } nq_strategy_t;

typedef struct {
  int n;                  /* board size */
  int threshold;          /* tasks shallower than this are expanded, deeper ones solved */
  nq_strategy_t strategy;
  int payload;            /* bytes added to every task message (a job's parameters), B */
  uint64_t seed;          /* victim choice */
  const int *site;        /* site of every rank */
} nq_config_t;

/* What one rank did; doubles so that rank 0 gathers them in one call. */
typedef struct {
  double solutions;
  double tasks;            /* tasks run (expanded or solved) */
  double nodes;            /* placements tried by the sequential solver */
  double steal_local;      /* steal requests sent to a rank of the same site */
  double steal_local_ok;   /* ... answered with a task */
  double steal_wide;       /* steal requests sent to another site */
  double steal_wide_ok;
  double wide_inflight_max; /* most wide-area steal requests outstanding at once */
  double bytes_sent;       /* B, every message this rank sent */
  double messages_sent;
  double busy;             /* s (MPI_Wtime: simulated under SMPI) spent in tasks */
  double last_task_end;    /* s, MPI_Wtime when this rank's last task ended (0: none) */
} nq_stats_t;

#define NQ_STATS_FIELDS (sizeof(nq_stats_t) / sizeof(double))

/* Runs the whole search on every rank of MPI_COMM_WORLD (rank 0 holds the root task).
 * Returns 0, or -1 on an MPI or memory failure (message printed). */
int nq_steal_run(const nq_config_t *cfg, nq_stats_t *stats);

#endif
