/* The launcher (see launcher.h). In the SMPI build it is its own small program (main below),
 * compiled as a regular executable: the MPI application is a shared object that only
 * smpirun can start. In the native build it is part of `demsim`, which re-executes itself
 * under mpirun when more than one rank is asked for. */
#define _GNU_SOURCE
#include "run/launcher.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/files.h"
#include "base/version.h"
#include "failure/failure_log.h"
#include "run/cli.h"
#ifndef DEMSIM_SMPI
#include "run/emulator.h"
#endif
#include "run/placement.h"
#include "run/probe.h"
#include "scenario/hostmap.h"
#include "scenario/scenario.h"
#ifdef DEMSIM_SMPI
#include "platform_check.h"
#endif

#define MAX_ARGS 512
#ifdef DEMSIM_SMPI
#define DEM_LAUNCH_CLOCK "simulated"
#else
#define DEM_LAUNCH_CLOCK "wall clock"
#endif

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


/* A temporary folder of its own for the mpirun or smpirun started next (dem_files_tmpdir_push: two
 * runs at once, a sweep's -j 2 or a test suite's, would otherwise trip over each other's Open MPI
 * session or SMPI's copies of the privatised libraries); own_tmpdir_end removes it with what the
 * run left there (SMPI removes its copies when the ranks end well, but a run that aborts or is
 * killed leaves them, several MB a rank, and a test suite full of such runs would fill the disk).
 * 0, or 1 with a message. */
static int own_tmpdir(char *tmp, char *saved, const char *prefix)
{
  if (dem_files_tmpdir_push(prefix, tmp, DEM_PATH_MAX, saved, DEM_PATH_MAX) == 0) return 0;
  fprintf(stderr, "demsim: cannot create a temporary directory %s: %s\n", tmp, strerror(errno));
  return 1;
}

static void own_tmpdir_end(const char *tmp, const char *saved)
{
  if (dem_files_tmpdir_pop(tmp, saved))
    fprintf(stderr, "demsim: cannot remove the temporary directory %s: %s\n", tmp, strerror(errno));
}

#ifdef DEMSIM_SMPI
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

/* The checks only the SMPI build makes (platform, hosts, output directory), then DIR/hostfile:
 * one line per rank, each ending with a newline (SimGrid drops an unterminated last line).
 * 0, or 2 with a message. */
static int write_hostfile(const dem_scenario_t *s, char *hostfile, size_t len)
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
  if (sim_platform_check(s->platform, (const char(*)[64])s->hosts, used, s->server[0] ? s->server : NULL,
                         (const char(*)[64])stress_hosts, s->n_stress, err, sizeof err)) {
    fprintf(stderr, "demsim: %s: %s\n", s->file, err);
    return 2;
  }
  if (dem_files_make_dirs(s->out_dir)) {
    fprintf(stderr, "demsim: key 'output.dir' = \"%s\": cannot create it: %s\n", s->out_dir, strerror(errno));
    return 2;
  }
  snprintf(hostfile, len, "%s/hostfile", s->out_dir);
  FILE *h = fopen(hostfile, "w");
  if (!h) {
    fprintf(stderr, "demsim: cannot write %s: %s\n", hostfile, strerror(errno));
    return 2;
  }
  for (int r = 0; r < s->ranks; r++) fprintf(h, "%s\n", s->hosts[r % s->n_hosts]);
  if (s->server[0]) fprintf(h, "%s\n", s->server); /* the device server follows the ranks */
  fclose(h);
  return 0;
}

/* Runs smpirun (args) in a temporary folder of its own (smpirun takes it from TMPDIR; its -tmpdir
 * option takes the directory for the program). smpirun exits with 0 when a rank calls MPI_Abort
 * (SimGrid kills the others and reports a deadlock): a run that ends well writes DIR/summary.json
 * last, so one without it failed (run_smpirun). 0, or 1 with a message. */
static int run_own_tmpdir(char **args)
{
  char tmp[DEM_PATH_MAX], saved[DEM_PATH_MAX];
  if (own_tmpdir(tmp, saved, "demsim-smpi")) return 1;
  int rc = run_and_wait(args, 0);
  own_tmpdir_end(tmp, saved);
  return rc;
}

static int run_smpirun(char **args, const char *out_dir)
{
  char summary[DEM_PATH_MAX + 16];
  snprintf(summary, sizeof summary, "%s/summary.json", out_dir);
  if (unlink(summary) && errno != ENOENT) {
    fprintf(stderr, "demsim: cannot remove the previous %s: %s\n", summary, strerror(errno));
    return 1;
  }
  int rc = run_own_tmpdir(args);
  if (rc == 0 && access(summary, F_OK)) {
    /* a container lost (failure.*) ends the ranks with 0 (main.c): the record's last attempt
     * ended in a loss; dem_launch restarts it and says so */
    dem_failure_log_t *log = malloc(sizeof *log);
    int lost = log && dem_failure_log_read(out_dir, log) == 0 && log->n_losses >= log->n_attempts && log->n_losses > 0;
    free(log);
    if (!lost)
      fprintf(stderr, "demsim: the run stopped before writing %s (a rank aborted: see its message above)\n", summary);
    rc = 1;
  }
  return rc;
}

/* `demsim exec` (SMPI build): the program, built with smpicc, under smpirun on the scenario's
 * platform and hosts, with SMPI's own defaults (its computations benchmarked and charged). */
int dem_launch_program(const dem_scenario_t *s, const dem_cli_t *cli)
{
  char hostfile[DEM_PATH_MAX + 16], np[16];
  int bad = write_hostfile(s, hostfile, sizeof hostfile);
  if (bad) return bad;
  snprintf(np, sizeof np, "%d", s->ranks);
  char *args[MAX_ARGS];
  int k = 0;
  const char *fixed[] = {"smpirun", "-np", np, "-platform", s->platform, "-hostfile", hostfile,
                         "--cfg=smpi/display-timing:no", "--log=root.thres:warning", "--log=root.fmt:%m%n"};
  for (size_t w = 0; w < sizeof fixed / sizeof fixed[0]; w++) args[k++] = (char *)fixed[w];
  for (int i = 0; cli->program[i] && k < MAX_ARGS - 1; i++) args[k++] = cli->program[i];
  args[k] = NULL;
  return cli->dry_run ? run_and_wait(args, 1) : run_own_tmpdir(args);
}

static int launch_once(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  char hostfile[DEM_PATH_MAX + 16];
  int bad = write_hostfile(s, hostfile, sizeof hostfile);
  if (bad) return bad;
  char dir[DEM_PATH_MAX], app[DEM_PATH_MAX + 24], np[16], zoltan[DEM_PATH_MAX + 64];
  self_dir(dir, sizeof dir);
  snprintf(app, sizeof app, "%s/demsim-app", dir);
  snprintf(np, sizeof np, "%d", s->ranks + (s->server[0] ? 1 : 0));
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
  /* the speed monitor (monitor.c) polls its mailbox with MPI_Test at every step: a poll costs a
   * real MPI well under a microsecond, where SMPI would inject 0.1 ms, growing with each poll
   * that finds nothing */
  args[k++] = "--cfg=smpi/test:0";
  /* Zoltan is one shared library for every rank (CMakeLists.txt), but PHG keeps state in
   * globals (a serial communicator the first caller sets up, phg_serialpartition.c; the
   * random-number state): the hypergraph partitioners get a copy per rank */
  snprintf(zoltan, sizeof zoltan, "--cfg=smpi/privatize-libs:%s/libdemsim-zoltan.so", dir);
  if (strcmp(s->partitioner, "PHG") == 0 || strcmp(s->partitioner, "GRAPH") == 0) args[k++] = zoltan;
  /* link noise sets bandwidths at run time: the lazy network model would ignore a raised one
   * (sim/noise_sg.h) */
  if (s->noise.enabled && s->noise.net_cv > 0.0) args[k++] = "--cfg=network/optim:Full";
  args[k++] = "--log=root.thres:warning";
  args[k++] = "--log=root.fmt:%m%n";
  args[k++] = app;
  for (int i = 1; i < argc && k < MAX_ARGS - 1; i++) {
    dem_cli_hide_spaces(argv[i]); /* smpirun splits at spaces (cli.h) */
    args[k++] = argv[i];
  }
  args[k] = NULL;
  return cli->dry_run ? run_and_wait(args, 1) : run_smpirun(args, s->out_dir);
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
  case DEM_CMD_VERSION: printf("demsim " DEM_VERSION " (SMPI build)\n"); return 0;
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
  if (s->emulate) {
    fprintf(stderr, "demsim: %s: --emulate (native.emulate) runs the scenario on an emulated cloud on this machine: "
            "use the native build (build/native/demsim); the SMPI build simulates the cloud instead\n", s->file);
    free(s);
    return 2;
  }
  int rc = cli.command == DEM_CMD_EXEC ? dem_launch_program(s, &cli) : dem_launch(argc, argv, s, &cli);
  free(s);
  return rc;
}

#else /* native build */

int dem_launch_in_process(const dem_scenario_t *s)
{
  /* declared stress needs the launcher, which starts the real stress-ng processes; a host map
   * needs it to place even a single rank */
  return (s->ranks == 1 && s->n_stress == 0 && !s->hostmap[0] && !s->server[0] && !s->emulate) ||
         getenv("OMPI_COMM_WORLD_SIZE") != NULL;
}

/* The shell loop of a stress: constant, or on/off periodic, after its start delay. Under a host
 * map each command runs in the background and is waited for, so that the TERM trap fires at once;
 * the trap stops the group and waits for it, so that no stress-ng outlives the shell (and its
 * mpirun). */
static void stress_script(const dem_stress_t *st, int trap, char *cmd, size_t len)
{
  char what[128];
  if (st->vm)
    snprintf(what, sizeof what, "stress-ng --quiet --vm %d --vm-bytes %.0f --vm-keep", st->workers, st->bytes);
  else
    snprintf(what, sizeof what, "stress-ng --quiet --cpu %d --cpu-method fft", st->workers);
  if (!trap && st->on_s > 0)
    snprintf(cmd, len, "sleep %g; while :; do %s --timeout %gs; sleep %g; done", st->start_s, what, st->on_s, st->off_s);
  else if (!trap)
    snprintf(cmd, len, "sleep %g; exec %s", st->start_s, what);
  else if (st->on_s > 0)
    snprintf(cmd, len, "trap \"trap \\\"\\\" TERM; kill 0; wait; exit 0\" TERM; sleep %g & wait $!; while :; do %s --timeout %gs & wait $!; "
             "sleep %g & wait $!; done", st->start_s, what, st->on_s, st->off_s);
  else
    snprintf(cmd, len, "trap \"trap \\\"\\\" TERM; kill 0; wait; exit 0\" TERM; sleep %g & wait $!; %s & wait $!", st->start_s, what);
}

/* Starts args in a process group of its own. */
static pid_t start_group(char **args)
{
  fflush(stdout);
  fflush(stderr);
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    execvp(args[0], args);
    _exit(127);
  }
  return pid;
}

/* Real co-located load on this machine: stress-ng, constant or on/off periodic. */
static pid_t start_stress(const dem_stress_t *st)
{
  char cmd[640];
  stress_script(st, 0, cmd, sizeof cmd);
  char *args[] = {"/bin/sh", "-c", cmd, NULL};
  return start_group(args);
}

/* Stops the stress launched as pids (SIGTERM, then SIGKILL to the group after a few seconds). A
 * stress that ended by itself before the run did (it could not start: its mpirun failed, stress-ng
 * is missing) is said: the run then had no neighbour, and its times show none. */
static void stop_stress(const pid_t *pid, int n, int group)
{
  for (int i = 0; i < n; i++) {
    int status = 0;
    if (pid[i] > 0 && waitpid(pid[i], &status, WNOHANG) == pid[i]) {
      fprintf(stderr, "demsim: warning: stress[%d] ended before the run did (%s %d): the run had no such neighbour\n",
              i, WIFEXITED(status) ? "exit" : "signal", WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
      continue;
    }
    if (pid[i] > 0) kill(group ? -pid[i] : pid[i], SIGTERM);
  }
  for (int i = 0; i < n; i++) {
    if (pid[i] <= 0) continue;
    int tries = 0;
    while (waitpid(pid[i], NULL, WNOHANG) == 0) {
      if (++tries == 50) kill(-pid[i], SIGKILL); /* 5 s */
      struct timespec ts = {0, 100000000};
      nanosleep(&ts, NULL);
    }
  }
}

/* Each rank's OpenCL device gets its share of this machine's cores: PoCL's CPU driver starts a
 * worker thread per core in every process, so N ranks would run N x cores threads on the cores
 * and slow each other down. The share is PoCL's thread limit (dem_pocl_thread_limit; unless
 * the user set it), inherited by the ranks mpirun starts here; when the ranks' shares fit on the
 * cores, each rank is also bound to its own (as a container's cores are pinned). Returns the
 * share; adds mpirun's mapping options to args. */
static int share_cores(int ranks, char **args, int *k, char *pe, size_t pelen, int dry_run)
{
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores < 1) cores = 1;
  int share = (int)(cores / ranks) > 0 ? (int)(cores / ranks) : 1;
  const char *user = dem_pocl_thread_limit(share, 0);
  if (dry_run) {
    if (user) printf("PoCL thread limit %s (set by the user) ", user);
    else printf("POCL_MAX_PTHREAD_COUNT=%d POCL_CPU_MAX_CU_COUNT=%d ", share, share);
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

/* Host map (native.hostmap): the ranks placed by an Open MPI hostfile and rankfile, each pinned
 * to its container's cores; PoCL in each rank then takes as many compute units as the rank has
 * CPUs (DEMSIM_CU_FROM_AFFINITY, solver/device/device.c) instead of a share of this machine. Each stress
 * starts on its container's host through mpirun (no remote shell to set up), pinned with taskset. */
static void print_hostfile(FILE *f, const dem_scenario_t *s, const dem_placement_t *place)
{
  for (int r = 0; r < s->ranks; r++) {
    int first = 1, slots = 0;
    for (int q = 0; q < s->ranks; q++)
      if (strcmp(place[q].host, place[r].host) == 0) {
        if (q < r) first = 0;
        slots++;
      }
    if (first) fprintf(f, "%s slots=%d\n", place[r].host, slots);
  }
}

static void print_rankfile(FILE *f, const dem_scenario_t *s, const dem_placement_t *place)
{
  for (int r = 0; r < s->ranks; r++) fprintf(f, "rank %d=%s slot=%s\n", r, place[r].host, place[r].slot);
}

typedef void (*placement_printer_t)(FILE *, const dem_scenario_t *, const dem_placement_t *);

/* Writes (or, in a dry run, prints) one placement file. */
static int placement_file(const char *path, placement_printer_t print, const dem_scenario_t *s,
                          const dem_placement_t *place, int dry_run)
{
  if (dry_run) {
    printf("%s:\n", path);
    print(stdout, s, place);
    return 0;
  }
  FILE *f = fopen(path, "w");
  if (!f) {
    fprintf(stderr, "demsim: cannot write %s: %s\n", path, strerror(errno));
    return 2;
  }
  print(f, s, place);
  return fclose(f) ? 2 : 0;
}

/* With a declared loss (failure.*) a rank is killed on purpose: mpirun's boxes about a process
 * killed by a signal would read like a crash, so it is quiet; the launcher says what happened
 * (dem_launch). */
static int quiet_for_losses(const dem_scenario_t *s, char **args, int k)
{
  if (s->failure_at > 0 || s->failure_mtbf > 0) args[k++] = "--quiet";
  return k;
}

/* mpirun [--allow-run-as-root] --host HOST -np 1 --bind-to none taskset -c CORES sh -c SCRIPT */
static void stress_args(const dem_hostmap_entry_t *e, const dem_stress_t *st, char *script, size_t len, char **args)
{
  int k = 0;
  stress_script(st, 1, script, len);
  args[k++] = "mpirun";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  args[k++] = "--host";
  args[k++] = (char *)e->host;
  args[k++] = "-np";
  args[k++] = "1";
  args[k++] = "--bind-to";
  args[k++] = "none";
  args[k++] = "taskset";
  args[k++] = "-c";
  args[k++] = (char *)e->cores;
  args[k++] = "sh";
  args[k++] = "-c";
  args[k++] = script;
  args[k] = NULL;
}

static void print_args(char **args)
{
  for (int i = 0; args[i]; i++) printf(strchr(args[i], ' ') ? "%s'%s'" : "%s%s", i ? " " : "", args[i]);
  printf("\n");
}

static void self_path(char *self, size_t len, const char *argv0)
{
  ssize_t n = readlink("/proc/self/exe", self, len - 1);
  if (n <= 0) snprintf(self, len, "%s", argv0);
  else self[n] = '\0';
}

/* Writes the placement, starts the stresses and the ranks, stops the stresses at the end. */
static int run_hostmap(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli, const dem_hostmap_t *m,
                       const dem_placement_t *place)
{
  char hostfile[DEM_PATH_MAX + 16], rankfile[DEM_PATH_MAX + 16], np[16], self[DEM_PATH_MAX];
  snprintf(hostfile, sizeof hostfile, "%s/hostfile", s->out_dir);
  snprintf(rankfile, sizeof rankfile, "%s/rankfile", s->out_dir);
  snprintf(np, sizeof np, "%d", s->ranks);
  self_path(self, sizeof self, argv[0]);
  if (!cli->dry_run && dem_files_make_dirs(s->out_dir)) {
    fprintf(stderr, "demsim: key 'output.dir' = \"%s\": cannot create it: %s\n", s->out_dir, strerror(errno));
    return 2;
  }
  if (placement_file(hostfile, print_hostfile, s, place, cli->dry_run) ||
      placement_file(rankfile, print_rankfile, s, place, cli->dry_run))
    return 2;
  char *args[MAX_ARGS];
  int k = 0;
  args[k++] = "mpirun";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  k = quiet_for_losses(s, args, k);
  const char *fixed[] = {"--hostfile", hostfile, "--rankfile", rankfile, "-np", np, "-x", "DEMSIM_CU_FROM_AFFINITY=1", self};
  for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) args[k++] = (char *)fixed[i];
  for (int i = 1; i < argc && k < MAX_ARGS - 1; i++) args[k++] = argv[i];
  args[k] = NULL;
  pid_t stress[DEM_MAX_STRESS];
  int n_stress = 0;
  for (int i = 0; i < s->n_stress; i++) {
    char script[640], *sargs[16];
    stress_args(&m->e[dem_hostmap_find(m, s->stress[i].host)], &s->stress[i], script, sizeof script, sargs);
    if (cli->dry_run) {
      printf("stress[%d] on %s: ", i, s->stress[i].host);
      print_args(sargs);
    } else {
      stress[n_stress++] = start_group(sargs);
    }
  }
  int rc = run_and_wait(args, cli->dry_run);
  stop_stress(stress, n_stress, 0);
  return rc;
}

static int launch_hostmap(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  dem_hostmap_t *m = calloc(1, sizeof *m);
  dem_placement_t *place = calloc((size_t)s->ranks, sizeof *place);
  char err[2048];
  int rc = (!m || !place) ? 1 : 0;
  if (rc == 0 && (dem_scenario_read_hostmap(s->hostmap, m, err, sizeof err) ||
                  dem_placement_check(m, s, place, stderr, err, sizeof err))) {
    fprintf(stderr, "demsim: %s\n", err);
    rc = 2;
  }
  if (rc == 0) rc = run_hostmap(argc, argv, s, cli, m, place);
  free(m);
  free(place);
  return rc;
}

/* On an emulated cloud (native.emulate, run/emulator.h): the cloud built, each stress started in
 * its container, mpirun with each rank in its own, all stopped and the cloud removed at the end,
 * also when a signal stops the run. */
static int launch_emulated(const char *self, int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  char scripts[DEM_MAX_STRESS][640];
  dem_emulator_t *em = NULL;
  int rc = dem_emulator_start(s, cli->dry_run, &em), max = 64 + (s->ranks + 1) * (argc + 16);
  char **args = rc ? NULL : calloc((size_t)max, sizeof *args);
  if (rc == 0 && (!args || dem_emulator_mpirun(em, self, argc, argv, args, max) < 0)) rc = 1;
  pid_t stress[DEM_MAX_STRESS];
  int n_stress = 0;
  for (int i = 0; rc == 0 && i < s->n_stress && !dem_emulator_caught(); i++) {
    char *sargs[16];
    int k = dem_emulator_enter(em, s->stress[i].host, sargs);
    stress_script(&s->stress[i], 0, scripts[i], sizeof scripts[i]);
    const char *more[] = {"sh", "-c", scripts[i], NULL};
    for (int w = 0; w < 4; w++) sargs[k++] = (char *)more[w];
    if (cli->dry_run) printf("stress[%d] in %s: ", i, s->stress[i].host), print_args(sargs);
    else stress[n_stress++] = start_group(sargs);
  }
  if (rc == 0 && cli->dry_run) print_args(args);
  else if (rc == 0 && !dem_emulator_caught()) rc = dem_emulator_wait(start_group(args));
  stop_stress(stress, n_stress, 1);
  if (em && dem_emulator_caught()) {
    fprintf(stderr, "demsim: stopped by signal %d; the emulated cloud is removed\n", dem_emulator_caught());
    rc = 1;
  }
  dem_emulator_stop(&em);
  free(args);
  return rc;
}

static int launch_plain(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  if (s->emulate) {
    char self[DEM_PATH_MAX];
    self_path(self, sizeof self, argv[0]);
    return launch_emulated(self, argc, argv, s, cli);
  }
  if (s->hostmap[0]) return launch_hostmap(argc, argv, s, cli);
  char np[16], self[DEM_PATH_MAX], pe[32];
  int procs = s->ranks + (s->server[0] ? 1 : 0); /* a device server is one more process */
  snprintf(np, sizeof np, "%d", procs);
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) snprintf(self, sizeof self, "%s", argv[0]);
  else self[n] = '\0';
  char *args[MAX_ARGS];
  int k = 0;
  args[k++] = "mpirun";
  args[k++] = "--oversubscribe";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  k = quiet_for_losses(s, args, k);
  share_cores(procs, args, &k, pe, sizeof pe, cli->dry_run);
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
  stop_stress(stress, n_stress, 1);
  return rc;
}

/* One launch (native build), its mpirun and stresses in a temporary folder of their own. */
static int launch_once(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  char tmp[DEM_PATH_MAX], saved[DEM_PATH_MAX];
  if (cli->dry_run) return launch_plain(argc, argv, s, cli);
  if (own_tmpdir(tmp, saved, "demsim-mpi")) return 1;
  int rc = launch_plain(argc, argv, s, cli);
  own_tmpdir_end(tmp, saved);
  return rc;
}

/* `demsim exec` (native build): the program with one rank per run.ranks, in the emulated
 * cloud's containers (--emulate), or under a plain mpirun on this machine. */
static int launch_program(const dem_scenario_t *s, const dem_cli_t *cli)
{
  int argc = 0;
  while (cli->program[argc]) argc++;
  if (s->emulate) return launch_emulated(cli->program[0], argc, cli->program, s, cli);
  char np[16], *args[MAX_ARGS];
  int k = 0;
  snprintf(np, sizeof np, "%d", s->ranks);
  args[k++] = "mpirun";
  args[k++] = "--oversubscribe";
  if (geteuid() == 0) args[k++] = "--allow-run-as-root";
  args[k++] = "-np";
  args[k++] = np;
  for (int i = 0; i < argc && k < MAX_ARGS - 1; i++) args[k++] = cli->program[i];
  args[k] = NULL;
  return run_and_wait(args, cli->dry_run);
}

int dem_launch_program(const dem_scenario_t *s, const dem_cli_t *cli)
{
  char tmp[DEM_PATH_MAX], saved[DEM_PATH_MAX];
  if (cli->dry_run) return launch_program(s, cli);
  if (own_tmpdir(tmp, saved, "demsim-mpi")) return 1;
  int rc = launch_program(s, cli);
  own_tmpdir_end(tmp, saved);
  return rc;
}
#endif

/* A container lost mid-run (failure.*, solver/failure/failure.h): the run stopped, DIR/failures.txt names
 * the lost container and the last checkpoint. Launch again on the surviving containers, one rank
 * fewer (the ranks of the lost container gone), from that checkpoint (the partition and the
 * balancing weights start afresh: the checkpoint reader takes equal blocks, its weights apply only
 * to the same rank count), until the run ends or fails otherwise. */
int dem_launch(int argc, char **argv, const dem_scenario_t *s, const dem_cli_t *cli)
{
  int declared = s->failure_at > 0 || s->failure_mtbf > 0;
  if (declared && cli->attempt == 0 && !cli->dry_run) {
    char record[DEM_PATH_MAX + 32]; /* an earlier run's record must not restart this one */
    dem_failure_log_path(s->out_dir, record, sizeof record);
    remove(record);
  }
  int rc = launch_once(argc, argv, s, cli);
  if (!declared || cli->dry_run) return rc;
  dem_scenario_t *now = malloc(sizeof *now);
  dem_failure_log_t *log = malloc(sizeof *log);
  char **args = calloc(MAX_ARGS, sizeof *args);
  static char hosts[DEM_MAX_HOSTS * DEM_NAME_MAX + 32], sites[DEM_MAX_HOSTS * 4 + 32], ranks[32], attempt[32],
      restart[DEM_PATH_MAX + 32];
  const dem_failure_loss_t *l = NULL;
  int from_dir = 0; /* DIR/checkpoint.h5 holds the state to restart from */
  if (now) *now = *s;
  for (int k = cli->attempt + 1; rc == 1 && now && log && args && dem_failure_log_read(s->out_dir, log) == 0 &&
                                 (l = dem_failure_log_loss(log, k - 1)) != NULL; k++) {
    dem_scenario_drop_host(now, l->host);
    int n = now->ranks;
    from_dir |= l->written; /* or the attempt that was lost began from it and wrote none */
    /* a planned event, not a crash: one line on stdout, with the run's progress */
    printf("demsim: container %s lost at %.4g s (%s, step %ld); restarting from step %ld (%s) on %d container%s\n",
           l->host, l->at, DEM_LAUNCH_CLOCK, l->step, l->checkpoint_step,
           l->checkpoint_step > 0 ? "checkpoint" : "the start", n, n > 1 ? "s" : "");
    fflush(stdout);
    int m = snprintf(hosts, sizeof hosts, "platform.hosts=");
    for (int r = 0; r < n; r++) m += snprintf(hosts + m, sizeof hosts - (size_t)m, "%s%s", r ? "," : "", now->hosts[r]);
    snprintf(ranks, sizeof ranks, "run.ranks=%d", n);
    snprintf(attempt, sizeof attempt, "%d", k);
    snprintf(restart, sizeof restart, "%s/checkpoint.h5", s->out_dir);
    int a = 0;
    for (int i = 0; i < argc && a < MAX_ARGS - 10; i++) args[a++] = argv[i];
    m = snprintf(sites, sizeof sites, "platform.sites=");
    for (int r = 0; r < now->n_site_list; r++) m += snprintf(sites + m, sizeof sites - (size_t)m, "%s%d", r ? "," : "", now->site[r]);
    const char *more[] = {"--set", hosts, "--set", ranks, "--attempt", attempt, "--restart", restart, "--set", sites};
    for (int i = 0; i < 6; i++) args[a++] = (char *)more[i];
    for (int i = 6; from_dir && i < 8; i++) args[a++] = (char *)more[i];
    for (int i = 8; now->n_site_list && i < 10; i++) args[a++] = (char *)more[i];
    args[a] = NULL;
    rc = launch_once(a, args, now, cli);
  }
  free(now);
  free(log);
  free(args);
  return rc;
}
