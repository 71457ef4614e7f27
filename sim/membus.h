/* Roofline work on a CPU container, with the memory term shared on the node's memory bus. */
#ifndef DEMSIM_SIM_MEMBUS_H
#define DEMSIM_SIM_MEMBUS_H

struct sim_host;

/* Runs `flops` spread over `cores` cores of the calling actor's host and, at the same time,
 * `bytes` of traffic on the node's memory-bus host drawing at most `bw_bound` B/s; returns when
 * both are done, i.e. after the longer of the two. Returns 0, or -1 when SimGrid failed one. */
int sim_membus_run(const struct sim_host *h, double flops, int cores, double bytes,
                   double bw_bound);

#endif
