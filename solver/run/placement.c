/* A scenario's containers placed on the real machines of a host map (native.hostmap): the map
 * checked against the scenario, and each rank's host and cores (see run/placement.h). */
#define _GNU_SOURCE
#include "run/placement.h"

#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"
#ifndef DEMSIM_SMPI
#include "run/containers.h"
#endif
#include "scenario/hostmap.h"
#include "scenario/scenario.h"

#define ENTRY_FMT "%s: key 'native.hostmap' = \"%s\": entry %d (container \"%s\"): "

/* Containers the scenario uses must be in the map; each entry's host must resolve and, on
 * this machine, its core ids must exist. */
static int check_entries(const dem_hostmap_t *m, const dem_scenario_t *s, char *err, size_t errlen)
{
  int used = s->ranks < s->n_hosts ? s->ranks : s->n_hosts;
  for (int r = 0; r < used; r++)
    if (dem_hostmap_find(m, s->hosts[r]) < 0)
      return dem_fail(err, errlen, "%s: key 'native.hostmap' = \"%s\": container \"%s\" runs rank %d (platform.hosts) "
                      "but has no entry; expected { container = \"%s\"; host = \"...\"; cores = \"...\"; }", s->file,
                      m->file, s->hosts[r], r, s->hosts[r]);
  for (int i = 0; i < s->n_stress; i++)
    if (dem_hostmap_find(m, s->stress[i].host) < 0)
      return dem_fail(err, errlen, "%s: key 'native.hostmap' = \"%s\": container \"%s\" runs stress[%d] but has no "
                      "entry; expected { container = \"%s\"; host = \"...\"; cores = \"...\"; }", s->file, m->file,
                      s->stress[i].host, i, s->stress[i].host);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  for (int i = 0; i < m->n; i++) {
    const dem_hostmap_entry_t *e = &m->e[i];
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (getaddrinfo(e->host, NULL, &hints, &res) != 0)
      return dem_fail(err, errlen, ENTRY_FMT "host \"%s\": unknown host (expected a name or address that resolves)",
                      s->file, m->file, i, e->container, e->host);
    freeaddrinfo(res);
    if (!dem_hostmap_is_local(e->host)) continue;
    for (int c = (int)online; c < DEM_CPU_MAX; c++)
      if (e->cpu[c])
        return dem_fail(err, errlen, ENTRY_FMT "cores \"%s\": core %d does not exist on this machine (host \"%s\"); "
                        "expected ids below %ld, its online core count", s->file, m->file, i, e->container, e->cores, c,
                        e->host, online);
  }
  return 0;
}

static int runs_rank(const dem_scenario_t *s, const char *container)
{
  for (int r = 0; r < s->ranks && r < s->n_hosts; r++)
    if (strcmp(s->hosts[r], container) == 0) return 1;
  return 0;
}

static int overlap(const dem_hostmap_entry_t *a, const dem_hostmap_entry_t *b)
{
  if (!dem_hostmap_same_host(a->host, b->host)) return -1;
  for (int c = 0; c < DEM_CPU_MAX; c++)
    if (a->cpu[c] && b->cpu[c]) return c;
  return -1;
}

/* Rank containers on one real host must not share cores; a stress container may (a noisy
 * neighbour), which is noted. */
static int check_overlaps(const dem_hostmap_t *m, const dem_scenario_t *s, FILE *notes, char *err, size_t errlen)
{
  for (int i = 0; i < m->n; i++)
    for (int j = i + 1; j < m->n; j++) {
      int c = overlap(&m->e[i], &m->e[j]);
      if (c < 0) continue;
      int ri = runs_rank(s, m->e[i].container), rj = runs_rank(s, m->e[j].container);
      if (ri && rj)
        return dem_fail(err, errlen, "%s: key 'native.hostmap' = \"%s\": entries %d (container \"%s\", cores \"%s\") and "
                        "%d (container \"%s\", cores \"%s\") both run ranks on host \"%s\" and share core %d; expected "
                        "disjoint core sets", s->file, m->file, i, m->e[i].container, m->e[i].cores, j,
                        m->e[j].container, m->e[j].cores, m->e[j].host, c);
      if (notes && (ri || rj))
        fprintf(notes, "demsim: note: %s: container \"%s\" shares core %d with container \"%s\", which runs a rank: its "
                "stress also takes CPU time from that container\n", m->file, ri ? m->e[j].container : m->e[i].container,
                c, ri ? m->e[i].container : m->e[j].container);
    }
  return 0;
}

/* Rank k of the m ranks of a container gets the k-th of m equal slices of its cores. */
static void place_rank(const dem_hostmap_entry_t *e, int k, int m, dem_placement_t *p)
{
  snprintf(p->host, sizeof p->host, "%s", e->host);
  if (m == 1) {
    snprintf(p->slot, sizeof p->slot, "%s", e->cores);
    return;
  }
  unsigned char mine[DEM_CPU_MAX] = {0};
  int share = e->ncores / m, seen = 0;
  for (int c = 0; c < DEM_CPU_MAX; c++)
    if (e->cpu[c]) {
      if (seen / share == k) mine[c] = 1;
      seen++;
    }
  dem_hostmap_cpus_string(mine, DEM_CPU_MAX, p->slot, sizeof p->slot);
}

int dem_placement_check(const dem_hostmap_t *m, const dem_scenario_t *s, dem_placement_t *place, void *notes,
                        char *err, size_t errlen)
{
  if (s->n_hosts == 0)
    return dem_fail(err, errlen, "%s: key 'native.hostmap' = \"%s\": expected the containers that run the ranks in "
                    "'platform.hosts'", s->file, m->file);
  if (check_entries(m, s, err, errlen) || check_overlaps(m, s, notes, err, errlen)) return -1;
  for (int r = 0; r < s->ranks; r++) {
    const char *c = s->hosts[r % s->n_hosts];
    int i = dem_hostmap_find(m, c), k = 0, count = 0;
    for (int q = 0; q < s->ranks; q++)
      if (strcmp(s->hosts[q % s->n_hosts], c) == 0) {
        if (q < r) k++;
        count++;
      }
    if (count > m->e[i].ncores)
      return dem_fail(err, errlen, ENTRY_FMT "%d ranks run on it but cores \"%s\" holds %d; expected at least one core "
                      "per rank", s->file, m->file, i, c, count, m->e[i].cores, m->e[i].ncores);
    place_rank(&m->e[i], k, count, &place[r]);
  }
  return 0;
}

#ifndef DEMSIM_SMPI
int dem_placement_check_hosts(const dem_scenario_t *s, char *err, size_t errlen)
{
  if (s->hostmap[0] || s->n_hosts == 0) return 0; /* a host map names the containers instead */
  char out[64 * 1024];
  const char *names[DEM_MAX_HOSTS];
  for (int i = 0; i < s->n_hosts; i++) names[i] = s->hosts[i];
  int rc = dem_cloud_routes(s->platform, names, s->n_hosts, 1, out, sizeof out);
  if (rc == 0 || rc == 127) return 0; /* 127: the tool is not beside this program: not checked */
  return dem_fail(err, errlen, "%s: key 'platform.hosts': a container that is not a host of platform.file \"%s\" (see "
                  "the line above; expected the platform's container names, or a host map: native.hostmap)",
                  s->file, s->platform);
}
#endif
