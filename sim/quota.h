/* A CPU quota as the kernel enforces it: CFS bandwidth control gives a container with part s of
 * its cores' time (platform property cpu_share) s x period of running in each period (cpu_period)
 * and throttles it for the rest. A rank of Open MPI polls while it waits, so it is always
 * runnable: it spends its quota at the start of every period and stops until the next one. Its
 * time is then a duty cycle fixed in wall-clock time: it runs in [k P, k P + s P) and not in
 * [k P + s P, (k + 1) P), k = 0, 1, ... (simulated time 0 is the start of a period). Work that
 * needs d seconds of running starts whenever it is posted and ends when the container has run d
 * seconds since; on average that is d / s, but a step shorter than the period takes d, or d plus
 * the rest of the period, depending on where it falls. Pure arithmetic: free of SimGrid. */
#ifndef DEMSIM_SIM_QUOTA_H
#define DEMSIM_SIM_QUOTA_H

/* Seconds of running a container with quota share s (0 < s < 1) and period P > 0 has had in
 * [0, t]. */
double sim_quota_ran(double t, double share, double period);

/* The time at which a container with quota share s and period P that needs `need` >= 0 seconds
 * of running from `start` >= 0 on has had them: the earliest t >= start with
 * ran(t) - ran(start) = need (start itself when need is 0). */
double sim_quota_end(double start, double need, double share, double period);

/* When a container with quota share s and period P sees something that happened at t: t itself
 * while it runs (the end of its running part included), else the start of the next period (the
 * kernel lets it run again then). */
double sim_quota_seen(double t, double share, double period);

#endif
