/* A container lost mid-run (scenario keys failure.*; scenarios/README.md).
 *
 * The run's time line starts with the first launch and runs through every restart: simulated
 * time under SMPI (each restart begins failure.restart_latency after the loss), the real-time
 * clock in the native build (the restart's latency is what it really took). At each step
 * boundary rank 0 compares the time line with the next loss (failure.at, or drawn from
 * failure.mtbf) and tells every rank; then the run stops as a real one stops (see
 * dem_failure_strike), the launcher restarts it from the last checkpoint on the surviving
 * containers, one rank fewer, with a new partition, and the attempt that finishes writes the
 * accounting into summary.json. */
#ifndef DEMSIM_FAILURE_FAILURE_H
#define DEMSIM_FAILURE_FAILURE_H

#include <stddef.h>

#include "failure/failure_log.h"

struct dem_scenario;

/* The time of a run with losses, split into its parts (s): total = setup + kept + recompute +
 * restart_latency + restart_setup. */
typedef struct dem_failure_account {
  int losses;
  double setup;            /* the first launch's set-up */
  double kept;             /* time loops whose work was kept (checkpointed, or the last attempt's) */
  double recompute;        /* time loops lost: from the last checkpoint to each loss */
  double restart_latency;  /* detecting each loss and launching again */
  double restart_setup;    /* each restart's set-up: reading the checkpoint, partitioning */
  double total;            /* the end of the run on its time line */
  int checkpoints;
  double checkpoint_s;     /* writing the checkpoints (inside kept and recompute) */
  const dem_failure_log_t *log; /* the record: the losses */
} dem_failure_account_t;

typedef struct dem_failure dem_failure_t;

/* Collective, at the start of set-up. NULL with a message when the record cannot be written;
 * a run without failure.* gets an inactive object. `attempt`: restarts so far (--attempt). */
dem_failure_t *dem_failure_create(const struct dem_scenario *sc, int attempt, int rank, char *err, size_t errlen);
void dem_failure_destroy(dem_failure_t **f);
/* The time loop begins at `step` (restored from a checkpoint, or 0). */
void dem_failure_loop_start(dem_failure_t *f, long step);
/* Collective: 1 on every rank when the next loss has happened (rank 0's clock decides). */
int dem_failure_due(dem_failure_t *f);
/* A checkpoint of `step` is complete; it took `cost` s. */
void dem_failure_checkpoint_done(dem_failure_t *f, long step, double cost);
/* The loss at the step boundary: records it, then (native) the ranks on the lost container kill
 * themselves and the others wait for mpirun to end them; under SMPI every rank returns
 * DEM_SIM_HOST_FAILED. */
int dem_failure_strike(dem_failure_t *f, long step);
/* Rank 0, at the end of the last attempt: the accounting from the record (0), or -1 when no
 * failure is declared or the record is incomplete. */
int dem_failure_account(dem_failure_t *f, dem_failure_account_t *a);

#endif
