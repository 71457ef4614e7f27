/* The emulator (see run/emulator.h): the plan of the cloud from the scenario (its containers, the
 * routes and cores demsim-routes reads from the platform, the host map's cores), the command
 * lines that start processes in the containers, the signals, the teardown. run/containers.c
 * builds and removes the cloud itself. */
#define _GNU_SOURCE
#include "run/emulator.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"
#include "run/containers.h"
#include "run/placement.h"
#include "scenario/hostmap.h"
#include "scenario/scenario.h"

/* Run by `sh -c` before each rank and stress: the shell moves itself into the container's cgroups,
 * then becomes the command in the container's namespace ($1 $2 $3: the cgroups' process lists,
 * cpuset, cpu and cpuacct; $4: the namespace). */
#define ENTER_SCRIPT                                                                                     \
  "echo $$ > \"$1\" && echo $$ > \"$2\" && echo $$ > \"$3\" && ns=$4 && shift 4 && exec ip netns exec \"$ns\" \"$@\""

struct dem_emulator {
  dem_cloud_t cloud;
  int ranks;
  int rank_container[DEM_MAX_HOSTS]; /* the container of rank r (rank r % DEM_MAX_HOSTS) */
  char procs[DEM_CLOUD_MAX][3][208]; /* each container's cgroup.procs: cpuset, cpu, cpuacct (cpu's where none) */
  char np[DEM_MAX_HOSTS][12];
};

static volatile sig_atomic_t caught;
static volatile pid_t watched;
/* SIGPIPE too: with the reader of its output gone (a script killed), the teardown's report would
 * end the emulator before it removes the cloud. A handler, not SIG_IGN, so that mpirun and the
 * ranks keep the default (an exec resets handlers, not an ignored signal). */
enum { N_SIGNALS = 4 };
static struct sigaction saved[N_SIGNALS];
static const int signals[N_SIGNALS] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

static void on_pipe(int sig) { (void)sig; }

static void on_signal(int sig)
{
  caught = sig;
  if (watched > 0) kill(-watched, SIGTERM);
}

static int container_index(const dem_cloud_t *cloud, const char *name)
{
  for (int i = 0; i < cloud->n; i++)
    if (strcmp(cloud->c[i].name, name) == 0) return i;
  return -1;
}

/* The containers: those of the ranks in rank order, then the stress containers not among them. */
static int plan_containers(dem_emulator_t *em, const dem_scenario_t *s, char *err, size_t errlen)
{
  dem_cloud_t *cloud = &em->cloud;
  em->ranks = s->ranks;
  for (int k = 0; k < s->ranks + s->n_stress; k++) {
    const char *name = k < s->ranks ? s->hosts[k % s->n_hosts] : s->stress[k - s->ranks].host;
    int i = container_index(cloud, name);
    if (i < 0) {
      if (cloud->n == DEM_CLOUD_MAX)
        return dem_fail(err, errlen, "%s: --emulate: at most %d containers (ranks' and stress containers)", s->file,
                        DEM_CLOUD_MAX);
      i = cloud->n++;
      snprintf(cloud->c[i].name, sizeof cloud->c[i].name, "%s", name);
    }
    if (k < s->ranks && k < DEM_MAX_HOSTS) em->rank_container[k] = i;
  }
  return 0;
}

/* demsim-routes PLATFORM [--cores] CONTAINERS... into out. 0, or -1 with a message. */
static int ask_routes(const dem_emulator_t *em, const dem_scenario_t *s, int cores, char *out,
                      size_t len, char *err, size_t errlen)
{
  const char *names[DEM_CLOUD_MAX];
  for (int i = 0; i < em->cloud.n; i++) names[i] = em->cloud.c[i].name;
  if (dem_cloud_routes(s->platform, names, em->cloud.n, cores, out, len))
    return dem_fail(err, errlen, "%s: --emulate: demsim-routes could not read the routes and cores of the containers "
                    "from platform.file \"%s\" (each container must be a host of the platform; see its message above)",
                    s->file, s->platform);
  return 0;
}

/* Each ordered pair's bandwidth and latency from demsim-routes' lines "a b bw lat". */
static int read_routes(dem_emulator_t *em, char *text, const dem_scenario_t *s, char *err, size_t errlen)
{
  dem_cloud_t *cloud = &em->cloud;
  int pairs = 0;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char a[64], b[64];
    double bw, lat;
    if (sscanf(line, "%63s %63s %lf %lf", a, b, &bw, &lat) != 4) continue;
    int i = container_index(cloud, a), j = container_index(cloud, b);
    if (i < 0 || j < 0) continue;
    cloud->bw[i][j] = bw;
    cloud->lat[i][j] = lat;
    pairs++;
  }
  if (pairs != cloud->n * (cloud->n - 1))
    return dem_fail(err, errlen, "%s: --emulate: demsim-routes gave %d routes between the %d containers, expected %d",
                    s->file, pairs, cloud->n, cloud->n * (cloud->n - 1));
  return 0;
}

/* The containers' cores from a host map: each its entry's cores (the map checked against the
 * scenario as the launcher checks it, every host this machine). */
static int cores_from_map(dem_emulator_t *em, const dem_scenario_t *s, char *err, size_t errlen)
{
  dem_hostmap_t *m = calloc(1, sizeof *m);
  dem_placement_t *place = calloc((size_t)s->ranks, sizeof *place);
  int rc = (!m || !place) ? dem_fail(err, errlen, "out of memory") : 0;
  if (rc == 0) rc = dem_scenario_read_hostmap(s->hostmap, m, err, errlen);
  if (rc == 0) rc = dem_placement_check(m, s, place, stderr, err, errlen);
  for (int i = 0; rc == 0 && i < em->cloud.n; i++) {
    dem_container_t *c = &em->cloud.c[i];
    const dem_hostmap_entry_t *e = &m->e[dem_hostmap_find(m, c->name)];
    if (!dem_hostmap_is_local(e->host))
      rc = dem_fail(err, errlen, "%s: --emulate: key 'native.hostmap' = \"%s\": container \"%s\" is on host \"%s\"; "
                    "expected this machine (localhost): the emulated cloud is this one machine", s->file, m->file,
                    c->name, e->host);
    snprintf(c->cpus, sizeof c->cpus, "%s", e->cores);
    c->ncores = e->ncores;
  }
  free(m);
  free(place);
  return rc;
}

/* The containers' core counts, shares and quota periods from demsim-routes --cores ("host cores
 * share period"); without a host map their cores in order, refused when they need more than this
 * machine has. */
static int plan_cores(dem_emulator_t *em, char *text, const dem_scenario_t *s, char *err, size_t errlen)
{
  dem_cloud_t *cloud = &em->cloud;
  for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
    char name[64];
    int n;
    double share, period;
    int i = sscanf(line, "%63s %d %lf %lf", name, &n, &share, &period) == 4 ? container_index(cloud, name) : -1;
    if (i >= 0) cloud->c[i].ncores = n, cloud->c[i].share = share, cloud->c[i].period = period;
  }
  if (s->hostmap[0]) return cores_from_map(em, s, err, errlen);
  long online = sysconf(_SC_NPROCESSORS_ONLN);
  int need = 0;
  char list[1024] = "";
  for (int i = 0; i < cloud->n; i++) {
    need += cloud->c[i].ncores;
    size_t used = strlen(list);
    snprintf(list + used, sizeof list - used, "%s%s: %d", i ? ", " : "", cloud->c[i].name, cloud->c[i].ncores);
  }
  if (need > online)
    return dem_fail(err, errlen, "%s: --emulate: the containers need %d cores (%s) and this machine has %ld; use "
                    "fewer or smaller containers, or a host map (native.hostmap) that shares cores", s->file, need, list,
                    online);
  for (int i = 0, next = 0; i < cloud->n; next += cloud->c[i].ncores, i++) {
    dem_container_t *c = &cloud->c[i];
    if (c->ncores == 1) snprintf(c->cpus, sizeof c->cpus, "%d", next);
    else snprintf(c->cpus, sizeof c->cpus, "%d-%d", next, next + c->ncores - 1);
  }
  return 0;
}

/* The whole plan; 0 or -1 with a message. */
static int plan(dem_emulator_t *em, const dem_scenario_t *s, char *err, size_t errlen)
{
  static char text[1 << 16];
  if (s->server[0])
    return dem_fail(err, errlen, "%s: --emulate: key 'device.server' is not supported (the emulator runs the ranks "
                    "only)", s->file);
  if (!s->platform[0] || s->n_hosts == 0)
    return dem_fail(err, errlen, "%s: --emulate needs 'platform.file' and 'platform.hosts': the containers and their "
                    "routes come from the SimGrid platform", s->file);
  if (access(s->platform, R_OK))
    return dem_fail(err, errlen, "%s: key 'platform.file' = \"%s\": cannot read it: %s", s->file, s->platform,
                    strerror(errno));
  if (plan_containers(em, s, err, errlen) || ask_routes(em, s, 0, text, sizeof text, err, errlen) ||
      read_routes(em, text, s, err, errlen) || ask_routes(em, s, 1, text, sizeof text, err, errlen))
    return -1;
  return plan_cores(em, text, s, err, errlen);
}

static void print_plan(const dem_emulator_t *em)
{
  const dem_cloud_t *cloud = &em->cloud;
  printf("emulated cloud: bridge %s (%s) on %s\n", cloud->bridge, cloud->bridge_addr, cloud->subnet);
  for (int i = 0; i < cloud->n; i++) {
    const dem_container_t *c = &cloud->c[i];
    printf("  %s: namespace %s, %s, cores %s", c->name, c->ns, c->addr, c->cpus);
    if (c->share < 1) printf(" (%.3g of each, a quota per %.3g s)", c->share, c->period);
    printf("\n");
    for (int j = 0; j < cloud->n; j++)
      if (j != i) printf("    to %s: %.6g B/s, %.6g s\n", cloud->c[j].name, cloud->bw[i][j], cloud->lat[i][j]);
  }
}

static void catch_signals(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  caught = 0;
  watched = 0;
  for (int i = 0; i < N_SIGNALS; i++) {
    sa.sa_handler = signals[i] == SIGPIPE ? on_pipe : on_signal;
    sigaction(signals[i], &sa, &saved[i]);
  }
}

int dem_emulator_start(const dem_scenario_t *s, int dry_run, dem_emulator_t **out)
{
  char err[2048];
  dem_emulator_t *em = calloc(1, sizeof *em);
  *out = NULL;
  if (!em) return 1;
  em->cloud.dry_run = dry_run;
  int rc = plan(em, s, err, sizeof err) ? 2 : 0;
  if (rc == 0 && !dry_run && geteuid() != 0) {
    snprintf(err, sizeof err, "--emulate needs root (network namespaces, tc, cgroups): run demsim as root");
    rc = 2;
  }
  if (rc == 0 && dem_cloud_name(&em->cloud, err, sizeof err)) rc = 1;
  if (rc) {
    fprintf(stderr, "demsim: %s\n", err);
    free(em);
    return rc;
  }
  if (dry_run) print_plan(em);
  else dem_cloud_clean_stale();
  catch_signals();
  if (dem_cloud_build(&em->cloud, err, sizeof err) || caught) {
    fprintf(stderr, "demsim: %s\n", caught ? "interrupted while building the emulated cloud" : err);
    dem_emulator_stop(&em);
    return 1;
  }
  for (int i = 0; i < em->cloud.n; i++)
    for (int k = 0; k < 3; k++) {
      char path[sizeof em->procs[0][0]];
      if (k < 2) snprintf(path, sizeof path, "/sys/fs/cgroup/%s/%s/cgroup.procs", k ? "cpu" : "cpuset", em->cloud.c[i].ns);
      else if (em->cloud.acct[i][0]) snprintf(path, sizeof path, "%s/cgroup.procs", em->cloud.acct[i]);
      else memcpy(path, em->procs[i][1], sizeof path); /* no accounting of its own: cpu's again */
      memcpy(em->procs[i][k], path, sizeof path);
    }
  setenv("PMIX_MCA_ptl_tcp_remote_connections", "1", 1); /* the ranks reach mpirun's PMIx server over the bridge */
  setenv("PMIX_MCA_ptl_tcp_if_include", em->cloud.bridge, 1);
  *out = em;
  return 0;
}

int dem_emulator_enter(dem_emulator_t *em, const char *name, char **args)
{
  int i = container_index(&em->cloud, name), k = 0;
  if (i < 0) return 0;
  const char *words[] = {"sh",           "-c",           ENTER_SCRIPT,       "demsim-enter",
                         em->procs[i][0], em->procs[i][1], em->procs[i][2], em->cloud.c[i].ns};
  for (size_t w = 0; w < sizeof words / sizeof words[0]; w++) args[k++] = (char *)words[w];
  return k;
}

int dem_emulator_mpirun(dem_emulator_t *em, const char *self, int argc, char **argv, char **args, int max)
{
  const char *fixed[] = {"mpirun", "--allow-run-as-root", "--oversubscribe", "--bind-to", "none", "--stdin", "none",
                         "-x", "PMIX_MCA_ptl_tcp_remote_connections", "-x", "PMIX_MCA_ptl_tcp_if_include", "--mca",
                         "btl", "tcp,self", "--mca", "btl_tcp_if_include", em->cloud.subnet, "-x",
                         "DEMSIM_CU_FROM_AFFINITY=1"};
  int k = 0;
  for (size_t w = 0; w < sizeof fixed / sizeof fixed[0]; w++) args[k++] = (char *)fixed[w];
  for (int r = 0; r < em->ranks;) {
    int c = em->rank_container[r % DEM_MAX_HOSTS], n = 1; /* consecutive ranks of one container: one context */
    while (r + n < em->ranks && em->rank_container[(r + n) % DEM_MAX_HOSTS] == c) n++;
    if (k + 12 + argc >= max) return -1;
    if (r) args[k++] = ":";
    snprintf(em->np[r % DEM_MAX_HOSTS], sizeof em->np[0], "%d", n);
    args[k++] = "-np";
    args[k++] = em->np[r % DEM_MAX_HOSTS];
    k += dem_emulator_enter(em, em->cloud.c[c].name, args + k);
    args[k++] = (char *)self;
    for (int i = 1; i < argc; i++) args[k++] = argv[i];
    r += n;
  }
  args[k] = NULL;
  return k;
}

int dem_emulator_wait(pid_t pid)
{
  int status = 0, ticks = -1;
  watched = pid;
  if (caught) kill(-pid, SIGTERM); /* caught before the watch began */
  for (;;) {
    pid_t got = waitpid(pid, &status, caught ? WNOHANG : 0);
    if (got == pid) break;
    if (got < 0 && errno != EINTR) return 1;
    if (caught && ++ticks == 100) kill(-pid, SIGKILL); /* 10 s after the signal */
    if (caught && got == 0) {
      struct timespec ts = {0, 100000000};
      nanosleep(&ts, NULL);
    }
  }
  watched = 0;
  if (WIFEXITED(status)) return WEXITSTATUS(status) == 0 ? 0 : (WEXITSTATUS(status) == 2 ? 2 : 1);
  return 1;
}

int dem_emulator_caught(void) { return caught; }

void dem_emulator_stop(dem_emulator_t **em)
{
  if (!em || !*em) return;
  dem_cloud_report(&(*em)->cloud, stdout);
  fflush(stdout); /* before the wires' counts, which the teardown makes them print to stderr */
  dem_cloud_clean((*em)->cloud.prefix, (*em)->cloud.dry_run);
  for (int i = 0; i < N_SIGNALS; i++) sigaction(signals[i], &saved[i], NULL);
  free(*em);
  *em = NULL;
}
