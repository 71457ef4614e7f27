/* Command-line parsing with getopt_long: every option is in `options[]` and in the help. */
#include "base/error.h"
#include "run/cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario/scenario.h"


void dem_cli_print_help(void *stream)
{
  fprintf((FILE *)stream,
          "Usage: demsim run SCENARIO [options]     run a scenario (a libconfig .cfg file)\n"
          "       demsim probe [options]            measure this cluster's nodes for a SimGrid platform\n"
          "       demsim exec SCENARIO [options] -- PROGRAM [ARGS]\n"
          "                                         run any MPI program on the scenario's cloud: one rank per\n"
          "                                         run.ranks on platform.hosts, simulated (SMPI build: smpirun on\n"
          "                                         platform.file; PROGRAM built with smpicc) or emulated\n"
          "                                         (native build with --emulate, as root)\n"
          "       demsim keys                       list every scenario key with its default\n"
          "       demsim --help | --version\n"
          "\n"
          "Options of `run` (each is a shortcut for --set):\n"
          "  -o, --out DIR              output directory (output.dir); default: out\n"
          "  -n, --particles N          particle count (problem.particles)\n"
          "  -s, --steps N              time steps (time.steps)\n"
          "  -p, --policy P             NOW, RW, RW5, EWMA, PI or RUPER (run.policy)\n"
          "  -r, --repartition-every N  steps between repartitions (run.repartition_every)\n"
          "  -P, --ranks P              MPI processes (run.ranks)\n"
          "  -b, --backend B            opencl or reference (device.backend)\n"
          "  -S, --set KEY=VALUE        override any scenario key (repeatable; see `demsim keys`); VALUE as the\n"
          "                             file writes it (0.3, \"RIB\", '[\"a\", \"b\"]') or bare (RIB, a,b)\n"
          "  -R, --restart FILE         continue from a checkpoint (DIR/checkpoint.h5 of an earlier run of the\n"
          "                             same problem; output.checkpoint_every writes them) up to time.steps\n"
          "  -q, --quiet                no progress and no configuration echo\n"
          "      --emulate              run on an emulated cloud on this machine (native.emulate; native build,\n"
          "                             as root): a network namespace and cpuset cgroup per container, each pair\n"
          "                             of containers' traffic shaped by tc to its route in platform.file\n"
          "      --dry-run              validate the scenario and print the launch command only\n"
          "      --attempt K            the K-th restart after a lost container (failure.*); demsim passes it\n"
          "                             itself when it restarts from DIR/failures.txt\n"
          "\n"
          "Options of `probe` (native build; starts itself under mpirun, one rank per host):\n"
          "      --hosts H1,H2,...      the hosts to measure; a host listed twice measures an\n"
          "                             intra-node pair; default: localhost\n"
          "      --out DIR              where probe.json and platform.xml go; default: out/probe\n"
          "      --quick                smaller arrays, shorter runs, fewer repetitions\n"
          "      --particles N          particles of the DEM kernel runs; default 100000 (quick: 20000)\n"
          "      --steps S              steps of the DEM kernel runs; default 200 (quick: 40)\n"
          "      --partition-particles N\n"
          "                             particles of the two-rank runs timing Zoltan; default\n"
          "                             500000, the study's (quick: --particles)\n"
          "      --no-kernels           skip the DEM kernel runs (and the two-rank runs timing Zoltan)\n"
          "\n"
          "Outputs in DIR: summary.json (what was simulated, times, per-rank figures),\n"
          "particles.h5 + particles.xmf (final particle state; ParaView opens the .xmf),\n"
          "metrics.csv (per-rank load, weight, particles, ghosts, wait and communication times).\n"
          "Environment: DEMSIM_DEVICE=gpu|cpu|any|P:D picks the OpenCL device (over the scenario's device.*\n"
          "keys; --set wins over it).\n"
          "Exit status: 0 success, 1 run failure, 2 bad input (the message names the file and key).\n");
}

static const struct option options[] = {
  {"out", required_argument, 0, 'o'},        {"particles", required_argument, 0, 'n'},
  {"steps", required_argument, 0, 's'},      {"policy", required_argument, 0, 'p'},
  {"repartition-every", required_argument, 0, 'r'}, {"ranks", required_argument, 0, 'P'},
  {"backend", required_argument, 0, 'b'},    {"set", required_argument, 0, 'S'},
  {"restart", required_argument, 0, 'R'},    {"quiet", no_argument, 0, 'q'},
  {"dry-run", no_argument, 0, 'D'},          {"help", no_argument, 0, 'h'},
  {"attempt", required_argument, 0, 'A'},    {"emulate", no_argument, 0, 'E'},
  {"version", no_argument, 0, 'V'},          {0, 0, 0, 0}};

static const struct { char opt; const char *key; } shortcuts[] = {
  {'o', "output.dir"}, {'n', "problem.particles"}, {'s', "time.steps"}, {'p', "run.policy"},
  {'r', "run.repartition_every"}, {'P', "run.ranks"}, {'b', "device.backend"}};

/* Parses options up to the first non-option word. Returns 0, 1 when --help/--version ended
 * the parse, or -1 with a message. */
static int parse_options(int argc, char **argv, dem_cli_t *cli, char *err, size_t errlen)
{
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, "+:o:n:s:p:r:P:b:S:R:A:qhV", options, NULL)) != -1) {
    const char *key = NULL;
    for (size_t i = 0; i < sizeof shortcuts / sizeof shortcuts[0]; i++)
      if (shortcuts[i].opt == c) key = shortcuts[i].key;
    if (c == 'E') key = "native.emulate", optarg = "true"; /* a shortcut without a value */
    if (key || c == 'S') {
      if (cli->n_sets >= DEM_CLI_MAX_SETS) return dem_fail(err, errlen, "too many overrides (at most %d)", DEM_CLI_MAX_SETS);
      int n = key ? snprintf(cli->sets[cli->n_sets], sizeof cli->sets[0], "%s=%s", key, optarg)
                  : snprintf(cli->sets[cli->n_sets], sizeof cli->sets[0], "%s", optarg);
      if (n < 0 || (size_t)n >= sizeof cli->sets[0]) return dem_fail(err, errlen, "option value too long: %s", optarg);
      cli->n_sets++;
      continue;
    }
    switch (c) {
    case 'R': cli->restart = optarg; break;
    case 'q': cli->quiet = 1; break;
    case 'A':
      if (sscanf(optarg, "%d", &cli->attempt) != 1 || cli->attempt < 0)
        return dem_fail(err, errlen, "option --attempt: expected an integer >= 0, got '%s'", optarg);
      break;
    case 'D': cli->dry_run = 1; break;
    case 'h': cli->command = DEM_CMD_HELP; return 1;
    case 'V': cli->command = DEM_CMD_VERSION; return 1;
    case ':': return dem_fail(err, errlen, "option %s needs a value (see demsim --help)", argv[optind - 1]);
    default: return dem_fail(err, errlen, "unknown option '%s' (see demsim --help)", argv[optind - 1]);
    }
  }
  return 0;
}

static int positive_long(const char *opt, const char *v, long *out, char *err, size_t errlen)
{
  char *end = NULL;
  errno = 0;
  long x = strtol(v, &end, 10);
  if (errno || !end || *end || end == v || x <= 0)
    return dem_fail(err, errlen, "probe: option %s: expected a positive integer, got '%s'", opt, v);
  *out = x;
  return 0;
}

/* The options of `probe`, from argv[first] on (getopt_long; only long options). 0, 1 for
 * --help, or -1 with a message. */
static int parse_probe(int argc, char **argv, int first, dem_cli_probe_t *p, char *err, size_t errlen)
{
  static const struct option popts[] = {
    {"hosts", required_argument, 0, 'H'}, {"out", required_argument, 0, 'o'}, {"quick", no_argument, 0, 'Q'},
    {"particles", required_argument, 0, 'n'}, {"steps", required_argument, 0, 's'},
    {"partition-particles", required_argument, 0, 'P'},
    {"no-kernels", no_argument, 0, 'K'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
  long particles = 0, steps = 0, part = 0;
  p->hosts = "localhost";
  p->out = "out/probe";
  p->first_arg = first;
  int rest = argc - first + 1;
  char **argv2 = argv + first - 1;
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(rest, argv2, "+:", popts, NULL)) != -1) {
    switch (c) {
    case 'H': p->hosts = optarg; break;
    case 'o': p->out = optarg; break;
    case 'Q': p->quick = 1; break;
    case 'K': p->no_kernels = 1; break;
    case 'h': return 1;
    case 'n': if (positive_long("--particles", optarg, &particles, err, errlen)) return -1; break;
    case 's': if (positive_long("--steps", optarg, &steps, err, errlen)) return -1; break;
    case 'P': if (positive_long("--partition-particles", optarg, &part, err, errlen)) return -1; break;
    case ':': return dem_fail(err, errlen, "probe: option %s needs a value (see demsim --help)", argv2[optind - 1]);
    default: return dem_fail(err, errlen, "probe: unknown option '%s' (see demsim --help)", argv2[optind - 1]);
    }
  }
  if (optind < rest) return dem_fail(err, errlen, "probe: unexpected argument '%s' (see demsim --help)", argv2[optind]);
  if (!p->hosts[0] || p->hosts[0] == ',' || p->hosts[strlen(p->hosts) - 1] == ',' || strstr(p->hosts, ",,"))
    return dem_fail(err, errlen, "probe: option --hosts: expected host names separated by commas, got '%s'", p->hosts);
  if (!p->out[0]) return dem_fail(err, errlen, "probe: option --out: expected a directory");
  p->particles = particles ? particles : (p->quick ? 20000 : 100000);
  p->steps = steps ? steps : (p->quick ? 40 : 200);
  p->partition_particles = part ? part : (p->quick ? p->particles : 500000);
  return 0;
}

void dem_cli_hide_spaces(char *arg)
{
  for (char *c = arg; *c; c++)
    if (*c == ' ') *c = DEM_CLI_SPACE;
}

int dem_cli_parse(int argc, char **argv, dem_cli_t *cli, char *err, size_t errlen)
{
  memset(cli, 0, sizeof *cli);
  for (int i = 1; i < argc; i++) /* spaces through smpirun (DEM_CLI_SPACE) */
    for (char *c = argv[i]; *c; c++)
      if (*c == DEM_CLI_SPACE) *c = ' ';
  int rc = parse_options(argc, argv, cli, err, errlen);
  if (rc) return rc < 0 ? -1 : 0;
  if (optind >= argc) return dem_fail(err, errlen, "no command given (expected: run SCENARIO, keys, --help)");
  const char *cmd = argv[optind++];
  if (strcmp(cmd, "keys") == 0 || strcmp(cmd, "help") == 0) {
    cli->command = cmd[0] == 'k' ? DEM_CMD_KEYS : DEM_CMD_HELP;
    return 0;
  }
  if (strcmp(cmd, "probe") == 0) {
    cli->command = DEM_CMD_PROBE;
    int prc = parse_probe(argc, argv, optind, &cli->probe, err, errlen);
    if (prc > 0) cli->command = DEM_CMD_HELP;
    return prc < 0 ? -1 : 0;
  }
  if (strcmp(cmd, "run") != 0 && strcmp(cmd, "exec") != 0)
    return dem_fail(err, errlen, "unknown command '%s' (expected: run SCENARIO, exec, probe, keys, --help)", cmd);
  cli->command = cmd[0] == 'r' ? DEM_CMD_RUN : DEM_CMD_EXEC;
  if (optind >= argc) return dem_fail(err, errlen, "%s: expected a scenario file (e.g. scenarios/default.cfg)", cmd);
  cli->scenario = argv[optind++];
  /* options may also follow the scenario: parse the rest as a new argument vector */
  int rest = argc - optind + 1;
  char **argv2 = argv + optind - 1;
  if (rest > 1) {
    rc = parse_options(rest, argv2, cli, err, errlen);
    if (rc) return rc < 0 ? -1 : 0;
    if (cli->command == DEM_CMD_EXEC && optind < rest && strcmp(argv2[optind - 1], "--") == 0)
      cli->program = argv2 + optind;
    else if (optind < rest)
      return dem_fail(err, errlen, "unexpected argument '%s' (see demsim --help)", argv2[optind]);
  }
  if (cli->command == DEM_CMD_EXEC && !cli->program)
    return dem_fail(err, errlen, "exec: expected `-- PROGRAM [ARGS]` after the scenario and its options");
  return 0;
}

/* DEMSIM_DEVICE picks the OpenCL device of every run without editing scenarios: "gpu", "cpu",
 * "any" (device.type) or "P:D" (device.platform and device.device, indices as clinfo lists
 * them). It overrides the scenario file; --set overrides it. */
static int apply_device_env(dem_scenario_t *s, char *err, size_t errlen)
{
  const char *env = getenv("DEMSIM_DEVICE");
  if (!env || !*env) return 0;
  char set[64];
  int p = 0, d = 0, used = 0;
  if (strcmp(env, "gpu") == 0 || strcmp(env, "cpu") == 0 || strcmp(env, "any") == 0) {
    snprintf(set, sizeof set, "device.type=%s", env);
    return dem_scenario_set(s, set, err, errlen);
  }
  if (sscanf(env, "%d:%d%n", &p, &d, &used) == 2 && env[used] == '\0' && p >= 0 && d >= 0) {
    snprintf(set, sizeof set, "device.platform=%d", p);
    if (dem_scenario_set(s, set, err, errlen)) return -1;
    snprintf(set, sizeof set, "device.device=%d", d);
    return dem_scenario_set(s, set, err, errlen);
  }
  return dem_fail(err, errlen, "environment variable DEMSIM_DEVICE = \"%s\": expected gpu, cpu, any or "
                  "PLATFORM:DEVICE (indices, e.g. 0:1)", env);
}

int dem_cli_load_scenario(const dem_cli_t *cli, dem_scenario_t *s, char *err, size_t errlen)
{
  dem_scenario_defaults(s);
  if (dem_scenario_read(s, cli->scenario, err, errlen)) return -1;
  if (apply_device_env(s, err, errlen)) return -1;
  for (int i = 0; i < cli->n_sets; i++)
    if (dem_scenario_set(s, cli->sets[i], err, errlen)) return -1;
  if (cli->quiet) s->progress = 0;
  s->attempt = cli->attempt;
  return dem_scenario_validate(s, err, errlen);
}
