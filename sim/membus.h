/* Work on a CPU container: its compute on the container's cores and its memory traffic on the
 * node's memory bus, shared with every other flow of the node; one after the other, or side by
 * side for streaming work (overlap: nothing gathered through an index; sim/membus.c). */
#ifndef DEMSIM_SIM_MEMBUS_H
#define DEMSIM_SIM_MEMBUS_H

struct sim_host;

/* The part of its cores' rate the container's work gets on average: its cpu_share (a CFS quota;
 * 1 when absent) x its cpu_quota_efficiency under that quota x sim_membus_rate. */
double sim_membus_share(const struct sim_host *h);
/* The rate its work runs at while it runs: cores / (cores + the stress threads on its cores now,
 * sim_stress_sharing). */
double sim_membus_rate(const struct sim_host *h);
/* 1 when the container has a CFS quota (cpu_share < 1): its time is a duty cycle (sim/quota.h). */
int sim_membus_quota(const struct sim_host *h);

/* Runs `flops` spread over `cores` cores of the calling actor's host, then (overlap: meanwhile)
 * `traffic` bytes on the node's memory-bus host as `cores` flows (one per core), each drawing at
 * most `core_bw` over the loaded-latency factor of the bus utilisation the other flows of the
 * node make when it starts; at sim_membus_rate s of its rate (the flops 1/s as many, the flows'
 * bound s times); under a quota the actor is then held until the container has run as long
 * since the work began (sim_quota_end). Returns 0, or -1 when SimGrid failed an activity. */
int sim_membus_run(const struct sim_host *h, double flops, int cores, double traffic,
                   double core_bw, int overlap);

/* The same work's duration on a node whose other flows use a fraction u of the bus and leave
 * it enough bandwidth (the closed form the tests and validation/calibrate_cost use):
 *   t_flop = flops / (cores x core rate), t_mem = traffic / min(cores x core_bw / factor(u), node bw)
 *   t_flop + t_mem, or max(t_flop, t_mem) with overlap; over sim_membus_share. */
double sim_membus_time(const struct sim_host *h, double flops, int cores, double traffic,
                       double core_bw, double u, int overlap);

#endif
