/* The command line: `demsim run SCENARIO [options]`, `demsim probe [options]`, `demsim keys`,
 * `demsim --help`.
 * Shortcut options are turned into --set overrides, applied after the scenario file. */
#ifndef DEMSIM_RUN_CLI_H
#define DEMSIM_RUN_CLI_H

#include <stddef.h>

#define DEM_CLI_MAX_SETS 128

/* smpirun joins the application's arguments with spaces and splits them again, so an argument
 * with a space (--set 'platform.hosts=["a", "b"]') would arrive in pieces: the SMPI launcher
 * passes its spaces as this character (dem_cli_hide_spaces), which dem_cli_parse turns back. */
#define DEM_CLI_SPACE '\x1f'
void dem_cli_hide_spaces(char *arg);

typedef enum { DEM_CMD_NONE, DEM_CMD_RUN, DEM_CMD_KEYS, DEM_CMD_HELP, DEM_CMD_VERSION, DEM_CMD_PROBE, DEM_CMD_EXEC } dem_command_t;

/* `demsim probe` (native build): what to measure and where to write it. */
typedef struct dem_cli_probe {
  const char *hosts;  /* --hosts h1,h2,...: one MPI rank per entry; default "localhost" */
  const char *out;    /* --out DIR; default "out/probe" */
  int quick;          /* --quick: smaller sizes, fewer repetitions, k = 1 and all cores only */
  long particles;     /* --particles N of the DEM kernel runs */
  long steps;         /* --steps S of the DEM kernel runs */
  long partition_particles; /* --partition-particles N of the Zoltan runs (2 ranks) */
  int no_kernels;     /* --no-kernels: skip the DEM kernel runs (the pair test uses it) */
  int first_arg;      /* argv index of the first word after `probe` (re-executed under mpirun) */
} dem_cli_probe_t;

typedef struct dem_cli {
  dem_command_t command;
  const char *scenario;              /* the scenario file */
  int n_sets;
  char sets[DEM_CLI_MAX_SETS][512];  /* key=value overrides, in order */
  const char *restart;               /* --restart FILE: continue from a checkpoint, or NULL */
  int quiet;                         /* --quiet: no progress, no configuration echo */
  int dry_run;                       /* --dry-run: validate and print the launch command only */
  int attempt;                       /* --attempt K: the K-th restart after a lost container */
  dem_cli_probe_t probe;             /* the options of `probe` */
  char **program;                    /* exec: PROGRAM ARGS... after `--` (NULL-terminated, argv's own) */
} dem_cli_t;

struct dem_scenario;

/* Exit status of a run that lost a container (failure.*): the launcher restarts it. */
#define DEM_EXIT_HOST_LOST 3

/* Parses argv. Returns 0, or -1 with a message (the caller prints it and exits with 2). */
int dem_cli_parse(int argc, char **argv, dem_cli_t *cli, char *err, size_t errlen);
/* Defaults, then the scenario file, then the overrides, then validation. 0 or -1. */
int dem_cli_load_scenario(const dem_cli_t *cli, struct dem_scenario *s, char *err, size_t errlen);
void dem_cli_print_help(void *stream);

#endif
