/* A host map (scenario key native.hostmap): each container of a scenario (platform.hosts,
 * stress[].host) placed on a real machine with a pinned set of logical CPUs, as Docker or
 * OpenStack pin a container's cores. The native launcher turns it into an Open MPI hostfile and
 * rankfile and starts each declared stress on its container's host and cores.
 *
 * The file is libconfig (read by scenario.c, the libconfig unit); this unit holds the map,
 * the core-set syntax ("0", "0-3", "0,2,4-5") and this machine's names; the checks against a
 * scenario and the rank placement are run/placement.h's. Every check fails with the map file, the entry index and container, and what was
 * expected. */
#ifndef DEMSIM_SCENARIO_HOSTMAP_H
#define DEMSIM_SCENARIO_HOSTMAP_H

#include <stddef.h>

#define DEM_HOSTMAP_MAX 256   /* entries */
#define DEM_CPU_MAX 1024      /* logical CPU ids below this */

typedef struct dem_hostmap_entry {
  char container[64];  /* the scenario's container name */
  char host[256];      /* real host (name or address) */
  char cores[256];     /* logical CPU ids as written in the map */
  int ncores;          /* how many ids the set holds */
  unsigned char cpu[DEM_CPU_MAX]; /* 1 for each id of the set */
} dem_hostmap_entry_t;

typedef struct dem_hostmap {
  char file[1024];
  int n;
  dem_hostmap_entry_t e[DEM_HOSTMAP_MAX];
} dem_hostmap_t;

/* Parses a core set; 0, or -1 when the syntax is wrong or an id is >= DEM_CPU_MAX. */
int dem_hostmap_parse_cores(const char *text, unsigned char cpu[DEM_CPU_MAX], int *count);
/* The entry of a container, or -1. */
int dem_hostmap_find(const dem_hostmap_t *m, const char *container);
/* 1 when two host names are the same real host (every name of this machine is one host). */
int dem_hostmap_same_host(const char *a, const char *b);
/* A CPU set (cpu[i] = 1 for each id below n) as a core-set string ("0", "0-1", "0,2-3"). */
void dem_hostmap_cpus_string(const unsigned char *cpu, int n, char *buf, size_t len);
/* 1 when a host name is this machine (localhost, 127.x, ::1, this host's name). */
int dem_hostmap_is_local(const char *host);
/* The CPUs of this process's affinity mask: their count (0 when unknown), and as a set string
 * ("0", "0-1", "0,2-3") in buf. */
int dem_hostmap_affinity(char *buf, size_t len);
/* PoCL's worker-thread limit for this process and the processes it starts: sets both names,
 * POCL_MAX_PTHREAD_COUNT (PoCL 3.1, Debian 12) and POCL_CPU_MAX_CU_COUNT (later PoCL). Unless
 * `force`, a limit the user set under either name is kept and returned; else returns NULL. */
const char *dem_pocl_thread_limit(int threads, int force);

#endif
