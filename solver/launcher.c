/* The launcher (see launcher.h). In the SMPI build it is its own small program (main below),
 * compiled as a regular executable: the MPI application is a shared object that only
 * smpirun can start. In the native build it is part of `demsim`, which re-executes itself
 * under mpirun when more than one rank is asked for. */
#define _GNU_SOURCE
#include "launcher.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "probe.h"
#include "scenario.h"
#ifdef DEMSIM_SMPI
#include "platform_check.h"
#endif

#define MAX_ARGS 512

static int run_and_wait(char **args, int dry_run)
{
  if (dry_run) {
    for (int i = 0; args[i]; i++) printf("%s%s", i ? " " : "", args[i]);
    printf("\n");
    return 0;
  }
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid < 0) {
    fprintf(stderr, "demsim: cannot start %s: %s\n", args[0], strerror(errno));
    return 1;
  }
  if (pid == 0) {
    execvp(args[0], args);
    fprintf(stderr, "demsim: cannot run %s: %s\n", args[0], strerror(errno));
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status)) {
    int rc = WEXITSTATUS(status);
    return rc == 0 ? 0 : (rc == 2 ? 2 : 1);
  }
  fprintf(stderr, "demsim: %s was killed by signal %d\n", args[0], WIFSIGNALED(status) ? WTERMSIG(status) : -1);
  return 1;
}

#ifdef DEMSIM_SMPI
static int make_dirs(const char *path)
{
  char tmp[DEM_PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s", path);
  for (char *p = tmp + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(tmp, 0777) && errno != EEXIST) return -1;
      *p = '/';
    }
  return (mkdir(tmp, 0777) && errno != EEXIST) ? -1 : 0;
}

static void self_dir(char *buf, size_t len)
{
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n <= 0) {
    snprintf(buf, len, ".");
    return;
  }
  buf[n] = '\0';
  char *slash = strrchr(buf, '/');
  if (slash) *slash = '\0';
}

int dem_launch_in_process(const dem_scenario_t *s) { (void)s; return 0; }

int dem_launch(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  if (!s->platform[0]) {
    fprintf(stderr, "demsim: %s: key 'platform.file': the SMPI build needs a SimGrid platform (e.g. "
            "\"../platforms/local.xml\")\n", s->file);
    return 2;
  }
  if (access(s->platform, R_OK)) {
    fprintf(stderr, "demsim: %s: key 'platform.file' = \"%s\": cannot read it: %s\n", s->file, s->platform,
            strerror(errno));
    return 2;
  }
  if (s->n_hosts == 0) {
    fprintf(stderr, "demsim: %s: key 'platform.hosts': expected the list of containers that run the ranks\n", s->file);
    return 2;
  }
  char stress_hosts[DEM_MAX_STRESS][64], err[1200];
  for (int i = 0; i < s->n_stress; i++) snprintf(stress_hosts[i], sizeof stress_hosts[i], "%s", s->stress[i].host);
  int used = s->ranks < s->n_hosts ? s->ranks : s->n_hosts;
  if (sim_platform_check(s->platform, (const char(*)[64])s->hosts, used, (const char(*)[64])stress_hosts, s->n_stress, err,
                         sizeof err)) {
    fprintf(stderr, "demsim: %s: %s\n", s->file, err);
    return 2;
  }
  if (make_dirs(s->out_dir)) {
    fprintf(stderr, "demsim: key 'output.dir' = \"%s\": cannot create it: %s\n", s->out_dir, strerror(errno));
    return 2;
  }
  /* one line per rank, each ending with a newline (SimGrid drops an unterminated last line) */
  char hostfile[DEM_PATH_MAX + 16];
  snprintf(hostfile, sizeof hostfile, "%s/hostfile", s->out_dir);
  FILE *h = fopen(hostfile, "w");
  if (!h) {
    fprintf(stderr, "demsim: cannot write %s: %s\n", hostfile, strerror(errno));
    return 2;
  }
  for (int r = 0; r < s->ranks; r++) fprintf(h, "%s\n", s->hosts[r % s->n_hosts]);
  fclose(h);

  char dir[DEM_PATH_MAX], app[DEM_PATH_MAX + 16], np[16];
  self_dir(dir, sizeof dir);
  snprintf(app, sizeof app, "%s/demsim-app", dir);
  snprintf(np, sizeof np, "%d", s->ranks);
  char *args[MAX_ARGS];
  int k = 0;
  args[k++] = "smpirun";
  args[k++] = "-np";
  args[k++] = np;
  args[k++] = "-platform";
  args[k++] = (char *)s->platform;
  args[k++] = "-hostfile";
  args[k++] = hostfile;
  /* computations are charged explicitly by sim/ (kernels run in OpenCL threads SMPI cannot see) */
  args[k++] = "--cfg=smpi/simulate-computation:no";
  args[k++] = "--cfg=smpi/display-timing:no";
  args[k++] = "--log=root.thres:warning";
  args[k++] = "--log=root.fmt:%m%n";
  args[k++] = app;
  for (int i = 1; i < argc && k < MAX_ARGS - 1; i++) args[k++] = argv[i];
  args[k] = NULL;
  return run_and_wait(args, cli->dry_run);
}

int main(int argc, char **argv)
{
  dem_cli_t cli;
  dem_scenario_t *s = calloc(1, sizeof *s);
  char err[2048];
  if (!s) return 1;
  if (dem_cli_parse(argc, argv, &cli, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
  switch (cli.command) {
  case DEM_CMD_HELP: dem_cli_print_help(stdout); return 0;
  case DEM_CMD_VERSION: printf("demsim 0.1 (SMPI build)\n"); return 0;
  case DEM_CMD_KEYS: dem_scenario_print_keys(stdout); return 0;
  case DEM_CMD_PROBE:
    fprintf(stderr, "demsim: %s\n", DEM_PROBE_NATIVE_ONLY);
    free(s);
    return 2;
  default: break;
  }
  if (dem_cli_load_scenario(&cli, s, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    free(s);
    return 2;
  }
  int rc = dem_launch(argc, argv, s, &cli);
  free(s);
  return rc;
}

#else /* native build */

int dem_launch_in_process(const dem_scenario_t *s)
{
  /* declared stress needs the launcher, which starts the real stress-ng processes */
  return (s->ranks == 1 && s->n_stress == 0) || getenv("OMPI_COMM_WORLD_SIZE") != NULL;
}

/* Real co-located load on this machine: stress-ng, constant or on/off periodic. */
static pid_t start_stress(const dem_stress_t *st)
{
  char cmd[512];
  char what[128];
  if (st->vm)
    snprintf(what, sizeof what, "stress-ng --quiet --vm %d --vm-bytes %.0f --vm-keep", st->workers, st->bytes);
  else
    snprintf(what, sizeof what, "stress-ng --quiet --cpu %d --cpu-method fft", st->workers);
  if (st->on_s > 0)
    snprintf(cmd, sizeof cmd, "sleep %g; while :; do %s --timeout %gs; sleep %g; done", st->start_s, what, st->on_s,
             st->off_s);
  else
    snprintf(cmd, sizeof cmd, "sleep %g; exec %s", st->start_s, what);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  return pid;
}

/* Each rank's OpenCL device gets its share of this machine's cores: PoCL's CPU driver starts a
 * worker thread per core in every process, so N ranks would run N x cores threads on the cores
 * and slow each other down. The share is PoCL's compute-unit limit (POCL_CPU_MAX_CU_COUNT, unless
 * the user set it), inherited by the ranks mpirun starts here; when the ranks' shares fit on the
 * cores, each rank is also bound to its own (as a container's cores are pinned). Returns the
 * share; adds mpirun's mapping options to args. */
static int share_cores(int ranks, char **args, int *k, char *pe, size_t pelen, int dry_run)
{
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  int share = (int)(cores / ranks) > 0 ? (int)(cores / ranks) : 1;
  const char *user = getenv("POCL_CPU_MAX_CU_COUNT");
  if (user && *user) {
    if (dry_run) printf("POCL_CPU_MAX_CU_COUNT=%s (set by the user) ", user);
  } else {
    char v[16];
    snprintf(v, sizeof v, "%d", share);
    setenv("POCL_CPU_MAX_CU_COUNT", v, 1);
    if (dry_run) printf("POCL_CPU_MAX_CU_COUNT=%s ", v);
  }
  if ((long)ranks * share <= cores) {
    snprintf(pe, pelen, "slot:PE=%d", share);
    args[(*k)++] = "--map-by";
    args[(*k)++] = pe;
    args[(*k)++] = "--bind-to";
    args[(*k)++] = "core";
  }
  return share;
}

int dem_launch(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  char np[16], self[DEM_PATH_MAX], pe[32];
  snprintf(np, sizeof np, "%d", s->ranks);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) snprintf(self, sizeof self, "%s", argv[0]);
  else self[n] = '\0';
  char *args[MAX_ARGS];
  int k = 0;
  args[k++] = "mpirun";
  args[k++] = "--oversubscribe";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  share_cores(s->ranks, args, &k, pe, sizeof pe, cli->dry_run);
  args[k++] = "-np";
  args[k++] = np;
  args[k++] = self;
  for (int i = 1; i < argc && k < MAX_ARGS - 1; i++) args[k++] = argv[i];
  args[k] = NULL;
  pid_t stress[DEM_MAX_STRESS];
  int n_stress = 0;
  if (!cli->dry_run)
    for (int i = 0; i < s->n_stress; i++) stress[n_stress++] = start_stress(&s->stress[i]);
  int rc = run_and_wait(args, cli->dry_run);
  for (int i = 0; i < n_stress; i++)
    if (stress[i] > 0) {
      kill(-stress[i], SIGTERM);
      waitpid(stress[i], NULL, 0);
    }
  return rc;
}
#endif
