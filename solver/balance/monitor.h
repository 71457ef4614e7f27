/* The speed monitor of report-driven policies (RUPER, policy.h): every rank reports its speed
 * (particles processed per second of its own load) to rank 0 without waiting; rank 0 polls
 * its mailbox at each step boundary and keeps each rank's last speed, work done and the time
 * of the report (dem_clock_now: simulated under SMPI), and decides before each checkpoint
 * (every `every` steps) whether to repartition and with which weights.
 *
 * The decision reaches the other ranks without a collective: rank 0 sends it DECISION_LEAD
 * steps before the checkpoint (monitor.c) and each rank receives it at the checkpoint itself.
 * The step's collective search decision (timestep.c) keeps the ranks within a step of each
 * other, so by then the message has long arrived and the receive does not wait; a per-step test would save nothing
 * (the repartition is collective and has to happen at the same step on every rank anyway), and
 * a broadcast at each checkpoint would make every rank wait for the slowest one there. */
#ifndef DEMSIM_BALANCE_MONITOR_H
#define DEMSIM_BALANCE_MONITOR_H

#include "policy/policy.h"

typedef struct dem_monitor dem_monitor_t;

/* The run's facts the monitor needs. */
typedef struct dem_monitor_run {
  int ranks, rank;
  long every;          /* steps between checkpoints */
  long first, last;    /* the loop's first step (0, or a restart's) and its last */
  double total_work;   /* particle-steps of the whole run (particles x steps) */
} dem_monitor_run_t;

/* The outcome of a checkpoint, the same on every rank. */
typedef struct dem_monitor_decision {
  int have;            /* every rank reported since the last repartition (else the rest is 0) */
  int repartition;
  double lambda;       /* %, imbalance predicted from the reports (loads count_i / speed_i) */
  double t_res, t_min; /* s, predicted time left and the least worth a repartition */
} dem_monitor_decision_t;

/* policy: its from_speeds makes the weights (with its state). NULL when out of memory. */
dem_monitor_t *dem_monitor_create(const dem_policy_t *policy, void *state, const dem_policy_params_t *p,
                                  const dem_monitor_run_t *run);
void dem_monitor_destroy(dem_monitor_t **m);
/* Every step boundary, every rank (step: steps done; compute_s: the COMPUTE timer; particles:
 * this rank's count during the step just done; rep_cost_s: mean measured cost of one
 * repartition, 0 before the first). Reports when this rank's interval is up; on rank 0 also
 * reads the reports that arrived and sends the decision of the next checkpoint when due.
 * 0, or -1 when out of memory. */
int dem_monitor_step(dem_monitor_t *m, long step, double compute_s, long particles, double rep_cost_s);
/* At a checkpoint (step % every == 0), every rank: rank 0's decision, and when it says to
 * repartition, the weights in w and the loads predicted from the reports in loads (s per
 * step, per rank). */
void dem_monitor_decision(dem_monitor_t *m, long step, dem_monitor_decision_t *d, double *w, double *loads);
/* After a repartition at `step`: a report opens at once, at the shortest interval (the part
 * changed), and rank 0 uses only reports made after it. */
void dem_monitor_repartitioned(dem_monitor_t *m, long step);
/* Collective, at the end of the run: receives the reports still in flight. */
void dem_monitor_close(dem_monitor_t *m);
/* Speed reports rank 0 received (0 elsewhere). */
long dem_monitor_reports(const dem_monitor_t *m);

#endif
