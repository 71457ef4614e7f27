/* Command-line parsing with getopt_long: every option is in `options[]` and in the help. */
#include "cli.h"
#include "error.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "scenario.h"


void dem_cli_print_help(void *stream)
{
  fprintf((FILE *)stream,
          "Usage: demsim run SCENARIO [options]     run a scenario (a libconfig .cfg file)\n"
          "       demsim keys                       list every scenario key with its default\n"
          "       demsim --help | --version\n"
          "\n"
          "Options of `run` (each is a shortcut for --set):\n"
          "  -o, --out DIR              output directory (output.dir); default: out\n"
          "  -n, --particles N          particle count (problem.particles)\n"
          "  -s, --steps N              time steps (time.steps)\n"
          "  -p, --policy P             load balancing: NOW, RW, RW5, EWMA or PI (run.policy)\n"
          "  -r, --repartition-every N  steps between repartitions (run.repartition_every)\n"
          "  -P, --ranks P              MPI processes (run.ranks)\n"
          "  -b, --backend B            opencl or reference (device.backend)\n"
          "  -S, --set KEY=VALUE        override any scenario key (repeatable; see `demsim keys`)\n"
          "  -R, --restart FILE         continue from a checkpoint (DIR/checkpoint.h5 of an earlier run of the\n"
          "                             same problem; output.checkpoint_every writes them) up to time.steps\n"
          "  -q, --quiet                no progress and no configuration echo\n"
          "      --dry-run              validate the scenario and print the launch command only\n"
          "\n"
          "Outputs in DIR: summary.json (what was simulated, times, per-rank figures),\n"
          "particles.h5 + particles.xmf (final particle state; ParaView opens the .xmf),\n"
          "metrics.csv (per-rank load, weight, particles, ghosts, wait and communication times).\n"
          "Exit status: 0 success, 1 run failure, 2 bad input (the message names the file and key).\n");
}

static const struct option options[] = {
  {"out", required_argument, 0, 'o'},        {"particles", required_argument, 0, 'n'},
  {"steps", required_argument, 0, 's'},      {"policy", required_argument, 0, 'p'},
  {"repartition-every", required_argument, 0, 'r'}, {"ranks", required_argument, 0, 'P'},
  {"backend", required_argument, 0, 'b'},    {"set", required_argument, 0, 'S'},
  {"restart", required_argument, 0, 'R'},    {"quiet", no_argument, 0, 'q'},
  {"dry-run", no_argument, 0, 'D'},          {"help", no_argument, 0, 'h'},
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
  while ((c = getopt_long(argc, argv, "+:o:n:s:p:r:P:b:S:R:qhV", options, NULL)) != -1) {
    const char *key = NULL;
    for (size_t i = 0; i < sizeof shortcuts / sizeof shortcuts[0]; i++)
      if (shortcuts[i].opt == c) key = shortcuts[i].key;
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
    case 'D': cli->dry_run = 1; break;
    case 'h': cli->command = DEM_CMD_HELP; return 1;
    case 'V': cli->command = DEM_CMD_VERSION; return 1;
    case ':': return dem_fail(err, errlen, "option %s needs a value (see demsim --help)", argv[optind - 1]);
    default: return dem_fail(err, errlen, "unknown option '%s' (see demsim --help)", argv[optind - 1]);
    }
  }
  return 0;
}

int dem_cli_parse(int argc, char **argv, dem_cli_t *cli, char *err, size_t errlen)
{
  memset(cli, 0, sizeof *cli);
  int rc = parse_options(argc, argv, cli, err, errlen);
  if (rc) return rc < 0 ? -1 : 0;
  if (optind >= argc) return dem_fail(err, errlen, "no command given (expected: run SCENARIO, keys, --help)");
  const char *cmd = argv[optind++];
  if (strcmp(cmd, "keys") == 0 || strcmp(cmd, "help") == 0) {
    cli->command = cmd[0] == 'k' ? DEM_CMD_KEYS : DEM_CMD_HELP;
    return 0;
  }
  if (strcmp(cmd, "run") != 0) return dem_fail(err, errlen, "unknown command '%s' (expected: run SCENARIO, keys, --help)", cmd);
  cli->command = DEM_CMD_RUN;
  if (optind >= argc) return dem_fail(err, errlen, "run: expected a scenario file (e.g. scenarios/default.cfg)");
  cli->scenario = argv[optind++];
  /* options may also follow the scenario: parse the rest as a new argument vector */
  int rest = argc - optind + 1;
  char **argv2 = argv + optind - 1;
  if (rest > 1) {
    rc = parse_options(rest, argv2, cli, err, errlen);
    if (rc) return rc < 0 ? -1 : 0;
    if (optind < rest) return dem_fail(err, errlen, "unexpected argument '%s' (see demsim --help)", argv2[optind]);
  }
  return 0;
}

int dem_cli_load_scenario(const dem_cli_t *cli, dem_scenario_t *s, char *err, size_t errlen)
{
  dem_scenario_defaults(s);
  if (dem_scenario_read(s, cli->scenario, err, errlen)) return -1;
  for (int i = 0; i < cli->n_sets; i++)
    if (dem_scenario_set(s, cli->sets[i], err, errlen)) return -1;
  if (cli->quiet) s->progress = 0;
  return dem_scenario_validate(s, err, errlen);
}
