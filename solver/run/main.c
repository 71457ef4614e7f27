/* demsim: the DEM application. Prolog (arguments, scenario, MPI, set-up), the time loop,
 * epilog (outputs). In the SMPI build this is the program smpirun runs on every rank (the
 * `demsim` launcher starts it); in the native build it is `demsim` itself. */
#include <stdio.h>
#include <stdlib.h>

#include "base/clock.h"
#include "base/parallel.h"
#include "base/version.h"
#include "device/remote.h"
#include "device/server.h"
#include "run/cli.h"
#include "run/launcher.h"
#include "run/placement.h"
#include "run/probe.h"
#include "run/simulation.h"
#include "scenario/scenario.h"

/* The device-server process (device.server): serves the ranks' kernels until they are done. */
static int serve_devices(const dem_scenario_t *sc)
{
  char err[1024];
  if (dem_device_server_run(sc, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    fflush(stderr);
    dem_parallel_abort(1);
  }
  dem_parallel_finalize();
  return 0;
}

/* The commands that need no MPI (help, keys, version, probe, dry run) and the native launcher:
 * the exit status, or -1 when this process is an MPI rank of the run. Input is validated here,
 * before MPI starts, identically on every rank: bad input exits with 2. */
static int prolog(int argc, char **argv, dem_cli_t *cli, dem_scenario_t *sc)
{
  char err[2048];
  if (dem_cli_parse(argc, argv, cli, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
  if (cli->command == DEM_CMD_HELP) dem_cli_print_help(stdout);
  if (cli->command == DEM_CMD_KEYS) dem_scenario_print_keys(stdout);
  if (cli->command == DEM_CMD_VERSION) printf("demsim " DEM_VERSION "\n");
  if (cli->command == DEM_CMD_PROBE) {
#ifdef DEMSIM_SMPI
    fprintf(stderr, "demsim: %s\n", DEM_PROBE_NATIVE_ONLY);
    return 2;
#else
    return dem_probe_main(argc, argv, cli);
#endif
  }
  if (cli->command != DEM_CMD_RUN && cli->command != DEM_CMD_EXEC) return 0;
  if (dem_cli_load_scenario(cli, sc, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
#ifndef DEMSIM_SMPI
  if (cli->command == DEM_CMD_EXEC) return dem_launch_program(sc, cli);
#endif
#ifndef DEMSIM_SMPI
  /* the launching process checks the containers once (not each rank mpirun starts) */
  if (!getenv("OMPI_COMM_WORLD_SIZE") && !sc->emulate && dem_placement_check_hosts(sc, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    return 2;
  }
#endif
  if (cli->dry_run) {
    printf("demsim: %s is valid; effective configuration:\n", sc->file);
    dem_scenario_print(sc, stdout);
#ifndef DEMSIM_SMPI
    if (sc->hostmap[0] || sc->emulate) return dem_launch(argc, argv, sc, cli); /* checks, prints the placement */
#endif
    return 0;
  }
#ifndef DEMSIM_SMPI
  if (!dem_launch_in_process(sc)) return dem_launch(argc, argv, sc, cli);
#endif
  return -1;
}

/* The end of a rank's run: the outcome rc of set-up, loop and outputs as the exit status, with
 * its message, the device server released and MPI ended (aborted on a failure of this rank
 * alone, which the others cannot see). */
static int epilog(int rc, const char *err, dem_sim_t *sim, const dem_scenario_t *sc)
{
  int status = 0;
  if (rc == DEM_SIM_BAD_INPUT || rc == DEM_SIM_FAILED_ALL) {
    /* every rank stopped together: report once, end MPI cleanly */
    if (dem_parallel_rank() == 0) fprintf(stderr, "demsim: %s\n", err);
    status = rc == DEM_SIM_BAD_INPUT ? 2 : 1;
  } else if (rc == DEM_SIM_HOST_FAILED) {
    /* a container was lost: the launcher restarts from the last checkpoint (failure.h). Under
     * SMPI a planned event, not a crash: the ranks end with 0 (smpirun then prints nothing) and
     * the launcher, finding no summary.json, reads the loss in failures.txt and says so in one
     * line; natively the lost ranks were killed and the survivors end with DEM_EXIT_HOST_LOST. */
    dem_simulation_destroy(sim);
    dem_parallel_finalize();
#ifdef DEMSIM_SMPI
    (void)sc;
    return 0;
#else
    if (dem_parallel_rank() == 0) fprintf(stderr, "demsim: a container was lost (failure.*); %s/failures.txt has it\n",
                                          sc->out_dir);
    return DEM_EXIT_HOST_LOST;
#endif
  } else if (rc) {
    fprintf(stderr, "demsim: rank %d: %s\n", dem_parallel_rank(), err);
    fflush(stderr);
    dem_parallel_abort(1);
  }
  dem_simulation_destroy(sim);
  dem_remote_release(sc);
  dem_parallel_finalize();
  return status;
}

int main(int argc, char **argv)
{
  static dem_cli_t cli;
  static dem_scenario_t sc;
  static dem_sim_t sim;
  char err[2048];
  int status = prolog(argc, argv, &cli, &sc);
  if (status >= 0) return status;

  dem_parallel_init(&argc, &argv);
  /* the noise profiles at simulated time 0, before the device servers' split takes any */
  if (dem_parallel_world_rank() == 0 && dem_clock_set_noise(&sc.noise, err, sizeof err)) {
    fprintf(stderr, "demsim: %s\n", err);
    dem_parallel_abort(1);
  }
  if (sc.server[0] && dem_parallel_split_servers(sc.ranks)) return serve_devices(&sc);
  int rc = dem_simulation_setup(&sim, &sc, &cli, err, sizeof err);
  if (rc == 0) rc = dem_simulation_run(&sim, err, sizeof err);
  if (rc == 0) rc = dem_simulation_finish(&sim, err, sizeof err);
  return epilog(rc, err, &sim, &sc);
}
