/* A CPU quota as the kernel enforces it: CFS bandwidth control gives a container with part s of
 * its cores' time (platform property cpu_share) s x period of running in each period (cpu_period)
 * and throttles it for the rest. A rank of Open MPI polls while it waits, so it is always
 * runnable: it spends its quota from the start of every period and stops until the next one. Its
 * time is then a schedule fixed in wall-clock time: it runs in [k P, k P + on_k) and not in
 * [k P + on_k, (k + 1) P), k = 0, 1, ... (simulated time 0 is the start of a period, unless
 * sim_quota_shift moves it into one).
 *
 * on_k: without a scheduler tick (cpu_tick 0), the quota itself, s P, every period alike. With the
 * host's tick T (platform property cpu_tick: 1/CONFIG_HZ), as the kernel does it
 * (kernel/sched/fair.c): the run-time a container used is checked at the tick, so it is
 * throttled only at the first tick after its quota is spent, and the excess is taken from the
 * next period's quota (the period timer pays a throttled group's debt before it runs again). With
 * ticks at phase + j T and debt d_k: its budget is a_k = s P - d_k; a_k <= 0 throttles the whole
 * period (d_{k+1} = -a_k); else it runs until the first tick tau >= k P + a_k, on_k = tau - k P
 * (at most P: then it runs on into the next period), and d_{k+1} = on_k - a_k. Measured: a spinning
 * process's runs end on the tick grid (validation/compare-real/quota/DUTY.md, "ends on the tick").
 *
 * Work that needs d seconds of running starts whenever it is posted and ends when the container
 * has run d seconds since; on average that is d / s, but a step shorter than the period takes d,
 * or d plus the rest of the period, depending on where it falls. Pure arithmetic: free of
 * SimGrid. */
#ifndef DEMSIM_SIM_QUOTA_H
#define DEMSIM_SIM_QUOTA_H

#include <stddef.h>

typedef struct sim_quota {
  double share, period; /* s (0 < s < 1) and P > 0 */
  double tick, phase;   /* s: the scheduler tick (0: none) and the first tick, in [0, tick) */
  size_t n, cap;        /* periods whose run is known, and room for them */
  double *on;           /* on[k]: seconds it runs from k P on */
  double *before;       /* before[k]: seconds of running in [0, k P) */
  double debt;          /* s of run-time owed to period n */
  double offset;        /* s, in [0, period): the rank's time 0 is this far into period 0 */
} sim_quota_t;

/* A quota's schedule (tick 0: the quota's own duty cycle, without a tick). Returns 0, or -1 on
 * bad arguments. The periods are worked out as they are asked for. */
int sim_quota_init(sim_quota_t *q, double share, double period, double tick, double phase);
void sim_quota_free(sim_quota_t *q);

/* The quota's period timer started `offset` seconds before the rank's time 0 (taken modulo the
 * period; 0 after sim_quota_init): the times below are the rank's, the periods the timer's. The
 * emulator sets the quota when it builds the cloud, and the run starts later, anywhere in a period. */
void sim_quota_shift(sim_quota_t *q, double offset);

/* Seconds of running in [0, t]. */
double sim_quota_ran(sim_quota_t *q, double t);

/* The time at which the container, needing `need` >= 0 seconds of running from `start` >= 0 on,
 * has had them: the earliest t >= start with ran(t) - ran(start) = need (start itself when need is
 * 0). */
double sim_quota_end(sim_quota_t *q, double start, double need);

/* When the container sees something that happened at t: t itself while it runs (the end of its
 * running part included), else the start of its next run (the kernel lets it run again then). */
double sim_quota_seen(sim_quota_t *q, double t);

/* Seconds it runs from the start of period k on (on_k above). */
double sim_quota_on(sim_quota_t *q, size_t k);

#endif
