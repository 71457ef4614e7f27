/* The host map itself (see hostmap.h); its checks against a scenario and the rank placement are
 * run/placement.c's. Real hosts are compared by name, except
 * that every name of this machine counts as one host. */
#define _GNU_SOURCE
#include "scenario/hostmap.h"

#include <ctype.h>
#include <netdb.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/error.h"

int dem_hostmap_parse_cores(const char *text, unsigned char cpu[DEM_CPU_MAX], int *count)
{
  memset(cpu, 0, DEM_CPU_MAX);
  *count = 0;
  const char *p = text;
  if (!*p) return -1;
  for (;;) {
    if (!isdigit((unsigned char)*p)) return -1;
    char *end;
    long lo = strtol(p, &end, 10), hi = lo;
    p = end;
    if (*p == '-') {
      if (!isdigit((unsigned char)p[1])) return -1;
      hi = strtol(p + 1, &end, 10);
      p = end;
    }
    if (lo > hi || hi >= DEM_CPU_MAX) return -1;
    for (long c = lo; c <= hi; c++) {
      if (!cpu[c]) (*count)++;
      cpu[c] = 1;
    }
    if (*p == '\0') return 0;
    if (*p != ',') return -1;
    p++;
  }
}

int dem_hostmap_find(const dem_hostmap_t *m, const char *container)
{
  for (int i = 0; i < m->n; i++)
    if (strcmp(m->e[i].container, container) == 0) return i;
  return -1;
}

int dem_hostmap_is_local(const char *host)
{
  char me[256] = "";
  gethostname(me, sizeof me - 1);
  return strcmp(host, "localhost") == 0 || strncmp(host, "127.", 4) == 0 || strcmp(host, "::1") == 0 ||
         (me[0] && strcmp(host, me) == 0);
}

int dem_hostmap_same_host(const char *a, const char *b)
{
  return strcmp(a, b) == 0 || (dem_hostmap_is_local(a) && dem_hostmap_is_local(b));
}

/* Writes a CPU set as ids and ranges ("0,2-3"). */
void dem_hostmap_cpus_string(const unsigned char *cpu, int n, char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = '\0';
  for (int c = 0; c < n; c++) {
    if (!cpu[c]) continue;
    int hi = c;
    while (hi + 1 < n && cpu[hi + 1]) hi++;
    int w = hi > c ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c, hi)
                   : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c);
    if (w < 0 || (size_t)w >= len - used) return;
    used += (size_t)w;
    c = hi;
  }
}

int dem_hostmap_affinity(char *buf, size_t len)
{
  cpu_set_t set;
  unsigned char cpu[DEM_CPU_MAX] = {0};
  buf[0] = '\0';
  if (sched_getaffinity(0, sizeof set, &set)) return 0;
  for (int c = 0; c < DEM_CPU_MAX && c < CPU_SETSIZE; c++) cpu[c] = CPU_ISSET(c, &set) ? 1 : 0;
  dem_hostmap_cpus_string(cpu, DEM_CPU_MAX, buf, len);
  return CPU_COUNT(&set);
}


const char *dem_pocl_thread_limit(int threads, int force)
{
  const char *names[2] = {"POCL_MAX_PTHREAD_COUNT", "POCL_CPU_MAX_CU_COUNT"};
  for (int i = 0; i < 2 && !force; i++) {
    const char *user = getenv(names[i]);
    if (user && *user) return user;
  }
  char v[16];
  snprintf(v, sizeof v, "%d", threads);
  for (int i = 0; i < 2; i++) setenv(names[i], v, 1);
  return NULL;
}
