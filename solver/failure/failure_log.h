/* The record of a run's container losses, DIR/failures.txt: one event a line, appended as it
 * happens, so that the launcher knows which container was lost and from which step to restart,
 * and the attempt that finishes can account for the time of the earlier ones. Plain text, no MPI:
 * the launcher reads it too.
 *   job T0                  the time line's origin (native build: seconds of the real-time clock)
 *   attempt K start S loop L ranks N
 *                           attempt K (0: the first launch) started at S and began its time loop
 *                           at L, on the run's time line
 *   checkpoint K step S at T cost C
 *                           a checkpoint of step S complete at T; writing it took C s
 *   failure K host H at T step S checkpoint_step C written W kept_until U
 *                           container H lost at T while attempt K was at step S; the last
 *                           checkpoint is of step C (W = 1: DIR/checkpoint.h5 holds it; 0: the
 *                           state the attempt started from); the work up to U was checkpointed */
#ifndef DEMSIM_FAILURE_FAILURE_LOG_H
#define DEMSIM_FAILURE_FAILURE_LOG_H

#include <stddef.h>

#define DEM_FAILURE_MAX 64

typedef struct dem_failure_loss {
  int attempt;
  char host[64];
  double at;            /* s, time line */
  long step;            /* step reached when the loss was detected */
  long checkpoint_step; /* step to restart from */
  int written;          /* 1: DIR/checkpoint.h5 holds checkpoint_step */
  double kept_until;    /* s, time line: end of the last checkpoint (or the loop start) */
} dem_failure_loss_t;

typedef struct dem_failure_log {
  double job_t0;
  int n_attempts;
  struct { double start, loop; int ranks; } attempt[DEM_FAILURE_MAX];
  int n_losses;
  dem_failure_loss_t loss[DEM_FAILURE_MAX];
  int n_checkpoints;
  double checkpoint_s;  /* s, writing them all */
} dem_failure_log_t;

/* DIR/failures.txt */
void dem_failure_log_path(const char *dir, char *path, size_t len);
/* Reads the record. 0, or -1 when there is none or it cannot be read. */
int dem_failure_log_read(const char *dir, dem_failure_log_t *log);
/* Starts a new record with its first line ("job T0"). 0 or -1. */
int dem_failure_log_start(const char *dir, double job_t0);
/* Appends one line (printf format, without the newline). 0 or -1. */
int dem_failure_log_append(const char *dir, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The loss that ended attempt K, or NULL. */
const dem_failure_loss_t *dem_failure_log_loss(const dem_failure_log_t *log, int attempt);

#endif
