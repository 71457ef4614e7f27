/* The emulator (native build, as root: `demsim run SCENARIO --emulate`, native.emulate = true):
 * the scenario runs on an emulated cloud on this one machine. Each container of the scenario (the
 * hosts of platform.hosts that run ranks, and each stress container) gets its own network
 * namespace on one bridge, its route to every other container shaped with tc as SimGrid routes it
 * on platform.file (the narrowest link's bandwidth, the links' summed latency: demsim-routes,
 * sim/routes.c, run as a program), and its own cores in a cpuset cgroup: the host map's
 * (native.hostmap) when there is one, else the platform's core count of the container, assigned
 * in order. A container with a `cpu_share` property below 1 gets that part of each core as a CFS
 * quota. Ranks run under mpirun over TCP between the namespaces, each started in its container;
 * each stress runs in its own. The launcher (run/launcher.c) runs the processes; this unit builds
 * the cloud, gives the command lines and tears the cloud down at the end, on a failure and on
 * SIGINT/SIGTERM/SIGHUP (run/containers.h). */
#ifndef DEMSIM_RUN_EMULATOR_H
#define DEMSIM_RUN_EMULATOR_H

#include <sys/types.h>

struct dem_scenario;
typedef struct dem_emulator dem_emulator_t;

/* Plans the cloud (containers, routes, cores) and builds it; in a dry run prints the plan and the
 * commands instead (demsim-routes, beside this program, reads the platform). 0 with *em; 2 for input
 * it cannot emulate (not root, more cores than this machine has, a container not in the platform,
 * ...: the message printed); 1 when building failed (what was built is removed). */
int dem_emulator_start(const struct dem_scenario *s, int dry_run, dem_emulator_t **em);
/* The words of the mpirun command that runs the ranks (argv[1..] after `self`) in their
 * containers, NULL-terminated in args (max words at most): their count, or -1 when too many. */
int dem_emulator_mpirun(dem_emulator_t *em, const char *self, int argc, char **argv, char **args, int max);
/* The words that start a command inside container `name` (its cgroups, then its namespace),
 * to be followed by the command: their count. */
int dem_emulator_enter(dem_emulator_t *em, const char *name, char **args);
/* Waits for pid, the leader of a process group; a signal caught meanwhile stops the group
 * (SIGTERM, SIGKILL 10 s later). 0, 2 (its exit status 2) or 1 (any other end). */
int dem_emulator_wait(pid_t pid);
/* The signal that interrupted the run, or 0. */
int dem_emulator_caught(void);
/* Removes the cloud and frees it (idempotent; *em NULL after); restores the signal handlers. */
void dem_emulator_stop(dem_emulator_t **em);

#endif
