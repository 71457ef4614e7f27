/* nqueens: counts the solutions of the N-queens problem by divide and conquer over MPI ranks,
 * balanced by random (RWS) or cluster-aware random (CRWS) work stealing. A second workload next
 * to the DEM solver, for multi-site (wide-area) platforms; see README.md in this folder.
 * Prolog (options, sites), the search (steal.c), epilog (one JSON line from rank 0). */
#include "search.h"
#include "steal.h"

#ifdef DEMSIM_SMPI
#include "netfactor.h"
#endif

#include <jansson.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  nq_config_t run;
  int sites;              /* ranks in this many contiguous blocks; 0: from the host names */
  const char *out;        /* JSON file, or NULL */
} options_t;

static const char *USAGE =
  "usage: nqueens [options]   (run under mpirun, or smpirun in the SMPI build)\n"
  "Counts the solutions of N-queens by depth-first search over tasks balanced by work stealing.\n"
  "  --n N              board size, 1..16 (default 12)\n"
  "  --strategy S       rws: random stealing, synchronous; crws: cluster-aware random stealing,\n"
  "                     one asynchronous wide-area request in flight per rank (default crws)\n"
  "  --threshold D      tasks with fewer than D queens are split, deeper ones solved\n"
  "                     sequentially (default 4)\n"
  "  --sites K|hosts    K: ranks form K sites in contiguous blocks; hosts: ranks whose host\n"
  "                     names agree before the last '-' share a site (default hosts)\n"
  "  --payload B        bytes added to every task sent, as a job's parameters (default 0)\n"
  "  --seed S           seed of the victim choice (default 1)\n"
  "  --out FILE         also write the JSON result to FILE\n"
  "  --help             this text\n"
  "Prints one JSON line: solutions (checked against the known count), time_s (the search's\n"
  "makespan: from the start to the end of the last task; MPI_Wtime, simulated under SMPI),\n"
  "end_s (to the end of termination detection), per-rank tasks, busy time, steals (local /\n"
  "wide-area, attempted and successful), wide-area requests in flight at most, bytes sent.\n"
  "Exit status: 0 correct, 1 wrong count or run failure, 2 bad arguments.\n";

static int parse_int(const char *s, long lo, long hi, long *v)
{
  char *end = NULL;
  long x = strtol(s, &end, 10);
  if (!*s || *end || x < lo || x > hi)
    return -1;
  *v = x;
  return 0;
}

/* 0: run; 1: --help was printed; 2: bad arguments (message printed by rank 0). */
static int parse_options(int argc, char **argv, options_t *o, int rank)
{
  *o = (options_t){.run = {.n = 12, .threshold = 4, .strategy = NQ_CRWS, .seed = 1}};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    long x = 0;
    int bad = 0;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
      if (rank == 0)
        fputs(USAGE, stdout);
      return 1;
    }
    if (!v) {
      bad = 1;
    } else if (!strcmp(a, "--n")) {
      bad = parse_int(v, 1, 16, &x);
      o->run.n = (int)x;
    } else if (!strcmp(a, "--threshold")) {
      bad = parse_int(v, 0, 16, &x);
      o->run.threshold = (int)x;
    } else if (!strcmp(a, "--payload")) {
      bad = parse_int(v, 0, 1 << 26, &x);
      o->run.payload = (int)x;
    } else if (!strcmp(a, "--seed")) {
      bad = parse_int(v, 0, 1L << 30, &x);
      o->run.seed = (uint64_t)x;
    } else if (!strcmp(a, "--strategy")) {
      bad = strcmp(v, "rws") && strcmp(v, "crws");
      o->run.strategy = strcmp(v, "rws") ? NQ_CRWS : NQ_RWS;
    } else if (!strcmp(a, "--sites")) {
      bad = strcmp(v, "hosts") ? parse_int(v, 1, 1 << 20, &x) : 0;
      o->sites = (int)x;
    } else if (!strcmp(a, "--out")) {
      o->out = v;
    } else {
      bad = 1;
    }
    if (bad) {
      if (rank == 0)
        fprintf(stderr, "nqueens: bad argument '%s'%s%s%s (try --help)\n", a, v ? " '" : "",
                v ? v : " (value missing)", v ? "'" : "");
      return 2;
    }
    i++;
  }
  return 0;
}

/* site[r] for every rank: blocks of ranks, or the host names' prefixes (before the last '-'). */
static int assign_sites(int sites, int size, int *site, char *names /* size x MPI_MAX_PROCESSOR_NAME */)
{
  char me[MPI_MAX_PROCESSOR_NAME] = {0};
  int len = 0;
  if (MPI_Get_processor_name(me, &len) != MPI_SUCCESS ||
      MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                    MPI_COMM_WORLD) != MPI_SUCCESS)
    return -1;
  for (int r = 0; r < size; r++) {
    if (sites > 0) {
      site[r] = (int)((long)r * sites / size);
      continue;
    }
    const char *nr = names + (size_t)r * MPI_MAX_PROCESSOR_NAME;
    const char *dash = strrchr(nr, '-');
    size_t plen = dash ? (size_t)(dash - nr) : strlen(nr);
    site[r] = r;
    for (int q = 0; q < r; q++) {
      const char *nq = names + (size_t)q * MPI_MAX_PROCESSOR_NAME;
      const char *dq = strrchr(nq, '-');
      size_t qlen = dq ? (size_t)(dq - nq) : strlen(nq);
      if (qlen == plen && !strncmp(nq, nr, plen)) {
        site[r] = site[q];
        break;
      }
    }
  }
  int next = 0; /* number the sites 0, 1, ... in order of first rank */
  int *map = malloc(size * sizeof *map);
  if (!map)
    return -1;
  for (int r = 0; r < size; r++)
    map[r] = -1;
  for (int r = 0; r < size; r++) {
    if (map[site[r]] < 0)
      map[site[r]] = next++;
    site[r] = map[site[r]];
  }
  free(map);
  return 0;
}

static json_t *rank_json(int r, int site, const char *host, const nq_stats_t *s)
{
  return json_pack("{s:i, s:i, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
                   "rank", r, "site", site, "host", host, "tasks", s->tasks, "nodes", s->nodes,
                   "busy_s", s->busy, "steal_local", s->steal_local,
                   "steal_local_ok", s->steal_local_ok, "steal_wide", s->steal_wide,
                   "steal_wide_ok", s->steal_wide_ok, "wide_inflight_max", s->wide_inflight_max,
                   "bytes_sent", s->bytes_sent, "messages_sent", s->messages_sent);
}

/* Rank 0: the JSON line (and file); returns 0 when the count is the known one. */
static int report(const options_t *o, int size, const int *site, const char *names,
                  const nq_stats_t *all, double end_s)
{
  nq_stats_t tot = {0};
  double *t = (double *)&tot;
  json_t *ranks = json_array();
  for (int r = 0; r < size; r++) {
    const double *a = (const double *)&all[r];
    for (size_t k = 0; k < NQ_STATS_FIELDS; k++)
      t[k] += a[k];
    json_array_append_new(ranks, rank_json(r, site[r], names + (size_t)r * MPI_MAX_PROCESSOR_NAME, &all[r]));
  }
  tot.wide_inflight_max = tot.last_task_end = 0;
  for (int r = 0; r < size; r++) {
    if (all[r].wide_inflight_max > tot.wide_inflight_max)
      tot.wide_inflight_max = all[r].wide_inflight_max;
    if (all[r].last_task_end > tot.last_task_end)
      tot.last_task_end = all[r].last_task_end;
  }
  uint64_t known = nq_known_solutions(o->run.n);
  int ok = known == (uint64_t)tot.solutions;
#ifdef DEMSIM_SMPI
  const int simulated = 1;
#else
  const int simulated = 0;
#endif
  json_t *j = json_pack(
    "{s:s, s:i, s:s, s:i, s:i, s:i, s:i, s:I, s:I, s:b, s:f, s:f, s:b, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:o}",
    "workload", "nqueens", "n", o->run.n, "strategy", o->run.strategy == NQ_RWS ? "rws" : "crws",
    "ranks", size, "sites", site[size - 1] + 1, "threshold", o->run.threshold,
    "payload_B", o->run.payload, "solutions", (json_int_t)tot.solutions, "expected",
    (json_int_t)known, "correct", ok, "time_s", tot.last_task_end, "end_s", end_s, "simulated", simulated,
    "busy_s", tot.busy, "tasks", tot.tasks, "steal_local", tot.steal_local, "steal_local_ok",
    tot.steal_local_ok, "steal_wide", tot.steal_wide, "steal_wide_ok", tot.steal_wide_ok,
    "wide_inflight_max", tot.wide_inflight_max, "bytes_sent", tot.bytes_sent, "per_rank", ranks);
  char *line = json_dumps(j, JSON_COMPACT);
  int rc = line ? 0 : -1;
  if (line)
    printf("%s\n", line);
  fflush(stdout);
  if (line && o->out) {
    FILE *f = fopen(o->out, "w");
    if (!f || fprintf(f, "%s\n", line) < 0 || fclose(f) != 0) {
      fprintf(stderr, "nqueens: cannot write %s\n", o->out);
      rc = -1;
    }
  }
  free(line);
  json_decref(j);
  if (!ok)
    fprintf(stderr, "nqueens: %d-queens: %.0f solutions, expected %llu\n", o->run.n,
            tot.solutions, (unsigned long long)known);
  return rc == 0 && ok ? 0 : 1;
}

/* The search on every rank, its statistics gathered to rank 0 and reported there. */
static int run(options_t *o, int rank, int size)
{
  int *site = malloc(size * sizeof *site);
  char *names = calloc((size_t)size, MPI_MAX_PROCESSOR_NAME);
  nq_stats_t *all = malloc(size * sizeof *all);
  int rc = 1;
  if (!site || !names || !all || assign_sites(o->sites, size, site, names) != 0)
    goto out;
  if (o->sites > size) {
    if (rank == 0)
      fprintf(stderr, "nqueens: --sites %d: more sites than the %d ranks\n", o->sites, size);
    rc = 2;
    goto out;
  }
  o->run.site = site;
  nq_stats_t mine;
  double t0 = 0, dt = 0, dt_max = 0;
  if (MPI_Barrier(MPI_COMM_WORLD) != MPI_SUCCESS)
    goto out;
  t0 = MPI_Wtime();
  if (nq_steal_run(&o->run, &mine) != 0)
    goto out;
  dt = MPI_Wtime() - t0;
  if (MPI_Reduce(&dt, &dt_max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD) != MPI_SUCCESS ||
      MPI_Gather(&mine, (int)NQ_STATS_FIELDS, MPI_DOUBLE, all, (int)NQ_STATS_FIELDS, MPI_DOUBLE, 0,
                 MPI_COMM_WORLD) != MPI_SUCCESS)
    goto out;
  for (int r = 0; rank == 0 && r < size; r++) /* the search's makespan: its last task's end */
    all[r].last_task_end = all[r].last_task_end > 0 ? all[r].last_task_end - t0 : 0;
  rc = rank == 0 ? report(o, size, site, names, all, dt_max) : 0;
out:
  free(site);
  free(names);
  free(all);
  return rc;
}

int main(int argc, char **argv)
{
  options_t o;
  int rank = 0, size = 1;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS)
    return 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
#ifdef DEMSIM_SMPI
  /* the WAN's latency as the platform gives it, as for the DEM (sim/netfactor.h) */
  char err[256];
  if (sim_netfactor_install(err, sizeof err)) {
    fprintf(stderr, "nqueens: %s\n", err);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
#endif
  int rc = parse_options(argc, argv, &o, rank);
  if (rc == 0)
    rc = run(&o, rank, size);
  else if (rc == 1)
    rc = 0; /* --help */
  MPI_Finalize();
  return rc;
}
