/* The containers of an emulated cloud on this machine (native build, `demsim run --emulate`;
 * run/emulator.h plans them from the scenario): each container a Linux network namespace joined
 * by a veth pair to one bridge in the root namespace, with an address in a private /24 that no
 * route or address of this machine overlaps; its egress shaped per destination container (an
 * htb class at the pair's rate with a netem child for the pair's one-way delay, a u32 filter on
 * the destination's address; a kernel without netem gets the latency from demsim-wire, run/wire.c,
 * which holds the packets of an iptables NFQUEUE rule per destination, or the rates only, with a
 * note, where it cannot; one without u32 the same match as a classic BPF filter); its cores a
 * cpuset cgroup (v1), a part of a core a CFS quota.
 *
 * Everything is named with one prefix, "dsim<pid>-" (namespaces, links, cgroups): the teardown
 * removes whatever carries the prefix, so it is idempotent and also clears what a crashed run
 * left. System changes are made by fork/exec of `ip` and `tc` (no shell) and by writing the
 * cgroup files; in a dry run each is printed instead. */
#ifndef DEMSIM_RUN_CONTAINERS_H
#define DEMSIM_RUN_CONTAINERS_H

#include <stddef.h>
#include <stdio.h>

#define DEM_CLOUD_MAX 99        /* containers: interface names hold two digits */

typedef struct dem_container {
  char name[64];     /* the scenario's container (a host of platform.file) */
  char ns[48];       /* its network namespace */
  char addr[32];     /* its address in the subnet */
  char cpus[256];    /* its logical CPUs ("0", "0-1", "2,4") */
  int ncores;        /* how many */
  double share;      /* the fraction of each core's time it gets (a CPU quota below 1) */
  double period;     /* s: the quota's period (the platform's cpu_period) */
} dem_container_t;

typedef struct dem_cloud {
  char prefix[32];      /* "dsim<pid>-" */
  char bridge[40];      /* the bridge in the root namespace */
  char subnet[32];      /* "10.213.X.0/24" */
  char bridge_addr[32]; /* its address on the bridge (mpirun's PMIx server listens there) */
  int n;
  dem_container_t c[DEM_CLOUD_MAX];
  double bw[DEM_CLOUD_MAX][DEM_CLOUD_MAX];  /* B/s from container i to j */
  double lat[DEM_CLOUD_MAX][DEM_CLOUD_MAX]; /* s, one way, from i to j */
  int dry_run;          /* print the commands instead of running them */
  int no_netem;         /* the kernel has no netem: routes shaped in rate only, their latency ... */
  int wire;             /* ... then added by demsim-wire (netfilter queues), where iptables and it are there */
  int no_u32;           /* the kernel has no u32 classifier: classic BPF (cls_bpf) matches the destinations */
  int ack_wire;         /* TCP's pure acknowledgements have queues of their own, held by their destination's wire */
  char acct[DEM_CLOUD_MAX][192]; /* each container's CPU accounting (cpuacct) cgroup, "" where there is none */
} dem_cloud_t;

/* Runs args (NULL-terminated) and waits: its exit status (127 when it could not start). Its
 * output is discarded when `quiet`. */
int dem_cloud_exec(char *const *args, int quiet);
/* Runs args and collects its standard output into out (NUL-terminated, cut at len). Its exit status. */
int dem_cloud_capture(char *const *args, char *out, size_t len);
/* demsim-routes (sim/routes.c, beside this program) [--cores] PLATFORM HOST...: what SimGrid says
 * of the hosts' routes (or cores), its standard output into out. Its exit status: 2 for a host
 * the platform lacks, 127 when the tool is not there. */
int dem_cloud_routes(const char *platform, const char *const *hosts, int n, int cores, char *out, size_t len);
/* Names the cloud after this process and picks a free 10.213.X.0/24. 0, or -1 with a message. */
int dem_cloud_name(dem_cloud_t *cloud, char *err, size_t errlen);
/* Builds the bridge, the namespaces, the shaping and the cgroups. 0, or -1 with a message (what was
 * built stays for dem_cloud_clean). */
int dem_cloud_build(dem_cloud_t *cloud, char *err, size_t errlen);
/* Prints each container's CPU time (its cpuacct cgroup) and, under a quota, its throttled periods
 * and time (cpu.stat), one line each, to out. Read before dem_cloud_clean removes them. */
void dem_cloud_report(const dem_cloud_t *cloud, FILE *out);
/* Removes everything named with `prefix`: the processes in its cgroups, its namespaces (their
 * links and qdiscs with them), its links, its bridge, its cgroups. Idempotent. */
void dem_cloud_clean(const char *prefix, int dry_run);
/* Removes the leftovers of crashed runs: every "dsim<pid>-" prefix whose process is gone. */
void dem_cloud_clean_stale(void);

#endif
